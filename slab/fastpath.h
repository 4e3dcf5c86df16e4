/* SPDX-License-Identifier: MIT */
/*
 * slab/fastpath.h - kmalloc's two hit paths, inline: kmalloc_small_fast()
 * (a size up to KMALLOC_SMALL_MAX) and kfree_small_fast() (an unsized
 * free). Internal, never installed: slab/kmalloc.c and the layer that
 * inlines them into its exported entry points (malloc/) include it, so
 * that malloc() and free() are each one function from entry to `ret` on a
 * hit (docs/slab.md "The hit path" counts their instructions). May
 * include percpu/fastpath.h, page_alloc's and slab's public headers.
 */
#ifndef USLAB_SLAB_FASTPATH_H
#define USLAB_SLAB_FASTPATH_H

#include <stdint.h>
#include "lib/compiler.h"
#include "uslab/page_alloc.h"
#include "uslab/slab.h"
#include "percpu/fastpath.h"

#define __slab_hidden	__attribute__((__visibility__("hidden")))

/*
 * The magazines of every size 0 .. KMALLOC_SMALL_MAX, by size:
 * kmalloc_size_index[] and the class's pcp_cache folded into one load,
 * one entry per byte size so that the index is malloc's own size (no
 * shift: 8 KiB where one entry per 8 bytes took 1 KiB; sh6bench, whose
 * sizes run 1..1000, took the same CPU time, docs/percpu.md "Cost"; no
 * size - 1 either: size 0 has the entry of size 1, as malloc(0) is
 * kmalloc(1)). Every entry always points at a valid pcp_cache: the bypass
 * cache (every fast path misses) until the class has a cache with
 * magazines. The fast path may only read it once pcp_init() has run (it
 * reads the rseq area pcp_init() chooses): callers gate it (malloc's
 * malloc_small_end is 0 until kmalloc_small_ready()).
 */
extern struct pcp_cache *kmalloc_small_pcp[KMALLOC_SMALL_MAX + 1] __slab_hidden;

/*
 * The magazines of the classes above KMALLOC_SMALL_MAX, by size in steps
 * of 256 bytes: entry (size + 255) >> KMALLOC_MID_SHIFT serves the sizes
 * (256 * (i - 1), 256 * i], one class each (from 1 KiB up every class
 * bound is a multiple of 256: four classes per doubling). malloc's second
 * inline route (kmalloc_mid_fast()) reads it where kmalloc() took three
 * calls and fls to the same magazines. An entry is the class's
 * pcp_cache only once its free mark is in page_alloc's shadow (or not
 * kept: !CONFIG_SLAB_FREE_HARDENED); the bypass cache otherwise (no
 * shadow, a debug class, not made yet), on which the route always misses
 * and malloc takes kmalloc()'s route. Gated as kmalloc_small_pcp[] is
 * (it reads the rseq area): by malloc_mid_end.
 */
#define KMALLOC_MID_SHIFT	8
#define KMALLOC_MID_ENTRIES	((KMALLOC_MAX_CACHE_SIZE >> KMALLOC_MID_SHIFT) + 1)
extern struct pcp_cache *kmalloc_mid_pcp[KMALLOC_MID_ENTRIES] __slab_hidden;

/*
 * What kfree_small_fast() needs of a class, by page tag (class + 1): the
 * magazines and the object-boundary test's constants (struct kmem_cache's
 * slab_mask, obj_magic, obj_limit), one array each so that one base
 * register and the tag address all four. Entry 0 (pages of other caches,
 * large blocks, free pages) and debug classes have obj_limit 0: every
 * test fails there, and kfree() takes over, so the tag needs no test of
 * its own.
 */
#define NR_KMALLOC_TAGS	(NR_KMALLOC_CLASSES + 1)
struct kmalloc_free_tab {
	struct pcp_cache *pc[NR_KMALLOC_TAGS];
	uintptr_t slab_mask[NR_KMALLOC_TAGS];
	uint64_t obj_magic[NR_KMALLOC_TAGS];
	uint64_t obj_limit[NR_KMALLOC_TAGS];
	/* where the free mark is: obj >> mark_shift, 0 (word 0) or
	 * PAGE_ALLOC_SHADOW_SHIFT (the shadow); a shift, not slab_mark_at()'s
	 * multiply: mulq's latency ahead of the store cost sh6bench 3-8% */
	uint64_t mark_shift[NR_KMALLOC_TAGS];
};
extern struct kmalloc_free_tab kmalloc_free_tab __slab_hidden;

/*
 * kmalloc_tab_is_object - @p is an object's start in a slab of kmalloc tag
 * @tag: slab_free_test() with the class's constants from the table. Tag 0
 * (not a kmalloc slab) and debug classes have obj_limit 0 and fail.
 */
static __always_inline bool kmalloc_tab_is_object(const void *p,
						  unsigned long tag)
{
	return ((uintptr_t)p & kmalloc_free_tab.slab_mask[tag]) *
	       kmalloc_free_tab.obj_magic[tag] < kmalloc_free_tab.obj_limit[tag];
}

/*
 * slab_mark_at - the word that holds @obj's free mark, for a cache whose
 * constants are @mul and @bias (struct kmem_cache's mark_mul, mark_bias):
 * the high and the low half of @obj * @mul, added, plus @bias. With @mul
 * 1 that is @obj + @bias (the mark in the object); with 2^57 it is
 * @obj >> 7 for an @obj on a 128-byte boundary (the low half is 0; bias
 * 0): the object's word in page_alloc's shadow, which lies at the heap's
 * addresses >> 7. One multiply, no branch: free() finds the mark of every
 * class the same way (docs/slab.md "Hardened frees"); kmalloc's classes
 * all have bias 0, so the hit paths add nothing.
 */
static __always_inline unsigned long *slab_mark_at(const void *obj,
						   uint64_t mul, uintptr_t bias)
{
#if defined(__x86_64__)
	uintptr_t lo, hi;

	/* (GCC 12 spends two more moves on the same product in C) */
	__asm__ ("mulq %[mul]"
		 : "=a" (lo), "=d" (hi)
		 : "0" ((uintptr_t)obj), [mul] "rm" (mul)
		 : "cc");
	return (unsigned long *)(hi + lo + bias);
#else
	unsigned __int128 x = (unsigned __int128)(uintptr_t)obj * mul;

	return (unsigned long *)((uintptr_t)(x >> 64) + bias + (uintptr_t)x);
#endif
}

/*
 * kmalloc_mark_at - slab_mark_at() for an object of kmalloc tag @tag: the
 * same word (bias 0; mark_mul 1 is shift 0, 2^57 is shift 7), by a shift.
 */
static __always_inline unsigned long *kmalloc_mark_at(const void *obj,
						      unsigned int tag)
{
	return (unsigned long *)((uintptr_t)obj >>
				 kmalloc_free_tab.mark_shift[tag]);
}

/*
 * kmalloc_mark_take - check and clear the free mark @key at @mark in one
 * read-modify-write: *@mark ^= @key, which is 0 iff the mark was there.
 * Return: true when it was not (the word is then *@mark ^ @key: the bad
 * path xors it back before it reports). One instruction where a compare
 * and a store of 0 were two; GCC 12 spells the C as load, xor, store and
 * compare, hence the asm.
 */
static __always_inline bool kmalloc_mark_take(unsigned long *mark,
					      unsigned long key)
{
#if defined(__x86_64__)
	bool bad;

	__asm__ ("xorq %[key], %[mark]"
		 : [mark] "+m" (*mark), "=@ccnz" (bad)
		 : [key] "r" (key));
	return bad;
#else
	return (*mark ^= key) != 0;
#endif
}

/* slab/kmalloc.c: the cold sides (never on a hit) */
void *kmalloc_miss(size_t size, gfp_t gfp) __slab_hidden;
void *kmalloc_small_bad(void *obj, struct pcp_cache *pc) __slab_hidden;
void kfree_small_miss(void *p) __slab_hidden;
void *kmalloc_nozero(size_t size, gfp_t gfp) __slab_hidden;
void *kmalloc_mid_bad(void *obj, struct pcp_cache *pc) __slab_hidden;
bool kmalloc_small_ready(void) __slab_hidden;

/**
 * kmalloc_small_fast - kmalloc(@size) for @size <= KMALLOC_SMALL_MAX (0 is
 * served as 1: malloc(0)),
 * once kmalloc_small_ready() said yes (and no kmalloc class is a debug
 * class: those need kmalloc_slow(), which knows the size and call site).
 *
 * Cost on a hit: the class's magazines from one table, the rseq pop
 * (pcp_alloc_fast()), the free mark's check and clear (a double free is
 * reported here, before the object has a second owner).
 * Context: any thread; lock-free on a hit.
 * Return: the object, or NULL with errno ENOMEM.
 */
static __always_inline void *kmalloc_small_fast(size_t size, gfp_t gfp)
{
	struct pcp_cache *pc;
	unsigned long *obj;

	if (!IS_ENABLED(CONFIG_PERCPU_CACHE))
		return kmalloc_miss(size, gfp);
	/* acquire (a plain load on x86): kmalloc_small_publish() releases */
	pc = __atomic_load_n(&kmalloc_small_pcp[size], __ATOMIC_ACQUIRE);
	obj = pcp_alloc_fast(pc);
	if (unlikely(!obj))
		return kmalloc_miss(size, gfp);
	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED)) {
		/*
		 * the class's mark is its pcp_cache's address (mark_key):
		 * checked and cleared by one xor, 0 iff it was there
		 * (kmalloc_small_bad() xors a wrong word back)
		 */
		if (unlikely(kmalloc_mark_take(obj, (unsigned long)pc)))
			return kmalloc_small_bad(obj, pc);	/* a tail call */
	}
	return obj;
}

/**
 * kmalloc_mid_fast - kmalloc(@size) for KMALLOC_SMALL_MAX < @size <=
 * KMALLOC_MAX_CACHE_SIZE, under the same conditions as
 * kmalloc_small_fast() (its caller's gate) and no __GFP_ZERO in @gfp.
 *
 * Cost on a hit: the class's magazines from kmalloc_mid_pcp[] (an add, a
 * shift, one load), the rseq pop, the free mark's check and clear in the
 * shadow word at obj >> PAGE_ALLOC_SHADOW_SHIFT (a double free is
 * reported here, before the object has a second owner: the entry is set
 * only for classes whose mark is there).
 * A miss of the class's magazines goes straight to kmalloc_miss(), as
 * __kmalloc_index()'s does; on the bypass cache (the class not made yet,
 * its mark not in the shadow, a debug class) kmalloc's own route.
 * Context: any thread; lock-free on a hit.
 * Return: the object, or NULL with errno ENOMEM.
 */
static __always_inline void *kmalloc_mid_fast(size_t size, gfp_t gfp)
{
	struct pcp_cache *pc;
	unsigned long *obj, *mark;

	if (!IS_ENABLED(CONFIG_PERCPU_CACHE))
		return kmalloc_nozero(size, gfp);
	/* acquire (a plain load on x86): kmalloc_mid_publish() releases */
	pc = __atomic_load_n(&kmalloc_mid_pcp[(size + (1 << KMALLOC_MID_SHIFT) - 1) >>
					      KMALLOC_MID_SHIFT], __ATOMIC_ACQUIRE);
	obj = pcp_alloc_fast(pc);
	if (unlikely(!obj)) {
		if (pc == PCP_BYPASS)
			return kmalloc_nozero(size, gfp);
		return kmalloc_miss(size, gfp);
	}
	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED)) {
		/* kmalloc_mark_at() with the shadow's shift; the mark is pc */
		mark = (unsigned long *)((uintptr_t)obj >> PAGE_ALLOC_SHADOW_SHIFT);
		if (unlikely(kmalloc_mark_take(mark, (unsigned long)pc)))
			return kmalloc_mid_bad(obj, pc);	/* a tail call */
	}
	return obj;
}

/**
 * kfree_small_fast - free(@p): a kmalloc object of a class with magazines
 * goes to this CPU's magazine; everything else to kfree() (other caches'
 * objects, large blocks, a failed hardened test) or @foreign (not ours).
 *
 * Cost on a hit: @p's offset from page_alloc_base against page_alloc_span
 * (the range check and the tag's index in one subtraction), the tag byte
 * of its page (page_alloc_tags: the kmalloc class, set on every page of a
 * kmalloc slab; small enough to stay in cache where a struct page per
 * 4 KiB of a large heap does not), the object-boundary test with the
 * class's constants (slabs are naturally aligned), the store of the free
 * mark (the class's pcp_cache address; no load of the block; in word 0 up
 * to 1 KiB, in page_alloc's shadow above, where one shift by the
 * class's mark_shift finds it: kmalloc_mark_at()), the rseq push.
 * A failed hardened test (a double free, an interior pointer, every free
 * of a debug cache: their obj_limit is 0) goes to kfree() by a tail call,
 * so kfree()'s _RET_IP_ is free()'s caller at no cost here; it checks
 * again and reports. No return address is read here: GCC does not split
 * a function that reads one into hot and cold parts.
 * Context: any thread; lock-free on a hit.
 */
static __always_inline void kfree_small_fast(void *p, void (*foreign)(const void *))
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)page_alloc_base;
	struct pcp_cache *pc;
	unsigned long tag;

	if (unlikely(off >= page_alloc_span)) {
		foreign(p);
		return;
	}
	tag = page_alloc_tags[off >> PAGE_SHIFT];
	if (!IS_ENABLED(CONFIG_PERCPU_CACHE) ||
	    (!IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) && unlikely(!tag))) {
		kfree(p);
		return;
	}
	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED)) {
		if (unlikely(!kmalloc_tab_is_object(p, tag))) {
			kfree(p);
			return;
		}
	}
	/* loaded once: the mark's store below might alias the table */
	pc = kmalloc_free_tab.pc[tag];
	/* the class's mark is its pcp_cache's address (mark_key) */
	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
		*kmalloc_mark_at(p, tag) = (unsigned long)pc;
	if (likely(pcp_free_fast(pc, p)))
		return;
	kfree_small_miss(p);
}

#endif /* USLAB_SLAB_FASTPATH_H */
