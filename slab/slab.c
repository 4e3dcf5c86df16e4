// SPDX-License-Identifier: MIT
/*
 * Slab caches: kmem_cache_create/destroy/shrink, the slab slow paths
 * (allocate from a slab's freelist, free to it, grow and discard slabs) and
 * the list of caches.
 *
 * Locking, outermost first (the whole library's order and fork's:
 * docs/locking.md):
 *
 *   slab_mutex         the list of caches (slab_caches) for writers:
 *                      create, destroy, lazy kmalloc-N creation, fork.
 *                      Readers (slabinfo, slabinfo_write, kmem_cache_find,
 *                      kmem_cache_shrink_all) walk the list under RCU.
 *                      Nothing that may call malloc runs under it.
 *   kmem_cache->lock   one cache: its partial/full/empty lists and counters,
 *                      its tunables, and the freelist and inuse count of
 *                      every slab of the cache.
 *
 * The per-CPU layer's locks (percpu/magazine.c) nest outside the cache
 * lock: its refill and flush callbacks below take the cache lock.
 *
 * Never taken under a cache lock: page_alloc's zone lock (slabs are
 * allocated before and freed after the cache lock), liburcu (call_rcu and
 * rcu_barrier may call malloc, which is this allocator when preloaded) and
 * constructors (which may allocate). call_rcu is not called under
 * slab_mutex either.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <urcu/urcu-memb.h>
#include <urcu/rculist.h>
#include "lib/cpuclock.h"
#include "lib/fault_inject.h"
#include "slab/internal.h"

pthread_mutex_t slab_mutex = PTHREAD_MUTEX_INITIALIZER;
CDS_LIST_HEAD(slab_caches);

/* The cache of struct kmem_cache itself, as the kernel's kmem_cache. */
struct kmem_cache kmem_cache_boot;
static pthread_once_t slab_once = PTHREAD_ONCE_INIT;

/* Held inside a sigsafe section (lib/sigsafe.h), as every allocator lock. */
void slab_lock(struct kmem_cache *s)
{
	sigsafe_enter();
	owned_lock(&s->lock, "kmem_cache lock");
}

void slab_unlock(struct kmem_cache *s)
{
	owned_unlock(&s->lock, "kmem_cache lock");
	sigsafe_exit();
}

void slab_assert_locked(struct kmem_cache *s)
{
	owned_assert_held(&s->lock, "kmem_cache lock");
}

/* ---------------------------------------------------------------------- */
/* Layout */

static unsigned int calculate_alignment(slab_flags_t flags, unsigned int align,
					unsigned int size)
{
	/* As the kernel: small objects share a cache line rather than pad it. */
	if (flags & SLAB_HWCACHE_ALIGN) {
		unsigned int ralign = 64;

		while (size <= ralign / 2)
			ralign /= 2;
		align = max_t(unsigned int, align, ralign);
	}
	return max_t(unsigned int, align, sizeof(void *));
}

static bool order_fits(unsigned int size, unsigned int order,
		       unsigned int min_objects, unsigned int waste_pct)
{
	size_t bytes = PAGE_SIZE << order;
	size_t n = bytes / size;

	if (n < min_objects || n > USHRT_MAX)
		return false;
	return (bytes - n * size) * 100 <= bytes * waste_pct;
}

/*
 * The slab order rule (docs/slab.md): the smallest order from @min_order
 * up to SLAB_PREFERRED_MAX_ORDER that holds SLAB_MIN_OBJECTS objects with
 * a tail of at most CONFIG_SLAB_MAX_WASTE_PERCENT; failing that, the
 * smallest order up to MAX_PAGE_ORDER that holds one object within the
 * waste bound; failing that (objects just above a power of two pages), the
 * order with the least waste. Return: the order, or -EINVAL when no block
 * is big enough.
 */
static int calculate_order(unsigned int size, unsigned int min_order)
{
	unsigned int pct = CONFIG_SLAB_MAX_WASTE_PERCENT;
	unsigned int order, best = 0;
	size_t best_waste = SIZE_MAX;

	for (order = min_order; order <= SLAB_PREFERRED_MAX_ORDER &&
			order <= MAX_PAGE_ORDER; order++)
		if (order_fits(size, order, SLAB_MIN_OBJECTS, pct))
			return (int)order;
	for (order = 0; order <= MAX_PAGE_ORDER; order++)
		if (order_fits(size, order, 1, pct))
			return (int)order;
	for (order = 0; order <= MAX_PAGE_ORDER; order++) {
		size_t bytes = PAGE_SIZE << order;
		size_t n = bytes / size, waste;

		if (!n || n > USHRT_MAX)
			continue;
		/* waste per byte, compared without division */
		waste = (bytes - n * size) * ((PAGE_SIZE << MAX_PAGE_ORDER) / bytes);
		if (waste < best_waste) {
			best_waste = waste;
			best = order;
		}
	}
	return best_waste == SIZE_MAX ? -EINVAL : (int)best;
}

/* @n objects of @size leave this much of their last page unused. */
static size_t page_tail(size_t n, unsigned int size)
{
	return ALIGN_UP(n * size, PAGE_SIZE) - n * size;
}

/*
 * Objects per slab of @size at *@order (calculate_order()'s), the order
 * raised where that leaves less unused: objects are handed out in address
 * order from fresh memory (take_fresh_locked()), so a slab's pages are
 * touched only as far as its objects reach, and a tail of whole pages
 * past them never is. What costs memory is the part of the last used page
 * that no object fills: at kmalloc-10k's order 3 (3 objects, 30 KiB of
 * 32) a sixteenth of every slab, touched. So when that part is above
 * SLAB_PAGE_TAIL_PERCENT of the objects' bytes, the smallest order up to
 * SLAB_TAIL_MAX_ORDER and the most objects (within the waste bound) that
 * end within it are taken instead: kmalloc-10k 6 objects in order 4
 * (15 pages used, the 16th never touched), kmalloc-320 51 in order 2
 * (64 bytes unused instead of 256 per page).
 */
static unsigned int calculate_objects(unsigned int size, unsigned int *order)
{
	unsigned int pct = CONFIG_SLAB_MAX_WASTE_PERCENT, o;
	size_t n = (PAGE_SIZE << *order) / size, m;

	if (page_tail(n, size) * 100 <= n * size * SLAB_PAGE_TAIL_PERCENT)
		return (unsigned int)n;
	for (o = *order; o <= SLAB_TAIL_MAX_ORDER && o <= MAX_PAGE_ORDER; o++) {
		size_t bytes = PAGE_SIZE << o;

		for (m = min_t(size_t, bytes / size, USHRT_MAX);
		     m && (bytes - m * size) * 100 <= bytes * pct; m--)
			if (page_tail(m, size) * 100 <= m * size * SLAB_PAGE_TAIL_PERCENT) {
				*order = o;
				return (unsigned int)m;
			}
	}
	return (unsigned int)n;
}

/*
 * The object-boundary test of slab_free_check(): with c = 2^64 / size + 1
 * (integer division) and e = c * size mod 2^64 (1 <= e <= size), an
 * offset n < 2^32 from the slab start gives n * c mod 2^64 = i * e when
 * n = i * size, and at least c (far above any slab) otherwise. So
 * "n * c < objects * e" holds exactly for the objects' offsets (Lemire's
 * divisibility test, with the index bound folded in). Debug caches (red
 * zones on the left, full checks on their slow path) always fail it: their
 * frees go to slab_free_unaligned(), which runs the checked free with the
 * call site, and no mark is written at a pointer not yet checked.
 */
static void slab_layout_obj_check(struct kmem_cache *s)
{
	unsigned __int128 two64 = (unsigned __int128)1 << 64;

	if (slab_debug(s)) {
		s->obj_magic = 0;
		s->obj_limit = 0;	/* every free takes slab_free_unaligned() */
		return;
	}
	s->obj_magic = (uint64_t)(two64 / s->size) + 1;
	s->obj_limit = (uint64_t)s->objects * (s->obj_magic * s->size);
}

/*
 * Where @s's free objects hold the mark (slab_mark()): in the object, at
 * @mark_off; or, for the kmalloc classes above KMALLOC_SMALL_MAX (those
 * malloc() reaches through __kmalloc_index(), never kmalloc_small_fast()),
 * in page_alloc's shadow: the 8 bytes of shadow of the object's first
 * KiB, its own (the stride is a multiple of 128 bytes and at least
 * 1 KiB). A free and the allocation after it then never touch such a
 * block: a program that does not write its blocks keeps them
 * non-resident (docs/slab.md "Hardened frees"). Smaller classes, whose
 * pages hold several objects each, keep it in word 0, and so does every
 * class when page_alloc has no shadow (its place was taken: a
 * sanitizer's own shadow; valgrind).
 */
static void slab_mark_layout(struct kmem_cache *s)
{
	s->mark_mul = 1;
	s->mark_bias = s->mark_off;
	if (!IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) ||
	    !(s->flags & __SLAB_KMALLOC) || slab_debug(s) || s->red_left_pad ||
	    s->object_size <= KMALLOC_SMALL_MAX ||
	    s->size % PAGE_ALLOC_SHADOW_GRAIN ||
	    s->size < sizeof(unsigned long) * PAGE_ALLOC_SHADOW_GRAIN ||
	    page_alloc_init() || !page_alloc_shadow)
		return;
	/* the shadow of an address is at the address >> 7: no bias */
	s->mark_mul = 1ULL << (64 - PAGE_ALLOC_SHADOW_SHIFT);
	s->mark_bias = 0;
}

/**
 * slab_calculate_layout - place red zones and the free pointer, pick the
 * stride and the slab order of @s (object_size, align, flags, ctor set).
 * Context: the cache is not yet visible to other threads.
 * Return: 0 or -EINVAL (object too large for the biggest block).
 */
int slab_calculate_layout(struct kmem_cache *s)
{
	unsigned int inuse, align;
	int order, base_order;

	if ((s->flags & SLAB_POISON) && !s->ctor &&
	    !(s->flags & SLAB_TYPESAFE_BY_RCU))
		s->flags |= __OBJECT_POISON;
	align = calculate_alignment(s->flags, s->align, s->object_size);
	s->align = align;

	s->red_left_pad = 0;
	if (s->flags & SLAB_RED_ZONE)
		s->red_left_pad = ALIGN_UP((unsigned int)sizeof(void *), align);
	inuse = ALIGN_UP(s->object_size, (unsigned int)sizeof(void *));
	if ((s->flags & SLAB_RED_ZONE) && inuse == s->object_size)
		inuse += sizeof(void *);
	s->rz_end = (s->flags & SLAB_RED_ZONE) ? inuse : s->object_size;

	/*
	 * Objects that must stay intact while free keep the link outside,
	 * and the free mark past it. Others hold the mark in word 0 and the
	 * link in word 1; 8-byte objects hold both in word 0, the link xor'd
	 * with the slab's mark (slab_link_xor()): a 16-byte stride there
	 * spread espresso's 8-byte cubes over twice the lines of every peer
	 * (docs/slab.md "Hardened frees"). With a red zone the words must
	 * fit in the object itself (the red zone starts at its end, not at
	 * inuse): smaller objects keep them outside too.
	 */
	if ((s->flags & (__OBJECT_POISON | SLAB_TYPESAFE_BY_RCU)) || s->ctor ||
	    ((s->flags & SLAB_RED_ZONE) &&
	     s->object_size < (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) ? 2 : 1) *
			      sizeof(void *))) {
		s->offset = inuse;
		inuse += sizeof(void *);
		s->mark_off = inuse;
		if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
			inuse += sizeof(void *);
	} else if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED)) {
		s->mark_off = 0;
		/* the link shares word 0 (slab_link_xor()) in 8-byte objects */
		s->offset = inuse > sizeof(void *) || slab_debug(s) ? sizeof(void *) : 0;
		if (s->offset && inuse < 2 * sizeof(void *))
			inuse = 2 * sizeof(void *);
	} else {
		s->offset = 0;
		s->mark_off = 0;
	}
	/* debug metadata past the free pointer and the mark (internal.h) */
	s->track_off = 0;
	if (s->flags & SLAB_STORE_USER) {
		s->track_off = inuse;
		inuse += 2 * (unsigned int)sizeof(struct slab_track);
	}
	s->orig_off = 0;
	if ((s->flags & SLAB_RED_ZONE) && (s->flags & __SLAB_KMALLOC)) {
		s->orig_off = inuse;
		inuse += sizeof(unsigned long);
	}
	s->size = ALIGN_UP(s->red_left_pad + inuse, align);
	slab_mark_layout(s);

	/* one page's order first: the kept empty slabs scale by the step */
	base_order = calculate_order(s->size, 0);
	order = calculate_order(s->size, SLAB_MIN_ORDER);
	if (order < 0)
		return order;
	s->order = (unsigned int)order;
	s->objects = calculate_objects(s->size, &s->order);
	s->slab_mask = (PAGE_SIZE << s->order) - 1;
	slab_layout_obj_check(s);

	/* Empty slabs kept: more for big objects, whose slabs cost more to make. */
	if (!IS_ENABLED(CONFIG_SLAB_KEEP_EMPTY)) {
		s->min_partial = 0;	/* nocache: empty pages go back at once */
	} else {
		unsigned int lg = 31 - (unsigned int)__builtin_clz(s->size);

		s->min_partial = min_t(unsigned int, SLAB_MAX_PARTIAL,
				       max_t(unsigned int, SLAB_MIN_PARTIAL, lg / 2));
		/* as many bytes kept as with the one-page slab, one slab at least */
		if ((int)s->order > base_order)
			s->min_partial = max_t(unsigned int, 1,
					s->min_partial >> (s->order - base_order));
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Slabs */

/*
 * PG_slab_page and slab_cache on every page of @slab (the head's
 * slab_cache is its slab arm's; tails carry a copy in their unused union),
 * for kfree_fast(): one load of the object's own struct page finds the
 * cache. Cleared before the block goes back to page_alloc.
 */
static void slab_mark_pages(struct page *slab, struct kmem_cache *s, bool on)
{
	unsigned long i, n = 1UL << slab->slab_order;

	for (i = 0; i < n; i++) {
		if (on) {
			if (i)
				slab[i].slab_cache = s;
			SetPageFlag(&slab[i], PG_slab_page);
		} else {
			ClearPageFlag(&slab[i], PG_slab_page);
		}
	}
	if (s->page_tag)
		set_page_tags(slab, n, on ? s->page_tag : 0);
}

static struct page *allocate_slab(struct kmem_cache *s, gfp_t gfp)
{
	struct page *slab;
	char *base, *obj, *next;
	unsigned int i;

	slab = alloc_pages((gfp & ~(__GFP_ZERO | __GFP_NOFAIL)) | __GFP_NOWARN,
			   s->order);
	if (unlikely(!slab))
		return NULL;
	base = slab_base(slab);
	slab->slab_cache = s;
	slab->objects = (unsigned short)s->objects;
	slab->inuse = 0;
	slab->slab_order = (unsigned char)s->order;
	slab->frozen = 0;
	INIT_LIST_HEAD(&slab->slab_list);

	/*
	 * Plain caches write nothing here: objects are handed out from
	 * @fresh on in address order (take_fresh_locked()), so a slab's
	 * pages are touched only as its objects are used, and a new slab
	 * costs no pass over its objects. Debug caches (poison, red zones)
	 * and caches with a constructor prepare every object now.
	 */
	slab->freelist = NULL;
	slab->fresh = 0;
	if (slab_debug(s) || s->ctor) {
		obj = base + s->red_left_pad;
		slab->freelist = obj;
		for (i = 0; i < s->objects; i++, obj = next) {
			next = i + 1 < s->objects ? obj + s->size : NULL;
			if (slab_debug(s))
				slab_debug_init_object(s, obj);
			/* The constructor runs once per object, here and never again. */
			if (s->ctor)
				s->ctor(obj);
			set_freepointer(s, obj, next);
			if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
				*slab_mark(s, obj) = slab_mark_slab(s);
		}
		slab->fresh = (unsigned short)s->objects;
	}
	SetPageFlag(slab, PG_slab);
	slab_mark_pages(slab, s, true);
	slab_probe(slab_grow, s->name, base, s->order);
	return slab;
}

static void slab_check_empty(struct kmem_cache *s, struct page *slab);

static void discard_slab(struct kmem_cache *s, struct page *slab)
{
	/* off every list: nobody else reaches it, the walk needs no lock */
	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) && !slab_debug(s))
		slab_check_empty(s, slab);
	slab_probe(slab_discard, s->name, slab_base(slab), slab->slab_order);
	/*
	 * A fill probe on it (slab_prefault_fresh()) says nothing once its
	 * pages serve others: they stay resident with what those write
	 * (alloc_test read as a program writing its blocks whole: kmalloc-64k,
	 * one object a slab, populated 8 refills, +0.3 MiB peak RSS).
	 */
	if (READ_ONCE(s->fill_probe) - (uintptr_t)slab_base(slab) <
	    (PAGE_SIZE << slab->slab_order))
		WRITE_ONCE(s->fill_probe, 0);
	/* Empty: no free of one of its objects can look at its pages. */
	slab_mark_pages(slab, s, false);
	if (s->flags & SLAB_TYPESAFE_BY_RCU) {
		slab_rcu_free_slab(slab);
		return;
	}
	ClearPageFlag(slab, PG_slab);
	__free_pages(slab, slab->slab_order);
}

static void discard_slabs(struct kmem_cache *s, struct list_head *list)
{
	struct page *slab, *tmp;

	/* _safe: call_rcu reuses slab_list as the rcu_head. */
	list_for_each_entry_safe(slab, tmp, list, slab_list)
		discard_slab(s, slab);
}

enum slab_state { SLAB_EMPTY, SLAB_PARTIAL, SLAB_FULL };

static enum slab_state slab_state(const struct page *slab)
{
	if (!slab->inuse)
		return SLAB_EMPTY;
	return slab->inuse == slab->objects ? SLAB_FULL : SLAB_PARTIAL;
}

static unsigned long *state_count(struct kmem_cache *s, enum slab_state st)
{
	return st == SLAB_EMPTY ? &s->nr_empty :
	       st == SLAB_FULL ? &s->nr_full : &s->nr_partial;
}

static struct list_head *state_list(struct kmem_cache *s, enum slab_state st)
{
	return st == SLAB_EMPTY ? &s->empty :
	       st == SLAB_FULL ? &s->full : &s->partial;
}

/* Move @slab to the list of its state after its inuse changed. */
static void relist_locked(struct kmem_cache *s, struct page *slab,
			  enum slab_state before)
{
	enum slab_state now = slab_state(slab);

	slab_assert_locked(s);
	if (now == before)
		return;
	(*state_count(s, before))--;
	(*state_count(s, now))++;
	/* Partial slabs at the head are the first to be refilled from. */
	list_move(&slab->slab_list, state_list(s, now));
}

static void add_slab_locked(struct kmem_cache *s, struct page *slab)
{
	slab_assert_locked(s);
	/* a re-made kmalloc cache's old self lost its tag while this slab
	 * was being made (slab_untag()) */
	if (unlikely(!READ_ONCE(s->page_tag) && (s->flags & __SLAB_KMALLOC)))
		set_page_tags(slab, 1UL << slab->slab_order, 0);
	list_add(&slab->slab_list, &s->empty);
	s->nr_empty++;
	s->nr_slabs++;
	if (s->nr_slabs > s->nr_slabs_peak)
		s->nr_slabs_peak = s->nr_slabs;
	s->slabs_allocated++;
}

/**
 * slab_untag - @s (a kmalloc cache being replaced, kmalloc_cache_remake())
 * no longer owns its class's page tag: its slabs' pages are untagged, so
 * that kfree_fast() sends their objects to kfree(), which finds @s through
 * struct page. Slabs made later get no tag (add_slab_locked()).
 * Context: takes the cache lock; before the class's new cache is published.
 */
void slab_untag(struct kmem_cache *s)
{
	struct list_head *lists[] = { &s->partial, &s->full, &s->empty };
	struct page *slab;
	unsigned int i;

	slab_lock(s);
	WRITE_ONCE(s->page_tag, 0);
	for (i = 0; i < ARRAY_SIZE(lists); i++)
		list_for_each_entry(slab, lists[i], slab_list)
			set_page_tags(slab, 1UL << slab->slab_order, 0);
	slab_unlock(s);
}

/* Unlink every empty slab beyond @keep onto @discard. */
/* The free's name in reports: kfree for kmalloc caches. */
static const char *slab_free_name(const struct kmem_cache *s)
{
	return (s->flags & __SLAB_KMALLOC) ? "kfree" : "kmem_cache_free";
}

/*
 * An empty slab about to go back to page_alloc: every object must be on
 * its freelist exactly once. A double free whose second copy reached the
 * slab before the first was handed out again (both copies held the
 * magazine mark) is on it twice and leaves the slab "empty" with an
 * object still in use: found here, before its pages can be reused.
 *
 * The test is a pass over the objects in address order, not along the
 * freelist: every object below @fresh must hold the slab's mark, and the
 * one still in use holds 0 (handed out) or the magazine mark. The loads
 * are independent (a chase along the freelist waits for each cold object
 * before it can load the next: 11% of sh8bench's samples, which empties
 * and discards slabs at every wrap of its ring). Only when an object
 * fails does slab_find_doubled() walk the freelist to name the object
 * that is on it twice (at most objects + 1 steps, cycles included);
 * without one, the failing object was written after its free and is
 * reported as a double free, as a refill would have. No need to restore
 * anything: the slab goes back to page_alloc right after.
 * Context: hardened, non-debug caches; @slab was taken off the cache's
 * lists (take_empty_locked()) and is being discarded: no lock.
 */
static void __slowpath slab_find_doubled(struct kmem_cache *s,
					 struct page *slab, void *bad)
{
	unsigned long visit = slab_mark_slab(s) ^ 1, *mark;
	unsigned int n = 0;
	void *obj, *next;

	for (obj = slab->freelist; obj && n <= s->objects; obj = next, n++) {
		mark = slab_mark(s, obj);
		if (*mark == visit)
			slab_report_double_free(slab_free_name(s), s, obj, 0);
		/* a link in the mark's word: read before the visit's store,
		 * and not followed out of the slab */
		if (slab_link_xor(s) && !slab_mark_on_slab(s, obj, *mark))
			break;
		next = get_freepointer(s, obj);
		*mark = visit;
	}
	slab_report_double_free(slab_free_name(s), s, bad, 0);
}

static void slab_check_empty(struct kmem_cache *s, struct page *slab)
{
	char *obj = (char *)slab_base(slab) + s->red_left_pad;
	char *end = obj + (size_t)slab->fresh * s->size;

	for (; obj < end; obj += s->size)
		if (unlikely(!slab_mark_on_slab(s, obj, *slab_mark(s, obj))))
			slab_find_doubled(s, slab, obj);
}

/*
 * Fresh objects: one slab per CPU. Each CPU slot takes the fresh objects
 * of its own slab (s->fresh_slab[slot - 1], marked slab->frozen = slot),
 * and no other slot takes that slab's: two CPUs filling one class touch
 * their own pages, not neighbouring runs of one slab, whose page faults
 * then met on the kernel's page-table lock and whose lines the program's
 * two threads then wrote side by side (docs/slab.md "Fresh objects: one
 * slab per CPU"). The freelists of every slab stay open to all.
 */
static inline unsigned int slab_fresh_slot(void)
{
	int cpu = uslab_cpu_id();

	return (cpu < 0 ? 0U : (unsigned int)cpu % SLAB_FRESH_SLOTS) + 1;
}

/* @slab's fresh objects are another slot's (slot @me may not take them). */
static inline bool slab_fresh_other(const struct page *slab, unsigned int me)
{
	return slab->frozen && slab->frozen != me;
}

/* @slab is no slot's fresh slab any more. */
static void fresh_release_locked(struct kmem_cache *s, struct page *slab)
{
	slab_assert_locked(s);
	if (!slab->frozen)
		return;
	s->fresh_slab[slab->frozen - 1] = NULL;
	WRITE_ONCE(s->fresh_held, s->fresh_held - (unsigned long)(slab->objects - slab->fresh));
	slab->frozen = 0;
}

/*
 * Slot @me took fresh objects of @slab (released first if it was @me's):
 * with fresh objects left it becomes @me's fresh slab, the one before
 * released (its fresh objects are then anyone's).
 */
static void fresh_own_locked(struct kmem_cache *s, struct page *slab,
			     unsigned int me)
{
	struct page *old = s->fresh_slab[me - 1];

	if (slab->fresh == slab->objects)
		return;
	if (old)
		fresh_release_locked(s, old);
	slab->frozen = (unsigned char)me;
	s->fresh_slab[me - 1] = slab;
	WRITE_ONCE(s->fresh_held, s->fresh_held + (unsigned long)(slab->objects - slab->fresh));
}

/*
 * The first slab of @list a refill of slot @me can take from: one with
 * freed objects, or with fresh ones that are no other slot's. At most
 * SLAB_FRESH_SLOTS - 1 slabs are passed over.
 */
static struct page *first_usable_locked(struct list_head *list,
					unsigned int me)
{
	struct page *slab;

	list_for_each_entry(slab, list, slab_list)
		if (slab->freelist || !slab_fresh_other(slab, me))
			return slab;
	return NULL;
}

static void take_empty_locked(struct kmem_cache *s, unsigned long keep,
			      struct list_head *discard)
{
	slab_assert_locked(s);
	while (s->nr_empty > keep) {
		struct page *slab = list_first_entry(&s->empty, struct page,
						     slab_list);

		/* checked by discard_slab(), after the lock */
		fresh_release_locked(s, slab);
		list_move(&slab->slab_list, discard);
		s->nr_empty--;
		s->nr_slabs--;
		s->slabs_freed++;
	}
}

/**
 * slab_take_bad - @obj, about to be handed out, lacks the magazine mark
 * (slab_obj_take()): it was handed out since it was last freed, so it was
 * freed twice (or written after its free). Reported as the double free it
 * is, naming the cache and the object, before anyone else gets it.
 */
__slowpath void slab_take_bad(struct kmem_cache *s, void *obj)
{
	struct page *slab = virt_to_slab(obj);

	if (slab)
		s = slab->slab_cache;
	slab_report_taken_twice(slab_free_name(s), s, obj, *slab_mark(s, obj));
}

/*
 * One load and one store to pop; the slab is ours under the cache lock.
 * The object leaves with the magazine mark: it must come with the slab's
 * (else it reached this freelist twice: a double free whose second copy
 * was flushed before the first was handed out again).
 */
static void *take_object_locked(struct kmem_cache *s, struct page *slab,
				unsigned long addr)
{
	void *obj = slab->freelist;
	unsigned long *mark = slab_mark(s, obj);
	/* before the mark's store: the link may share its word */
	void *next = get_freepointer(s, obj);

	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED)) {
		if (unlikely(!slab_mark_on_slab(s, obj, *mark)) && !slab_debug(s))
			slab_report_double_free(slab_free_name(s), s, obj, 0);
		*mark = s->mark_key;
	}
	slab->freelist = next;
	slab->inuse++;
	if (slab_debug(s))
		slab_debug_alloc_locked(s, slab, obj, addr);
	return obj;
}

/* The first object @slab never handed out: one multiply, no load of it. */
static inline char *slab_fresh_obj(const struct kmem_cache *s,
				   const struct page *slab)
{
	return (char *)slab_base(slab) + s->red_left_pad +
	       (size_t)slab->fresh * s->size;
}

/*
 * Hand out @slab's objects from @fresh on, at most @n, into @objs: they
 * were never written, so there is no freelist to follow and no mark to
 * check. Nothing is written here: each must leave with the magazine mark,
 * as take_object_locked()'s, and the caller stores it once the cache lock
 * is dropped (mark_fresh()). The store is the first touch of a fresh
 * object's memory, often its page's first: a page fault, which under the
 * lock made every other CPU refilling the cache wait for it (gmalloc_t2).
 * Nobody else reaches these objects meanwhile: they are below @fresh and
 * counted in @inuse, so no check of an empty slab reads their marks.
 * Return: objects taken.
 */
static int take_fresh_locked(struct kmem_cache *s, struct page *slab,
			     void **objs, int n)
{
	char *obj = slab_fresh_obj(s, slab);
	int k, nr = min_t(int, n, slab->objects - slab->fresh);

	for (k = 0; k < nr; k++, obj += s->size)
		objs[k] = obj;
	slab->fresh += (unsigned short)nr;
	slab->inuse += (unsigned short)nr;
	return nr;
}

/* The magazine mark into objects that take_fresh_locked() handed out. */
static void mark_fresh(struct kmem_cache *s, void **objs, int n)
{
	int k;

	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
		for (k = 0; k < n; k++)
			*slab_mark(s, objs[k]) = s->mark_key;
}

/*
 * A run of objs[] that take_fresh_locked() filled: ascending addresses.
 * @first: the run starts its slab (object 0 on).
 */
struct fresh_run {
	int from, nr;
	bool first;
};

/*
 * The order a refill's fresh runs leave in (docs/slab.md "Fresh objects:
 * the order they leave in"). The magazine hands out from the top of the
 * array, so a run left in address order would reach the program highest
 * object first: a program that writes its blocks in the order it got them
 * (a heap being filled, gmalloc_t1/t2) then writes each run backwards,
 * and its memset took a third more samples than under mimalloc, whose
 * fresh pages go out ascending. So each run is reversed in the array and
 * leaves ascending, but the run that starts a slab: its first objects lie
 * at the slab's start, in the cache sets of every page's first lines and
 * of every page-aligned block, and the first handed out of a class that
 * keeps few blocks stay its hot ones (the magazine is a stack): handed out
 * first, alloc_test's small classes and its page-aligned big blocks
 * fought over those sets (1.3-1.4 times its CPU time). That run leaves
 * its upper half first, then its lower half, each ascending: the same
 * objects first as when it left highest first, the slab's first ones
 * last.
 */
static void objs_reverse(void **objs, int a, int b)
{
	for (b--; a < b; a++, b--) {
		void *t = objs[a];

		objs[a] = objs[b];
		objs[b] = t;
	}
}

static void fresh_order(void **objs, const struct fresh_run *fr, int nfr)
{
	int r;

	for (r = 0; r < nfr; r++) {
		int from = fr[r].from, to = from + fr[r].nr, h = from + fr[r].nr / 2;

		if (fr[r].first) {
			/* upper half, then lower half, each ascending */
			objs_reverse(objs, from, h);
			objs_reverse(objs, h, to);
		} else {
			objs_reverse(objs, from, to);
		}
	}
}

/*
 * Caches whose fresh objects nothing but the program writes: their mark
 * is in page_alloc's shadow (kmalloc classes above 1 KiB), or there is no
 * mark. The others' fresh pages are touched by mark_fresh() anyway.
 */
static inline bool slab_fresh_unwritten(const struct kmem_cache *s)
{
	return !IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) || s->mark_mul != 1;
}

/*
 * The bytes at the start of every block of @s that a program writing what
 * it asked for writes: a kmalloc class serves requests above the class
 * below it, which above 128 B is at least 4/5 of it (1024 of 1280, 14k of
 * 16k; docs/slab.md "Size classes"), up to 128 B at least half.
 */
static inline unsigned long fill_prefix(const struct kmem_cache *s)
{
	if (!(s->flags & __SLAB_KMALLOC))
		return s->object_size;
	return s->object_size > 128 ? s->object_size / 5 * 4 : s->object_size / 2;
}

/*
 * What the last look at a probe found (slab_prefault_fresh()), per cache
 * (@fill_seen) and of any cache (fill_seen_last): classes that seldom or
 * never have a probe (kmalloc-2k and -4k: fill_probe_of()) go by the
 * other classes of the same program. 0: no look yet. Populating takes
 * two looks in a row that found the probe written: alloc_test writes one
 * 64 KiB block whole (its calloc'ed slot array), its others 16 bytes,
 * and one look had kmalloc-64k populate 8 ranges, +0.3 MiB peak RSS.
 */
#define FILL_WRITES_NOT		1
#define FILL_WRITES_ONCE	2	/* one look said so: not yet acted on */
#define FILL_WRITES		3	/* two looks in a row */
static int fill_seen_last;

/*
 * Where to look whether the program wrote @obj (a fresh object) past its
 * first bytes: the byte every block of the class holds, fill_prefix() - 1,
 * when it lies on a later page than @obj's start and no object handed out
 * with it starts on that page (a program writing only the first bytes of
 * its blocks, as alloc_test's 16, touches every page an object starts
 * on). With a stride above a page: no object starts there (the next one
 * starts on a later page). With a stride of a page or less the next
 * object always starts there, so only the refill's highest object (@top)
 * qualifies: the next is still fresh in the slab. 0 when @obj has no such
 * byte (kmalloc-2k and -4k never: their prefix never leaves the page).
 */
static uintptr_t fill_probe_of(const struct kmem_cache *s, const void *obj,
			       bool top)
{
	uintptr_t o = (uintptr_t)obj, b = o + fill_prefix(s) - 1;

	if ((b & PAGE_MASK) == (o & PAGE_MASK))
		return 0;
	if (s->size <= PAGE_SIZE)
		return top ? b : 0;
	if (((o + s->size) & PAGE_MASK) > (b & PAGE_MASK))
		return b;
	return 0;
}

/*
 * Objects from the top of a refill whose probes are looked at (one mincore
 * over their span, at most FILL_PROBE_SPAN pages) for one out of memory.
 */
#define FILL_PROBE_TRIES	4
#define FILL_PROBE_SPAN		256
/* Refills skipped at most between two looks when the probe stays out. */
#define FILL_BACKOFF_MAX	32
/* Refills at most between two looks while the probe is found written. */
#define FILL_WRITTEN_MAX	7

/*
 * A probe for the next refill: the highest of this refill's fresh
 * objects' fill_probe_of() bytes (at most FILL_PROBE_TRIES) whose page is
 * out of memory now; 0 when there is none.
 */
static uintptr_t fill_new_probe(const struct kmem_cache *s, void **objs,
				const struct fresh_run *fr, int nfr)
{
	uintptr_t b[FILL_PROBE_TRIES], lo = UINTPTR_MAX, hi = 0;
	unsigned char vec[FILL_PROBE_SPAN];
	int r, k, m = 0;

	/* runs of different slabs lie anywhere: all within one span */
	for (r = nfr - 1; r >= 0 && m < FILL_PROBE_TRIES; r--)
		for (k = fr[r].from + fr[r].nr - 1;
		     k >= fr[r].from && m < FILL_PROBE_TRIES; k--) {
			uintptr_t p = fill_probe_of(s, objs[k], !m && r == nfr - 1 &&
						    k == fr[r].from + fr[r].nr - 1);
			uintptr_t l, h;

			if (!p)
				continue;
			l = min_t(uintptr_t, lo, p & PAGE_MASK);
			h = max_t(uintptr_t, hi, p & PAGE_MASK);
			if (h - l >= FILL_PROBE_SPAN * PAGE_SIZE)
				continue;
			lo = l;
			hi = h;
			b[m++] = p;
		}
	if (!m || page_alloc_residency((void *)lo, hi + PAGE_SIZE - lo, vec))
		return 0;
	for (k = 0; k < m; k++)
		if (!(vec[((b[k] & PAGE_MASK) - lo) >> PAGE_SHIFT] & 1))
			return b[k];
	return 0;
}

/*
 * Populates a refill under the per-CPU layer's CPU lock leaves to its
 * thread's slab_alloc_miss(), which runs them once pcp_alloc_slow() has
 * dropped that lock: the page faults of a batch would otherwise hold it,
 * and a thread that shares the CPU and misses meanwhile waits for them
 * (before the populate those faults were the program's own, under no
 * lock). A signal handler inside the allocator never refills (it takes
 * no lock, slab_pcp_may_lock()), so it never appends here.
 */
#define FILL_DEFER_MAX		16

struct fill_deferred {
	int active;		/* inside slab_alloc_miss()'s pcp_alloc_slow() */
	int nr;
	struct { uintptr_t lo, hi; } r[FILL_DEFER_MAX];
};

static __thread struct fill_deferred fill_deferred
	__attribute__((tls_model("initial-exec")));

static void fill_populate(uintptr_t lo, uintptr_t hi)
{
	struct fill_deferred *d = &fill_deferred;

	if (hi <= lo)
		return;
	if (d->active && d->nr < FILL_DEFER_MAX) {
		d->r[d->nr].lo = lo;
		d->r[d->nr].hi = hi;
		d->nr++;
		return;
	}
	page_alloc_populate((void *)lo, hi - lo);
}

/* The populates deferred while the CPU lock was held, in their order. */
static void fill_run_deferred(void)
{
	struct fill_deferred *d = &fill_deferred;
	int k;

	for (k = 0; k < d->nr; k++)
		page_alloc_populate((void *)d->r[k].lo, d->r[k].hi - d->r[k].lo);
	d->nr = 0;
}

/*
 * Populate [@lo, @hi) but the page of @skip (the next probe: the program
 * must be the one to touch it).
 */
static void populate_but(uintptr_t lo, uintptr_t hi, uintptr_t skip)
{
	skip &= PAGE_MASK;
	if (skip >= lo && skip < hi) {
		fill_populate(lo, skip);
		lo = skip + PAGE_SIZE;
	}
	fill_populate(lo, hi);
}

/*
 * Fresh pages populated ahead (docs/slab.md "Fresh pages of the big
 * classes"). Each refill of @s that hands out fresh objects leaves a
 * probe: a byte of one of them (fill_probe_of()) on a page out of memory
 * now, so that only the program's write to that object brings it in
 * (pages a slab reuses may be resident with what an earlier slab left).
 * The next refill asks whether it is resident (one mincore): if so, the
 * program writes its blocks, and the pages that this refill's fresh
 * objects' prefixes cover are made resident by one
 * madvise(MADV_POPULATE_WRITE) per contiguous range (but the new probe's),
 * not by a page fault each inside the program's memset: a fault taken by
 * `rep stosb` costs more than one on a plain store, and the program's
 * memset runs slower after it (docs/page_alloc.md "Pages populated
 * ahead"). A program that does not write its blocks, or only their first
 * bytes (alloc_test's 16 of up to 64 KiB), leaves the probe out of memory
 * and nothing is populated; the looks then back off (@fill_wait). A
 * refill without a probe from the one before goes by the last look of
 * its class, else of any class (@fill_seen, fill_seen_last). The probe
 * is taken from the refill's highest objects: the next refill comes when
 * the magazine has run dry, so they were handed out by then, first (a
 * slab's first run) or last (the others leave ascending, docs/slab.md
 * "Fresh objects: the order they leave in"), and a program that writes
 * each block as it gets it has written them.
 * Context: no cache lock held. Under the per-CPU layer's CPU lock (its
 * refill inside slab_alloc_miss()) the populates wait until it is dropped
 * (fill_populate()); elsewhere the faults happen here.
 */
static void slab_prefault_fresh(struct kmem_cache *s, void **objs,
				const struct fresh_run *fr, int nfr)
{
	unsigned long prefix = fill_prefix(s);
	uintptr_t old = READ_ONCE(s->fill_probe), probe, lo = 0, hi = 0;
	unsigned int wait = READ_ONCE(s->fill_wait), backoff;
	int r, k, seen;

	/* another thread's probe: its object may not have reached it yet */
	if (READ_ONCE(s->fill_probe_owner) != &fill_deferred)
		old = 0;

	if (wait > 1) {		/* backing off: no look, no probe */
		WRITE_ONCE(s->fill_wait, wait - 1);
		if (READ_ONCE(s->fill_seen) != FILL_WRITES)
			return;
		probe = 0;	/* the program writes: all of it */
		goto populate;
	}
	probe = fill_new_probe(s, objs, fr, nfr);
	WRITE_ONCE(s->fill_probe, probe);
	WRITE_ONCE(s->fill_probe_owner, (void *)&fill_deferred);
	if (wait == 1) {	/* the look is the next refill's */
		WRITE_ONCE(s->fill_wait, 0);
		if (READ_ONCE(s->fill_seen) != FILL_WRITES)
			return;
		goto populate;
	}
	if (old) {
		int before = READ_ONCE(s->fill_seen);

		seen = !page_alloc_resident((void *)old) ? FILL_WRITES_NOT :
		       before >= FILL_WRITES_ONCE ? FILL_WRITES : FILL_WRITES_ONCE;
		WRITE_ONCE(s->fill_seen, seen);
		WRITE_ONCE(fill_seen_last, seen);
		/*
		 * Looks back off while they find the same: the next after 1,
		 * 3, 7 .. refills, up to FILL_BACKOFF_MAX when the probe
		 * stays out of memory (nothing populated meanwhile), up to
		 * FILL_WRITTEN_MAX when it is found written a third time in
		 * a row (the refills between populate all their prefixes:
		 * no probe page cuts the range in two).
		 */
		backoff = 0;
		if (seen == FILL_WRITES_NOT || (seen == FILL_WRITES && before == seen)) {
			backoff = before == seen ? READ_ONCE(s->fill_backoff) : 0;
			backoff = min_t(unsigned int, 2 * backoff + 1,
					seen == FILL_WRITES ? FILL_WRITTEN_MAX :
					FILL_BACKOFF_MAX);
			WRITE_ONCE(s->fill_wait, backoff);
		}
		WRITE_ONCE(s->fill_backoff, backoff);
	} else {
		/* no probe last time: what this class saw last, else any */
		seen = READ_ONCE(s->fill_seen);
		if (!seen)
			seen = READ_ONCE(fill_seen_last);
	}
	if (seen != FILL_WRITES)
		return;
populate:
	/* runs of slabs side by side (one CPU's slabs come from its page
	 * list in address order) are one range: one madvise, each of which
	 * ends with the kernel's LRU drain */
	for (r = 0; r < nfr; r++)
		for (k = fr[r].from; k < fr[r].from + fr[r].nr; k++) {
			uintptr_t a = (uintptr_t)objs[k] & PAGE_MASK;
			uintptr_t b = ALIGN_UP((uintptr_t)objs[k] + prefix, PAGE_SIZE);

			if (a > hi || a < lo) {
				populate_but(lo, hi, probe);
				lo = a;
				hi = b;
			} else {
				hi = max_t(uintptr_t, hi, b);
			}
		}
	populate_but(lo, hi, probe);
	WRITE_ONCE(s->fill_prefaults, s->fill_prefaults + 1);
}

/**
 * slab_alloc_bulk - take up to @n objects from the slabs of @s (the refill
 * path of the per-CPU layer). Partial slabs first, then kept empty ones,
 * then new slabs from page_alloc.
 * @gfp: __GFP_ZERO zeroes each object.
 * @addr: call site recorded by SLAB_STORE_USER caches (0: internal).
 * Context: thread-safe; takes the cache lock once, and once more per
 * window in which it makes new slabs (up to SLAB_GROW_BATCH at a time,
 * with the lock dropped, so constructors may allocate).
 * Return: objects stored in @objs; fewer than @n only when page_alloc
 * failed (errno ENOMEM).
 */
/* failslab (USLAB_OPTIONS fail_slab=...): every slab_alloc_bulk() call */
static struct fault_attr failslab;

int kmem_cache_set_fault(const char *spec)
{
	return fault_attr_parse(&failslab, spec);
}

unsigned long kmem_cache_faults_injected(void)
{
	return __atomic_load_n(&failslab.injected, __ATOMIC_RELAXED);
}

/* New slabs one refill makes in one window without the cache lock. */
#define SLAB_GROW_BATCH		8

/*
 * With the cache lock dropped, make the slabs that @nr more objects need
 * (at most SLAB_GROW_BATCH) and put them on @list: one unlock/lock round
 * trip of the cache lock for all of them instead of one per slab (an
 * order-0 slab of kmalloc-512 holds 8 objects, a refill of 27 took four
 * round trips: gmalloc_t1 made 292,000 slabs in 104,000 refills).
 * Return: slabs made (0: page_alloc failed).
 */
static int grow_slabs(struct kmem_cache *s, gfp_t gfp, int nr,
		      struct list_head *list)
{
	int k, want = min_t(int, SLAB_GROW_BATCH, DIV_ROUND_UP(nr, (int)s->objects));

	slab_unlock(s);
	for (k = 0; k < want; k++) {
		struct page *slab = allocate_slab(s, gfp);

		if (!slab)
			break;
		list_add_tail(&slab->slab_list, list);
	}
	slab_lock(s);
	s->grow_relocks++;
	return k;
}

/*
 * Slabs a refill of @n objects will have to make, guessed before it takes
 * the cache lock: the free objects the cache's slabs hold (their capacity
 * less what is handed out) are fewer than @n, as every refill of a cache
 * that grows finds them (a fill: gmfill, the study's first loop). Those
 * slabs are then made before the lock is taken, not in a window that
 * drops and retakes it (grow_slabs()): one lock round trip per refill,
 * not two, and the hold that waits for page_alloc is gone. The counts are
 * read without the lock: a wrong guess costs the window (too few) or
 * leaves a new slab on the empty list (too many), never a wrong result.
 * Debug caches and constructors keep the window (their objects are
 * prepared at the making, which may fail or allocate).
 */
static int grow_ahead(struct kmem_cache *s, int n, unsigned int me)
{
	unsigned long cap, used, free;
	struct page *own;

	if (slab_debug(s) || s->ctor)
		return 0;
	cap = READ_ONCE(s->nr_slabs) * s->objects;
	/* the fresh objects of the slots' slabs, but this slot's own */
	used = READ_ONCE(s->nr_inuse) + READ_ONCE(s->fresh_held);
	own = READ_ONCE(s->fresh_slab[me - 1]);
	if (own)
		used -= min_t(unsigned long, READ_ONCE(s->fresh_held),
			      (unsigned long)(s->objects - READ_ONCE(own->fresh)));
	free = cap > used ? cap - used : 0;
	if (free >= (unsigned long)n)
		return 0;
	return min_t(int, SLAB_GROW_BATCH,
		     DIV_ROUND_UP((unsigned long)n - free, s->objects));
}

/*
 * slab_alloc_bulk(), @objs in address order within each run; with
 * @magazine (the per-CPU layer's refill) the runs are ordered for the
 * magazine's stack (fresh_order()).
 */
static int __slab_alloc_bulk(struct kmem_cache *s, gfp_t gfp, void **objs,
			     int n, unsigned long addr, bool magazine)
{
	struct page *slab, *tmp;
	LIST_HEAD(fresh);
	/* objs[] ranges of never-written objects, marked after the lock */
	struct fresh_run fr[8];
	int i = 0, k, nfr = 0;
	unsigned int me = slab_fresh_slot();

	if (!(gfp & __GFP_NOFAIL) &&
	    unlikely(should_fail(&failslab, s->object_size))) {
		errno = ENOMEM;
		return 0;
	}

	for (k = grow_ahead(s, n, me); k > 0; k--) {
		slab = allocate_slab(s, gfp);
		if (!slab)
			break;
		list_add_tail(&slab->slab_list, &fresh);
	}
	slab_lock(s);
	while (i < n) {
		enum slab_state before;

		slab = first_usable_locked(&s->partial, me);
		if (!slab)
			slab = first_usable_locked(&s->empty, me);
		if (slab) {
			/* taken below */
		} else if (!list_empty(&fresh)) {
			slab = list_first_entry(&fresh, struct page, slab_list);
			list_del(&slab->slab_list);
			add_slab_locked(s, slab);
			continue;
		} else {
			if (!grow_slabs(s, gfp, n - i, &fresh))
				break;
			continue;
		}
		before = slab_state(slab);
		while (i < n && slab->freelist)
			objs[i++] = take_object_locked(s, slab, addr);
		if (i < n && slab->fresh < slab->objects &&
		    !slab_fresh_other(slab, me)) {
			bool first = !slab->fresh;

			fresh_release_locked(s, slab);
			k = take_fresh_locked(s, slab, objs + i, n - i);
			fresh_own_locked(s, slab, me);
			if (nfr < (int)ARRAY_SIZE(fr))
				fr[nfr++] = (struct fresh_run){ i, k, first };
			else
				mark_fresh(s, objs + i, k);
			i += k;
		}
		relist_locked(s, slab, before);
	}
	/* Others refilled the lists while we grew: keep the new slabs. */
	list_for_each_entry_safe(slab, tmp, &fresh, slab_list) {
		list_del(&slab->slab_list);
		add_slab_locked(s, slab);
	}
	WRITE_ONCE(s->nr_inuse, s->nr_inuse + (unsigned long)i);	/* read unlocked: slab_pcp_refill */
	s->alloc_calls++;
	slab_unlock(s);

	if (nfr && slab_fresh_unwritten(s))
		slab_prefault_fresh(s, objs, fr, nfr);
	for (k = 0; k < nfr; k++)
		mark_fresh(s, objs + fr[k].from, fr[k].nr);
	if (magazine)
		fresh_order(objs, fr, nfr);
	slab_probe(slab_refill, s->name, n, i);
	if (gfp & __GFP_ZERO)
		for (k = 0; k < i; k++) {
			memset(objs[k], 0, s->object_size);
			/* the mark may sit in the object: its taker checks it */
			if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
				*slab_mark(s, objs[k]) = s->mark_key;
		}
	if (unlikely(i < n))
		errno = ENOMEM;
	return i;
}

int slab_alloc_bulk(struct kmem_cache *s, gfp_t gfp, void **objs, int n,
		    unsigned long addr)
{
	return __slab_alloc_bulk(s, gfp, objs, n, addr, false);
}

/**
 * slab_free_bulk - give @n objects of @s back to their slabs (the flush
 * path of the per-CPU layer). Slabs that become empty beyond min_partial
 * go back to page_alloc (after a grace period for SLAB_TYPESAFE_BY_RCU).
 * Context: thread-safe; takes the cache lock once per SLAB_FLUSH_RUNS runs
 * of one slab (once for a magazine in address order), after the objects
 * were checked and linked without it. Debug caches check each object under
 * the lock and abort with a report on a double free or a bad pointer; the
 * others check the free mark (each object was marked by its free: a
 * second copy of one finds the slab's mark).
 */

/* Debug caches: each object checked and given back on its own. */
static void slab_free_debug_locked(struct kmem_cache *s, void **objs, int n,
				   unsigned long addr)
{
	int k;

	for (k = 0; k < n; k++) {
		void *obj = objs[k];
		struct page *slab;
		enum slab_state before;

		slab = slab_debug_free_locked(s, obj, slab_free_name(s), addr);
		/* the mark is not checked here (debug's own checks are), but
		 * kept as every free object's */
		if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
			*slab_mark(s, obj) = slab_mark_slab(s);
		if (unlikely((char *)obj >= slab_fresh_obj(s, slab)))
			slab_report_double_free(slab_free_name(s), s, obj, addr);
		set_freepointer(s, obj, slab->freelist);
		slab->freelist = obj;
		before = slab_state(slab);
		slab->inuse--;
		relist_locked(s, slab, before);
	}
}

/*
 * One run of a flush: objects of one slab, linked into a detached freelist
 * (head .. tail) before the cache lock is taken; @hi is the run's highest
 * object, checked against the slab's fresh index under the lock.
 */
struct flush_run {
	struct page *slab;
	void *head, *tail;
	char *hi;
	unsigned int cnt;
};

/*
 * The head struct page of the slab of @s that holds @obj, from the
 * address: every slab of @s is a naturally aligned block of 2^s->order
 * pages (s->slab_mask + 1 bytes), so no load of @obj's own struct page
 * (a tail's compound_head) comes before the head's. An object of another
 * cache gives a page that is no slab of @s; the flush's mark check
 * refuses it before the page is used (its mark is not @s's key).
 */
static inline struct page *slab_head_of(const struct kmem_cache *s,
					const void *obj)
{
	return virt_to_page((const void *)((uintptr_t)obj & ~s->slab_mask));
}

/* Runs one hold of the cache lock splices (a flush with more takes it again). */
#define SLAB_FLUSH_RUNS		64
/* How far ahead a flush asks for the struct page of a run's first object. */
#define SLAB_FLUSH_AHEAD	8

/*
 * The objects of a flush come in runs of one slab (a magazine is filled
 * and emptied in address order more often than not): each run is linked
 * into a detached freelist (the kernel's build_detached_freelist() in
 * kmem_cache_free_bulk()) **before** the cache lock is taken, and put on
 * its slab under it with one store into the run's last object, one
 * update of the slab's inuse and at most one relist. Per object, all
 * without the lock: the mark's check and store, the free pointer's store
 * (the objects are the caller's until the splice: nobody else reaches
 * them). The lock covers per run: the never-handed-out test (the run's
 * highest object against the slab's fresh index, which moves under the
 * lock), the splice and the lists. The struct page, the slab's bounds are
 * read once per run (stable: the run's own objects keep the slab in use).
 * Return: objects of @objs taken into @runs (up to SLAB_FLUSH_RUNS runs).
 */
static int flush_build_runs(struct kmem_cache *s, void **objs, int n,
			    struct flush_run *runs, int *nruns,
			    unsigned long addr)
{
	int k = 0, nr = 0;

	while (k < n && nr < SLAB_FLUSH_RUNS) {
		struct page *slab;
		char *base, *end;
		struct flush_run *r = &runs[nr++];
		void *head = NULL;
		char *obj, *hi = NULL;
		unsigned int cnt = 0;

		/* struct pages are cold in a large heap: ask for the slab's
		 * of the run SLAB_FLUSH_AHEAD objects on (short runs: that
		 * many runs ahead; long ones: one prefetch a run, not an
		 * object) */
		if (k + SLAB_FLUSH_AHEAD < n)
			__builtin_prefetch(slab_head_of(s, objs[k + SLAB_FLUSH_AHEAD]));
		/* from the address alone: no load of the object's own
		 * struct page on the way to the head's */
		slab = slab_head_of(s, objs[k]);
		base = slab_base(slab);
		end = base + s->slab_mask + 1;
		r->tail = objs[k];
		while (k < n && (obj = objs[k]) >= base && obj < end) {
			if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED)) {
				unsigned long *mark = slab_mark(s, obj);

				if (unlikely(*mark != s->mark_key))
					slab_report_double_free(slab_free_name(s), s,
								obj, addr);
				*mark = slab_mark_slab(s);
			}
			set_freepointer(s, obj, head);
			head = obj;
			hi = obj > hi ? obj : hi;
			cnt++;
			k++;
		}
		r->slab = slab;
		r->head = head;
		r->hi = hi;
		r->cnt = cnt;
	}
	*nruns = nr;
	return k;
}

/* Put the detached runs on their slabs. */
static void flush_splice_locked(struct kmem_cache *s, struct flush_run *runs,
				int nr, unsigned long addr)
{
	int i;

	slab_assert_locked(s);
	for (i = 0; i < nr; i++) {
		struct flush_run *r = &runs[i];
		struct page *slab = r->slab;
		enum slab_state before = slab_state(slab);

		/* never handed out: freed without an allocation */
		if (unlikely(r->hi >= slab_fresh_obj(s, slab)))
			slab_report_double_free(slab_free_name(s), s, r->hi, addr);
		set_freepointer(s, r->tail, slab->freelist);
		slab->freelist = r->head;
		slab->inuse -= (unsigned short)r->cnt;
		/* only a full slab (now partial or empty) and a last object
		 * (now empty) change lists */
		if (unlikely(before == SLAB_FULL || !slab->inuse))
			relist_locked(s, slab, before);
	}
}

void slab_free_bulk(struct kmem_cache *s, void **objs, int n,
		    unsigned long addr)
{
	struct flush_run runs[SLAB_FLUSH_RUNS];
	LIST_HEAD(discard);
	int k = 0, done, nr;

	if (slab_debug(s)) {
		slab_lock(s);
		slab_free_debug_locked(s, objs, n, addr);
		WRITE_ONCE(s->nr_inuse, s->nr_inuse - (unsigned long)n);
		s->free_calls++;
		if (s->nr_empty > s->min_partial)
			take_empty_locked(s, s->min_partial, &discard);
		slab_unlock(s);
		slab_probe(slab_flush, s->name, n);
		discard_slabs(s, &discard);
		return;
	}
	do {
		done = flush_build_runs(s, objs + k, n - k, runs, &nr, addr);
		slab_lock(s);
		flush_splice_locked(s, runs, nr, addr);
		WRITE_ONCE(s->nr_inuse, s->nr_inuse - (unsigned long)done);
		if (!k)
			s->free_calls++;
		if (s->nr_empty > s->min_partial)
			take_empty_locked(s, s->min_partial, &discard);
		slab_unlock(s);
		k += done;
	} while (k < n);
	slab_probe(slab_flush, s->name, n);

	discard_slabs(s, &discard);
}

/* __GFP_NOFAIL: give back what can be given, then wait a little longer each time. */
void slab_nofail_wait(unsigned int attempt)
{
	struct timespec ts = { 0, 0 };
	unsigned int shift = attempt < 7 ? attempt : 7;

	kmem_cache_shrink_all();
	if (!attempt)
		return;
	ts.tv_nsec = (long)(1000000UL << shift);	/* 1 ms ... 128 ms */
	nanosleep(&ts, NULL);
}

static void slab_oom_warn(struct kmem_cache *s, gfp_t gfp)
{
	static unsigned long warned;

	if (gfp & __GFP_NOWARN)
		return;
	/* Rate limit: the first few failures tell the story. */
	if (__atomic_fetch_add(&warned, 1, __ATOMIC_RELAXED) < 10)
		pr_warn("kmem_cache_alloc(%s): out of memory (slab order %u)",
			s->name, s->order);
}

/*
 * A signal handler interrupted this thread inside the allocator
 * (lib/sigsafe.h), which may hold any allocator lock: no lock may be taken
 * here. The per-CPU magazines are lock-free (a last try, for a handler
 * that also frees), else an emergency mapping of page_alloc becomes the
 * object: constructed like a slab object, known to every free path.
 */
static __slowpath void *slab_alloc_reentrant(struct kmem_cache *s, gfp_t gfp)
{
	void *obj;

	if (IS_ENABLED(CONFIG_PERCPU_CACHE)) {
		obj = pcp_alloc_fast(s->pcp);	/* the bypass cache misses */
		if (obj) {
			slab_obj_take(s, obj);
			if (gfp & __GFP_ZERO)
				memset(obj, 0, s->object_size);
			return obj;
		}
	}
	obj = page_alloc_emergency_alloc(s->object_size, s->align);
	if (obj && s->ctor)
		s->ctor(obj);	/* fresh mappings are zero: __GFP_ZERO holds */
	return obj;
}

/**
 * slab_drain_deferred - give back the frees a signal handler deferred on
 * this thread while it was inside the allocator (lib/sigsafe.h).
 * Context: no allocator lock held (a miss entry, kmalloc's large paths).
 */
__slowpath void slab_drain_deferred(void)
{
	void *obj = sigsafe_take_deferred(), *next;

	for (; obj; obj = next) {
		struct page *page = virt_to_page(obj);
		struct kmem_cache *s;

		next = *(void **)obj;
		if (!PageFlag(page, PG_slab_page)) {
			kfree(obj);	/* a large block: checked when deferred */
			continue;
		}
		s = page->slab_cache;
		/* checked and marked when deferred; the link took the mark's word */
		if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
			*slab_mark(s, obj) = s->mark_key;
		slab_free_miss(s, obj, 0);
	}
}

/**
 * __slab_alloc - one object from the slab layer: the slow path below the
 * per-CPU magazines, and the whole of kmem_cache_alloc() on debug caches.
 * @addr: the call site SLAB_STORE_USER records (slab_alloc(): 0).
 * Context: thread-safe.
 * Return: the object, taken (slab_obj_take()), or NULL with errno ENOMEM
 * (never with __GFP_NOFAIL).
 */
void *__slab_alloc(struct kmem_cache *s, gfp_t gfp, unsigned long addr)
{
	unsigned int attempt = 0;
	void *obj;

	if (sigsafe_busy()) {
		if (sigsafe_reentered())
			return slab_alloc_reentrant(s, gfp);
		slab_drain_deferred();
	}
	for (;;) {
		if (likely(slab_alloc_bulk(s, gfp, &obj, 1, addr) == 1)) {
			/* no lock of ours held here: may start page_alloc's
			 * decay thread (pthread_create may call malloc) */
			page_alloc_decayd_poll();
			return slab_obj_take(s, obj);
		}
		if (!(gfp & __GFP_NOFAIL))
			break;
		slab_nofail_wait(attempt++);
	}
	slab_oom_warn(s, gfp);
	errno = ENOMEM;
	return NULL;
}

/** __slab_free - one object back to its slab (see slab_free_bulk()). */
void __slab_free(struct kmem_cache *s, void *obj, unsigned long addr)
{
	if (sigsafe_reentered()) {
		/* a handler inside the allocator: lock-free, or later */
		if (IS_ENABLED(CONFIG_PERCPU_CACHE) && pcp_free_fast(s->pcp, obj))
			return;
		sigsafe_defer(obj);
		return;
	}
	if (sigsafe_has_deferred())
		slab_drain_deferred();
	slab_free_bulk(s, &obj, 1, addr);
	page_alloc_decayd_poll();	/* no lock held, see slab_alloc() */
}

/* ---------------------------------------------------------------------- */
/* The per-CPU layer's refill and flush, in batches */

/*
 * A refill takes at most as many objects as the cache has out already
 * (magazines and program), and at least SLAB_REFILL_MIN: a class a
 * program uses for a handful of blocks does not park a whole batch in a
 * magazine, each object touched by its mark (up to 60 objects, 27 KiB of
 * kmalloc-1k, per class and CPU), and a busy class reaches the batch
 * after a few refills, doubling. The count is read without the lock: a
 * stale value only changes how much this refill takes.
 */
#define SLAB_REFILL_MIN		4

static unsigned int slab_pcp_refill(void *owner, void **objs, unsigned int nr)
{
	struct kmem_cache *s = owner;
	unsigned long out = max_t(unsigned long, SLAB_REFILL_MIN,
				  READ_ONCE(s->nr_inuse));
	int got;

	nr = (unsigned int)min_t(unsigned long, nr, out);
	got = __slab_alloc_bulk(s, GFP_KERNEL | __GFP_NOWARN, objs, (int)nr, 0,
				true);

	return got > 0 ? (unsigned int)got : 0;
}

static void slab_pcp_flush(void *owner, void **objs, unsigned int nr)
{
	slab_free_bulk(owner, objs, (int)nr, 0);
}

/*
 * Before percpu's slow paths take a lock: not from a signal handler that
 * interrupted this thread inside the allocator (it may hold any of our
 * locks; the miss entries then serve it lock-free), and frees a handler
 * deferred go back first.
 */
static bool slab_pcp_may_lock(void *owner)
{
	if (likely(!sigsafe_busy()))
		return true;
	if (sigsafe_reentered())
		return false;
	slab_drain_deferred();
	return true;
}

const struct pcp_ops slab_pcp_ops = {
	.refill = slab_pcp_refill,
	.flush = slab_pcp_flush,
	.may_lock = slab_pcp_may_lock,
};

/*
 * Magazines in front of @s unless it is a debug cache (checked on every
 * operation) or per-CPU caching is off. Without them (or if they cannot
 * be had) the cache has the bypass pcp_cache and works from its slabs.
 */
/*
 * @s's free mark (slab/internal.h, "Free marks"), before its first slab:
 * the address of its pcp_cache, which the hit paths hold in a register
 * (kmalloc_small_fast() compares the object's word with the table entry
 * it popped from, kfree_small_fast() stores its class's entry), so
 * neither loads a key. Also when that is the bypass cache (a debug cache,
 * or magazines that could not be had: kfree_small_fast() marks with the
 * class's entry all the same, then misses). slab_free_key without
 * per-CPU caches.
 */
static void slab_mark_key(struct kmem_cache *s)
{
	if (!IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
		return;
	if (unlikely(!READ_ONCE(slab_free_key)))
		slab_free_key_init();
	s->mark_key = READ_ONCE(slab_free_key);
	if (IS_ENABLED(CONFIG_PERCPU_CACHE) && s->pcp)
		s->mark_key = (unsigned long)s->pcp;
	/* the link shares the mark's word (8-byte objects): xor'd with the
	 * slab's mark (slab/internal.h, slab_link_xor()) */
	s->link_xor = s->offset == s->mark_off && s->mark_mul == 1 ?
		      slab_mark_slab(s) : 0;
}

static void slab_pcp_attach(struct kmem_cache *s)
{
	if (!IS_ENABLED(CONFIG_PERCPU_CACHE))
		return;
	if (!slab_debug(s))
		s->pcp = pcp_cache_create(s->name, s, &slab_pcp_ops, s->size);
	/* kmalloc_small_fast() clears the free mark of a magazine hit at word 0 */
	BUG_ON(s->pcp && (s->flags & __SLAB_KMALLOC) && s->mark_off);
	if (!s->pcp) {
		s->pcp = pcp_cache_bypass();
		return;
	}
	if (s->limit && pcp_cache_set_tunables(s->pcp, s->limit, s->batchcount))
		pr_warn("kmem_cache_create(%s): tunables %u %u refused", s->name,
			s->limit, s->batchcount);
	if (s->depot_limit != -2)
		pcp_cache_set_depot_limit(s->pcp, s->depot_limit < 0 ? PCP_DEPOT_UNLIMITED :
					  (unsigned int)s->depot_limit);
}

/**
 * slab_alloc_miss - behind slab_alloc_fast() and kmalloc's fast paths: an
 * empty magazine, __GFP_ZERO (tried here), a bypass cache, a signal handler inside the allocator,
 * out of memory. Goes only down: the CPU's slow path (percpu, which asks
 * slab_pcp_may_lock() and refills through slab_pcp_refill()), else the
 * slab layer itself (__slab_alloc(): a handler's object, __GFP_NOFAIL,
 * the warning).
 * Context: thread-safe; may take the per-CPU and the cache locks.
 * Return: the object, taken (slab_obj_take()), zeroed for __GFP_ZERO; or
 * NULL with errno ENOMEM.
 */
noinline void *slab_alloc_miss(struct kmem_cache *s, gfp_t gfp, unsigned long addr)
{
	struct pcp_cache *pcp = s->pcp;
	void *obj;

	if (!IS_ENABLED(CONFIG_PERCPU_CACHE) || pcp_cache_is_bypass(pcp))
		return __slab_alloc(s, gfp, addr);
	/* __GFP_ZERO: the hit path leaves the memset here */
	obj = gfp & __GFP_ZERO ? pcp_alloc_fast(pcp) : NULL;
	if (!obj) {
		int nested = fill_deferred.active;

		fill_deferred.active = 1;
		obj = pcp_alloc_slow(pcp);
		fill_deferred.active = nested;
		if (!nested && fill_deferred.nr)
			fill_run_deferred();
	}
	if (unlikely(!obj))
		return __slab_alloc(s, gfp, addr);
	slab_obj_take(s, obj);
	if (gfp & __GFP_ZERO)
		memset(obj, 0, s->object_size);
	return obj;
}

/**
 * slab_free_miss - behind slab_free_fast() and kmalloc's free fast path:
 * a full magazine, a bypass cache, a signal handler's free (percpu's slow
 * path refused it: __slab_free() defers it). @obj is checked and marked
 * already.
 */
noinline void slab_free_miss(struct kmem_cache *s, void *obj, unsigned long addr)
{
	if (!IS_ENABLED(CONFIG_PERCPU_CACHE) || pcp_cache_is_bypass(s->pcp) ||
	    !pcp_free_slow(s->pcp, obj))
		__slab_free(s, obj, addr);
}


/* ---------------------------------------------------------------------- */
/* Public API */

static void boot_cache_init(void)
{
	__kmem_cache_create(&kmem_cache_boot, "kmem_cache",
			    sizeof(struct kmem_cache), 0, SLAB_HWCACHE_ALIGN,
			    NULL);
	pthread_mutex_lock(&slab_mutex);
	cds_list_add_tail_rcu(&kmem_cache_boot.list, &slab_caches);
	pthread_mutex_unlock(&slab_mutex);
}

/** slab_init - set up the boot cache; idempotent, cheap after the first call. */
void slab_init(void)
{
	pthread_once(&slab_once, boot_cache_init);
}

/**
 * __kmem_cache_create - fill in @s (zeroed) and compute its layout; the
 * caller adds it to slab_caches under slab_mutex.
 * Context: @s is not yet visible to other threads.
 * Return: 0 or -EINVAL.
 */
int __kmem_cache_create(struct kmem_cache *s, const char *name,
			unsigned int size, unsigned int align,
			slab_flags_t flags, void (*ctor)(void *))
{
	/* slab_debug=... (and CONFIG_SLAB_DEBUG_ON): slab/settings.c */
	if (!IS_ENABLED(CONFIG_SLAB_DEBUG))
		flags &= ~SLAB_DEBUG_FLAGS;
	else
		flags = slab_settings_debug_flags(name, flags);

	strncpy(s->name, name, sizeof(s->name) - 1);
	s->name[sizeof(s->name) - 1] = '\0';
	s->object_size = size;
	s->align = align;
	s->flags = flags;
	s->ctor = ctor;
	if (slab_calculate_layout(s))
		return -EINVAL;
	owned_init(&s->lock);
	INIT_LIST_HEAD(&s->partial);
	INIT_LIST_HEAD(&s->full);
	INIT_LIST_HEAD(&s->empty);
	CDS_INIT_LIST_HEAD(&s->list);
	slab_settings_resolve(s);	/* settings named before it existed */
	slab_pcp_attach(s);
	slab_mark_key(s);
	return 0;
}

/**
 * kmem_cache_create - create a cache of objects of @size bytes.
 * @name: shown by slabinfo; copied (truncated to 47 bytes).
 * @size: object size, 1 .. 4 MiB (the largest buddy block).
 * @align: minimum alignment, 0 or a power of two.
 * @flags: SLAB_* flags; debug flags need CONFIG_SLAB_DEBUG.
 * @ctor: run on each object when its slab is created, never on reuse.
 * Context: may sleep; takes slab_mutex. Does not call malloc.
 * Return: the cache, or NULL with errno EINVAL (bad arguments) or ENOMEM.
 * With SLAB_PANIC a failure aborts instead.
 */
struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, slab_flags_t flags,
				     void (*ctor)(void *))
{
	struct kmem_cache *s;
	int err = -EINVAL;

	slab_init();
	if (!name || !size || (align & (align - 1)) ||
	    size > (PAGE_SIZE << MAX_PAGE_ORDER))
		goto out_fail;
	err = -ENOMEM;
	s = slab_alloc(&kmem_cache_boot, GFP_KERNEL | __GFP_ZERO);
	if (!s)
		goto out_fail;
	err = __kmem_cache_create(s, name, size, align, flags, ctor);
	if (err)
		goto out_free;
	pthread_mutex_lock(&slab_mutex);
	cds_list_add_tail_rcu(&s->list, &slab_caches);
	pthread_mutex_unlock(&slab_mutex);
	slab_settings_recheck(s);
	return s;

out_free:
	slab_free(&kmem_cache_boot, s);
out_fail:
	if (flags & SLAB_PANIC)
		uslab_panic("kmem_cache_create(%s) failed: %s", name ? name : "(null)",
			    strerror(-err));
	errno = -err;
	return NULL;
}

/**
 * kmem_cache_destroy - destroy a cache. As the kernel: when objects are
 * still allocated, report "kmem_cache_destroy NAME: Slab cache still has
 * objects" with the count, free only the empty slabs and leave the cache in
 * place (so that the live objects stay valid and can still be freed).
 * @s: the cache, or NULL (ignored).
 * Context: may sleep (waits for an RCU grace period, and for pending
 * kfree_rcu()/TYPESAFE_BY_RCU frees). Not concurrently with other uses
 * of @s. Takes slab_mutex.
 */
void kmem_cache_destroy(struct kmem_cache *s)
{
	LIST_HEAD(discard);
	unsigned long live, slabs;

	if (!s)
		return;
	/* Objects of @s may be waiting in kfree_rcu(), or on this thread's
	 * list of frees a signal handler deferred (lib/sigsafe.h). */
	slab_rcu_barrier_if_pending();
	if (sigsafe_has_deferred() && !sigsafe_reentered())
		slab_drain_deferred();
	/* objects in magazines are not live: give them back first */
	if (s->pcp)
		pcp_cache_drain(s->pcp);

	pthread_mutex_lock(&slab_mutex);
	slab_lock(s);
	take_empty_locked(s, 0, &discard);
	live = s->nr_inuse;
	slabs = s->nr_slabs;
	slab_unlock(s);
	if (live) {
		pthread_mutex_unlock(&slab_mutex);
		pr_err("kmem_cache_destroy %s: Slab cache still has objects "
		       "(%lu objects in %lu slabs)", s->name, live, slabs);
		discard_slabs(s, &discard);
		return;
	}
	cds_list_del_rcu(&s->list);
	pthread_mutex_unlock(&slab_mutex);

	discard_slabs(s, &discard);
	/* slabinfo readers may still look at @s; TYPESAFE slabs in flight. */
	slab_rcu_synchronize();
	if (s->flags & SLAB_TYPESAFE_BY_RCU)
		slab_rcu_barrier();
	pcp_cache_destroy(s->pcp);
	pthread_mutex_destroy(&s->lock.mutex);
	slab_free(&kmem_cache_boot, s);
}

/**
 * kmem_cache_shrink - give every empty slab of @s back to page_alloc.
 * Context: thread-safe; takes the cache lock.
 * Return: 0 if the cache holds no slab afterwards, 1 otherwise.
 */
int kmem_cache_shrink(struct kmem_cache *s)
{
	LIST_HEAD(discard);
	unsigned long left;

	/* every CPU's magazines (remote ones stopped and fenced) first */
	if (s->pcp)
		pcp_cache_drain(s->pcp);
	slab_lock(s);
	take_empty_locked(s, 0, &discard);
	left = s->nr_slabs;
	slab_unlock(s);
	discard_slabs(s, &discard);
	return left ? 1 : 0;
}

/**
 * kmem_cache_shrink_all - kmem_cache_shrink() every cache, then trim the
 * page allocator.
 * Context: thread-safe; walks the cache list under RCU (no slab_mutex,
 * since TYPESAFE_BY_RCU discards call call_rcu).
 */
__visible void kmem_cache_shrink_all(void)
{
	struct kmem_cache *s;

	slab_init();
	slab_rcu_read_lock();
	cds_list_for_each_entry_rcu(s, &slab_caches, list)
		kmem_cache_shrink(s);
	slab_rcu_read_unlock();
	page_alloc_trim();
}

void *kmem_cache_alloc(struct kmem_cache *s, gfp_t flags)
{
	return slab_alloc_fast(s, flags);
}

void *kmem_cache_zalloc(struct kmem_cache *s, gfp_t flags)
{
	return slab_alloc_fast(s, flags | __GFP_ZERO);
}

/*
 * The cache an object really belongs to. A debug cache reports a mismatch
 * (and aborts) in slab_debug_free_locked(); otherwise warn and use the
 * object's own cache, as the kernel's cache_from_obj() does. No slab at
 * all: slab_free_not_slab() (hardened builds abort inside uslab's range).
 */
static struct kmem_cache *cache_from_obj(struct kmem_cache *s, void *obj)
{
	struct page *slab;

	if (slab_debug(s))
		return s;
	if (unlikely(!page_alloc_owns(obj) || !(slab = virt_to_slab(obj)))) {
		if (!page_alloc_emergency_free(obj))
			slab_free_not_slab("kmem_cache_free", s, obj, false);
		return NULL;
	}
	if (unlikely(slab->slab_cache != s)) {
		pr_warn("kmem_cache_free(%s): object 0x%lx belongs to cache %s",
			s->name, (unsigned long)obj, slab->slab_cache->name);
		return slab->slab_cache;
	}
	return s;
}

/*
 * Hardened kmem_cache_free() of a pointer that is not in a slab page:
 * reported, as cache_from_obj() does, and ignored if it is outside uslab's
 * range; inside it, a free after the slab went back (slab_free_not_slab()
 * aborts). A debug cache aborts in its slow path instead.
 */
static __slowpath bool kmem_cache_free_foreign(struct kmem_cache *s, void *obj)
{
	if (page_alloc_emergency_free(obj))
		return true;	/* a signal handler's object (lib/sigsafe.h) */
	if (slab_debug(s))
		return false;
	slab_free_not_slab("kmem_cache_free", s, obj, false);
	return true;
}

void kmem_cache_free(struct kmem_cache *s, void *obj)
{
	struct page *page;

	if (unlikely(!obj))
		return;
	/* as the kernel: only hardened builds look the cache up (debug
	 * caches check every object in slab_free_bulk) */
	if (IS_ENABLED(CONFIG_SLAB_FREE_CHECK)) {
		s = cache_from_obj(s, obj);
		if (unlikely(!s))
			return;
	}
	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED)) {
		page = virt_to_page(obj);
		if (unlikely(!page_alloc_owns(obj) ||
			     !PageFlag(page, PG_slab_page))) {
			if (kmem_cache_free_foreign(s, obj))
				return;
		} else if (likely(page->slab_cache == s)) {
			/* (another cache's object: SLAB_FREE_CHECK's business) */
			if (!slab_free_check("kmem_cache_free", s, page, obj))
				return;
		}
	}
	slab_free_fast(s, obj);
}

int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t flags, size_t nr, void **p)
{
	size_t done = 0;

	while (done < nr) {
		int want = nr - done > INT_MAX ? INT_MAX : (int)(nr - done);
		int got = slab_alloc_bulk(s, flags, p + done, want, _RET_IP_), k;

		for (k = 0; k < got; k++)
			slab_obj_take(s, p[done + (size_t)k]);
		done += (size_t)got;
		if (got < want) {
			/* All or nothing, as the kernel. */
			kmem_cache_free_bulk(s, done, p);
			return 0;
		}
	}
	return (int)done;
}

void kmem_cache_free_bulk(struct kmem_cache *s, size_t nr, void **p)
{
	size_t k;

	/* s == NULL: objects of any caches (kfree_bulk). */
	if (!s) {
		for (k = 0; k < nr; k++)
			kfree(p[k]);
		return;
	}
	while (nr) {
		int n = nr > INT_MAX ? INT_MAX : (int)nr;

		if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) && !slab_debug(s))
			for (k = 0; k < (size_t)n; k++)
				if (page_alloc_owns(p[k]) &&
				    PageFlag(virt_to_page(p[k]), PG_slab_page) &&
				    virt_to_page(p[k])->slab_cache == s)
					slab_free_check("kmem_cache_free_bulk", s,
							virt_to_page(p[k]), p[k]);
		slab_free_bulk(s, p, n, _RET_IP_);
		p += n;
		nr -= (size_t)n;
	}
}

unsigned int kmem_cache_size(struct kmem_cache *s)
{
	return s->object_size;
}

const char *kmem_cache_name(const struct kmem_cache *s)
{
	return s->name;
}

struct pcp_cache *kmem_cache_pcp(struct kmem_cache *s)
{
	struct pcp_cache *pc = READ_ONCE(s->pcp);

	/* debug caches share the bypass cache: no magazines of their own */
	return pc && !pcp_cache_is_bypass(pc) ? pc : NULL;
}

/** kmem_cache_find - first cache named @name, or NULL. Context: RCU walk. */
struct kmem_cache *kmem_cache_find(const char *name)
{
	struct kmem_cache *s, *found = NULL;

	slab_init();
	slab_rcu_read_lock();
	cds_list_for_each_entry_rcu(s, &slab_caches, list) {
		if (!strcmp(s->name, name)) {
			found = s;
			break;
		}
	}
	slab_rcu_read_unlock();
	return found;
}

/* ---------------------------------------------------------------------- */
/* fork(): every slab lock is taken before and released or re-made after. */

/* The forking thread's sigsafe depth before prepare: its child's after. */
static unsigned long slab_fork_depth;

void slab_fork_prepare(void)
{
	struct kmem_cache *s;

	slab_init();
	slab_fork_depth = sigsafe.depth;
	slab_rcu_fork_prepare();
	pthread_mutex_lock(&slab_mutex);
	/*
	 * The per-CPU locks nest inside slab_mutex (kmalloc-N creation and
	 * slabinfo_write reach percpu under it) and outside every cache lock
	 * (refill and flush take the cache lock): take them in between.
	 */
	pcp_fork_prepare();
	cds_list_for_each_entry(s, &slab_caches, list)
		slab_lock(s);
	slab_settings_fork_prepare();	/* a leaf: last */
}

void slab_fork_parent(void)
{
	struct kmem_cache *s;

	slab_settings_fork_parent();
	cds_list_for_each_entry(s, &slab_caches, list)
		slab_unlock(s);
	pcp_fork_parent();
	pthread_mutex_unlock(&slab_mutex);
	slab_rcu_fork_parent();
}

void slab_fork_child(void)
{
	struct kmem_cache *s;

	/* The forking thread holds every lock; re-making them is simplest. */
	slab_settings_fork_child();
	cds_list_for_each_entry(s, &slab_caches, list) {
		owned_init(&s->lock);
	}
	pcp_fork_child();
	pthread_mutex_init(&slab_mutex, NULL);
	slab_rcu_fork_child();
	sigsafe.depth = slab_fork_depth;	/* the locks were re-made, not left */
}

/*
 * ---- Tunables in force: the settings (slab/settings.c, which parses,
 * keeps and resolves them) put into live caches. A kmalloc cache whose
 * debug flags change is re-made by kmalloc.c (kmalloc_cache_remake()).
 */

/**
 * kmem_cache_set_tunables - set the magazine size (@limit), the refill and
 * flush batch (@batchcount) and @shared of @s.
 * The magazines of every CPU are drained and come back at the new size
 * (debug caches have none: the values are only stored).
 * Context: thread-safe, also while other threads use @s; takes the cache
 * lock, then the per-CPU layer's locks (never both at once).
 * Return: 0, or -EINVAL unless 1 <= @limit <= 4096,
 * 1 <= @batchcount <= @limit and @shared <= 4096.
 */
int kmem_cache_set_tunables(struct kmem_cache *s, unsigned int limit,
			    unsigned int batchcount, unsigned int shared)
{
	if (!s || limit < 1 || limit > (unsigned int)uslab_tunables[USLAB_OPT_MAG_SIZE].max || batchcount < 1 ||
	    batchcount > limit || shared > SLAB_MAX_SHARED)
		return -EINVAL;
	slab_lock(s);
	WRITE_ONCE(s->limit, limit);
	WRITE_ONCE(s->batchcount, batchcount);
	WRITE_ONCE(s->shared, shared);
	slab_unlock(s);
	if (s->pcp)
		return pcp_cache_set_tunables(s->pcp, limit, batchcount);
	return 0;
}

/* Put the resolved tunables of a live cache into force. */
static int settings_apply(struct kmem_cache *s)
{
	struct pcp_cache *pc;
	unsigned int limit, batch, gen, now_limit, now_batch;
	long depot;
	int err = 0;

	/* debug flags changed: a kmalloc cache is re-made, with its tunables */
	if (IS_ENABLED(CONFIG_SLAB_DEBUG) && (s->flags & __SLAB_KMALLOC))
		kmalloc_cache_remake(s);
	pc = kmem_cache_pcp(s);
	if (!pc)
		return -EOPNOTSUPP;
	slab_settings_tunables(s, &limit, &batch, &depot, &gen);
	pcp_cache_get_tunables(pc, &now_limit, &now_batch);
	if (limit != now_limit || batch != now_batch)
		err = kmem_cache_set_tunables(s, limit, batch, READ_ONCE(s->shared));
	if (!err && depot != -2)
		err = pcp_cache_set_depot_limit(pc, depot < 0 ? PCP_DEPOT_UNLIMITED :
						(unsigned int)depot);
	WRITE_ONCE(s->settings_gen, gen);
	return err;
}

/**
 * slab_settings_recheck - after @s is on slab_caches: apply settings added
 * since it resolved its tunables.
 * Context: not under slab_mutex (resizing drains magazines).
 */
void slab_settings_recheck(struct kmem_cache *s)
{
	if (slab_settings_gen() != READ_ONCE(s->settings_gen))
		settings_apply(s);
}

/**
 * slab_settings_apply - put the tunables that the settings and defaults
 * give @s into force (it exists, it is on slab_caches).
 * Context: an RCU reader or holding a reference; may drain magazines.
 * Return: 0, -EOPNOTSUPP for a cache without magazines, or the error of
 * kmem_cache_set_tunables().
 */
int slab_settings_apply(struct kmem_cache *s)
{
	return settings_apply(s);
}

/**
 * kmem_cache_setting_add - keep @set for caches created from now on and
 * apply it to the existing caches it names.
 * Context: thread-safe; an RCU reader; may drain magazines.
 * Return: 0; -ENOSPC when SLAB_MAX_SETTINGS are kept already; the first
 * error of kmem_cache_set_tunables() on an existing cache.
 */
__visible int kmem_cache_setting_add(const struct kmem_cache_setting *set)
{
	struct kmem_cache *s;
	int err;

	slab_init();
	err = slab_settings_store(set);
	if (err)
		return err;
	if (slab_setting_debug_may_kmalloc(set))
		kmalloc_debug_route();
	slab_rcu_read_lock();
	cds_list_for_each_entry_rcu(s, &slab_caches, list) {
		int e;

		if (!slab_setting_matches(set, s))
			continue;
		if (set->what == KMEM_TUNE_DEBUG) {
			/*
			 * Only a kmalloc cache can be re-made; another cache
			 * keeps the layout it was created with.
			 */
			if (s->flags & __SLAB_KMALLOC)
				e = kmalloc_cache_remake(s);
			else
				e = set->cache[0] && s != &kmem_cache_boot &&
				    ((slab_settings_debug_flags(s->name, 0) ^ s->flags) &
				     SLAB_DEBUG_FLAGS) ? -EBUSY : 0;
			err = err ? err : e;
			continue;
		}
		e = settings_apply(s);
		if (e == -EOPNOTSUPP)
			continue;	/* a debug cache among the kmalloc ones */
		err = err ? err : e;
	}
	slab_rcu_read_unlock();
	return err;
}

/** kmem_cache_setting - kmem_cache_setting_parse() then _add(). */
__visible int kmem_cache_setting(const char *item)
{
	struct kmem_cache_setting set;
	int err = kmem_cache_setting_parse(item, &set);

	return err ? err : kmem_cache_setting_add(&set);
}
