// SPDX-License-Identifier: MIT
/*
 * Own mappings for requests above the largest order. Their address space is
 * carved from the top of the reserved range, downwards, so that
 * virt_to_page() and page_alloc_owns() work for them as for buddy blocks;
 * the buddy sections grow from the bottom, and the two meet in the middle.
 *
 * Freed address ranges are remembered in the struct page map itself (no
 * malloc): the first page of a free range has PG_reserved, range_pages and
 * range_list; its last page's compound_head points back to the first, so
 * a range freed just above it can find and join it. A free range that
 * reaches large_bottom gives its address space back to the common pool.
 *
 * Memory: a mapping is mapped (MAP_FIXED, read-write) at allocation, so it
 * is fresh zero memory, and replaced by PROT_NONE at free, which hands every
 * page back to the OS at once.
 *
 * Locking: the free ranges, large_bottom and the head and last page of
 * each range or mapping are under pa_zone.lock (see zone.c). The mmap calls
 * and the tail pages of a mapping are done outside it: the address range
 * belongs to the caller by then.
 */
#include <errno.h>
#include <sys/mman.h>
#include "lib/fault_inject.h"
#include "page_alloc/internal.h"

static void range_set_locked(struct page *head, size_t npages)
{
	head->flags = 1UL << PG_reserved;
	head->compound_head = head;
	head->range_pages = npages;
	head[npages - 1].compound_head = head;
}

/*
 * Give the @npages pages at @page back to the free ranges, joining the
 * neighbours on both sides; lower large_bottom's mark when it reaches it.
 */
void large_range_put_locked(struct page *page, size_t npages)
{
	struct page *end_page = virt_to_page(page_alloc_end);
	struct page *bottom = virt_to_page(pa_zone.large_bottom);
	struct page *next = page + npages;

	pa_assert_locked();
	if (next < end_page && PageFlag(next, PG_reserved)) {
		list_del(&next->range_list);
		npages += next->range_pages;
		next->flags = 0;
	}
	if (page > bottom) {
		struct page *ph = page[-1].compound_head;

		if (ph && PageFlag(ph, PG_reserved) &&
		    ph + ph->range_pages == page) {
			page->flags = 0;
			range_set_locked(ph, ph->range_pages + npages);
			page = ph;
			goto joined;
		}
	}
	range_set_locked(page, npages);
	list_add(&page->range_list, &pa_zone.large_free);
joined:
	if (page == bottom) {
		list_del(&page->range_list);
		page->flags = 0;
		pa_zone.large_bottom = (char *)page_address(page + page->range_pages);
	}
}

/*
 * Find @npages pages aligned to @align: first fit among the free ranges,
 * else carved below large_bottom. The head of the result is marked
 * PG_head|PG_large and its last page points to it before any leftover is
 * put back, so the leftovers cannot join it.
 */
static struct page *large_range_get_locked(size_t npages, size_t align)
{
	size_t bytes = npages << PAGE_SHIFT;
	struct page *head = NULL, *r;
	char *lo = NULL, *hi = NULL, *addr = NULL;

	pa_assert_locked();
	list_for_each_entry(r, &pa_zone.large_free, range_list) {
		char *s = page_address(r);
		char *e = s + (r->range_pages << PAGE_SHIFT);
		char *a = (char *)ALIGN_UP((unsigned long)s, align);

		if (a < e && (size_t)(e - a) >= bytes) {
			list_del(&r->range_list);
			r->flags = 0;
			lo = s;
			hi = e;
			addr = a;
			break;
		}
	}
	if (!addr) {
		char *top = pa_zone.large_bottom;

		if ((size_t)(top - pa_zone.buddy_top) < bytes)
			return NULL;
		addr = (char *)ALIGN_DOWN((unsigned long)(top - bytes), align);
		if (addr < pa_zone.buddy_top)
			return NULL;
		pa_zone.large_bottom = addr;
		lo = addr;
		hi = top;
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

	if (addr > lo)
		large_range_put_locked(virt_to_page(lo),
				       (size_t)(addr - lo) >> PAGE_SHIFT);
	if (addr + bytes < hi)
		large_range_put_locked(virt_to_page(addr + bytes),
				       (size_t)(hi - (addr + bytes)) >> PAGE_SHIFT);
	return head;
}

/*
 * The struct pages of a big mapping cost 1/64 of it; give back the map pages
 * wholly inside its tail pages, so that a program freeing big buffers does
 * not keep their map resident. The first and last struct page are kept:
 * they carry the free range. Called before the range is back on the free
 * list, while nobody else can touch these struct pages.
 */
static void large_release_map(struct page *head, size_t npages)
{
	unsigned long lo = ALIGN_UP((unsigned long)(head + 1), PAGE_SIZE);
	unsigned long hi = ALIGN_DOWN((unsigned long)(head + npages - 1), PAGE_SIZE);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/**
 * alloc_pages_large - a mapping of its own inside the reserved range.
 * @size: bytes, rounded up to whole pages.
 * @align: a power of two; below PAGE_SIZE means PAGE_SIZE; at most 1 GiB.
 * @gfp: the memory is always zero (fresh from the OS); __GFP_NOWARN
 *       silences the debug message on failure.
 *
 * Context: thread-safe; takes the zone lock briefly, mmap outside it.
 * Cost: one mmap, plus one store per page for compound_head.
 * Return: the address, or NULL with errno EINVAL (size 0, bad alignment)
 * or ENOMEM (cap reached, address space used up, mmap refused).
 */
void *alloc_pages_large(size_t size, size_t align, gfp_t gfp)
{
	struct page *head;
	size_t npages, bytes, i;
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
	if (unlikely(pa_init_once())) {
		errno = ENOMEM;
		return NULL;
	}
	if (!(gfp & __GFP_NOFAIL) &&
	    unlikely(should_fail(&fail_page_alloc, size))) {
		errno = ENOMEM;
		return NULL;
	}
	bytes = ALIGN_UP(size, PAGE_SIZE);
	npages = bytes >> PAGE_SHIFT;

	pa_lock();
	if (pa_zone.limit && pa_zone.bytes_allocated + bytes > pa_zone.limit)
		goto out_enomem;
	head = large_range_get_locked(npages, align);
	if (!head)
		goto out_enomem;
	pa_zone.bytes_allocated += bytes;
	pa_zone.bytes_large += bytes;
	pa_stat_inc(large_allocs);
	pa_unlock();

	addr = page_address(head);
	if (mmap(addr, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		pa_lock();
		pa_zone.bytes_allocated -= bytes;
		pa_zone.bytes_large -= bytes;
		head->flags = 0;
		large_range_put_locked(head, npages);
		goto out_enomem;
	}
	for (i = 1; i + 1 < npages; i++) {
		head[i].flags = 1UL << PG_tail;
		head[i].compound_head = head;
	}
	pa_probe(large_map, addr, bytes);
	return addr;

out_enomem:
	pa_stat_inc(enomem);
	pa_probe(enomem, NR_PAGE_ORDERS, bytes);
	pa_unlock();
	if (!(gfp & __GFP_NOWARN))
		pr_debug("page_alloc: no own mapping of %zu bytes", bytes);
	errno = ENOMEM;
	return NULL;
}

/**
 * free_pages_large - unmap a mapping from alloc_pages_large(); NULL is
 * ignored. Its memory goes back to the OS at once, its address range to
 * the free ranges for reuse.
 *
 * Context: thread-safe; mmap outside the zone lock, then takes it briefly.
 * With CONFIG_PAGE_ALLOC_DEBUG a pointer that is not the start of a live
 * own mapping is reported and aborts.
 */
void free_pages_large(void *addr)
{
	struct page *head;
	size_t bytes, npages;

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
	/*
	 * Back to a PROT_NONE reservation: frees the memory, and the
	 * address range can only be touched again once handed out anew.
	 */
	if (mmap(addr, bytes, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
		 -1, 0) == MAP_FAILED)
		madvise(addr, bytes, MADV_DONTNEED);
	pa_probe(large_unmap, addr, bytes);
	large_release_map(head, npages);

	pa_lock();
	pa_zone.bytes_allocated -= bytes;
	pa_zone.bytes_large -= bytes;
	pa_stat_inc(large_frees);
	head->flags = 0;
	large_range_put_locked(head, npages);
	pa_unlock();
}
