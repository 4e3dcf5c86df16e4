/* SPDX-License-Identifier: MIT */
/*
 * libuslab: the C library's malloc API on top of kmalloc. The standard
 * functions keep their usual declarations (stdlib.h, malloc.h); this header
 * adds the C23 sized frees, which glibc 2.36 does not declare yet, and
 * uslab's own extras.
 *
 * Concurrency: every function is thread-safe and async-signal-unsafe, as
 * malloc is.
 */
#ifndef USLAB_MALLOC_H
#define USLAB_MALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* C23: free a block whose size (and alignment) the caller still knows. */
void free_sized(void *ptr, size_t size);
void free_aligned_sized(void *ptr, size_t alignment, size_t size);

/**
 * uslab_malloc_stats - write slabinfo, buddyinfo and the malloc counters to
 * @fd, as USLAB_OPTIONS=stats does at exit.
 * Context: any thread; never allocates.
 */
void uslab_malloc_stats(int fd);

/**
 * uslab_stats_print - uslab's state as text (or JSON), as jemalloc's
 * malloc_stats_print: what is held from the OS and in use, free objects in
 * slabs and magazines, the page allocator's line and the per-cache table.
 * @write_cb: called with each piece of text, in order (NUL-terminated);
 *            NULL: written to stderr.
 * @opaque: passed to @write_cb.
 * @opts: NULL or characters: 'J' JSON (one object, docs/malloc.md),
 *        'c' leaves out the per-cache table, 'p' the page allocator's line.
 * Context: any thread; never allocates (the snapshot lives in an anonymous
 * mapping); @write_cb may allocate.
 */
void uslab_stats_print(void (*write_cb)(void *opaque, const char *text), void *opaque,
		       const char *opts);

/** uslab_version - "RELEASE (git DESCRIPTION)", as `uslab --version` says. */
const char *uslab_version(void);

/**
 * uslab_option - the value USLAB_OPTIONS gave option @name (a row of
 * <uslab/tunables.h> that is not a cache setting or a fault spec), as the
 * library parsed it at start: flags 0 or 1.
 * Context: any thread, after the library's constructor.
 * Return: the value, or -1 when the option was not given (its default
 * stands) or @name is no such option.
 */
long uslab_option(const char *name);

/*
 * The same malloc under uslab's own names (malloc/policy.c): what malloc(),
 * free(), ... do, callable where the C library's names belong to another
 * allocator (the simulator calls these on virtual CPUs). Same results,
 * errno values and blocks as the standard names; mix freely.
 */
void *uslab_malloc(size_t size);
void uslab_free(void *ptr);
void *uslab_calloc(size_t nmemb, size_t size);
void *uslab_realloc(void *ptr, size_t size);
size_t uslab_malloc_usable_size(void *ptr);
int uslab_posix_memalign(void **memptr, size_t alignment, size_t size);
void *uslab_memalign(size_t alignment, size_t size);
void *uslab_aligned_alloc(size_t alignment, size_t size);
void *uslab_valloc(size_t size);
void *uslab_pvalloc(size_t size);

#ifdef __cplusplus
}
#endif

#endif /* USLAB_MALLOC_H */
