// SPDX-License-Identifier: MIT
/*
 * Per-CPU page lists in front of the buddy allocator, as mm/page_alloc.c's
 * per_cpu_pages: blocks of orders 0..PAGELIST_MAX_ORDER are freed to and
 * allocated from a list of the current CPU, and the zone lock is taken
 * once per batch (rmqueue_bulk, pagelist_free_bulk) instead of once per
 * block. The slab layer's slabs and the percpu layer's arrays are such
 * blocks: a cache that grows and shrinks slab by slab does not pay the
 * zone lock per slab.
 *
 * Marks, in pages (CONFIG_PAGE_ALLOC_PCP_BATCH and _HIGH): a refill takes
 * batch pages' worth of blocks of the order asked; a free that brings the
 * list to high pages gives batch pages back, coldest first. The decay
 * thread drains lists that saw no traffic for a tick, so idle CPUs hold
 * nothing (the kernel's pcp high decays the same way).
 *
 * Locking: each list has a try-lock flag and is never waited on. The CPU
 * is looked up (uslab_cpu_id: rseq's cpu_id or the vDSO) and its list
 * try-locked; if the flag is taken, by another thread that ran on this CPU
 * before a migration or by the very thread a signal handler interrupted,
 * the caller goes to the zone instead (the kernel's pcp_spin_trylock and
 * rmqueue_buddy fallback). So a thread can be migrated anywhere inside the
 * section (the flag, not the CPU, protects the list) and a handler never
 * waits. Nesting: a list's flag > pa_zone.lock (refill and bulk free take
 * the zone lock while holding the flag; nothing holding the zone lock ever
 * takes a flag). Fork: page_alloc_fork_prepare takes every flag (spinning
 * with sched_yield: holders never block) before the zone lock.
 *
 * Blocks on a list are counted as handed out in pa_zone.bytes_allocated
 * (the zone gave them away); page_alloc_get_stats() reports them apart.
 * On a list a block has flags 0 (a second free of it is caught by the
 * debug checks as "not allocated"), its order and compound_head, and
 * buddy_resident: its bound of resident pages, as on the buddy lists.
 */
#include <errno.h>
#include <sched.h>
#include "lib/cpuclock.h"
#include "page_alloc/internal.h"

struct pa_pagelist pa_pagelists[PA_NR_PAGELISTS];

#define PAGELIST_BATCH	CONFIG_PAGE_ALLOC_PCP_BATCH
#define PAGELIST_HIGH	CONFIG_PAGE_ALLOC_PCP_HIGH

#define pagelist_stat_inc(pl, field)					\
	do {								\
		if (IS_ENABLED(CONFIG_STATS))				\
			(pl)->field++;					\
	} while (0)

/*
 * The list of the CPU the thread runs on now (lib/cpuclock.h): the real
 * CPU, or in the simulator's library the virtual CPU that runs, so that
 * a simulation keeps a list per virtual CPU as a real run does per CPU.
 */
static inline struct pa_pagelist *pagelist_this(void)
{
	int cpu = uslab_cpu_id();

	return &pa_pagelists[cpu < 0 ? 0 : (unsigned int)cpu % PA_NR_PAGELISTS];
}

/* One load, then one exchange if the flag looked free. */
static inline bool pagelist_trylock(struct pa_pagelist *pl)
{
	return !__atomic_load_n(&pl->locked, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(&pl->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void pagelist_unlock(struct pa_pagelist *pl)
{
	__atomic_store_n(&pl->locked, 0, __ATOMIC_RELEASE);
}

/* Called once, under the zone lock, when the range is reserved. */
/*
 * A list's heads are made at its first use, under its flag, not at init:
 * 256 lists are 48 KiB, which a program on two CPUs would otherwise pay
 * in RSS for lists it never uses (issue 18, item 5). An unused list reads
 * as empty everywhere (count 0).
 */
static void __slowpath pagelist_make(struct pa_pagelist *pl)
{
	unsigned int o;

	for (o = 0; o < PAGELIST_NR_ORDERS; o++)
		INIT_LIST_HEAD(&pl->lists[o]);
}

static inline void pagelist_ready(struct pa_pagelist *pl)
{
	if (unlikely(!pl->lists[0].next))
		pagelist_make(pl);
}

/*
 * Each CPU's fresh pages in a region of its own (docs/page_alloc.md). When
 * the buddy has no block that may be resident at any order that fits (a
 * heap that grows: its free blocks are fresh, or the zone must grow), a
 * block below a region's size comes from a region of the
 * CPU's own instead, carved in address order, refill after refill and
 * alloc_pages() after alloc_pages(); two CPUs filling the heap together
 * then fault (or populate) in different page-table pages, each under its
 * own page-table lock, instead of in alternate batches of one. Blocks that
 * may be resident still go first, as before: a region never stands in
 * for memory that may be resident. Not under a cap (pa_zone.limit), which
 * a region would take 2 MiB of at once.
 */
static bool region_wanted_locked(unsigned int order)
{
	unsigned int o;

	pa_assert_locked();
	if (order > PAGELIST_REGION_ORDER || pa_zone.limit)
		return false;
	/* possibly-resident blocks lead their lists: none at any order that
	 * fits (a warm block of a larger order, split, beats fresh pages:
	 * sh8bench's peak RSS 60 -> 72 MiB when only the lowest order that
	 * fits was asked) */
	for (o = order; o <= MAX_PAGE_ORDER; o++)
		if (pa_zone.nr_free[o] &&
		    list_first_entry(&pa_zone.free_area[o], struct page,
				     buddy_list)->buddy_resident)
			return false;
	return true;	/* fresh blocks only, or a grow */
}

/* Pfns [@pfn, @end) of a region back to the buddy lists, never written. */
static void region_put_locked(unsigned long pfn, unsigned long end)
{
	while (pfn < end) {
		unsigned int o = 0;

		/* the largest aligned block at @pfn that fits */
		while (o < PAGELIST_REGION_ORDER && !(pfn & (1UL << o)) &&
		       pfn + (2UL << o) <= end)
			o++;
		pa_free_one_locked(page_alloc_map + pfn, o, 0);
		pfn += 1UL << o;
	}
}

/*
 * The next block of @order from @pl's region, its head prepared as a
 * refill's (flags 0, known zero); the pages skipped to align it go back to
 * the buddy lists. NULL when the region has no room for it.
 */
static struct page *region_carve_locked(struct pa_pagelist *pl, unsigned int order)
{
	unsigned long pfn = ALIGN_UP(pl->region, 1UL << order);
	struct page *page;

	if (!pl->region_end || pfn + (1UL << order) > pl->region_end)
		return NULL;
	region_put_locked(pl->region, pfn);
	pl->region = pfn + (1UL << order);
	if (pl->region == pl->region_end)
		pl->region = pl->region_end = 0;	/* used up */
	page = page_alloc_map + pfn;
	page->flags = 0;
	page->compound_head = page;
	page->order = order;
	page->buddy_resident = 0;
	return page;
}

/* @pl's region, used up for @order: the rest back, a new one taken. */
static bool region_take_locked(struct pa_pagelist *pl)
{
	unsigned int resident;
	struct page *page;

	region_put_locked(pl->region, pl->region_end);
	pl->region = pl->region_end = 0;
	/* only a fresh one: its pages are given back as known zero */
	if (!region_wanted_locked(PAGELIST_REGION_ORDER))
		return false;
	page = rmqueue_buddy_locked(PAGELIST_REGION_ORDER, &resident);
	if (!page)
		return false;
	if (resident) {		/* not expected: the first block was fresh */
		pa_free_one_locked(page, PAGELIST_REGION_ORDER, resident);
		return false;
	}
	page->flags = 0;
	pl->region = page_to_pfn(page);
	pl->region_end = pl->region + (1UL << PAGELIST_REGION_ORDER);
	return true;
}

/* Give @pl's region back whole (drains). Return: pages given back. */
static unsigned long region_drop(struct pa_pagelist *pl)
{
	unsigned long pages = pl->region_end - pl->region;

	if (!pl->region_end)
		return 0;
	pa_lock_irqsave();
	region_put_locked(pl->region, pl->region_end);
	pa_unlock_irqrestore();
	pl->region = pl->region_end = 0;
	return pages;
}

/* One block of @order for a refill: from the region when the buddy would
 * split a fresh region for it, else the buddy's. */
static struct page *rmqueue_one_locked(struct pa_pagelist *pl, unsigned int order,
				       unsigned int *resident)
{
	struct page *page;

	if (region_wanted_locked(order)) {
		*resident = 0;
		page = region_carve_locked(pl, order);
		if (page)
			return page;
		if (region_take_locked(pl))
			return region_carve_locked(pl, order);
	}
	return rmqueue_buddy_locked(order, resident);
}

/*
 * Refill @pl's list of @order with a batch from the buddy lists (or the
 * list's region) under one zone lock. Fewer near the cap, none when one
 * block would pass it.
 * Return: blocks added.
 */
static unsigned int rmqueue_bulk(struct pa_pagelist *pl, unsigned int order)
{
	unsigned int i, n = max_t(unsigned int, 1, PAGELIST_BATCH >> order);
	unsigned int room = pl->count < PAGELIST_HIGH ? PAGELIST_HIGH - pl->count : 0;
	struct list_head *l = &pl->lists[order];

	/*
	 * Near the cap fewer, and none when not even one fits: the caller then
	 * takes the block from the zone itself. A refill never takes the list
	 * past the high mark (check_buddy's model saw 263 pages against 256:
	 * one order-3 block on 255).
	 */
	n = min_t(unsigned int, n, room >> order);
	if (!n)
		return 0;

	pa_lock_irqsave();
	for (i = 0; i < n; i++) {
		unsigned int resident;
		struct page *page = rmqueue_one_locked(pl, order, &resident);

		if (!page)
			break;
		page->flags = 0;
		page->buddy_resident = resident;
		/* in the order the buddy gave them: warm blocks first */
		list_add_tail(&page->buddy_list, l);
		pl->count += 1U << order;
	}
	pagelist_stat_inc(pl, refills);
	pa_unlock_irqrestore();
	return i;
}

/*
 * Give at least @pages pages of @pl's blocks back to the buddy lists
 * under one zone lock, the coldest (list tails) first, taking the orders
 * in turn. @max gets the policy's allowance.
 * Return: whether free resident memory is then over it.
 */
static bool pagelist_free_bulk(struct pa_pagelist *pl, unsigned int pages,
			       size_t *max)
{
	unsigned int freed = 0, o = 0, empty = 0;
	bool over;

	pa_lock_irqsave();
	while (freed < pages && pl->count && empty < PAGELIST_NR_ORDERS) {
		struct list_head *l = &pl->lists[o];

		if (list_empty(l)) {
			empty++;
		} else {
			struct page *page = list_last_entry(l, struct page,
							    buddy_list);

			empty = 0;
			list_del(&page->buddy_list);
			pl->count -= 1U << o;
			freed += 1U << o;
			pa_free_one_locked(page, o, page->buddy_resident);
		}
		o = o == PAGELIST_MAX_ORDER ? 0 : o + 1;
	}
	pagelist_stat_inc(pl, drains);
	over = pa_over_allowance_locked(max);
	pa_unlock_irqrestore();
	return over;
}

/**
 * pagelist_alloc - a block of @order (at most PAGELIST_MAX_ORDER) from this
 * CPU's list, refilled a batch at a time.
 * @resident: its bound of resident pages (0: known zero).
 *
 * Cost on a hit: uslab_cpu_id, one exchange, a list removal, one store.
 * Context: any thread, also a signal handler (never waits).
 * Return: the head page (PG_head, order and compound_head set; tails are
 * the caller's to prepare), or NULL when the list is busy or the zone has
 * nothing (the caller then goes to the zone itself).
 */
struct page *pagelist_alloc(unsigned int order, unsigned int *resident)
{
	struct pa_pagelist *pl = pagelist_this();
	struct list_head *l = &pl->lists[order];
	struct page *page;

	if (unlikely(!pagelist_trylock(pl)))
		return NULL;
	pagelist_ready(pl);
	if (list_empty(l) && !rmqueue_bulk(pl, order)) {
		pagelist_unlock(pl);
		return NULL;
	}
	page = list_first_entry(l, struct page, buddy_list);
	list_del(&page->buddy_list);
	pl->count -= 1U << order;
	pl->events++;
	pagelist_stat_inc(pl, allocs[order]);
	*resident = page->buddy_resident;
	if (IS_ENABLED(CONFIG_STATS))
		pl->fresh += (1UL << order) - min_t(unsigned long, *resident, 1UL << order);
	page->flags = 1UL << PG_head;
	pagelist_unlock(pl);
	return page;
}

/**
 * pagelist_alloc_region - a block of @order above the lists' orders and
 * below a region's, from this CPU's region when the buddy would hand out
 * a fresh block (region_wanted_locked()).
 *
 * Context: any thread, also a signal handler (never waits). Counted as
 * the zone's hand-outs (pa_count_handout_locked).
 * Return: the head page (PG_head, order and compound_head set; tails are
 * the caller's to prepare), known zero; NULL when the list is busy, the
 * buddy has a block that may be resident, or no region can be had (the
 * caller then goes to the zone itself).
 */
struct page *pagelist_alloc_region(unsigned int order)
{
	struct pa_pagelist *pl = pagelist_this();
	struct page *page = NULL;

	if (unlikely(!pagelist_trylock(pl)))
		return NULL;
	pa_lock_irqsave();
	if (region_wanted_locked(order)) {
		page = region_carve_locked(pl, order);
		if (!page && region_take_locked(pl))
			page = region_carve_locked(pl, order);
	}
	if (page) {
		page->flags = 1UL << PG_head;
		pa_count_handout_locked(order, 0);
	}
	pa_unlock_irqrestore();
	pl->events++;
	pagelist_unlock(pl);
	return page;
}

/**
 * pagelist_free - put a block of @order (at most PAGELIST_MAX_ORDER) on this
 * CPU's list; at the high mark a batch goes back to the buddy lists.
 * @page: its head page.
 *
 * Context: any thread, also a signal handler (never waits).
 * Return: false when the list was busy: the caller frees to the zone.
 */
bool pagelist_free(struct page *page, unsigned int order)
{
	struct pa_pagelist *pl = pagelist_this();
	bool over = false;
	size_t max = 0;

	if (unlikely(!pagelist_trylock(pl)))
		return false;
	pagelist_ready(pl);
	page->flags = 0;
	page->buddy_resident = 1U << order;	/* the owner may have written it */
	list_add(&page->buddy_list, &pl->lists[order]);
	pl->count += 1U << order;
	pl->events++;
	pagelist_stat_inc(pl, frees[order]);
	if (unlikely(pl->count >= PAGELIST_HIGH))
		over = pagelist_free_bulk(pl, PAGELIST_BATCH, &max);
	pagelist_unlock(pl);
	if (unlikely(over))
		pa_reclaim_after_free(max);
	return true;
}

/**
 * drain_all_pages - give the blocks of every per-CPU list back to the buddy.
 * @idle_only: only lists with no traffic since the previous such call
 *             (the decay thread's tick); false: all (trim, ENOMEM).
 *
 * Lists busy at that moment are skipped.
 * Context: no zone lock held. Return: bytes given back to the buddy.
 */
size_t drain_all_pages(bool idle_only)
{
	size_t drained = 0;
	unsigned int i;

	for (i = 0; i < PA_NR_PAGELISTS; i++) {
		struct pa_pagelist *pl = &pa_pagelists[i];
		unsigned long ev = __atomic_load_n(&pl->events, __ATOMIC_RELAXED);
		unsigned int count;
		size_t max;

		if (idle_only && ev != pl->events_seen) {
			pl->events_seen = ev;	/* racy hint: next tick decides */
			continue;
		}
		if ((!__atomic_load_n(&pl->count, __ATOMIC_RELAXED) &&
		     !__atomic_load_n(&pl->region_end, __ATOMIC_RELAXED)) ||
		    !pagelist_trylock(pl))
			continue;
		count = pl->count;
		if (count)
			pagelist_free_bulk(pl, count, &max);
		drained += (size_t)(count - pl->count) << PAGE_SHIFT;
		drained += (size_t)region_drop(pl) << PAGE_SHIFT;
		pagelist_unlock(pl);
	}
	return drained;
}

/* Pages held on per-CPU lists and their regions now (racy sum, exact
 * when quiet). */
size_t pagelist_bytes(void)
{
	size_t pages = 0;
	unsigned int i;

	for (i = 0; i < PA_NR_PAGELISTS; i++) {
		const struct pa_pagelist *pl = &pa_pagelists[i];
		unsigned long end = __atomic_load_n(&pl->region_end, __ATOMIC_RELAXED);
		unsigned long at = __atomic_load_n(&pl->region, __ATOMIC_RELAXED);

		pages += __atomic_load_n(&pl->count, __ATOMIC_RELAXED);
		if (end > at)
			pages += end - at;
	}
	return pages << PAGE_SHIFT;
}

/*
 * Add the lists' allocation and free counts per order to @st's allocs[]
 * and frees[], their pages handed out fresh to pages_fresh, and fill its
 * pagelist_* sums.
 */
void pagelist_stats(struct page_alloc_stats *st)
{
	unsigned int i, o;

	for (i = 0; i < PA_NR_PAGELISTS; i++) {
		const struct pa_pagelist *pl = &pa_pagelists[i];

		st->pages_fresh += __atomic_load_n(&pl->fresh, __ATOMIC_RELAXED);
		st->pagelist_refills += __atomic_load_n(&pl->refills, __ATOMIC_RELAXED);
		st->pagelist_drains += __atomic_load_n(&pl->drains, __ATOMIC_RELAXED);
		for (o = 0; o < PAGELIST_NR_ORDERS; o++) {
			unsigned long a = __atomic_load_n(&pl->allocs[o], __ATOMIC_RELAXED);
			unsigned long f = __atomic_load_n(&pl->frees[o], __ATOMIC_RELAXED);

			st->allocs[o] += a;
			st->frees[o] += f;
			st->pagelist_allocs += a;
			st->pagelist_frees += f;
		}
	}
}

/* Before fork: every list's flag, so that no list is mid-change in the child. */
void pagelist_fork_prepare(void)
{
	unsigned int i;

	for (i = 0; i < PA_NR_PAGELISTS; i++)
		while (!pagelist_trylock(&pa_pagelists[i]))
			sched_yield();
}

/* After fork, in parent and child: the flags again free. */
void pagelist_fork_release(void)
{
	unsigned int i;

	for (i = 0; i < PA_NR_PAGELISTS; i++)
		pagelist_unlock(&pa_pagelists[i]);
}
