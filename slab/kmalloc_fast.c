// SPDX-License-Identifier: MIT
/*
 * The malloc layer's fast paths into kmalloc: kmalloc_fast() and
 * kfree_fast(), each one function whose hit path is the per-CPU rseq
 * section plus what it takes to find the magazine.
 *
 *   kmalloc_fast: class from a byte table over the whole size range
 *                 (kmalloc_size_index[(size - 1) / 8], the kernel's
 *                 size_index extended to KMALLOC_MAX_CACHE_SIZE, so no
 *                 branch and no fls), then the class's pcp_cache from
 *                 kmalloc_fast_pcp[] (one load, not cache -> pcp).
 *   kfree_fast:   struct page of the pointer; PG_slab_page and slab_cache
 *                 are set on every page of a slab (slab.c), so one page
 *                 load gives the cache, without compound_head.
 *
 * Everything else (cache not created yet, class bypassing magazines, an
 * empty or full magazine, an abort, a block that is not a slab object)
 * falls back to kmalloc()/kfree() and the slow paths behind them.
 *
 * Locking: none here. kmalloc_fast_pcp[] entries go from NULL to the
 * class's pcp_cache once (release store after the cache is complete) and
 * never change: a cache's pcp_cache is set at creation and kmalloc caches
 * are never destroyed.
 */
#include "slab/internal.h"

/*
 * Class of each size 1 .. KMALLOC_MAX_CACHE_SIZE in steps of 8: entry i
 * serves sizes 8i + 1 .. 8i + 8. Indices as kmalloc_names[] (kmalloc.c);
 * tests/check_kmalloc_fast.c checks every size against kmalloc_slab().
 */
static const unsigned char kmalloc_size_index[KMALLOC_MAX_CACHE_SIZE / 8] = {
	[0] = 0,			/* 8 */
	[1] = 1,			/* 16 */
	[2 ... 3] = 2,			/* 32 */
	[4 ... 7] = 3,			/* 64 */
	[8 ... 11] = 4,			/* 96 */
	[12 ... 15] = 5,		/* 128 */
	[16 ... 23] = 6,		/* 192 */
	[24 ... 31] = 7,		/* 256 */
	[32 ... 63] = 8,		/* 512 */
	[64 ... 127] = 9,		/* 1k */
	[128 ... 255] = 10,		/* 2k */
	[256 ... 511] = 11,		/* 4k */
#if KMALLOC_MAX_CACHE_SIZE >= 8192
	[512 ... 1023] = 12,		/* 8k */
#endif
#if KMALLOC_MAX_CACHE_SIZE >= 16384
	[1024 ... 2047] = 13,		/* 16k */
#endif
#if KMALLOC_MAX_CACHE_SIZE >= 32768
	[2048 ... 4095] = 14,		/* 32k */
#endif
#if KMALLOC_MAX_CACHE_SIZE >= 65536
	[4096 ... 8191] = 15,		/* 64k */
#endif
};

static struct pcp_cache *kmalloc_fast_pcp[16];

/* First use of a class, a bypass class, an empty magazine, an abort. */
static __slowpath void *kmalloc_fast_miss(size_t size, gfp_t gfp)
{
	unsigned int idx = kmalloc_size_index[(size - 1) / 8];
	struct kmem_cache *s;

	if (unlikely(!kmalloc_fast_pcp[idx])) {
		s = kmalloc_slab(size);
		if (s)
			__atomic_store_n(&kmalloc_fast_pcp[idx], s->pcp,
					 __ATOMIC_RELEASE);
	}
	return kmalloc(size, gfp);
}

/**
 * kmalloc_fast - kmalloc() for 1 <= @size <= KMALLOC_MAX_CACHE_SIZE.
 * @size: bytes; the caller guarantees the range.
 * @gfp: for the slow path only; must not hold __GFP_ZERO.
 *
 * Context: any thread; lock-free on a hit (per-CPU rseq pop).
 * Return: as kmalloc().
 */
__fastpath void *kmalloc_fast(size_t size, gfp_t gfp)
{
	struct pcp_cache *pc;
	void *obj;

	if (!IS_ENABLED(CONFIG_PERCPU_CACHE))
		return kmalloc(size, gfp);
	pc = kmalloc_fast_pcp[kmalloc_size_index[(size - 1) / 8]];
	if (likely(pc)) {
		obj = pcp_alloc_fast(pc);
		if (likely((uintptr_t)obj > (uintptr_t)PCP_ABORTED)) {
			/* word 0 on every kmalloc cache with magazines */
			slab_obj_live(obj, 0);
			return obj;
		}
	}
	return kmalloc_fast_miss(size, gfp);
}

/**
 * kfree_fast - kfree() of a pointer inside uslab's range.
 * @p: page_alloc_owns(@p) holds (the caller checked).
 *
 * Context: any thread; lock-free on a hit (per-CPU rseq push).
 */
__fastpath void kfree_fast(void *p)
{
	struct page *page = virt_to_page(p);
	struct kmem_cache *s;
	int r;

	if (!IS_ENABLED(CONFIG_PERCPU_CACHE) ||
	    unlikely(!PageFlag(page, PG_slab_page))) {
		kfree(p);
		return;
	}
	s = page->slab_cache;
	if (unlikely(!slab_free_check("kfree", s, page, p, s->mark_off)))
		return;
	r = pcp_free_fast(s->pcp, p);
	if (unlikely(r))
		slab_free_miss(s, p, r);
}
