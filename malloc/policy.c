// SPDX-License-Identifier: MIT
/*
 * malloc's policy as functions with the uslab_ prefix (the rules are in
 * malloc/policy.h, written once), and its slow paths. Linked into
 * libuslab.so and libuslab.a behind the exported symbols (malloc/malloc.c),
 * and into the simulator's virtual-CPU core, where `uslab sim` and
 * `uslab tune` call uslab_malloc(), uslab_realloc(), ... for every traced
 * malloc-family event.
 *
 * No locks of its own; the layers below document theirs.
 */
#include <errno.h>
#include "uslab/malloc.h"
#include "lib/sigsafe.h"
#include "malloc/policy.h"

/*
 * Sizes below this take malloc()'s inline route (kmalloc_small_fast():
 * KMALLOC_SMALL_MAX + 1 when open, malloc(0) included). 0 at start: that route's rseq section may run only once pcp_init() has
 * chosen the area it reads, so the first small malloc takes
 * malloc_sized(), which opens it (malloc_small_open()). It stays 0 in the
 * debug preset (red zones on every cache) and goes back to 0 for good
 * once a slab_debug setting (also USLAB_OPTIONS=debug) may name a kmalloc
 * cache (malloc_small_close()), so that every size reaches kmalloc(),
 * which gives a debug class the size asked for.
 */
struct malloc_small malloc_small __attribute__((aligned(4096)));
static bool malloc_small_closed = IS_ENABLED(CONFIG_SLAB_DEBUG_ON);
unsigned long malloc_foreign_frees;

__slowpath void *malloc_fail(void)
{
	errno = ENOMEM;
	return NULL;
}

/*
 * malloc(0), sizes above the kmalloc caches or PTRDIFF_MAX, and everything
 * in the debug preset. @gfp may hold __GFP_ZERO (calloc).
 */
__slowpath void *malloc_slow(size_t size, gfp_t gfp)
{
	if (size > MALLOC_MAX_SIZE)
		return malloc_fail();
	/* (every class of 16 bytes or more is 16-aligned, red zones or not:
	 * kmalloc_align(); the debug preset's kmalloc() passes the size
	 * asked, where its red zone starts) */
	/* kmalloc(0) is ZERO_SIZE_PTR; malloc(0) must be unique. */
	return kmalloc(size ? size : 1, gfp);
}

/*
 * Sizes above KMALLOC_SMALL_MAX, and small ones until malloc_small_end is
 * open (below): kmalloc() finds their class by fls and
 * takes the route of its other sizes (__kmalloc_index); the rest goes to
 * malloc_slow. @gfp may hold __GFP_ZERO.
 */
static __slowpath void malloc_small_open(void)
{
	if (__atomic_load_n(&malloc_small_closed, __ATOMIC_SEQ_CST) ||
	    sigsafe_reentered() || !kmalloc_small_ready())
		return;
	__atomic_store_n(&malloc_small_end, KMALLOC_SMALL_MAX + 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&malloc_mid_end, KMALLOC_MAX_CACHE_SIZE + 1, __ATOMIC_SEQ_CST);
	/* closed meanwhile (malloc_small_close() on another thread) */
	if (__atomic_load_n(&malloc_small_closed, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&malloc_small_end, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&malloc_mid_end, 0, __ATOMIC_SEQ_CST);
	}
}

void malloc_small_close(void)
{
	__atomic_store_n(&malloc_small_closed, true, __ATOMIC_SEQ_CST);
	__atomic_store_n(&malloc_small_end, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&malloc_mid_end, 0, __ATOMIC_SEQ_CST);
}

noinline void *malloc_sized(size_t size, gfp_t gfp)
{
	/* (either route's first size opens both) */
	if (size - 1 < KMALLOC_MAX_CACHE_SIZE &&
	    unlikely(!__atomic_load_n(&malloc_small_end, __ATOMIC_RELAXED)))
		malloc_small_open();
	if (unlikely(size - 1 >= KMALLOC_MAX_CACHE_SIZE) ||
	    IS_ENABLED(CONFIG_SLAB_DEBUG_ON))
		return malloc_slow(size, gfp);
	if (!(gfp & __GFP_ZERO))
		return kmalloc_nozero(size, gfp);
	return kmalloc(size, gfp);
}

/*
 * malloc() of a size from malloc_small_end up (malloc/policy.h): below
 * malloc_mid_end the second inline route (kmalloc_mid_fast(), which
 * takes its own misses); every other size, malloc_sized().
 */
__fastpath __attribute__((aligned(64))) void *malloc_mid(size_t size)
{
	if (likely(size < malloc_mid_end))
		return kmalloc_mid_fast(size, MALLOC_GFP);
	return malloc_sized(size, MALLOC_GFP);
}

/*
 * Pointers uslab does not own: free() ignores them (there is no way to give
 * them back to their real owner from here) and counts them in the stats.
 * With LD_PRELOAD or static linking every heap pointer comes from uslab, so
 * this only protects against programs that mix in another allocator's
 * memory.
 */
__slowpath void malloc_free_foreign(const void *p)
{
	/* a signal handler's emergency block (lib/sigsafe.h) is ours */
	if (p && !page_alloc_emergency_free(p))
		__atomic_add_fetch(&malloc_foreign_frees, 1, __ATOMIC_RELAXED);
}

/*
 * Deliberate mirror of malloc/malloc.c's exported names: the same calls of
 * the one inline policy (malloc/policy.h) under the uslab_ names the
 * simulator links, so both lists read alike.
 */
__visible void *uslab_malloc(size_t size)
{
	return __uslab_malloc(size);
}

__visible void uslab_free(void *p)
{
	__uslab_free(p);
}

__visible void *uslab_calloc(size_t n, size_t size)
{
	return __uslab_calloc(n, size);
}

__visible void *uslab_realloc(void *p, size_t size)
{
	return __uslab_realloc(p, size);
}

__visible size_t uslab_malloc_usable_size(void *p)
{
	return __uslab_malloc_usable_size(p);
}

__visible int uslab_posix_memalign(void **out, size_t align, size_t size)
{
	return __uslab_posix_memalign(out, align, size);
}

__visible void *uslab_memalign(size_t align, size_t size)
{
	return __uslab_memalign(align, size);
}

__visible void *uslab_aligned_alloc(size_t align, size_t size)
{
	return __uslab_memalign(align, size);
}

__visible void *uslab_valloc(size_t size)
{
	return __uslab_valloc(size);
}

__visible void *uslab_pvalloc(size_t size)
{
	return __uslab_pvalloc(size);
}
