/* SPDX-License-Identifier: MIT */
/*
 * malloc/ private declarations. The public surface is the C library's
 * (stdlib.h, malloc.h) plus include/uslab/malloc.h.
 */
#ifndef USLAB_MALLOC_INTERNAL_H
#define USLAB_MALLOC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/compiler.h"

/* Smallest alignment malloc() guarantees for requests of 16 bytes or more. */
#define MALLOC_ALIGN		16
/* glibc refuses sizes above PTRDIFF_MAX with ENOMEM; so do we. */
#define MALLOC_MAX_SIZE		((size_t)PTRDIFF_MAX)

/* Per-cache magazine overrides from mag_size.<cache>=N. */
#define MALLOC_MAX_CACHE_OPTS	16
#define MALLOC_CACHE_NAME_LEN	32

struct malloc_cache_opt {
	char name[MALLOC_CACHE_NAME_LEN];	/* cache name, or "" with @size */
	size_t size;				/* kmalloc class by size, or 0 */
	unsigned int limit;
};

/*
 * Parsed options; -1 (MALLOC_OPT_UNSET for depot_limit, where -1 is a value;
 * false for flags) means "keep the built-in default".
 */
#define MALLOC_OPT_UNSET	(-2L)
struct malloc_opts {
	long mag_size;
	long batch;
	long depot_limit;
	long trim_kb;
	long reaper_ms;
	long limit_mb;
	bool stats;
	bool debug;
	bool help;
	unsigned int nr_cache_opts;
	struct malloc_cache_opt cache_opts[MALLOC_MAX_CACHE_OPTS];
};

/* malloc/options.c */
extern struct malloc_opts malloc_opts;
int malloc_parse_options(const char *str);
void malloc_print_help(int fd);
void malloc_apply_options(void);

/* malloc/malloc.c: sizes 1 .. this take the byte table; 0 while debugging */
extern size_t malloc_small_max;

/* malloc/debug.c */
extern bool malloc_debug;
int malloc_debug_enable(void);
void *malloc_debug_alloc(size_t size, bool zero);

/* malloc/init.c */
void malloc_write_str(int fd, const char *s);
void malloc_print_stats(int fd);
extern unsigned long malloc_foreign_frees;

#endif /* USLAB_MALLOC_INTERNAL_H */
