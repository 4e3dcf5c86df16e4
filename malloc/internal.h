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

/*
 * Parsed options: one value per row of <uslab/tunables.h> (flags 0 or 1),
 * MALLOC_OPT_UNSET where the item was not given (the default stands); the
 * cache rows' items as slab/ settings.
 */
#define MALLOC_OPT_UNSET	(-1L)
struct malloc_opts {
	long val[USLAB_NR_TUNABLES];
	unsigned int nr_settings;
	struct kmem_cache_setting settings[MALLOC_MAX_SETTINGS];
};

/* malloc/options.c */
extern struct malloc_opts malloc_opts;
#define malloc_opt(id)		(malloc_opts.val[USLAB_OPT_##id])
int malloc_parse_options(const char *str);
void malloc_print_help(int fd);
void malloc_apply_options(void);

/* malloc/policy.c: sizes below this take the inline route; closing it
 * (a kmalloc class may be a debug class) is for good */
extern size_t malloc_small_end __attribute__((__visibility__("hidden")));
void malloc_small_close(void) __attribute__((__visibility__("hidden")));

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
