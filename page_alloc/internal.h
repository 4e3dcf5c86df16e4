/* SPDX-License-Identifier: MIT */
/*
 * page_alloc/ private declarations: the zone, its lock, and the helpers the
 * three files of the folder share. Tests may include this for white-box
 * checks; nothing outside page_alloc/ and tests/ should.
 */
#ifndef USLAB_PAGE_ALLOC_INTERNAL_H
#define USLAB_PAGE_ALLOC_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include "lib/compiler.h"
#include "lib/fault_inject.h"
#include "lib/list.h"
#include "lib/lock.h"
#include "lib/log.h"
#include "lib/sigsafe.h"
#include "uslab/page_alloc.h"

/*
 * A section is one block of the largest order: the unit in which the buddy
 * part of the range is made usable (mprotect RW). Buddies of every order
 * below MAX_PAGE_ORDER therefore lie in the same section.
 */
#define SECTION_PAGES		(1UL << MAX_PAGE_ORDER)
#define SECTION_SIZE		(SECTION_PAGES << PAGE_SHIFT)

/*
 * The range's base is aligned to this, so that address alignment and pfn
 * alignment agree; it is also the largest alignment alloc_pages_large()
 * accepts.
 */
#define PA_BASE_ALIGN		(1UL << 30)
#define PA_LARGE_MAX_ALIGN	PA_BASE_ALIGN

/*
 * Smallest logical range tried when the configured one has no room (a
 * small address space, mappings in the way): eight sections, 32 MiB with
 * 4 MiB sections.
 */
#define PA_MIN_RESERVE		(8 * SECTION_SIZE)

struct pa_zone {
	struct owned_mutex lock;
	/* Free blocks per order: possibly resident ones first, known-zero last. */
	struct list_head free_area[NR_PAGE_ORDERS];
	unsigned long nr_free[NR_PAGE_ORDERS];
	/* Free address ranges in [page_alloc_base, page_alloc_end), unsorted:
	 * PROT_NONE ones (large_free) and, mapped read-write and possibly
	 * resident, the cache of freed own mappings (large_dirty, most
	 * recently freed first). */
	struct list_head large_free;
	struct list_head large_dirty;

	unsigned long nr_sections;	/* sections made usable (buddy memory) */
	unsigned long section_grows;	/* buddy_grow_locked() calls that made some */

	size_t bytes_allocated;		/* handed out: buddy + large */
	size_t bytes_allocated_peak;	/* its high-water mark (page_alloc_reset_peak) */
	size_t bytes_large;		/* of which own mappings */
	size_t bytes_free;		/* free in buddy sections */
	size_t bytes_free_resident;	/* of which possibly resident */
	size_t bytes_isolated;		/* free, off the lists while returned */
	size_t bytes_large_dirty;	/* cached own mappings (large_dirty) */
	size_t limit;			/* 0: no cap */
	size_t resident_free_max;	/* watermark of the return policy */

	/* event counters, compiled away without CONFIG_STATS */
	unsigned long allocs[NR_PAGE_ORDERS];
	unsigned long frees[NR_PAGE_ORDERS];
	unsigned long splits, merges, trims, enomem;
	unsigned long sections, large_allocs, large_frees;
	unsigned long large_reuse, large_maps;
	unsigned long pages_fresh;	/* handed out not resident (zone path) */
};

extern struct pa_zone pa_zone;

#define pa_stat_inc(field)						\
	do {								\
		if (IS_ENABLED(CONFIG_STATS))				\
			pa_zone.field++;				\
	} while (0)

/* USDT probes (provider uslab); a stub when CONFIG_USDT is off. */
#ifdef CONFIG_USDT
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>
#define pa_probe(name, ...)	STAP_PROBEV(uslab, name, ##__VA_ARGS__)
#else
#define pa_probe(name, ...)	do { } while (0)
#endif

/*
 * The zone lock is only ever held inside a sigsafe section (lib/sigsafe.h,
 * the kernel's spin_lock_irqsave in spirit): a signal handler that
 * allocates on this thread meanwhile sees the depth and takes no allocator
 * lock (emergency mappings, deferred frees), so it never waits on its own
 * thread. One add to a per-thread word on each side; no system call.
 */
static inline void pa_lock_irqsave(void)
{
	sigsafe_enter();
	owned_lock(&pa_zone.lock, "zone lock");
}

static inline void pa_unlock_irqrestore(void)
{
	owned_unlock(&pa_zone.lock, "zone lock");
	sigsafe_exit();
}

/* The zone lock held by this thread (lib/lock.h); checked in the debug
 * builds (CONFIG_PAGE_ALLOC_DEBUG, CONFIG_DEBUG_LOCKS). */
static inline void pa_assert_locked(void)
{
	if (IS_ENABLED(CONFIG_PAGE_ALLOC_DEBUG) || IS_ENABLED(CONFIG_DEBUG_LOCKS))
		owned_assert_held(&pa_zone.lock, "page_alloc: zone lock");
}

static inline bool pa_initialized(void)
{
	return __atomic_load_n(&page_alloc_map, __ATOMIC_ACQUIRE) != NULL;
}

static inline int pa_init_once(void)
{
	if (likely(pa_initialized()))
		return 0;
	return page_alloc_init();
}

static inline size_t order_bytes(unsigned int order)
{
	return PAGE_SIZE << order;
}

/*
 * Per-CPU page lists (pagelist.c): free blocks of orders 0..PAGELIST_MAX_ORDER kept
 * per CPU in front of the buddy lists, as mm/page_alloc.c's
 * per_cpu_pages. A list is taken with a try-lock only (a flag, never
 * waited on): a thread that finds its CPU's list busy (another thread on
 * it after a migration, or the very thread a signal handler interrupted)
 * goes to the zone instead. @count is in pages; above @high, @batch pages
 * go back to the buddy lists under one zone lock.
 */
#define PAGELIST_MAX_ORDER		CONFIG_PAGE_ALLOC_PCP_MAX_ORDER
#define PAGELIST_NR_ORDERS		(PAGELIST_MAX_ORDER + 1)
#define PA_NR_PAGELISTS		256	/* CPU ids beyond share lists (mod) */

/*
 * A list that would take its blocks from a fresh block of this order or
 * more carves them from a region of its own this big instead: 2 MiB, what
 * one page-table page maps, so that two CPUs filling the heap never fault
 * under one page-table lock (docs/page_alloc.md "Each CPU's fresh pages in
 * a region of its own").
 */
#define PAGELIST_REGION_ORDER	(MAX_PAGE_ORDER < 9 ? MAX_PAGE_ORDER : 9)

struct pa_pagelist {
	int locked;			/* try-lock flag, see above */
	unsigned int count;		/* pages on the lists */
	unsigned long events;		/* allocs + frees, for the decay */
	unsigned long events_seen;	/* events at the last decay tick */
	struct list_head lists[PAGELIST_NR_ORDERS];
	unsigned long allocs[PAGELIST_NR_ORDERS];	/* CONFIG_STATS */
	unsigned long frees[PAGELIST_NR_ORDERS];
	unsigned long refills, drains;
	unsigned long fresh;		/* pages handed out not resident */
	/* pfns [region, region_end): the rest of this list's fresh region,
	 * handed out by the zone, on no list, never written */
	unsigned long region, region_end;
} __attribute__((aligned(64)));

extern struct pa_pagelist pa_pagelists[PA_NR_PAGELISTS];

/* page_alloc/zone.c */
int pa_space_grow_locked(size_t bytes);
void pa_space_shrink_locked(char *addr);
bool pa_as_limited(void);
void pa_section_set_locked(const char *sec);
size_t pa_release_sections_locked(void);

/* page_alloc/buddy.c */
struct page *rmqueue_buddy_locked(unsigned int order, unsigned int *resident);
void pa_count_handout_locked(unsigned int order, unsigned int resident);
void pa_free_one_locked(struct page *page, unsigned int order,
			unsigned int resident);
void prep_block(struct page *page, unsigned int order);
int buddy_grow_locked(void);
void buddy_del_free_locked(struct page *page, unsigned int order);
void buddy_free_block_locked(struct page *page, unsigned int order,
			     unsigned int resident);

/* page_alloc/large.c */
char *pa_space_get_locked(size_t bytes, size_t align, bool section,
			  bool *fresh);
char *pa_space_top_locked(size_t bytes, size_t align);
void large_range_put_locked(struct page *page, size_t npages, bool dirty);
void large_range_del_locked(struct page *head);

/* page_alloc/pagelist.c */
struct page *pagelist_alloc(unsigned int order, unsigned int *resident);
struct page *pagelist_alloc_region(unsigned int order);
bool pagelist_free(struct page *page, unsigned int order);
size_t drain_all_pages(bool idle_only);
size_t pagelist_bytes(void);
void pagelist_stats(struct page_alloc_stats *st);
void pagelist_fork_prepare(void);
void pagelist_fork_release(void);

/* page_alloc/reclaim.c: giving memory back (allowance, decay, trim) */
size_t resident_allowance_locked(void);
void pa_large_allocated_locked(void);
size_t pa_large_cache_allowance_locked(void);
size_t pa_free_counted_locked(size_t max);
void pa_add_allocated_locked(size_t bytes);
bool pa_over_allowance_locked(size_t *max);
void pa_reclaim_after_free(size_t max);
size_t pa_free_resident_locked(void);
size_t buddy_reclaim(size_t max_resident, unsigned int max_blocks);
size_t large_reclaim(size_t max_resident, unsigned int max_ranges);
void large_unmap_range(struct page *head, size_t npages);
void pa_decayd_kick(void);
void pa_decayd_fork_child(void);
size_t pa_decay_tick(void);

/* page_alloc/zone.c: used by tests to walk the state */
bool pa_page_in_buddy(const struct page *page);

/* page_alloc/buddy.c: fault injection (lib/fault_inject.h) */
extern struct fault_attr fail_page_alloc;

/*
 * The gate of both allocation paths (buddy and large): the zone set up,
 * then the fault injection of page allocations, which __GFP_NOFAIL skips.
 * Return: true to go on; false with errno ENOMEM.
 */
static inline bool pa_alloc_allowed(gfp_t gfp, size_t bytes)
{
	if (unlikely(pa_init_once()) ||
	    (!(gfp & __GFP_NOFAIL) && unlikely(should_fail(&fail_page_alloc, bytes)))) {
		errno = ENOMEM;
		return false;
	}
	return true;
}

#endif /* USLAB_PAGE_ALLOC_INTERNAL_H */
