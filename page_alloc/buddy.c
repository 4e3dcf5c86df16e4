// SPDX-License-Identifier: MIT
/*
 * The buddy allocator proper: free lists per order, split on allocation,
 * merge on free, sections grown on demand. Giving memory back to the OS
 * (the allowance, decay, trim) is reclaim.c's.
 *
 * Locking: everything here runs under pa_zone.lock (see the comment at the
 * top of zone.c), except the preparation of tail pages and the zeroing of
 * a block, which touch only memory the caller now owns.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include "lib/fault_inject.h"
#include "page_alloc/internal.h"

static void add_free_locked(struct page *page, unsigned int order,
			    unsigned int resident)
{
	pa_assert_locked();
	page->flags = 1UL << PG_buddy;
	page->compound_head = page;
	page->order = order;
	page->buddy_resident = resident;
	/* Possibly-resident blocks first: allocation reuses warm memory and
	 * the return policy finds its candidates at the front. */
	if (resident) {
		SetPageFlag(page, PG_resident);
		list_add(&page->buddy_list, &pa_zone.free_area[order]);
	} else {
		list_add_tail(&page->buddy_list, &pa_zone.free_area[order]);
	}
	pa_zone.nr_free[order]++;
	pa_zone.bytes_free += order_bytes(order);
	pa_zone.bytes_free_resident += (size_t)resident << PAGE_SHIFT;
}

void buddy_del_free_locked(struct page *page, unsigned int order)
{
	pa_assert_locked();
	list_del(&page->buddy_list);
	page->flags = 0;
	pa_zone.nr_free[order]--;
	pa_zone.bytes_free -= order_bytes(order);
	pa_zone.bytes_free_resident -= (size_t)page->buddy_resident << PAGE_SHIFT;
}

/*
 * Sections one grow makes usable: a quarter of those already made, at
 * most PA_GROW_MAX_SECTIONS, one at a time under a finite RLIMIT_AS
 * (docs/page_alloc.md "Sections made in batches").
 */
#define PA_GROW_SHARE		4
#define PA_GROW_MAX_SECTIONS	16

static unsigned long buddy_grow_batch(void)
{
	unsigned long k = pa_zone.nr_sections / PA_GROW_SHARE;

	if (k <= 1)
		return 1;
	if (pa_as_limited())
		return 1;
	return min_t(unsigned long, k, PA_GROW_MAX_SECTIONS);
}

/* @k sections at @sec made read-write; 0, or -ENOMEM with the range back. */
static int buddy_map_sections_locked(char *sec, unsigned long k, bool fresh)
{
	struct page *page = virt_to_page(sec);
	unsigned long i;

	if (mprotect(sec, k * SECTION_SIZE, PROT_READ | PROT_WRITE) != 0) {
		large_range_put_locked(page, k * SECTION_PAGES, false);
		return -ENOMEM;
	}
	/* a range that held own mappings before: no stale struct pages */
	if (!fresh)
		memset(page, 0, k * SECTION_PAGES * sizeof(struct page));
	/* lowest first: non-resident blocks go to the tail of the list */
	for (i = 0; i < k; i++, sec += SECTION_SIZE) {
		pa_section_set_locked(sec);
		pa_zone.nr_sections++;
		add_free_locked(virt_to_page(sec), MAX_PAGE_ORDER, 0);
		pa_stat_inc(sections);
		pa_probe(section_grow, sec, SECTION_SIZE);
	}
	pa_zone.section_grows++;
	return 0;
}

/*
 * Make sections usable (buddy_grow_batch() of them, else one) and put each
 * on the free list of the largest order as a known-zero block: at the top
 * of the reservation, grown, else (at the limit) a free address range that
 * fits (pa_space_get_locked).
 * Return: 0, or -ENOMEM when no address space can be had (RLIMIT_AS, the
 * logical range used up) or mprotect fails.
 */
int buddy_grow_locked(void)
{
	unsigned long k = buddy_grow_batch();
	bool fresh;
	char *sec;

	pa_assert_locked();
	/* ahead only from the top; else one, by the rule for one */
	if (k > 1) {
		sec = pa_space_top_locked(k * SECTION_SIZE, SECTION_SIZE);
		if (sec && !buddy_map_sections_locked(sec, k, true))
			return 0;
	}
	sec = pa_space_get_locked(SECTION_SIZE, SECTION_SIZE, true, &fresh);
	if (!sec)
		return -ENOMEM;
	return buddy_map_sections_locked(sec, 1, fresh);
}

/*
 * Free a block of 2^@order pages at @page, of which at most @resident are
 * resident, merging it with its free buddies. A buddy is free and whole
 * exactly when its first page has PG_buddy and the same order: only heads of
 * blocks on a free list carry PG_buddy.
 */
void buddy_free_block_locked(struct page *page, unsigned int order,
			     unsigned int resident)
{
	unsigned long pfn = page_to_pfn(page);

	pa_assert_locked();
	while (order < MAX_PAGE_ORDER) {
		struct page *buddy = page_alloc_map + (pfn ^ (1UL << order));
		unsigned long bflags = READ_ONCE(buddy->flags);

		if (!(bflags & (1UL << PG_buddy)) || buddy->order != order)
			break;
		buddy_del_free_locked(buddy, order);
		resident += buddy->buddy_resident;
		pfn &= ~(1UL << order);
		order++;
		pa_stat_inc(merges);
	}
	add_free_locked(page_alloc_map + pfn, order, resident);
}

static void pa_report_enomem(gfp_t gfp, unsigned int order, size_t bytes)
{
	pa_stat_inc(enomem);
	pa_probe(enomem, order, bytes);
	if (!(gfp & __GFP_NOWARN))
		pr_debug("page_alloc: out of memory for order %u (%zu bytes)",
			 order, bytes);
}

/*
 * Tails of a block handed out: every page points to its head. Done without
 * the lock: a merge check only ever reads the first page of an aligned
 * 2^order span, which is never a tail of an allocated block (a block
 * containing the span's start at an offset would contain the freed block
 * too), so nobody else reads these struct pages until the block is freed.
 */
void prep_block(struct page *page, unsigned int order)
{
	unsigned long i, n = 1UL << order;

	for (i = 1; i < n; i++) {
		WRITE_ONCE(page[i].flags, 1UL << PG_tail);
		page[i].compound_head = page;
		page[i].order = 0;
	}
}

/**
 * alloc_pages - allocate 2^@order contiguous, naturally aligned pages.
 * @gfp: __GFP_ZERO zeroes (only when the block may hold old data: memory
 *       fresh from the OS is known to be zero); __GFP_NOWARN silences the
 *       debug message on failure.
 * @order: 0..MAX_PAGE_ORDER.
 *
 * The head page gets PG_head and @order; every page's compound_head points
 * to the head.
 *
 * Context: thread-safe; takes the zone lock (mprotect under it when a
 * section grows, madvise never on this path). Never calls malloc.
 * Return: the head page, or NULL with errno EINVAL (order out of range) or
 * ENOMEM (cap reached or address space used up).
 */
/* fail_page_alloc (USLAB_OPTIONS fail_page=...): alloc_pages and large */
struct fault_attr fail_page_alloc;

int page_alloc_set_fault(const char *spec)
{
	return fault_attr_parse(&fail_page_alloc, spec);
}

unsigned long page_alloc_faults_injected(void)
{
	return __atomic_load_n(&fail_page_alloc.injected, __ATOMIC_RELAXED);
}


/*
 * Take a block of @order off the buddy lists, splitting a larger one if
 * need be, growing a section if none is free; @resident gets its bound of
 * resident pages. The block is counted as handed out (bytes_allocated),
 * also when it goes to a per-CPU list. Its head is prepared; its tails are
 * the caller's business (prep_block, outside the lock).
 * Return: the head page, or NULL (cap reached, address space used up).
 */
struct page *rmqueue_buddy_locked(unsigned int order, unsigned int *resident)
{
	size_t bytes = order_bytes(order);
	struct page *page;
	unsigned int o, r;

	pa_assert_locked();
	if (unlikely(pa_zone.limit &&
		     pa_zone.bytes_allocated + bytes > pa_zone.limit))
		return NULL;
	for (o = order; o <= MAX_PAGE_ORDER; o++)
		if (!list_empty(&pa_zone.free_area[o]))
			break;
	if (o > MAX_PAGE_ORDER) {
		if (buddy_grow_locked())
			return NULL;
		o = MAX_PAGE_ORDER;
	}
	page = list_first_entry(&pa_zone.free_area[o], struct page, buddy_list);
	r = page->buddy_resident;
	buddy_del_free_locked(page, o);
	/* Split: keep the lower half, free the upper; each half may hold
	 * at most min(resident, its size) resident pages. */
	while (o > order) {
		unsigned int half;

		o--;
		half = min_t(unsigned int, r, 1U << o);
		add_free_locked(page + (1UL << o), o, half);
		r = half;
		pa_stat_inc(splits);
	}
	page->flags = 1UL << PG_head;
	page->compound_head = page;
	page->order = order;
	pa_add_allocated_locked(bytes);
	*resident = r;
	return page;
}

/* A block of @order handed out by the zone, of which @resident pages may
 * be resident: the others fault at their first touch (pages_fresh). */
void pa_count_handout_locked(unsigned int order, unsigned int resident)
{
	pa_assert_locked();
	pa_stat_inc(allocs[order]);
	if (IS_ENABLED(CONFIG_STATS))
		pa_zone.pages_fresh += (1UL << order) -
				       min_t(unsigned long, resident, 1UL << order);
}

/**
 * alloc_pages - allocate 2^@order contiguous, naturally aligned pages.
 * @gfp: __GFP_ZERO zeroes (only when the block may hold old data: memory
 *       fresh from the OS is known to be zero); __GFP_NOWARN silences the
 *       debug message on failure.
 * @order: 0..MAX_PAGE_ORDER.
 *
 * Orders up to PAGELIST_MAX_ORDER come from this CPU's page list when it has
 * one (no zone lock; the list refills a batch at a time); the rest, and
 * every call that finds its CPU's list busy, from the buddy lists under
 * the zone lock, or, below a region's order and when the buddy would hand
 * out a fresh block, from the CPU's fresh region (pagelist_alloc_region). The head page gets PG_head and @order; every page's
 * compound_head points to the head.
 *
 * Context: thread-safe, async-signal-safe in the sense that a signal
 * handler calling it never waits on a lock its own thread holds (the zone
 * lock is held inside a sigsafe section; per-CPU lists are only try-locked).
 * mprotect under the zone lock when a section grows, madvise never on
 * this path. Never calls malloc.
 * Return: the head page, or NULL with errno EINVAL (order out of range) or
 * ENOMEM (cap reached or address space used up).
 */
struct page *alloc_pages(gfp_t gfp, unsigned int order)
{
	struct page *page = NULL;
	unsigned int resident = 0;
	size_t bytes = order_bytes(order);

	if (unlikely(order > MAX_PAGE_ORDER)) {
		errno = EINVAL;
		return NULL;
	}
	if (!pa_alloc_allowed(gfp, bytes))
		return NULL;

	if (order <= PAGELIST_MAX_ORDER) {
		page = pagelist_alloc(order, &resident);
		if (likely(page))
			goto out_prep;
	} else if (order < PAGELIST_REGION_ORDER) {
		page = pagelist_alloc_region(order);
		if (page)
			goto out_prep;
	}
	pa_lock_irqsave();
	page = rmqueue_buddy_locked(order, &resident);
	if (page)
		pa_count_handout_locked(order, resident);
	pa_unlock_irqrestore();
	if (unlikely(!page) && order <= PAGELIST_MAX_ORDER && drain_all_pages(false)) {
		/* Blocks on other CPUs' lists count against the cap and
		 * the address space: give them back and try once more
		 * (the kernel's drain_all_pages on a failed allocation). */
		pa_lock_irqsave();
		page = rmqueue_buddy_locked(order, &resident);
		if (page)
			pa_count_handout_locked(order, resident);
		pa_unlock_irqrestore();
	}
	if (unlikely(!page))
		goto out_enomem;

out_prep:
	prep_block(page, order);
	if ((gfp & __GFP_ZERO) && resident)
		memset(page_address(page), 0, bytes);
	return page;

out_enomem:
	pa_lock_irqsave();
	pa_report_enomem(gfp, order, bytes);
	pa_unlock_irqrestore();
	errno = ENOMEM;
	return NULL;
}

static void __slowpath pa_bad_free(struct page *page, unsigned int order,
				   const char *why)
{
	uslab_panic("page_alloc: __free_pages(%p, order %u): %s "
		    "(flags %#lx, order %u)", page_address(page), order, why,
		    page->flags, page->order);
}

static void pa_check_free(struct page *page, unsigned int order)
{
	if (!page_alloc_owns(page_address(page)) || !pa_page_in_buddy(page))
		pa_bad_free(page, order, "not a page of the buddy sections");
	if (PageFlag(page, PG_buddy))
		pa_bad_free(page, order, "block already free (double free)");
	if (PageFlag(page, PG_large))
		pa_bad_free(page, order, "own mapping, use free_pages_large");
	if (PageFlag(page, PG_tail))
		pa_bad_free(page, order, "not the head of an allocated block");
	if (!PageFlag(page, PG_head) || page->compound_head != page)
		pa_bad_free(page, order, "block not allocated (double free?)");
	if (page->order != order)
		pa_bad_free(page, order, "order differs from the allocation");
}

/**
 * __free_pages - give back a block from alloc_pages().
 * @page: its head page.
 * @order: the order it was allocated with.
 *
 * Orders up to PAGELIST_MAX_ORDER go to this CPU's page list (no zone lock;
 * above its high mark a batch goes back to the buddy lists at once).
 * Otherwise the block merges with free buddies; if more free memory is then
 * resident than the policy allows, the largest free blocks go back to the
 * OS (madvise) before returning.
 *
 * Context: thread-safe; a signal handler calling it never waits on a lock
 * its own thread holds (see alloc_pages()). May call madvise (without any
 * lock) on up to four blocks.
 * With CONFIG_PAGE_ALLOC_DEBUG a bad free (not allocated, wrong order,
 * double free) is reported with its address and aborts.
 */
void __free_pages(struct page *page, unsigned int order)
{
	size_t max;
	bool over;

	if (IS_ENABLED(CONFIG_PAGE_ALLOC_DEBUG))
		pa_check_free(page, order);

	if (order <= PAGELIST_MAX_ORDER && pagelist_free(page, order))
		return;
	pa_lock_irqsave();
	if (IS_ENABLED(CONFIG_PAGE_ALLOC_DEBUG) && !PageFlag(page, PG_head))
		pa_bad_free(page, order, "block not allocated (double free?)");
	pa_stat_inc(frees[order]);
	/* The owner may have written every page. */
	pa_free_one_locked(page, order, 1U << order);
	over = pa_over_allowance_locked(&max);
	pa_unlock_irqrestore();
	if (unlikely(over))
		pa_reclaim_after_free(max);
}

/*
 * Give back one block that was handed out (by a caller or to a per-CPU
 * list): not a head any more (a second free of it is then caught), merged
 * into the buddy lists.
 */
void pa_free_one_locked(struct page *page, unsigned int order,
			unsigned int resident)
{
	pa_assert_locked();
	pa_zone.bytes_allocated -= order_bytes(order);
	page->flags = 0;
	buddy_free_block_locked(page, order, resident);
}

/**
 * __get_free_pages - alloc_pages() returning the address.
 * Context: as alloc_pages().
 * Return: the address, or 0 with errno set.
 */
unsigned long __get_free_pages(gfp_t gfp, unsigned int order)
{
	struct page *page = alloc_pages(gfp, order);

	return page ? (unsigned long)page_address(page) : 0;
}

/**
 * free_pages - __free_pages() by address; 0 is ignored.
 * Context: as __free_pages().
 */
void free_pages(unsigned long addr, unsigned int order)
{
	if (addr)
		__free_pages(virt_to_page((void *)addr), order);
}
