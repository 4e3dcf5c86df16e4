/* SPDX-License-Identifier: MIT */
/*
 * page_alloc/ private declarations: the zone, its lock, and the helpers the
 * three files of the folder share. Tests may include this for white-box
 * checks; nothing outside page_alloc/ and tests/ should.
 */
#ifndef USLAB_PAGE_ALLOC_INTERNAL_H
#define USLAB_PAGE_ALLOC_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include "lib/compiler.h"
#include "lib/list.h"
#include "lib/log.h"
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
 * Smallest reservation tried when the configured one is refused (ulimit -v
 * of a few hundred MiB): eight sections, 32 MiB with 4 MiB sections.
 */
#define PA_MIN_RESERVE		(8 * SECTION_SIZE)

struct pa_zone {
	pthread_mutex_t lock;
	/* Free blocks per order: possibly resident ones first, known-zero last. */
	struct list_head free_area[NR_PAGE_ORDERS];
	unsigned long nr_free[NR_PAGE_ORDERS];
	/* Free address ranges in [large_bottom, page_alloc_end), unsorted. */
	struct list_head large_free;

	char *buddy_top;	/* end of the sections made usable */
	char *large_bottom;	/* start of the part carved for own mappings */

	size_t bytes_allocated;		/* handed out: buddy + large */
	size_t bytes_large;		/* of which own mappings */
	size_t bytes_free;		/* free in buddy sections */
	size_t bytes_free_resident;	/* of which possibly resident */
	size_t bytes_isolated;		/* free, off the lists while returned */
	size_t limit;			/* 0: no cap */
	size_t resident_free_max;	/* watermark of the return policy */

	/* event counters, compiled away without CONFIG_STATS */
	unsigned long allocs[NR_PAGE_ORDERS];
	unsigned long frees[NR_PAGE_ORDERS];
	unsigned long splits, merges, trims, enomem;
	unsigned long sections, large_allocs, large_frees;
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

static inline void pa_lock(void)
{
	pthread_mutex_lock(&pa_zone.lock);
}

static inline void pa_unlock(void)
{
	pthread_mutex_unlock(&pa_zone.lock);
}

/*
 * pthread mutexes do not tell who holds them; the lock-held assertion tries
 * the lock, which must fail while it is held (by anyone: good enough to
 * catch a missing lock in single-threaded tests and debug builds).
 */
static inline void pa_assert_locked(void)
{
	if (IS_ENABLED(CONFIG_PAGE_ALLOC_DEBUG) &&
	    pthread_mutex_trylock(&pa_zone.lock) == 0) {
		pthread_mutex_unlock(&pa_zone.lock);
		uslab_panic("page_alloc: zone lock not held");
	}
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

/* page_alloc/zone.c */
size_t buddy_reclaim(size_t max_resident, unsigned int max_blocks);

/* page_alloc/buddy.c */
int buddy_grow_locked(void);
void buddy_del_free_locked(struct page *page, unsigned int order);
void buddy_free_block_locked(struct page *page, unsigned int order,
			     unsigned int resident);

/* page_alloc/large.c */
void large_range_put_locked(struct page *page, size_t npages);

/* page_alloc/zone.c: used by tests to walk the state */
bool pa_page_in_buddy(const struct page *page);

/* page_alloc/buddy.c: fault injection (lib/fault_inject.h) */
extern struct fault_attr fail_page_alloc;

#endif /* USLAB_PAGE_ALLOC_INTERNAL_H */
