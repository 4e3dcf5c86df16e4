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
#include "uslab/slab.h"

/* Smallest alignment malloc() guarantees for requests of 16 bytes or more. */
#define MALLOC_ALIGN		16
/* glibc refuses sizes above PTRDIFF_MAX with ENOMEM; so do we. */
#define MALLOC_MAX_SIZE		((size_t)PTRDIFF_MAX)

/* Cache settings (mag_size, batch, depot_limit) kept until applied. */
#define MALLOC_MAX_SETTINGS	128

/* Parsed options; -1 (false for flags) means "keep the built-in default". */
struct malloc_opts {
	long trim_kb;
	long reaper_ms;
	long limit_mb;
	long adapt, adapt_min, adapt_max, adapt_budget_kb;	/* -1: Kconfig */
	bool stats;
	bool stats_shm;
	bool debug;
	bool help;
	unsigned int nr_settings;
	struct kmem_cache_setting settings[MALLOC_MAX_SETTINGS];
};

/* malloc/options.c */
extern struct malloc_opts malloc_opts;
int malloc_parse_options(const char *str);
void malloc_print_help(int fd);
void malloc_apply_options(void);

/* malloc/policy.c: sizes 1 .. this take the byte table; 0 while debugging */
extern size_t malloc_small_max __attribute__((__visibility__("hidden")));

/* malloc/statseg.c */
void malloc_statseg_start(void);
void malloc_statseg_stop(void);
void malloc_statseg_fork_child(void);


/* malloc/init.c */
void malloc_write_str(int fd, const char *s);
void malloc_print_stats(int fd);

/* malloc/policy.c */
extern unsigned long malloc_foreign_frees __attribute__((__visibility__("hidden")));

#endif /* USLAB_MALLOC_INTERNAL_H */
