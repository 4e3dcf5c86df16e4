/* SPDX-License-Identifier: MIT */
/*
 * The buddy page allocator: blocks of 2^order pages from one large reserved
 * virtual range, a flat struct page map, free lists per order, merge on free,
 * split on allocation. Requests above CONFIG_PAGE_MAX_ORDER get a mapping of
 * their own inside the same range (so virt_to_page works for them too).
 *
 * Concurrency: every function here is thread-safe (zone lock).
 */
#ifndef USLAB_PAGE_ALLOC_H
#define USLAB_PAGE_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "uslab/gfp.h"
#include "uslab/mm_types.h"

#define MAX_PAGE_ORDER	CONFIG_PAGE_MAX_ORDER
#define NR_PAGE_ORDERS	(MAX_PAGE_ORDER + 1)

/* Base and end of the reserved range; pointer -> page is arithmetic on these. */
/* Hidden: one rip-relative load each inside libuslab.so, no GOT. */
extern char *page_alloc_base __attribute__((__visibility__("hidden")));
extern char *page_alloc_end __attribute__((__visibility__("hidden")));
extern struct page *page_alloc_map __attribute__((__visibility__("hidden")));

/**
 * page_alloc_owns - is @addr inside uslab's reserved range?
 * Context: any; lock-free.
 */
static inline bool page_alloc_owns(const void *addr)
{
	return (const char *)addr >= page_alloc_base &&
	       (const char *)addr < page_alloc_end;
}

/**
 * virt_to_page - the struct page of the page holding @addr.
 * @addr: an address inside the reserved range.
 * Context: any; lock-free, O(1).
 */
static inline struct page *virt_to_page(const void *addr)
{
	return page_alloc_map +
	       ((size_t)((const char *)addr - page_alloc_base) >> PAGE_SHIFT);
}

/**
 * page_address - first byte of the memory described by @page.
 * Context: any; lock-free, O(1).
 */
static inline void *page_address(const struct page *page)
{
	return page_alloc_base + ((size_t)(page - page_alloc_map) << PAGE_SHIFT);
}

static inline unsigned long page_to_pfn(const struct page *page)
{
	return (unsigned long)(page - page_alloc_map);
}

/**
 * page_alloc_init - reserve the range; idempotent, called by every entry point.
 * Return: 0 or -ENOMEM when the reservation fails.
 */
int page_alloc_init(void);

/**
 * alloc_pages - allocate 2^@order contiguous pages.
 * @gfp: __GFP_ZERO zeroes, __GFP_NOWARN silences the ENOMEM warning.
 * @order: 0..MAX_PAGE_ORDER.
 * Context: thread-safe; takes the zone lock.
 * Return: head page, or NULL with errno ENOMEM (cap reached, out of address
 * space, order out of range: EINVAL).
 */
struct page *alloc_pages(gfp_t gfp, unsigned int order);

/** __free_pages - return a block from alloc_pages(); merges with free buddies. */
void __free_pages(struct page *page, unsigned int order);

/** __get_free_pages / free_pages - the same by address. */
unsigned long __get_free_pages(gfp_t gfp, unsigned int order);
void free_pages(unsigned long addr, unsigned int order);

/**
 * alloc_pages_large - a mapping of its own for @size bytes (rounded to pages),
 * aligned to @align (a power of two; below PAGE_SIZE means PAGE_SIZE; at
 * most 1 GiB). The memory is always zero.
 * Context: thread-safe; the zone lock briefly, mmap outside it.
 * Return: address, or NULL with errno ENOMEM/EINVAL. The head page has
 * PG_large and large_size set; every page's compound_head points to it.
 * free_pages_large() unmaps it at once (memory back to the OS).
 */
void *alloc_pages_large(size_t size, size_t align, gfp_t gfp);
void free_pages_large(void *addr);

/**
 * page_alloc_set_fault - fail_page_alloc: make alloc_pages() and
 * alloc_pages_large() fail as on a shortage (NULL, errno ENOMEM; never
 * with __GFP_NOFAIL), per "probability[:interval[:times[:space]]]"
 * (docs/slab.md, "Fault injection"); "0" turns it off.
 * Return: 0 or -EINVAL.
 */
int page_alloc_set_fault(const char *spec);
/** page_alloc_faults_injected - failures injected so far. */
unsigned long page_alloc_faults_injected(void);

/**
 * page_alloc_trim - return every free resident page to the OS now.
 * Return: bytes returned.
 */
size_t page_alloc_trim(void);

/**
 * page_alloc_set_limit - cap the bytes handed out, buddy blocks and own
 * mappings together (0 = no cap). Free memory kept resident is bounded by
 * the resident-free watermark instead.
 * Return: previous cap.
 */
size_t page_alloc_set_limit(size_t bytes);

/**
 * page_alloc_set_resident_free - bytes of free memory kept resident; beyond
 * it, frees give the largest free blocks back to the OS (MADV_DONTNEED).
 * Default CONFIG_PAGE_ALLOC_RESIDENT_FREE_KB. See docs/page_alloc.md.
 */
void page_alloc_set_resident_free(size_t bytes);

/**
 * page_alloc_set_resident_free_pct - percent of the recent peak of memory
 * in use that may stay free and resident (the policy keeps the larger of
 * this and the watermark). Default CONFIG_PAGE_ALLOC_RESIDENT_FREE_PCT.
 */
void page_alloc_set_resident_free_pct(unsigned int pct);

/**
 * page_alloc_decay - the peak behind the percent allowance falls to the
 * memory in use now; free memory beyond the allowance goes back to the OS.
 * Called by the per-CPU reaper's passes. Return: bytes given back.
 */
size_t page_alloc_decay(void);

/**
 * page_alloc_set_decay_agent - @on: page_alloc_decay() is called
 * periodically from now on (the reaper started), so the percent allowance
 * applies; off (default, and in a fork child): only the watermark.
 */
void page_alloc_set_decay_agent(bool on);

struct page_alloc_stats {
	size_t bytes_allocated;		/* handed out, buddy and large */
	size_t bytes_free_resident;	/* free but still resident */
	size_t bytes_free_returned;	/* free and given back to the OS */
	size_t bytes_large;		/* in own mappings */
	size_t limit;
	unsigned long nr_free[NR_PAGE_ORDERS];	/* free blocks per order */
	unsigned long allocs[NR_PAGE_ORDERS];
	unsigned long frees[NR_PAGE_ORDERS];
	unsigned long splits, merges, trims, enomem;
};

void page_alloc_get_stats(struct page_alloc_stats *st);

/**
 * page_alloc_buddyinfo - /proc/buddyinfo-style text into @buf.
 * Return: bytes written (NUL-terminated, truncated to @len).
 * Context: never allocates.
 */
size_t page_alloc_buddyinfo(char *buf, size_t len);

/*
 * fork() safety, registered with pthread_atfork() by the malloc layer:
 * prepare takes the zone lock, parent releases it, child re-initialises it.
 */
void page_alloc_fork_prepare(void);
void page_alloc_fork_parent(void);
void page_alloc_fork_child(void);

#endif /* USLAB_PAGE_ALLOC_H */
