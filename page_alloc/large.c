// SPDX-License-Identifier: MIT
/*
 * Own mappings for requests above the largest order, and the address space
 * of the whole heap. Own mappings and buddy sections alike take their
 * address range from a free range that fits (first fit, aligned) or from
 * the top of the reservation, which grows (pa_space_grow_locked), so that
 * virt_to_page() and page_alloc_owns() work for them as for buddy blocks.
 *
 * Freed address ranges are remembered in the struct page map itself (no
 * malloc): the first page of a free range has PG_reserved, range_pages and
 * range_list; its last page's compound_head points back to the first, so
 * a range freed just above it can find and join it. Under an address-space
 * limit, a PROT_NONE free range that reaches the top of the reservation is
 * unreserved (pa_space_shrink_locked): the address space goes back to the
 * program.
 *
 * Memory: a new mapping is mapped (MAP_FIXED, read-write) at allocation,
 * so it is fresh zero memory. A freed one is kept mapped as a cached free
 * range (PG_reserved|PG_resident, on large_dirty) and reused by the next
 * allocation it fits, without a system call or page faults (issue 13: a
 * map and an unmap per call made mimalloc-bench's malloc-large 12.8 times
 * slower than tcmalloc). The return policy counts cached ranges as free
 * resident memory and unmaps the least recently freed first (PROT_NONE
 * again, which hands every page back to the OS at once).
 *
 * Struct pages: only the head and the last page of a mapping or a free
 * range are written; the pages between them stay zero (never touched: the
 * struct page map of a 128 MiB buffer is 2 MiB, which gmalloc's arrays,
 * of which the program uses a few MiB, made resident for nothing).
 * compound_head() of such a page finds the head by page_large_head().
 * Kept so: a free range joining a neighbour clears the two struct pages
 * that end up inside it; a mapping made from a PROT_NONE range (which may
 * hold a released section's struct pages) clears its inside first.
 *
 * Locking: the free ranges, page_alloc_end and the head and last page of
 * each range or mapping are under pa_zone.lock (see zone.c). The mmap calls
 * are done outside it: the address range belongs to the caller by then.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "lib/fault_inject.h"
#include "page_alloc/internal.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4	/* Linux 5.7 */
#endif

/* A cached own mapping: mapped read-write, possibly resident. */
static inline bool range_dirty(const struct page *head)
{
	return PageFlag(head, PG_resident);
}

/* The largest own mapping so far, in pages: how far page_large_head() looks. */
static size_t large_max_pages;

void large_range_del_locked(struct page *head)
{
	list_del(&head->range_list);
	if (range_dirty(head))
		pa_zone.bytes_large_dirty -= head->range_pages << PAGE_SHIFT;
	head->flags = 0;
}

static void range_add_locked(struct page *head, size_t npages, bool dirty)
{
	head->flags = (1UL << PG_reserved) | (dirty ? 1UL << PG_resident : 0);
	head->compound_head = head;
	head->range_pages = npages;
	head[npages - 1].compound_head = head;
	if (dirty) {
		/* most recently freed first: reuse is warm, decay takes the tail */
		list_add(&head->range_list, &pa_zone.large_dirty);
		pa_zone.bytes_large_dirty += npages << PAGE_SHIFT;
	} else {
		list_add(&head->range_list, &pa_zone.large_free);
	}
}

/*
 * Give the @npages pages at @page back to the free ranges, joining the
 * neighbours on both sides that are in the same state (@dirty: still
 * mapped read-write, a cached mapping; else PROT_NONE); a PROT_NONE range
 * that reaches the top of the reservation is unreserved under an
 * address-space limit (pa_as_limited).
 */
void large_range_put_locked(struct page *page, size_t npages, bool dirty)
{
	struct page *end_page = virt_to_page(page_alloc_end);
	struct page *next = page + npages;

	pa_assert_locked();
	if (next < end_page && PageFlag(next, PG_reserved) &&
	    range_dirty(next) == dirty) {
		size_t more = next->range_pages;

		large_range_del_locked(next);
		/* both end up inside the joined range: zero, as its inside is */
		memset(&page[npages - 1], 0, sizeof(struct page));
		memset(next, 0, sizeof(struct page));
		npages += more;
	}
	if (page > page_alloc_map) {
		struct page *ph = page[-1].compound_head;

		if (ph && PageFlag(ph, PG_reserved) && range_dirty(ph) == dirty &&
		    ph + ph->range_pages == page) {
			npages += ph->range_pages;
			large_range_del_locked(ph);
			memset(&page[-1], 0, sizeof(struct page));
			memset(page, 0, sizeof(struct page));
			page = ph;
		}
	}
	if (!dirty && page + npages == end_page && pa_as_limited()) {
		page->flags = 0;
		pa_space_shrink_locked(page_address(page));
		return;
	}
	range_add_locked(page, npages, dirty);
}

/* Where a range [@s, @e) can hold @bytes aligned to @align, or NULL. */
static char *range_fit(char *s, char *e, size_t bytes, size_t align)
{
	char *a = (char *)ALIGN_UP((unsigned long)s, align);

	return a < e && (size_t)(e - a) >= bytes ? a : NULL;
}

/*
 * Put back what a range [@lo, @hi) taken for [@addr, @addr + @bytes) has
 * left on either side, in the state it was in. The taken part must not
 * look free (its head is not PG_reserved), so the leftovers cannot join it.
 */
static void range_put_leftovers(char *lo, char *hi, char *addr, size_t bytes,
				bool dirty)
{
	if (addr > lo)
		large_range_put_locked(virt_to_page(lo),
				       (size_t)(addr - lo) >> PAGE_SHIFT, dirty);
	if (addr + bytes < hi)
		large_range_put_locked(virt_to_page(addr + bytes),
				       (size_t)(hi - (addr + bytes)) >> PAGE_SHIFT,
				       dirty);
}

/* The first free PROT_NONE range that holds @bytes aligned to @align. */
static char *space_from_ranges_locked(size_t bytes, size_t align)
{
	char *lo, *hi, *addr;
	struct page *r;

	list_for_each_entry(r, &pa_zone.large_free, range_list) {
		lo = page_address(r);
		hi = lo + (r->range_pages << PAGE_SHIFT);
		addr = range_fit(lo, hi, bytes, align);
		if (addr) {
			large_range_del_locked(r);
			/* the joined neighbour's last page would point here */
			if (addr + bytes < hi)
				virt_to_page(addr + bytes - PAGE_SIZE)->compound_head = NULL;
			range_put_leftovers(lo, hi, addr, bytes, false);
			return addr;
		}
	}
	return NULL;
}

/* @bytes aligned to @align at the top, the reservation grown to hold it. */
static char *space_from_top_locked(size_t bytes, size_t align)
{
	char *lo = page_alloc_end;
	char *addr = (char *)ALIGN_UP((unsigned long)lo, align);

	if (addr < lo || pa_space_grow_locked((size_t)(addr + bytes - lo)))
		return NULL;
	if (addr > lo)
		large_range_put_locked(virt_to_page(lo),
				       (size_t)(addr - lo) >> PAGE_SHIFT, false);
	return addr;
}

/*
 * pa_space_top_locked - @bytes at the top only, the reservation grown to
 * hold them (fresh: their struct pages zero), or NULL: the sections a
 * grow makes ahead (buddy_grow_batch()) never take a freed range while
 * one section could still come from the top.
 */
char *pa_space_top_locked(size_t bytes, size_t align)
{
	pa_assert_locked();
	return space_from_top_locked(bytes, align);
}

/**
 * pa_space_get_locked - @bytes of PROT_NONE address space aligned to
 * @align, the caller's, unmarked (large_range_put_locked() gives it back).
 * @section: for a buddy section: the top first, freed ranges only when the
 *           reservation cannot grow. Address space that held an own
 *           mapping then stays free as long as it can, so that a double
 *           free of that mapping is still reported as one (it would be a
 *           slab's by then). Own mappings take the first free range that
 *           fits, then the top, then (at the limit) the address space of
 *           whole free sections.
 * @fresh: set when the range comes from the top (its struct pages zero).
 *
 * Context: zone lock held. Return: the address, or NULL (RLIMIT_AS,
 * something mapped above the top, the logical range used up).
 */
char *pa_space_get_locked(size_t bytes, size_t align, bool section, bool *fresh)
{
	char *addr;

	pa_assert_locked();
	*fresh = true;
	if (section && (addr = space_from_top_locked(bytes, align)))
		return addr;
	*fresh = false;
	addr = space_from_ranges_locked(bytes, align);
	if (addr || section)
		return addr;
	*fresh = true;
	addr = space_from_top_locked(bytes, align);
	if (addr)
		return addr;
	/* At the limit: free sections may make room (once). */
	if (!pa_release_sections_locked())
		return NULL;
	return pa_space_get_locked(bytes, align, false, fresh);
}

/*
 * Find @npages pages aligned to @align: the best fit among the cached
 * mappings (no system call, memory already resident), else PROT_NONE
 * address space (pa_space_get_locked). @dirty says which. The head of the
 * result is marked PG_head|PG_large and its last page points to it before
 * any leftover is put back, so the leftovers cannot join it.
 */
static struct page *large_range_get_locked(size_t npages, size_t align,
					   bool *dirty, bool *fresh)
{
	size_t bytes = npages << PAGE_SHIFT, best_pages = SIZE_MAX;
	struct page *head, *r, *best = NULL;
	char *lo = NULL, *hi = NULL, *addr = NULL;

	pa_assert_locked();
	list_for_each_entry(r, &pa_zone.large_dirty, range_list) {
		char *s = page_address(r);

		if (r->range_pages >= npages && r->range_pages < best_pages &&
		    range_fit(s, s + (r->range_pages << PAGE_SHIFT), bytes, align)) {
			best = r;
			best_pages = r->range_pages;
			if (best_pages == npages)
				break;
		}
	}
	*dirty = best != NULL;
	*fresh = false;
	if (best) {
		lo = page_address(best);
		hi = lo + (best->range_pages << PAGE_SHIFT);
		addr = range_fit(lo, hi, bytes, align);
		large_range_del_locked(best);
		pa_stat_inc(large_reuse);
	} else {
		addr = pa_space_get_locked(bytes, align, false, fresh);
		if (!addr)
			return NULL;
	}
	head = virt_to_page(addr);
	head->flags = (1UL << PG_head) | (1UL << PG_large);
	head->compound_head = head;
	head->order = NR_PAGE_ORDERS;	/* not a buddy order */
	head->large_size = bytes;
	head->large_pages = npages;
	head[npages - 1].compound_head = head;
	if (npages > 1)
		head[npages - 1].flags = 1UL << PG_tail;
	if (npages > large_max_pages)
		large_max_pages = npages;
	if (best)
		range_put_leftovers(lo, hi, addr, bytes, true);
	return head;
}

/*
 * Zero the struct pages strictly inside a mapping of @npages at @head: the
 * map pages wholly inside given back (zero again, and not resident), the
 * edges cleared. For a mapping made from a PROT_NONE range, whose struct
 * pages may be a released section's. The mapping is the caller's.
 */
static void large_clear_inside(struct page *head, size_t npages)
{
	char *from = (char *)(head + 1), *to = (char *)(head + npages - 1);
	char *lo = (char *)ALIGN_UP((unsigned long)from, PAGE_SIZE);
	char *hi = (char *)ALIGN_DOWN((unsigned long)to, PAGE_SIZE);

	if (npages < 3)
		return;
	if (hi > lo) {
		memset(from, 0, (size_t)(lo - from));
		if (madvise(lo, (size_t)(hi - lo), MADV_DONTNEED))
			memset(lo, 0, (size_t)(hi - lo));
		memset(hi, 0, (size_t)(to - hi));
	} else {
		memset(from, 0, (size_t)(to - from));
	}
}

/**
 * page_large_head - compound_head() of a page whose own field is NULL: the
 * head of the live own mapping @page lies inside (its struct page is one
 * of the zero ones between the head and the last page), else NULL (a page
 * never handed out). Looks back over the struct pages, at most as far as
 * the largest mapping so far: the first that is not zero is the head, if
 * @page is inside a live mapping. A slow path: frees and size queries of
 * pointers inside a block (which report them), kfree_rcu() of an rcu_head
 * past a block's first page.
 * Context: any thread; no lock (the mapping, if any, is the caller's).
 */
struct page *page_large_head(const struct page *page)
{
	size_t limit = __atomic_load_n(&large_max_pages, __ATOMIC_RELAXED), k;
	const struct page *q = page;

	if (!page_alloc_map || page < page_alloc_map)
		return NULL;
	for (k = 0; k < limit && q > page_alloc_map; k++) {
		q--;
		if (!q->flags && !q->compound_head)
			continue;
		if (PageFlag(q, PG_large) && q->compound_head == q &&
		    (size_t)(page - q) < q->large_pages)
			return (struct page *)q;
		return NULL;
	}
	return NULL;
}

/**
 * alloc_pages_large - a mapping of its own inside the reserved range.
 * @size: bytes, rounded up to whole pages.
 * @align: a power of two; below PAGE_SIZE means PAGE_SIZE; at most 1 GiB.
 * @gfp: __GFP_ZERO zeroes (memory fresh from the OS is zero already; a
 *       reused cached mapping is cleared); __GFP_NOWARN silences the debug
 *       message on failure.
 *
 * A freed mapping that fits (the best fit, split if larger) is reused as
 * it is, still mapped and resident: no system call and no page faults.
 * Otherwise a free or new address range is mapped read-write.
 *
 * Context: thread-safe; takes the zone lock briefly (a sigsafe section), mmap
 * outside it.
 * Cost: at most one mmap (and a madvise of the struct page map when it
 * reuses a PROT_NONE range); only the first and the last struct page are
 * written.
 * Return: the address, or NULL with errno EINVAL (size 0, bad alignment)
 * or ENOMEM (cap reached, address space used up, mmap refused).
 */
void *alloc_pages_large(size_t size, size_t align, gfp_t gfp)
{
	struct page *head;
	size_t npages, bytes;
	bool dirty, fresh;
	char *addr;

	if (unlikely(!size || (align & (align - 1)) ||
		     align > PA_LARGE_MAX_ALIGN)) {
		errno = EINVAL;
		return NULL;
	}
	if (align < PAGE_SIZE)
		align = PAGE_SIZE;
	if (unlikely(size > ((size_t)1 << 46))) {
		errno = ENOMEM;
		return NULL;
	}
	if (!pa_alloc_allowed(gfp, size))
		return NULL;
	bytes = ALIGN_UP(size, PAGE_SIZE);
	npages = bytes >> PAGE_SHIFT;

	pa_lock_irqsave();
	if (pa_zone.limit && pa_zone.bytes_allocated + bytes > pa_zone.limit)
		goto out_enomem;
	head = large_range_get_locked(npages, align, &dirty, &fresh);
	if (!head)
		goto out_enomem;
	pa_add_allocated_locked(bytes);
	pa_zone.bytes_large += bytes;
	pa_large_allocated_locked();
	pa_stat_inc(large_allocs);
	if (!dirty) {
		pa_stat_inc(large_maps);
		if (IS_ENABLED(CONFIG_STATS))
			pa_zone.pages_fresh += npages;
	}
	pa_unlock_irqrestore();

	addr = page_address(head);
	if (dirty) {
		if (gfp & __GFP_ZERO)
			memset(addr, 0, bytes);
	} else if (mmap(addr, bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		pa_lock_irqsave();
		pa_zone.bytes_allocated -= bytes;
		pa_zone.bytes_large -= bytes;
		head->flags = 0;
		large_range_put_locked(head, npages, false);
		goto out_enomem;
	}
	/* the inside of a cached range and of fresh address space is zero */
	if (!dirty && !fresh)
		large_clear_inside(head, npages);
	pa_probe(large_map, addr, bytes);
	return addr;

out_enomem:
	pa_stat_inc(enomem);
	pa_probe(enomem, NR_PAGE_ORDERS, bytes);
	pa_unlock_irqrestore();
	if (!(gfp & __GFP_NOWARN))
		pr_debug("page_alloc: no own mapping of %zu bytes", bytes);
	errno = ENOMEM;
	return NULL;
}

void *realloc_pages_large(void *addr, size_t size, gfp_t gfp)
{
	struct page *head;
	size_t old_bytes;
	void *q;

	if (!addr || !page_alloc_owns(addr)) {
		errno = EINVAL;
		return NULL;
	}
	head = virt_to_page(addr);
	if (!PageFlag(head, PG_large) || page_address(head) != addr) {
		errno = EINVAL;
		return NULL;
	}
	old_bytes = head->large_pages << PAGE_SHIFT;
	if (size <= old_bytes) {
		errno = EINVAL;
		return NULL;
	}
	q = alloc_pages_large(size, PAGE_SIZE, gfp);
	if (!q)
		return NULL;
	/*
	 * The old pages replace the new mapping's first old_bytes in one
	 * call (the kernel holds its mmap lock: no other mapping can land
	 * there meanwhile); the new mapping's tail stays as it came.
	 */
	if (mremap(addr, old_bytes, old_bytes,
		   MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, q) == MAP_FAILED) {
		int err = errno;

		free_pages_large(q);
		errno = err;
		return NULL;
	}
	free_pages_large(addr);	/* mapped, no page left in it */
	return q;
}

/**
 * free_pages_large - free a mapping from alloc_pages_large(); NULL is
 * ignored.
 *
 * Up to CONFIG_PAGE_ALLOC_LARGE_CACHE_MB it stays mapped, in the cache of
 * free extents (joined with cached neighbours), for the next large
 * allocation; the cache counts as free resident memory, so the return
 * policy (at once beyond the allowance, else at the decay thread's ticks)
 * gives it back like free buddy blocks. Larger ones are unmapped at once.
 *
 * Context: thread-safe; the zone lock briefly (a sigsafe section), mmap or
 * madvise outside it.
 * With CONFIG_PAGE_ALLOC_DEBUG a pointer that is not the start of a live
 * own mapping is reported and aborts.
 */
void free_pages_large(void *addr)
{
	struct page *head;
	size_t bytes, npages, max = 0;
	bool cache, over = false;

	if (!addr)
		return;
	head = virt_to_page(addr);
	if (IS_ENABLED(CONFIG_PAGE_ALLOC_DEBUG) &&
	    (!page_alloc_owns(addr) || !PageFlag(head, PG_large) ||
	     page_address(head) != addr))
		uslab_panic("page_alloc: free_pages_large(%p): not the start of "
			    "an own mapping (flags %#lx)", addr,
			    page_alloc_owns(addr) ? head->flags : 0UL);
	npages = head->large_pages;
	bytes = npages << PAGE_SHIFT;
	cache = bytes <= ((size_t)CONFIG_PAGE_ALLOC_LARGE_CACHE_MB << 20);

	pa_lock_irqsave();
	pa_zone.bytes_allocated -= bytes;
	pa_zone.bytes_large -= bytes;
	pa_stat_inc(large_frees);
	head->flags = 0;
	if (cache) {
		large_range_put_locked(head, npages, true);
		over = pa_over_allowance_locked(&max);
	}
	pa_unlock_irqrestore();
	if (!cache)
		large_unmap_range(head, npages);
	else if (over)
		pa_reclaim_after_free(max);
}
