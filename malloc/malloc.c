// SPDX-License-Identifier: MIT
/*
 * The malloc API on top of kmalloc.
 *
 * Every entry point is a thin shell: size checks the C library documents
 * (ENOMEM for sizes above PTRDIFF_MAX and for overflow, EINVAL for bad
 * alignments), then kmalloc()/kmalloc_aligned()/kfree(), whose fast paths
 * are the per-CPU rseq magazines. free() adds one range check
 * (page_alloc_owns: two loads, two compares) to the pointer -> page -> cache
 * walk that kfree() does anyway.
 *
 * No locks are taken here; the layers below document theirs. Nothing here
 * uses TLS, stdio, dlsym or liburcu, so the first malloc() of a preloaded
 * process (made by the dynamic loader or libc's own start-up) is served like
 * any other: page_alloc and slab initialize themselves on first use.
 *
 * Pointers uslab does not own: free() ignores them (there is no way to give
 * them back to their real owner from here) and counts them in the stats;
 * malloc_usable_size() says 0; realloc() fails with EINVAL and leaves the
 * block alone. With LD_PRELOAD or static linking every heap pointer comes
 * from uslab, so this only protects against programs that mix in memory from
 * another allocator.
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

#define MALLOC_GFP	(GFP_KERNEL | __GFP_NOWARN)

static __slowpath void *malloc_fail(void)
{
	errno = ENOMEM;
	return NULL;
}

/*
 * Sizes 1 .. this take malloc()'s byte-table route; 0 in the debug preset
 * (red zones on every cache) and once USLAB_OPTIONS=debug is in force, so
 * that every size reaches malloc_sized() and its checks.
 */
size_t malloc_small_max = IS_ENABLED(CONFIG_SLAB_DEBUG_ON) ? 0 : KMALLOC_SMALL_MAX;

/*
 * malloc(0), sizes above the kmalloc caches or PTRDIFF_MAX, and everything
 * while debugging. @gfp may hold __GFP_ZERO (calloc).
 */
static __slowpath void *malloc_slow(size_t size, gfp_t gfp)
{
	if (size > MALLOC_MAX_SIZE)
		return malloc_fail();
	if (malloc_debug)
		return malloc_debug_alloc(size, gfp & __GFP_ZERO);
	/*
	 * With red zones on every cache (the debug preset) only the
	 * power-of-two classes stay naturally aligned; the others sit 8 bytes
	 * off. Compiled away otherwise.
	 */
	if (IS_ENABLED(CONFIG_SLAB_DEBUG_ON) && size > 8)
		return kmalloc_aligned(size, MALLOC_ALIGN, gfp);
	/* kmalloc(0) is ZERO_SIZE_PTR; malloc(0) must be unique. */
	return kmalloc(size ? size : 1, gfp);
}

/*
 * Sizes above KMALLOC_SMALL_MAX: kmalloc() finds their class by fls and
 * takes the same route (__kmalloc_index) as malloc() below; the rest goes
 * to malloc_slow. @gfp may hold __GFP_ZERO.
 */
static noinline void *malloc_sized(size_t size, gfp_t gfp)
{
	if (unlikely(size - 1 >= KMALLOC_MAX_CACHE_SIZE || malloc_debug) ||
	    IS_ENABLED(CONFIG_SLAB_DEBUG_ON))
		return malloc_slow(size, gfp);
	return kmalloc(size, gfp);
}

/*
 * Fast path: one compare against malloc_small_max (size - 1 wraps for 0,
 * so it also catches malloc(0); 0 while debugging), the class from the
 * byte table, then a tail call into __kmalloc_index() (per-class
 * pcp_cache, rseq pop). One route to a cache for every size: larger
 * sizes reach the same __kmalloc_index() through kmalloc().
 */
__visible __fastpath void *malloc(size_t size)
{
	if (likely(size - 1 < malloc_small_max))
		return __kmalloc_index(kmalloc_index_small(size), MALLOC_GFP);
	return malloc_sized(size, MALLOC_GFP);
}

static __slowpath void free_foreign(const void *p)
{
	if (p)
		__atomic_add_fetch(&malloc_foreign_frees, 1, __ATOMIC_RELAXED);
}

/* Fast path: two compares (owned, and so not NULL), then kfree_fast(). */
__visible __fastpath void free(void *p)
{
	if (unlikely(!page_alloc_owns(p))) {
		free_foreign(p);
		return;
	}
	kfree_fast(p);
}

/* Old SunOS name, still exported by glibc (no longer declared). */
void cfree(void *p);
__visible void cfree(void *p)
{
	free(p);
}

/* C23: the size and alignment are hints; kfree() finds both itself. */
__visible void free_sized(void *p, size_t size)
{
	free(p);
}

__visible void free_aligned_sized(void *p, size_t alignment, size_t size)
{
	free(p);
}

/* malloc()'s route, then zeroed (the slab layer never promises zeroes). */
__visible void *calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (unlikely(__builtin_mul_overflow(n, size, &total)))
		return malloc_fail();
	if (likely(total - 1 < malloc_small_max)) {
		p = __kmalloc_index(kmalloc_index_small(total), MALLOC_GFP);
		if (likely(p))
			memset(p, 0, total);
		return p;
	}
	/* kmalloc zeroes cached sizes; page_alloc knows which pages are clean */
	return malloc_sized(total, MALLOC_GFP | __GFP_ZERO);
}

__visible size_t malloc_usable_size(void *p)
{
	if (!page_alloc_owns(p))
		return 0;
	return ksize(p);
}

/*
 * realloc keeps the block when the new size fits and would not waste more
 * than half of it; otherwise it moves. realloc(p, 0) frees and returns NULL,
 * as glibc does (the C standard leaves it to the implementation).
 */
__visible void *realloc(void *p, size_t size)
{
	size_t have;
	void *q;

	if (!p)
		return malloc(size);
	if (!size) {
		free(p);
		return NULL;
	}
	if (unlikely(!page_alloc_owns(p))) {
		errno = EINVAL;
		return NULL;
	}
	if (unlikely(size > MALLOC_MAX_SIZE))
		return malloc_fail();
	have = ksize(p);
	if (size <= have && size >= have / 2)
		return p;
	q = malloc(size);
	if (!q)
		return NULL;	/* the old block stays valid */
	memcpy(q, p, size < have ? size : have);
	kfree(p);
	return q;
}

__visible void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (unlikely(__builtin_mul_overflow(n, size, &total)))
		return malloc_fail();
	return realloc(p, total);
}

/*
 * The aligned family. Alignments up to MALLOC_ALIGN come from the plain
 * classes (every class of 16 bytes or more is 16-aligned); larger ones from
 * kmalloc_aligned(), which reaches the page allocator's own mappings for
 * alignments above a page (4 MiB and beyond).
 * Return: the block, or NULL with errno ENOMEM.
 */
static void *malloc_aligned(size_t align, size_t size)
{
	void *p;

	if (unlikely(size > MALLOC_MAX_SIZE || align > MALLOC_MAX_SIZE / 2 + 1))
		return malloc_fail();
	if (align <= MALLOC_ALIGN)
		return malloc(size < align ? align : size);
	p = kmalloc_aligned(size ? size : 1, align, MALLOC_GFP);
	if (unlikely(!p))
		return malloc_fail();
	return p;
}

static inline bool is_pow2(size_t x)
{
	return x && !(x & (x - 1));
}

__visible int posix_memalign(void **out, size_t align, size_t size)
{
	int saved = errno;
	void *p;

	if (!is_pow2(align) || align % sizeof(void *))
		return EINVAL;
	p = malloc_aligned(align, size);
	if (!p) {
		errno = saved;	/* POSIX: the error is the return value */
		return ENOMEM;
	}
	*out = p;
	return 0;
}

/*
 * glibc's memalign rounds an alignment that is not a power of two up to the
 * next one and fails with EINVAL only when that is impossible.
 */
__visible void *memalign(size_t align, size_t size)
{
	if (align > MALLOC_MAX_SIZE / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	if (align < sizeof(void *))
		align = sizeof(void *);
	if (!is_pow2(align))
		align = (size_t)1 << (64 - __builtin_clzl(align));
	return malloc_aligned(align, size);
}

/* glibc 2.36 treats aligned_alloc exactly as memalign. */
__visible void *aligned_alloc(size_t align, size_t size)
{
	return memalign(align, size);
}

__visible void *valloc(size_t size)
{
	return malloc_aligned(PAGE_SIZE, size);
}

__visible void *pvalloc(size_t size)
{
	size_t rounded;

	if (unlikely(__builtin_add_overflow(size, PAGE_SIZE - 1, &rounded)))
		return malloc_fail();
	rounded &= PAGE_MASK;
	return malloc_aligned(PAGE_SIZE, rounded ? rounded : PAGE_SIZE);
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

/*
 * mallinfo2 in page-allocator terms: arena is what uslab holds from the OS
 * and keeps resident, uordblks what is handed out to slabs and large
 * blocks (objects free inside slabs and magazines count as used: the slab
 * layer keeps no global total), fordblks free pages still resident, hblkhd
 * the large mappings.
 */
__visible struct mallinfo2 mallinfo2(void)
{
	struct page_alloc_stats st;
	struct mallinfo2 mi;

	memset(&mi, 0, sizeof(mi));
	page_alloc_get_stats(&st);
	mi.arena = st.bytes_allocated + st.bytes_free_resident;
	mi.uordblks = st.bytes_allocated;
	mi.fordblks = st.bytes_free_resident;
	mi.hblkhd = st.bytes_large;
	mi.hblks = 0;
	mi.ordblks = 0;
	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++)
		mi.ordblks += st.nr_free[o];
	mi.usmblks = 0;
	mi.keepcost = 0;
	return mi;
}

__visible struct mallinfo mallinfo(void)
{
	struct mallinfo2 m2 = mallinfo2();
	struct mallinfo mi;

	/* The old interface's ints wrap, as glibc's do. */
	mi.arena = (int)m2.arena;
	mi.ordblks = (int)m2.ordblks;
	mi.smblks = (int)m2.smblks;
	mi.hblks = (int)m2.hblks;
	mi.hblkhd = (int)m2.hblkhd;
	mi.usmblks = (int)m2.usmblks;
	mi.fsmblks = (int)m2.fsmblks;
	mi.uordblks = (int)m2.uordblks;
	mi.fordblks = (int)m2.fordblks;
	mi.keepcost = (int)m2.keepcost;
	return mi;
}

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
