// SPDX-License-Identifier: MIT
/*
 * kmalloc: the size classes (the one table, kmalloc_info[]), the kmalloc-N
 * caches serving them (created lazily on first use, from the boot cache,
 * never through malloc), and the routes from a size to a cache:
 *
 *   kmalloc(size)  ---- kmalloc_index(size) ----.
 *   kmalloc_aligned(size, align) ---------------+--> __kmalloc_index(idx)
 *        kmalloc_pcp[idx] -> pcp_alloc_fast() (one rseq section) -> hit
 *   malloc(size <= 1 KiB) -- kmalloc_small_fast(size) (slab/fastpath.h,
 *        inline): kmalloc_small_pcp[size] -> pcp_alloc_fast() -> hit
 *   either miss: kmalloc_miss(size) -> slab_alloc_miss(), which refills
 *        from the slabs without entering the section again (percpu
 *        retries an aborted section itself)
 *
 * Larger requests go to page_alloc: a buddy block up to MAX_PAGE_ORDER, a
 * mapping of its own above. Power-of-two classes are naturally aligned,
 * debug or not; the others are 16-byte aligned (all from 16 bytes on are
 * multiples of 16 and slabs start on a page).
 *
 * slab_debug=...,kmalloc-N (slab/settings.c) makes kmalloc-N a debug cache
 * when it is created. A kmalloc cache that already exists when the setting
 * arrives (the loader and libc allocate before USLAB_OPTIONS is read) is
 * re-made: a fresh kmalloc-N with the debug flags takes its place in the
 * tables, and the old one, renamed kmalloc-N-old, keeps serving the frees
 * of its objects (kfree finds the cache through struct page). While any
 * kmalloc cache may be a debug cache, kmalloc() takes kmalloc_slow() for
 * every size (kmalloc_fast_max 0), which passes the size asked for (the
 * kmalloc red zone starts there) and the caller's address down.
 *
 * Locking: kmalloc-N creation and re-making take slab_mutex (see slab.c);
 * the caches and kmalloc_pcp[] tables are published with release stores
 * and read with acquire loads (plain loads on x86), so the fast path takes
 * no lock. A kmalloc_pcp[] entry changes only when its class is re-made;
 * a thread still holding the old entry allocates from the old cache,
 * which stays valid: kmalloc caches are never destroyed.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <urcu/urcu-memb.h>
#include <urcu/rculist.h>
#include "slab/internal.h"
#include "slab/fastpath.h"

_Static_assert((CONFIG_KMALLOC_MAX_CACHE_SIZE &
		(CONFIG_KMALLOC_MAX_CACHE_SIZE - 1)) == 0,
	       "CONFIG_KMALLOC_MAX_CACHE_SIZE must be a power of two");
_Static_assert(KMALLOC_MAX_CACHE_SIZE == 1 << KMALLOC_SHIFT_HIGH,
	       "KMALLOC_SHIFT_HIGH must match CONFIG_KMALLOC_MAX_CACHE_SIZE");
_Static_assert(KMALLOC_SMALL_MAX <= KMALLOC_MAX_CACHE_SIZE,
	       "the byte table must not reach past the caches");

/*
 * The size classes, smallest first (include/uslab/slab.h says why these).
 * tests/slab/check_kmalloc_classes.c checks the table against kmalloc_index()
 * and the waste bound for every size.
 */
/* One class; four between two powers of two from 64 on (5/8, 6/8, 7/8 and
 * 8/8 of the upper one): the kernel's 25% waste bound. */
#define KMALLOC_CLASS(name, size)	{ "kmalloc-" name, size }
#define KMALLOC_QUARTET(top, n5, n6, n7, n8)					\
	KMALLOC_CLASS(n5, (top) / 8 * 5), KMALLOC_CLASS(n6, (top) / 8 * 6),	\
	KMALLOC_CLASS(n7, (top) / 8 * 7), KMALLOC_CLASS(n8, top)

/* Every class up to the largest CONFIG_KMALLOC_MAX_CACHE_SIZE (256 KiB), as
 * the kernel's kmalloc_info[]; a build has the first NR_KMALLOC_CLASSES. */
const struct kmalloc_info_struct kmalloc_info[] = {
	KMALLOC_CLASS("8", 8), KMALLOC_CLASS("16", 16), KMALLOC_CLASS("32", 32),
	KMALLOC_CLASS("48", 48), KMALLOC_CLASS("64", 64),			/* 0 .. 4 */
	KMALLOC_QUARTET(128, "80", "96", "112", "128"),	/* 5 .. 8 */
	KMALLOC_QUARTET(256, "160", "192", "224", "256"),	/* 9 .. 12 */
	KMALLOC_QUARTET(512, "320", "384", "448", "512"),	/* 13 .. 16 */
	KMALLOC_QUARTET(1024, "640", "768", "896", "1k"),	/* 17 .. 20 */
	KMALLOC_QUARTET(2048, "1280", "1536", "1792", "2k"),	/* 21 .. 24 */
	KMALLOC_QUARTET(4096, "2560", "3k", "3584", "4k"),	/* 25 .. 28 */
	KMALLOC_QUARTET(8192, "5k", "6k", "7k", "8k"),	/* 29 .. 32 */
	KMALLOC_QUARTET(16384, "10k", "12k", "14k", "16k"),	/* 33 .. 36 */
	KMALLOC_QUARTET(32768, "20k", "24k", "28k", "32k"),	/* 37 .. 40 */
	KMALLOC_QUARTET(65536, "40k", "48k", "56k", "64k"),	/* 41 .. 44 */
	KMALLOC_QUARTET(131072, "80k", "96k", "112k", "128k"),	/* 45 .. 48 */
	KMALLOC_QUARTET(262144, "160k", "192k", "224k", "256k"),	/* 49 .. 52 */
};
_Static_assert(ARRAY_SIZE(kmalloc_info) >= NR_KMALLOC_CLASSES,
	       "kmalloc_info[] must list every class up to KMALLOC_MAX_CACHE_SIZE");

/* The class of every size up to KMALLOC_SMALL_MAX, by (size - 1) / 8: one
 * line per row of kmalloc_info[] above. */
const unsigned char kmalloc_size_index[KMALLOC_SMALL_MAX / 8] = {
	[0] = 0, [1] = 1, [2 ... 3] = 2, [4 ... 5] = 3, [6 ... 7] = 4,	/* 8 .. 64 */
	[8 ... 9] = 5, [10 ... 11] = 6, [12 ... 13] = 7, [14 ... 15] = 8,	/* .. 128 */
	[16 ... 19] = 9, [20 ... 23] = 10, [24 ... 27] = 11, [28 ... 31] = 12,	/* .. 256 */
	[32 ... 39] = 13, [40 ... 47] = 14, [48 ... 55] = 15, [56 ... 63] = 16,	/* .. 512 */
	[64 ... 79] = 17, [80 ... 95] = 18, [96 ... 111] = 19, [112 ... 127] = 20, /* .. 1k */
};

static struct kmem_cache *kmalloc_caches[NR_KMALLOC_CLASSES];
/*
 * Each class's magazines, for __kmalloc_index(): NULL until the class has
 * a cache (the fast path must not run before pcp_init(), which sets the
 * rseq area it reads), then that cache's (the bypass cache for a debug
 * class, on which every fast path misses).
 */
static struct pcp_cache *kmalloc_pcp[NR_KMALLOC_CLASSES];

/* kfree_small_fast()'s constants by page tag (slab/fastpath.h) */
struct kmalloc_free_tab kmalloc_free_tab;

/* slab/fastpath.h: every entry valid from the start (the bypass cache) */
struct pcp_cache *kmalloc_small_pcp[KMALLOC_SMALL_MAX + 1] = {
	[0 ... KMALLOC_SMALL_MAX] = PCP_BYPASS,
};

/*
 * Entry @e of an inline route's table becomes @pc: @first, only where it
 * is still the bypass cache (the class's first use, lock-free; it never
 * undoes a re-making's entry); else unconditionally (a re-making, under
 * slab_mutex). A release store: the cache is complete before a fast path
 * can reach it.
 */
static void kmalloc_entry_publish(struct pcp_cache **e, struct pcp_cache *pc,
				  bool first)
{
	struct pcp_cache *bypass = PCP_BYPASS;

	if (first)
		__atomic_compare_exchange_n(e, &bypass, pc, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	else
		__atomic_store_n(e, pc, __ATOMIC_RELEASE);
}

/* Class @idx's magazines become @pc in kmalloc_small_pcp[] for the sizes
 * it serves (kmalloc_entry_publish()). */
static void kmalloc_small_publish(unsigned int idx, struct pcp_cache *pc,
				  bool first)
{
	unsigned int i;

	for (i = 0; i <= KMALLOC_SMALL_MAX; i++)
		if (kmalloc_index_small(i ? i : 1) == idx)	/* 0: as 1 */
			kmalloc_entry_publish(&kmalloc_small_pcp[i], pc, first);
}

/* slab/fastpath.h: every entry valid from the start (the bypass cache) */
struct pcp_cache *kmalloc_mid_pcp[KMALLOC_MID_ENTRIES] = {
	[0 ... KMALLOC_MID_ENTRIES - 1] = PCP_BYPASS,
};

/*
 * Class @idx (cache @s) in kmalloc_mid_pcp[], as kmalloc_small_publish()
 * does for kmalloc_small_pcp[]: its magazines where its mark is in the
 * shadow (kmalloc_mid_fast() checks it there), the bypass cache otherwise.
 */
static void kmalloc_mid_publish(unsigned int idx, struct kmem_cache *s,
				bool first)
{
	struct pcp_cache *pc = s->pcp;
	unsigned int i;

	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) &&
	    (s->mark_mul != 1ULL << (64 - PAGE_ALLOC_SHADOW_SHIFT) || s->mark_bias))
		pc = PCP_BYPASS;
	for (i = (KMALLOC_SMALL_MAX >> KMALLOC_MID_SHIFT) + 1;
	     i < KMALLOC_MID_ENTRIES; i++) {
		/* the entry's sizes are one class: the largest names it */
		if (kmalloc_index((size_t)i << KMALLOC_MID_SHIFT) != idx)
			continue;
		BUG_ON(kmalloc_index(((size_t)(i - 1) << KMALLOC_MID_SHIFT) + 1) != idx);
		kmalloc_entry_publish(&kmalloc_mid_pcp[i], pc, first);
	}
}

static void kmalloc_free_info_set(unsigned int idx, struct kmem_cache *s)
{
	unsigned int tag = idx + 1;

	WRITE_ONCE(kmalloc_free_tab.pc[tag],
		   IS_ENABLED(CONFIG_PERCPU_CACHE) ? s->pcp : NULL);
	WRITE_ONCE(kmalloc_free_tab.slab_mask[tag], s->slab_mask);
	WRITE_ONCE(kmalloc_free_tab.obj_magic[tag], s->obj_magic);
	/* the hit paths find the mark with no bias (kmalloc_mark_at()); a debug
	 * class (obj_limit 0: every free fails) never reaches it */
	BUG_ON(s->mark_bias && s->obj_limit);
	BUG_ON(s->mark_mul != 1 &&
	       s->mark_mul != 1ULL << (64 - PAGE_ALLOC_SHADOW_SHIFT));
	WRITE_ONCE(kmalloc_free_tab.mark_shift[tag],
		   s->mark_mul == 1 ? 0 : PAGE_ALLOC_SHADOW_SHIFT);
	__atomic_store_n(&kmalloc_free_tab.obj_limit[tag], s->obj_limit,
			 __ATOMIC_RELEASE);
}

/* kmalloc() sizes 1 .. this go straight to __kmalloc_index(); 0 once a
 * kmalloc cache may be a debug cache (kmalloc_debug_route()), and from
 * the start in the debug preset, where every cache is one. */
static size_t kmalloc_fast_max =
	IS_ENABLED(CONFIG_SLAB_DEBUG_ON) ? 0 : KMALLOC_MAX_CACHE_SIZE;

/**
 * kmalloc_debug_route - from now on every kmalloc() takes kmalloc_slow(),
 * which gives a debug kmalloc cache the size asked for and the call site.
 * Context: any; called when a slab_debug setting may name a kmalloc cache.
 */
void kmalloc_debug_route(void)
{
	WRITE_ONCE(kmalloc_fast_max, 0);
}

/* kmalloc-N's alignment: its size for powers of two, 16 from 16 bytes on
 * (the same stride either way; red zones then keep objects 16-aligned). */
static unsigned int kmalloc_align(unsigned int size)
{
	if (!(size & (size - 1)))
		return size;
	return size >= 16 ? 16 : 0;
}

/*
 * @gfp: the allocation that needs the class; its __GFP_NOFAIL holds for
 * the struct kmem_cache too (waiting for memory as the object would),
 * else kmalloc(__GFP_NOFAIL) of a class not made yet could return NULL.
 */
static __slowpath struct kmem_cache *create_kmalloc_cache(unsigned int idx,
							 gfp_t gfp)
{
	struct kmem_cache *s;
	unsigned int size = kmalloc_info[idx].size;
	/* Natural alignment for power-of-two classes, as the kernel promises. */
	unsigned int align = kmalloc_align(size);

	struct kmem_cache *fresh;
	sigset_t all, old;

	/* never from a handler that interrupted the allocator: the thread may
	 * hold slab_mutex or the zone lock (kmalloc_miss serves it instead) */
	if (sigsafe_reentered()) {
		errno = ENOMEM;
		return NULL;
	}
	slab_init();
	/*
	 * No signal handler may run on this thread while it holds slab_mutex:
	 * one that calls malloc for a class not yet created (programs do,
	 * though malloc is not async-signal-safe) would wait for slab_mutex
	 * forever. Blocked once per class, so the cost does not matter.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/*
	 * Allocate before taking slab_mutex: this allocation may be the first
	 * slow path of the process, which starts the percpu reaper thread, and
	 * pthread_create() calls malloc (the dtv) - with libuslab preloaded that
	 * is kmalloc of another class, which must be able to take slab_mutex.
	 */
	fresh = kmem_cache_zalloc(&kmem_cache_boot, GFP_KERNEL | (gfp & __GFP_NOFAIL));
	pthread_mutex_lock(&slab_mutex);
	s = __atomic_load_n(&kmalloc_caches[idx], __ATOMIC_ACQUIRE);
	if (s) {
		if (fresh)
			kmem_cache_free(&kmem_cache_boot, fresh);
		goto out_unlock;
	}
	s = fresh;
	if (!s)
		goto out_unlock;
	if (__kmem_cache_create(s, kmalloc_info[idx].name, size, align,
				__SLAB_KMALLOC, NULL)) {
		/* Only an impossible layout fails; keep the struct simple. */
		kmem_cache_free(&kmem_cache_boot, s);
		s = NULL;
		errno = EINVAL;
		goto out_unlock;
	}
	/* before any slab: kfree_fast() finds the class by the page's tag */
	_Static_assert(NR_KMALLOC_CLASSES <= 255, "a page tag is one byte");
	s->page_tag = (unsigned char)(idx + 1);
	kmalloc_free_info_set(idx, s);
	cds_list_add_tail_rcu(&s->list, &slab_caches);
	__atomic_store_n(&kmalloc_caches[idx], s, __ATOMIC_RELEASE);
out_unlock:
	pthread_mutex_unlock(&slab_mutex);
	if (s && s == fresh)
		slab_settings_recheck(s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return s;
}

/* kmalloc_cache_get(), the class made with @gfp's __GFP_NOFAIL. */
static struct kmem_cache *kmalloc_cache_get_gfp(unsigned int idx, gfp_t gfp)
{
	struct kmem_cache *s = __atomic_load_n(&kmalloc_caches[idx],
					       __ATOMIC_ACQUIRE);

	if (likely(s))
		return s;
	return create_kmalloc_cache(idx, gfp);
}

/**
 * kmalloc_cache_get - the kmalloc cache of class @idx, created on first use.
 * Context: thread-safe; lock-free after the first call for @idx.
 * Return: the cache, or NULL with errno ENOMEM.
 */
struct kmem_cache *kmalloc_cache_get(unsigned int idx)
{
	return kmalloc_cache_get_gfp(idx, GFP_KERNEL);
}

struct kmem_cache *kmalloc_slab(size_t size)
{
	if (!size || size > KMALLOC_MAX_CACHE_SIZE)
		return NULL;
	return kmalloc_cache_get(kmalloc_index(size));
}

/**
 * kmalloc_cache_remake - replace kmalloc cache @old by a fresh one whose
 * debug flags follow the slab_debug settings now in force, if they differ
 * from @old's (see the top of this file).
 * Context: thread-safe; takes slab_mutex; an RCU reader may call it.
 * Return: 0, or -ENOMEM (the old cache stays in place).
 */
int kmalloc_cache_remake(struct kmem_cache *old)
{
	struct kmem_cache *fresh = NULL;
	unsigned int idx, size;
	sigset_t all, mask;
	size_t len;
	int err = 0;

	for_each_kmalloc_class(idx)
		if (__atomic_load_n(&kmalloc_caches[idx], __ATOMIC_ACQUIRE) == old)
			break;
	if (idx == NR_KMALLOC_CLASSES || !IS_ENABLED(CONFIG_SLAB_DEBUG))
		return 0;	/* already replaced */
	if (((slab_settings_debug_flags(old->name, __SLAB_KMALLOC) ^ old->flags) &
	     SLAB_DEBUG_FLAGS) == 0)
		return 0;
	size = kmalloc_info[idx].size;
	/* no handler may malloc while this thread holds slab_mutex */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &mask);
	fresh = kmem_cache_zalloc(&kmem_cache_boot, GFP_KERNEL);
	if (!fresh) {
		err = -ENOMEM;
		goto out_mask;
	}
	pthread_mutex_lock(&slab_mutex);
	if (__atomic_load_n(&kmalloc_caches[idx], __ATOMIC_RELAXED) != old ||
	    __kmem_cache_create(fresh, kmalloc_info[idx].name, size,
				kmalloc_align(size), __SLAB_KMALLOC, NULL)) {
		pthread_mutex_unlock(&slab_mutex);
		kmem_cache_free(&kmem_cache_boot, fresh);
		goto out_mask;
	}
	/*
	 * The class's page tag moves to the fresh cache: the old one's slabs
	 * lose it first (kfree_fast() then frees their objects through
	 * kfree(), which reads struct page). A free racing with this very
	 * moment could pair an old object's tag with the new cache: re-making
	 * is for start-up (USLAB_OPTIONS, read from the constructor), not for
	 * a program freeing the class's objects on other threads meanwhile.
	 */
	slab_untag(old);
	fresh->page_tag = (unsigned char)(idx + 1);
	kmalloc_free_info_set(idx, fresh);
	/*
	 * "kmalloc-64" -> "kmalloc-64-old": the suffix first, then the byte
	 * that joins it, so that a lockless reader sees either name.
	 */
	len = strlen(old->name);
	if (len + 4 < sizeof(old->name)) {
		memcpy(old->name + len + 1, "old", 4);
		__atomic_store_n(&old->name[len], '-', __ATOMIC_RELEASE);
	}
	cds_list_add_tail_rcu(&fresh->list, &slab_caches);
	__atomic_store_n(&kmalloc_caches[idx], fresh, __ATOMIC_RELEASE);
	if (IS_ENABLED(CONFIG_PERCPU_CACHE)) {
		__atomic_store_n(&kmalloc_pcp[idx], fresh->pcp, __ATOMIC_RELEASE);
		kmalloc_small_publish(idx, fresh->pcp, false);
		kmalloc_mid_publish(idx, fresh, false);
	}
	pthread_mutex_unlock(&slab_mutex);
	slab_settings_recheck(fresh);
out_mask:
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	return err;
}

/*
 * Behind __kmalloc_index() and kmalloc_small_fast() (slab/fastpath.h):
 * first use of the class, an empty magazine, a nocache build, a debug
 * class (its magazines are the bypass cache). @size: 0 (as 1: malloc(0))
 * .. KMALLOC_MAX_CACHE_SIZE, any size of the class (the miss finds the class
 * again: kept off the hit paths, which have the size or the class). No
 * call site for SLAB_STORE_USER: malloc's route pays nothing for it;
 * kmalloc() and malloc reach debug classes through kmalloc_slow(), which
 * knows it. Return: an object taken (slab_obj_take()), or NULL.
 */
__slowpath void *kmalloc_miss(size_t size, gfp_t gfp)
{
	unsigned int idx = kmalloc_index(size ? size : 1);	/* malloc(0) */
	struct kmem_cache *s = __atomic_load_n(&kmalloc_caches[idx], __ATOMIC_ACQUIRE);
	struct pcp_cache *none = NULL;

	if (unlikely(!s)) {
		/*
		 * First use of the class in a signal handler that interrupted
		 * its thread inside the allocator: making the cache takes
		 * slab_mutex and the zone lock, which that thread may hold
		 * (robust signals-large hung so). An emergency block of the
		 * class's size and alignment serves it; the cache is made at
		 * the next use outside a handler.
		 */
		if (sigsafe_reentered())
			return page_alloc_emergency_alloc(kmalloc_info[idx].size,
							  kmalloc_align(kmalloc_info[idx].size));
		s = create_kmalloc_cache(idx, gfp);
		if (unlikely(!s))
			return NULL;
	}
	/* only from NULL: a re-made class's entry is not taken back */
	if (IS_ENABLED(CONFIG_PERCPU_CACHE) &&
	    unlikely(!__atomic_load_n(&kmalloc_pcp[idx], __ATOMIC_RELAXED))) {
		__atomic_compare_exchange_n(&kmalloc_pcp[idx], &none, s->pcp,
					    false, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
		if (idx <= kmalloc_size_index[KMALLOC_SMALL_MAX / 8 - 1])
			kmalloc_small_publish(idx, s->pcp, true);
		else
			kmalloc_mid_publish(idx, s, true);
	}
	return slab_alloc_miss(s, gfp, 0);
}

/*
 * kmalloc_small_fast()'s object lacked the free mark: a double free,
 * reported (slab_obj_take()'s report); the object as slab_obj_take()
 * leaves it when the report returns.
 */
__slowpath void *kmalloc_small_bad(void *obj, struct pcp_cache *pc)
{
	*(unsigned long *)obj ^= (unsigned long)pc;	/* the word as found */
	slab_take_bad(NULL, obj);
	*(unsigned long *)obj = 0;	/* classes up to 1 KiB: word 0 */
	return obj;
}

/*
 * kmalloc_mid_fast()'s object lacked the free mark in the shadow: a
 * double free, reported as kmalloc_small_bad() does; the mark cleared.
 */
__slowpath void *kmalloc_mid_bad(void *obj, struct pcp_cache *pc)
{
	*(unsigned long *)((uintptr_t)obj >> PAGE_ALLOC_SHADOW_SHIFT) ^=
		(unsigned long)pc;			/* the word as found */
	slab_take_bad(NULL, obj);
	*(unsigned long *)((uintptr_t)obj >> PAGE_ALLOC_SHADOW_SHIFT) = 0;
	return obj;
}

/*
 * May kmalloc_small_fast() run? Once pcp_init() has chosen the rseq area
 * its section reads. Context: not from a signal handler that interrupted
 * the allocator (the caller's slow path only).
 */
bool kmalloc_small_ready(void)
{
	if (IS_ENABLED(CONFIG_PERCPU_CACHE))
		pcp_init();
	return true;
}

/**
 * __kmalloc_index - an object of size class @idx: the one route from a
 * size to a cache (kmalloc, kmalloc_aligned and malloc all end here).
 * @idx: < NR_KMALLOC_CLASSES, from kmalloc_index() (unsigned long: no
 *        zero extension on the hit path).
 * @gfp: for the slow path; must not hold __GFP_ZERO (callers clear).
 *
 * Cost on a hit: one load of the class's pcp_cache and its NULL test, the rseq
 * pop (pcp_alloc_fast), the test of the result, the free mark's check
 * and clear (word 0 up to 1 KiB, the shadow word above: slab_mark_at()).
 * Context: any thread; lock-free on a hit.
 * Return: the object, or NULL with errno ENOMEM.
 */
__fastpath void *__kmalloc_index(unsigned long idx, gfp_t gfp)
{
	struct pcp_cache *pc;
	void *obj;

	if (!IS_ENABLED(CONFIG_PERCPU_CACHE))
		return kmalloc_miss(kmalloc_info[idx].size, gfp);
	pc = __atomic_load_n(&kmalloc_pcp[idx], __ATOMIC_ACQUIRE);
	if (unlikely(!pc))
		return kmalloc_miss(kmalloc_info[idx].size, gfp);
	obj = pcp_alloc_fast(pc);
	if (unlikely(!obj))
		return kmalloc_miss(kmalloc_info[idx].size, gfp);
	return slab_obj_take_at(NULL, obj,
				kmalloc_mark_at(obj, idx + 1),
				(unsigned long)pc);
}

/* __kmalloc_index() of @size, zeroed for __GFP_ZERO. */
static __always_inline void *kmalloc_class(size_t size, unsigned int idx,
					   gfp_t flags)
{
	void *p = __kmalloc_index(idx, flags & ~__GFP_ZERO);

	if ((flags & __GFP_ZERO) && likely(p))
		memset(p, 0, size);
	return p;
}

static unsigned int size_order(size_t size)
{
	if (size <= PAGE_SIZE)
		return 0;
	return (unsigned int)(64 - __builtin_clzl((size - 1) >> PAGE_SHIFT));
}

/*
 * Beyond the caches: a buddy block of the order covering max(size, align)
 * (buddy blocks are naturally aligned), or an own mapping with @align.
 */
static __slowpath void *kmalloc_large(size_t size, size_t align, gfp_t flags)
{
	size_t need = size > align ? size : align;
	unsigned int attempt = 0;
	void *p;

	if (unlikely(size > KMALLOC_MAX_SIZE)) {
		errno = ENOMEM;
		return NULL;
	}
	if (sigsafe_reentered()) {
		/*
		 * A signal handler inside the allocator: no lock
		 * (lib/sigsafe.h). A buddy block is aligned to its size, so a
		 * power-of-two size in the buddy's range is here too.
		 */
		if (!(size & (size - 1)) && size <= (PAGE_SIZE << MAX_PAGE_ORDER) &&
		    size > align)
			align = size;
		return page_alloc_emergency_alloc(size, align);
	}
	if (sigsafe_has_deferred())
		slab_drain_deferred();
	for (;;) {
		if (need <= (PAGE_SIZE << MAX_PAGE_ORDER)) {
			struct page *page = alloc_pages(flags & ~__GFP_NOFAIL,
							size_order(need));

			p = page ? page_address(page) : NULL;
		} else {
			p = alloc_pages_large(size, align > PAGE_SIZE ? align :
					      PAGE_SIZE, flags & ~__GFP_NOFAIL);
		}
		if (likely(p) || !(flags & __GFP_NOFAIL))
			break;
		slab_nofail_wait(attempt++);
	}
	if (!p) {
		if (!(flags & __GFP_NOWARN))
			pr_debug("kmalloc: out of memory for %zu bytes", size);
		errno = ENOMEM;
	}
	/* no lock held: may start page_alloc's decay thread */
	page_alloc_decayd_poll();
	return p;
}

/*
 * kmalloc() of 0, of sizes above the caches, and of every size while a
 * kmalloc cache may be a debug cache: a debug class gets the size asked
 * for (its red zone starts there, ksize() says it) and the call site
 * @addr; the others take the usual route.
 */
static __slowpath void *kmalloc_slow(size_t size, gfp_t flags,
				     unsigned long addr)
{
	struct kmem_cache *s;
	unsigned int idx;
	void *p;

	if (unlikely(!size))
		return ZERO_SIZE_PTR;
	if (size > KMALLOC_MAX_CACHE_SIZE)
		return kmalloc_large(size, PAGE_SIZE, flags);
	idx = kmalloc_index(size);
	s = kmalloc_cache_get_gfp(idx, flags);
	if (unlikely(!s)) {
		/* a handler inside the allocator, first use of the class:
		 * as kmalloc_miss(), an emergency block */
		if (sigsafe_reentered())
			return page_alloc_emergency_alloc(kmalloc_info[idx].size,
							  kmalloc_align(kmalloc_info[idx].size));
		return NULL;
	}
	if (!slab_debug(s))
		return kmalloc_class(size, idx, flags);
	p = __slab_alloc(s, flags, addr);
	/* a handler's emergency block has no debug metadata past the object */
	if (likely(p) && !(unlikely(sigsafe_reentered()) && page_alloc_emergency_size(p)))
		slab_debug_set_orig_size(s, p, size);
	return p;
}

/**
 * kmalloc - allocate @size bytes.
 * @flags: GFP flags; __GFP_ZERO zeroes, __GFP_NOFAIL never returns NULL.
 * Context: thread-safe; never calls malloc.
 * Return: the memory (aligned to its size for power-of-two sizes, to 8 at
 * least), ZERO_SIZE_PTR for @size 0, or NULL with errno ENOMEM.
 */
void *kmalloc(size_t size, gfp_t flags)
{
	/* size - 1 wraps for 0: one compare for both ends (and debugging) */
	if (likely(size - 1 < READ_ONCE(kmalloc_fast_max)))
		return kmalloc_class(size, kmalloc_index(size), flags);
	return kmalloc_slow(size, flags, _RET_IP_);
}

/*
 * kmalloc() for the malloc layer's sizes above KMALLOC_SMALL_MAX (never
 * __GFP_ZERO): a direct call (kmalloc() is exported, so the library's own
 * calls of it go through its PLT entry) and a tail call into the class's
 * route, with no frame around it for the zeroing.
 */
__fastpath void *kmalloc_nozero(size_t size, gfp_t flags)
{
	if (likely(size - 1 < READ_ONCE(kmalloc_fast_max)))
		return __kmalloc_index(kmalloc_index(size), flags);
	return kmalloc_slow(size, flags, _RET_IP_);
}

void *kzalloc(size_t size, gfp_t flags)
{
	return kmalloc(size, flags | __GFP_ZERO);
}

/** kmalloc_array - @n * @size bytes; NULL (errno ENOMEM) on overflow. */
void *kmalloc_array(size_t n, size_t size, gfp_t flags)
{
	size_t bytes;

	if (unlikely(__builtin_mul_overflow(n, size, &bytes))) {
		errno = ENOMEM;
		return NULL;
	}
	return kmalloc(bytes, flags);
}

void *kcalloc(size_t n, size_t size, gfp_t flags)
{
	return kmalloc_array(n, size, flags | __GFP_ZERO);
}

/**
 * kmalloc_aligned - @size bytes aligned to @align (a power of two; up to
 * the largest buddy block by a block of that order, beyond by an own
 * mapping). Used by the malloc layer for memalign and friends.
 * Return: the memory, ZERO_SIZE_PTR for @size 0, or NULL with errno EINVAL
 * (@align not a power of two) or ENOMEM.
 */
void *kmalloc_aligned(size_t size, size_t align, gfp_t flags)
{
	size_t csize;

	if (unlikely(!align || (align & (align - 1)))) {
		errno = EINVAL;
		return NULL;
	}
	if (align <= ARCH_KMALLOC_MINALIGN || !size)
		return kmalloc(size, flags);
	csize = size > align ? size : align;
	if (csize <= KMALLOC_MAX_CACHE_SIZE) {
		/* A power-of-two class is aligned to its size. */
		csize = (size_t)1 << (64 - __builtin_clzl(csize - 1));
		if (csize <= KMALLOC_MAX_CACHE_SIZE)
			return kmalloc_class(size, kmalloc_index(csize), flags);
	}
	return kmalloc_large(size, align, flags);
}

static __slowpath void kfree_bad(const char *caller, const void *p,
				 const char *why)
{
	slab_bad_pointer(caller, "-", p, why, IS_ENABLED(CONFIG_SLAB_DEBUG_ON));
}

/*
 * A pointer into the heap that is no block of the page allocator: a
 * double free (or a free inside a block) of a large kmalloc. Hardened
 * builds stop here, as for a slab object (slab_free_check), before the
 * pages can be freed twice; others report it and leak the pointer.
 */
static __slowpath void kfree_bad_block(const void *p, bool inside)
{
	if (inside)
		pr_err("kfree(kmalloc-large): invalid pointer 0x%lx (inside a block)",
		       (unsigned long)p);
	else
		pr_err("kfree(kmalloc-large): double free of block 0x%lx "
		       "(no block is allocated there)", (unsigned long)p);
	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) || IS_ENABLED(CONFIG_SLAB_DEBUG_ON))
		slab_fatal();
}

/**
 * kfree - free memory from kmalloc() and friends (any slab object, too).
 * NULL and ZERO_SIZE_PTR are ignored. A pointer uslab did not hand out is
 * reported and ignored (aborts under CONFIG_SLAB_DEBUG_ON).
 * Context: thread-safe.
 */
void kfree(const void *p)
{
	struct page *page;

	if (unlikely(ZERO_OR_NULL_PTR(p)))
		return;
	if (unlikely(!page_alloc_owns(p))) {
		if (!page_alloc_emergency_free(p))
			kfree_bad("kfree", p, "not allocated by uslab");
		return;
	}
	page = virt_to_page(p);
	if (likely(PageFlag(page, PG_slab_page))) {
		if (slab_free_check("kfree", page->slab_cache, page, (void *)p))
			slab_free_fast(page->slab_cache, (void *)p);
		return;
	}
	page = compound_head(page);
	if (unlikely(page_address(page) != p)) {
		kfree_bad_block(p, true);
		return;
	}
	if (!PageFlag(page, PG_large) && !PageFlag(page, PG_head)) {
		kfree_bad_block(p, false);
		return;
	}
	if (sigsafe_reentered()) {
		/* a signal handler inside the allocator: later (lib/sigsafe.h) */
		sigsafe_defer((void *)p);
		return;
	}
	if (PageFlag(page, PG_large))
		free_pages_large((void *)p);
	else
		__free_pages(page, page->order);
	if (sigsafe_has_deferred())
		slab_drain_deferred();
	/* no lock held: may start page_alloc's decay thread */
	page_alloc_decayd_poll();
}

/*
 * kfree_small_fast()'s miss: the class's loaded magazine is full (or the
 * CPU's is stopped); slab/fastpath.h says what the hit costs.
 */
__slowpath void kfree_small_miss(void *p)
{
	slab_free_miss(kmalloc_caches[page_tag(p) - 1], p, 0);
}

/* kfree_small_fast() as a function, for kmalloc's own users and tests */
__fastpath void kfree_fast(void *p)
{
	kfree_small_fast(p, kfree);
}

/**
 * ksize - usable size of a kmalloc() allocation (the class size, or the
 * whole block): the caller may use all of it.
 * Return: bytes, 0 for NULL and ZERO_SIZE_PTR.
 */
size_t ksize(const void *p)
{
	struct page *page;

	if (ZERO_OR_NULL_PTR(p))
		return 0;
	if (!page_alloc_owns(p))
		return page_alloc_emergency_size(p);
	page = compound_head(virt_to_page(p));
	if (PageFlag(page, PG_slab)) {
		struct kmem_cache *s = page->slab_cache;

		/* kmalloc red zone: only the size asked for is the caller's */
		if (unlikely(s->orig_off))
			return slab_debug_orig_size(s, p);
		return s->object_size;
	}
	if (PageFlag(page, PG_large))
		return page->large_size;
	return PAGE_SIZE << page->order;
}

/*
 * kmalloc_usable_fast - ksize_checked()'s answer for a live object of a
 * kmalloc class, from free()'s tables (the page's tag byte, the class's
 * boundary constants, the free mark's word), with no struct page read:
 * malloc_usable_size() is called on every malloc and free by programs
 * that count their memory (redis: 5.75% of its samples in ksize_checked,
 * on the struct page's line; docs/malloc.md). Return: the class size, or
 * 0 when this test cannot say (NULL, not the heap's, not a kmalloc
 * class, a debug class, an interior pointer, a free object: the caller's
 * whole check then runs and reports).
 */
size_t kmalloc_usable_fast(const void *p)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)page_alloc_base;
	unsigned long tag, mark, key;

	if (!IS_ENABLED(CONFIG_PERCPU_CACHE) ||
	    !IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) || off >= page_alloc_span)
		return 0;
	tag = page_alloc_tags[off >> PAGE_SHIFT];
	if (!kmalloc_tab_is_object(p, tag))
		return 0;
	/* free: the magazine's mark (the class's pcp_cache) or the slab's */
	key = (unsigned long)kmalloc_free_tab.pc[tag];
	mark = *kmalloc_mark_at(p, (unsigned int)tag);
	if (mark == key || mark == ~key)
		return 0;
	return kmalloc_info[tag - 1].size;
}

/**
 * krealloc - resize @p to @new_size, keeping the contents up to the smaller
 * size. In place when the new size fits the current allocation.
 * Return: the new memory; ZERO_SIZE_PTR (and @p freed) for @new_size 0;
 * NULL with errno ENOMEM, @p left untouched.
 */
void *krealloc(const void *p, size_t new_size, gfp_t flags)
{
	size_t ks;
	void *n;

	if (unlikely(!new_size)) {
		kfree(p);
		return ZERO_SIZE_PTR;
	}
	ks = ksize(p);
	if (ks >= new_size) {
		/* As the kernel before orig_size tracking: the slack is kept. */
		return (void *)p;
	}
	n = kmalloc(new_size, flags);
	if (!n)
		return NULL;
	if (ks)
		memcpy(n, p, ks);
	kfree(p);
	return n;
}

/** kfree_sensitive - clear the whole allocation, then kfree() it. */
void kfree_sensitive(const void *p)
{
	size_t ks = ksize(p);

	if (ks)
		explicit_bzero((void *)p, ks);
	kfree(p);
}
