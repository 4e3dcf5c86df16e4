// SPDX-License-Identifier: MIT
/*
 * The exported malloc API: the C library's names (malloc, free, ... and the
 * __libc_* aliases) and malloc_trim. Each is the inline policy of
 * malloc/policy.h (the rules, written once, also instantiated as
 * uslab_malloc() ... by malloc/policy.c for the simulator), so the
 * exported fast paths pay no extra call (malloc/policy.c's uslab_ list
 * mirrors this one on purpose, name for name): malloc is one compare and
 * kmalloc_small_fast(), free is kfree_small_fast(), both inline
 * (slab/fastpath.h), so each is one function on a hit. As mimalloc keeps
 * alloc-override.c apart from alloc.c.
 *
 * No locks are taken here; the layers below document theirs. Nothing here
 * uses TLS, stdio, dlsym or liburcu, so the first malloc() of a preloaded
 * process (made by the dynamic loader or libc's own start-up) is served like
 * any other: page_alloc and slab initialize themselves on first use.
 *
 * Pointers uslab does not own: free() ignores them and counts them;
 * malloc_usable_size() says 0; realloc() fails with EINVAL and leaves the
 * block alone (malloc/policy.c).
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "uslab/malloc.h"
#include "uslab/page_alloc.h"
#include "uslab/slab.h"
#include "malloc/internal.h"
#include "malloc/policy.h"

/*
 * The constructor (options, fork handlers, stats at exit: malloc/init.c)
 * must come along with these symbols, also into programs linked with
 * libuslab.a, where only referenced objects are pulled in.
 */
extern const char malloc_init_anchor;
static const char *const malloc_pull_init __attribute__((used)) = &malloc_init_anchor;

/*
 * malloc and free start on a 64-byte boundary: the same instructions
 * placed 16 bytes apart took 4-5% more CPU in sh6bench (1 and 2 threads,
 * 12 interleaved rounds; docs/percpu.md "Cost"), the kind of effect the
 * decoded-instruction cache's 64-byte windows have.
 */
__visible __fastpath __attribute__((aligned(64))) void *malloc(size_t size)
{
	return __uslab_malloc(size);
}

__visible __fastpath __attribute__((aligned(64))) void free(void *p)
{
	__uslab_free(p);
}

/* Old SunOS name, still exported by glibc (no longer declared). */
void cfree(void *p);
__visible void cfree(void *p)
{
	__uslab_free(p);
}

/* C23: the size and alignment are hints; kfree() finds both itself. */
__visible void free_sized(void *p, size_t size)
{
	__uslab_free(p);
}

__visible void free_aligned_sized(void *p, size_t alignment, size_t size)
{
	__uslab_free(p);
}

/* malloc()'s route, then zeroed (the slab layer never promises zeroes). */
__visible void *calloc(size_t n, size_t size)
{
	return __uslab_calloc(n, size);
}

__visible size_t malloc_usable_size(void *p)
{
	return __uslab_malloc_usable_size(p);
}

__visible void *realloc(void *p, size_t size)
{
	return __uslab_realloc(p, size);
}

__visible void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (unlikely(__builtin_mul_overflow(n, size, &total)))
		return malloc_fail();
	return __uslab_realloc(p, total);
}

__visible int posix_memalign(void **out, size_t align, size_t size)
{
	return __uslab_posix_memalign(out, align, size);
}

__visible void *memalign(size_t align, size_t size)
{
	return __uslab_memalign(align, size);
}

/* glibc 2.36 treats aligned_alloc exactly as memalign. */
__visible void *aligned_alloc(size_t align, size_t size)
{
	return __uslab_memalign(align, size);
}

__visible void *valloc(size_t size)
{
	return __uslab_valloc(size);
}

__visible void *pvalloc(size_t size)
{
	return __uslab_pvalloc(size);
}

/*
 * malloc_trim - drain every cache's magazines, free empty slabs and give all
 * free resident pages back to the OS. @pad is ignored: uslab keeps no top
 * of heap to leave padding on.
 * Return: 1 if memory went back to the OS, 0 otherwise.
 */
__visible int malloc_trim(size_t pad)
{
	struct page_alloc_stats before, after;
	size_t trimmed;

	page_alloc_get_stats(&before);
	kmem_cache_shrink_all();
	trimmed = page_alloc_trim();
	page_alloc_get_stats(&after);
	return trimmed || after.bytes_free_returned > before.bytes_free_returned ||
	       after.bytes_allocated + after.bytes_free_resident <
	       before.bytes_allocated + before.bytes_free_resident;
}

/* mallinfo2, mallinfo, malloc_stats, malloc_info: malloc/introspect.c */

/*
 * The __libc_* names: some programs and libraries (and older glibc
 * internals) call these directly to reach "the real malloc"; they must land
 * here too, or a block would cross allocators.
 */
#define malloc_alias(name, target) \
	extern __typeof__(target) name \
	__attribute__((alias(#target), copy(target))) __visible

malloc_alias(__libc_malloc, malloc);
malloc_alias(__libc_free, free);
malloc_alias(__libc_calloc, calloc);
malloc_alias(__libc_realloc, realloc);
malloc_alias(__libc_memalign, memalign);
malloc_alias(__libc_valloc, valloc);
malloc_alias(__libc_pvalloc, pvalloc);
malloc_alias(__libc_cfree, cfree);
malloc_alias(__posix_memalign, posix_memalign);
