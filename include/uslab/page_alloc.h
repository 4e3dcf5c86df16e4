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
#include "uslab/api.h"
#include "uslab/gfp.h"
#include "uslab/mm_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MAX_PAGE_ORDER	CONFIG_PAGE_MAX_ORDER
#define NR_PAGE_ORDERS	(MAX_PAGE_ORDER + 1)

/*
 * Base and end of the reserved range; pointer -> page is arithmetic on these.
 * Hidden: one rip-relative load each inside libuslab.so, no GOT. Code built
 * into the library (USLAB_INTERNAL) gets the four helpers below inline;
 * a program using the installed library calls their exported forms
 * (page_alloc/api.c), with the same arithmetic.
 */
extern char *page_alloc_base __attribute__((__visibility__("hidden")));
extern char *page_alloc_end __attribute__((__visibility__("hidden")));
/* page_alloc_end - page_alloc_base, stored with it: one unsigned compare of
 * an address's offset from the base says "ours" (free()'s hit path) */
extern size_t page_alloc_span __attribute__((__visibility__("hidden")));
extern struct page *page_alloc_map __attribute__((__visibility__("hidden")));
/*
 * One byte per page beside the struct page map, for the owner of a block
 * to keep what its hottest lookup needs (the slab layer: the kmalloc class
 * of a slab's pages, for free()). 4 KiB of it covers 16 MiB of heap where
 * the struct pages of the same memory take 256 KiB: a free in a large
 * heap finds its class in cache instead of missing on struct page.
 */
extern unsigned char *page_alloc_tags __attribute__((__visibility__("hidden")));
/*
 * One byte per PAGE_ALLOC_SHADOW_GRAIN (128) bytes of heap, below the tags,
 * reserved as the heap grows and resident only where written: for the
 * owner of a block to keep state outside the block. The slab layer keeps
 * there the free mark of objects of more than 1 KiB (8 bytes: the shadow
 * of the object's first KiB, its own), so that freeing and handing out
 * such a block never touches its memory (docs/slab.md "Hardened frees").
 * 1/128 of the heap's address space.
 */
#define PAGE_ALLOC_SHADOW_SHIFT	7
#define PAGE_ALLOC_SHADOW_GRAIN	(1UL << PAGE_ALLOC_SHADOW_SHIFT)
extern unsigned char *page_alloc_shadow __attribute__((__visibility__("hidden")));

#define __page_alloc_owns(addr)						\
	((const char *)(addr) >= page_alloc_base &&			\
	 (const char *)(addr) < page_alloc_end)
#define __virt_to_page(addr)						\
	(page_alloc_map +						\
	 ((size_t)((const char *)(addr) - page_alloc_base) >> PAGE_SHIFT))
#define __page_address(page)						\
	((void *)(page_alloc_base +					\
		  ((size_t)((page) - page_alloc_map) << PAGE_SHIFT)))
#define __page_to_pfn(page)	((unsigned long)((page) - page_alloc_map))

#ifdef USLAB_INTERNAL
/**
 * page_tag - the tag byte of the page holding @addr (inside the range).
 * Context: any; lock-free, one load.
 */
static inline unsigned int page_tag(const void *addr)
{
	return page_alloc_tags[(size_t)((const char *)addr - page_alloc_base) >>
			       PAGE_SHIFT];
}

/**
 * set_page_tags - tag the @n pages from @page (a block the caller owns).
 * Context: the block's owner; plain stores.
 */
static inline void set_page_tags(const struct page *page, unsigned long n,
				 unsigned char tag)
{
	__builtin_memset(page_alloc_tags + (page - page_alloc_map), tag, n);
}

/**
 * page_alloc_owns - is @addr inside uslab's reserved range?
 * Context: any; lock-free.
 */
static inline bool page_alloc_owns(const void *addr)
{
	return __page_alloc_owns(addr);
}

/**
 * virt_to_page - the struct page of the page holding @addr.
 * @addr: an address inside the reserved range.
 * Context: any; lock-free, O(1).
 */
static inline struct page *virt_to_page(const void *addr)
{
	return __virt_to_page(addr);
}

/**
 * page_address - first byte of the memory described by @page.
 * Context: any; lock-free, O(1).
 */
static inline void *page_address(const struct page *page)
{
	return __page_address(page);
}

static inline unsigned long page_to_pfn(const struct page *page)
{
	return __page_to_pfn(page);
}
#else
USLAB_API bool page_alloc_owns(const void *addr);
USLAB_API struct page *virt_to_page(const void *addr);
USLAB_API void *page_address(const struct page *page);
USLAB_API unsigned long page_to_pfn(const struct page *page);
#endif

#ifdef USLAB_INTERNAL
/**
 * page_alloc_init - reserve the range; idempotent, called by every entry point.
 * Return: 0 or -ENOMEM when the reservation fails.
 */
int page_alloc_init(void);
#endif

/**
 * alloc_pages - allocate 2^@order contiguous pages.
 * @gfp: __GFP_ZERO zeroes, __GFP_NOWARN silences the ENOMEM warning.
 * @order: 0..MAX_PAGE_ORDER.
 * Context: thread-safe; takes the zone lock.
 * Return: head page, or NULL with errno ENOMEM (cap reached, out of address
 * space, order out of range: EINVAL).
 */
USLAB_API struct page *alloc_pages(gfp_t gfp, unsigned int order);

/** __free_pages - return a block from alloc_pages(); merges with free buddies. */
USLAB_API void __free_pages(struct page *page, unsigned int order);

/** __get_free_pages / free_pages - the same by address. */
USLAB_API unsigned long __get_free_pages(gfp_t gfp, unsigned int order);
USLAB_API void free_pages(unsigned long addr, unsigned int order);

/**
 * alloc_pages_large - a mapping of its own for @size bytes (rounded to pages),
 * aligned to @align (a power of two; below PAGE_SIZE means PAGE_SIZE; at
 * most 1 GiB). The memory is always zero.
 * Context: thread-safe; the zone lock briefly, mmap outside it.
 * Return: address, or NULL with errno ENOMEM/EINVAL. The head page has
 * PG_large and large_size set; compound_head() of every page leads to it
 * (only the first and the last struct page are written).
 * free_pages_large() unmaps it at once (memory back to the OS).
 */
USLAB_API void *alloc_pages_large(size_t size, size_t align, gfp_t gfp);
USLAB_API void free_pages_large(void *addr);

#ifdef USLAB_INTERNAL	/* malloc's realloc, not the kernel API */
/**
 * realloc_pages_large - the own mapping at @addr grown to @size bytes
 * without a copy: a new own mapping of @size, onto whose first pages the
 * old one's pages are moved by the kernel (mremap(MREMAP_FIXED |
 * MREMAP_DONTUNMAP): the old range stays mapped, so no hole opens in the
 * reservation), then the old range is freed as by free_pages_large().
 * Context: thread-safe; not from a signal handler inside the allocator.
 * Return: the new address, or NULL with errno (@addr not the start of an
 * own mapping, @size not larger, no memory, or a kernel without
 * MREMAP_DONTUNMAP: before 5.7, valgrind): @addr is then untouched and the
 * caller copies.
 */
void *realloc_pages_large(void *addr, size_t size, gfp_t gfp);
#endif

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
USLAB_API size_t page_alloc_trim(void);

/**
 * page_alloc_set_limit - cap the bytes handed out, buddy blocks and own
 * mappings together (0 = no cap). Free memory kept resident is bounded by
 * the resident-free watermark instead.
 * Return: previous cap.
 */
USLAB_API size_t page_alloc_set_limit(size_t bytes);

#ifdef USLAB_INTERNAL	/* policy knobs the library sets itself */
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
 * memory in use now; free memory beyond the allowance (buddy blocks, idle
 * per-CPU lists, cached own mappings) goes back to the OS. The decay thread
 * takes halving steps instead; this is for the simulator's virtual reaper
 * and explicit callers. Return: bytes given back.
 */
size_t page_alloc_decay(void);

/*
 * The decay thread (page_alloc/reclaim.c): a free that finds more free
 * memory resident than the fixed watermark asks for it; the layers above
 * start it by calling page_alloc_decayd_poll() where they hold none of
 * their locks (pthread_create may call malloc). One load when there is
 * nothing to do.
 */
/*
 * Emergency blocks (page_alloc/emergency.c): memory for a signal handler
 * that interrupted its own thread inside the allocator (lib/sigsafe.h),
 * outside the reserved range, lock-free: pooled blocks up to 16 KiB and
 * mappings of their own beyond, known to the free paths by their range
 * and a table. _count: blocks out now; _total: ever handed out; _failed:
 * allocations refused (the bound of blocks out at once, or no memory).
 */
extern unsigned int page_alloc_emergency_count;
extern unsigned long page_alloc_emergency_total;
extern unsigned long page_alloc_emergency_failed;
void *page_alloc_emergency_alloc(size_t size, size_t align);
size_t page_alloc_emergency_size(const void *p);
bool page_alloc_emergency_free(const void *p);
size_t page_alloc_emergency_trim(void);

extern int page_alloc_decayd_state;
#define PAGE_ALLOC_DECAYD_WANTED	1
void page_alloc_decayd_start(void);
void page_alloc_decayd_disable(void);
bool page_alloc_decayd_running(void);

static inline void page_alloc_decayd_poll(void)
{
	if (__builtin_expect(__atomic_load_n(&page_alloc_decayd_state,
					     __ATOMIC_RELAXED) ==
			     PAGE_ALLOC_DECAYD_WANTED, 0))
		page_alloc_decayd_start();
}

/**
 * page_alloc_set_decay_agent - @on: page_alloc_decay() is called
 * periodically from now on (the decay thread or the simulator's virtual
 * reaper), so the percent allowance applies; off (default, and in a fork
 * child): only the watermark.
 */
void page_alloc_set_decay_agent(bool on);

/**
 * page_resident - whether the page holding @addr is in memory (mincore).
 * Return: false also where nothing is mapped.
 */
bool page_alloc_resident(const void *addr);

/**
 * page_residency - mincore(): @vec[i] bit 0 set when page i of the pages
 * from the one holding @addr over @len bytes is in memory.
 * Return: 0 or -errno (-ENOMEM: part of it is not mapped).
 */
int page_alloc_residency(const void *addr, size_t len, unsigned char *vec);

/**
 * page_populate - make the pages [@addr, @addr + @len) (page-aligned)
 * resident and writable now, their content unchanged (MADV_POPULATE_WRITE):
 * one system call where the program's first writes took a page fault per
 * page (docs/page_alloc.md "Pages populated ahead").
 * Context: no lock taken; call it without the zone lock and cache locks.
 * Return: 0 or -errno (-EOPNOTSUPP once the kernel refused the advice).
 */
int page_alloc_populate(void *addr, size_t len);

/** page_populated_total - pages page_alloc_populate() made resident so far. */
unsigned long page_alloc_populated(void);

#endif

struct page_alloc_stats {
	size_t bytes_allocated;		/* handed out, buddy and large */
	size_t bytes_allocated_peak;	/* its high-water mark since start or
					 * the last page_alloc_reset_peak() */
	size_t bytes_free_resident;	/* free but still resident (buddy,
					   per-CPU lists, cached mappings) */
	size_t bytes_pagelists;		/* of which on per-CPU page lists */
	size_t bytes_large_cached;	/* of which cached own mappings */
	size_t bytes_free_returned;	/* free and given back to the OS */
	size_t bytes_large;		/* in own mappings */
	size_t limit;
	unsigned long nr_free[NR_PAGE_ORDERS];	/* free blocks per order */
	unsigned long allocs[NR_PAGE_ORDERS];
	unsigned long frees[NR_PAGE_ORDERS];
	unsigned long splits, merges, trims, enomem;
	unsigned long large_reuse;	/* own mappings served from the cache */
	unsigned long large_maps;	/* own mappings that needed an mmap */
	unsigned long pages_fresh;	/* pages handed out that were not
					 * resident (fresh from the OS or given
					 * back to it): each faults at its first
					 * touch (the tuner's cost model) */
	unsigned long emergency;	/* blocks for signal handlers that
					 * interrupted their thread inside the
					 * allocator (lib/sigsafe.h) */
	/* the per-CPU page lists, summed over CPUs (their blocks are in
	 * allocs[] and frees[] too) */
	unsigned long pagelist_allocs;	/* blocks handed out from a list */
	unsigned long pagelist_frees;	/* blocks freed onto a list */
	unsigned long pagelist_refills;	/* batches taken from the buddy lists */
	unsigned long pagelist_drains;	/* batches given back (high mark,
					 * decay of an idle list, trim) */
};

USLAB_API void page_alloc_get_stats(struct page_alloc_stats *st);

/**
 * page_alloc_stats_sub - @st's event counters less @before's (a phase's
 * own counts: the replayer's timed run, a simulation's run); the peak
 * less what @before held (buddy and per-CPU lists). Levels (bytes held
 * now, free blocks) stay @st's.
 */
void page_alloc_stats_sub(struct page_alloc_stats *st,
			  const struct page_alloc_stats *before);

/**
 * page_alloc_reset_peak - restart bytes_allocated_peak from what is held now
 * (a tool measuring one phase of a program: the replayer's timed run).
 * Context: thread-safe; takes the zone lock. Never allocates.
 */
void page_alloc_reset_peak(void);

/**
 * page_alloc_buddyinfo - /proc/buddyinfo-style text into @buf.
 * Return: bytes written (NUL-terminated, truncated to @len).
 * Context: never allocates.
 */
USLAB_API size_t page_alloc_buddyinfo(char *buf, size_t len);

#ifdef USLAB_INTERNAL
/*
 * fork() safety, registered with pthread_atfork() by the malloc layer:
 * prepare takes the zone lock, parent releases it, child re-initialises it.
 */
void page_alloc_fork_prepare(void);
void page_alloc_fork_parent(void);
void page_alloc_fork_child(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* USLAB_PAGE_ALLOC_H */
