/* SPDX-License-Identifier: MIT */
/*
 * struct page: one per 4 KiB page of the reserved range, in a flat map, so
 * that pointer -> page is arithmetic (the kernel's vmemmap). The page
 * allocator owns flags, order and the buddy arm of the union; a slab owns the
 * slab arm while PG_slab is set on its head page. Tail pages of a buddy
 * block point to their head (compound_head), set by the page allocator for
 * every block it hands out; of an own mapping only the last page does, the
 * others stay zero (their map pages untouched) and compound_head() finds
 * the head by page_large_head().
 */
#ifndef USLAB_MM_TYPES_H
#define USLAB_MM_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include "uslab/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1UL << PAGE_SHIFT)
#define PAGE_MASK	(~(PAGE_SIZE - 1))

struct kmem_cache;

/* page->flags bits */
enum pageflags {
	PG_buddy,	/* head of a free block on a buddy free list */
	PG_head,	/* head of an allocated block of 2^order pages */
	PG_tail,	/* not a head: compound_head points to it */
	PG_slab,	/* head of a slab; slab arm of the union valid */
	PG_large,	/* head of a mapping of its own (above MAX_ORDER) */
	PG_reserved,	/* inside the range but not handed out */
	PG_resident,	/* free block whose memory is still resident */
	PG_rcu,		/* slab waiting for a grace period before freeing */
	PG_slab_page,	/* any page of a slab (head or tail): slab_cache valid
			 * on this very page (set and cleared by slab/) */
	__NR_PAGEFLAGS,
};

/*
 * Who owns which field:
 *   flags          page allocator; slab sets/clears PG_slab and PG_rcu on the
 *                  head of a block it holds, PG_slab_page on every page of
 *                  it (never the allocator's bits).
 *   compound_head  page allocator, set on every page of a buddy block and on
 *                  the first and last page of an own mapping (read it with
 *                  compound_head(), which finds the head for the others).
 *   order          page allocator: order of the block this page heads, kept
 *                  outside the union so that slab may overwrite its arm while
 *                  it owns the block. Read-only for everyone else.
 *   union          the arm of the current owner: buddy (PG_buddy), large
 *                  (PG_large), free address range (PG_reserved), slab
 *                  (PG_slab) or RCU (PG_rcu). Tail pages of a slab carry
 *                  slab_cache too (PG_slab_page), so that a free finds the
 *                  cache with one load of the object's own struct page.
 */
struct page {
	unsigned long flags;
	struct page *compound_head;	/* head page of the block (self for heads) */
	union {
		/* page allocator: free block (PG_buddy) */
		struct {
			struct list_head buddy_list;
			/* pages of the block that may be resident (upper bound) */
			unsigned int buddy_resident;
		};
		/* page allocator: own mapping (PG_large) */
		struct {
			size_t large_size;	/* bytes mapped */
			size_t large_pages;
		};
		/* page allocator: free address range above the buddy sections */
		struct {
			struct list_head range_list;
			size_t range_pages;
		};
		/* slab (PG_slab), owned by slab/ */
		struct {
			struct list_head slab_list;
			struct kmem_cache *slab_cache;
			void *freelist;
			unsigned short inuse;
			unsigned short objects;
			unsigned char slab_order;
			unsigned char frozen;
			/* objects from this index on were never handed
			 * out: not written, not on the freelist */
			unsigned short fresh;
		};
		/* slab waiting for RCU (PG_rcu): liburcu's rcu_head fits here */
		unsigned long rcu_space[5];
	};
	unsigned int order;	/* page allocator: block order (PG_head, PG_buddy) */
	unsigned int pa_pad;	/* page allocator: spare */
};

#ifdef __cplusplus
static_assert(sizeof(struct page) == 64, "struct page must stay one cache line");
#else
_Static_assert(sizeof(struct page) == 64, "struct page must stay one cache line");
#endif

static inline int PageFlag(const struct page *p, enum pageflags f)
{
	return (p->flags >> f) & 1;
}

static inline void SetPageFlag(struct page *p, enum pageflags f)
{
	p->flags |= 1UL << f;
}

static inline void ClearPageFlag(struct page *p, enum pageflags f)
{
	p->flags &= ~(1UL << f);
}

/* page_alloc/large.c: the head of the own mapping @p is inside, or NULL */
struct page *page_large_head(const struct page *p);

/*
 * The head of @p's block: the field, or for the pages inside an own mapping
 * (the field NULL) page_large_head()'s search; NULL for a page that is not
 * part of an allocated block and never was.
 */
static inline struct page *compound_head(const struct page *p)
{
	struct page *h = p->compound_head;

	if (__builtin_expect(!h, 0))
		h = page_large_head(p);
	return h;
}

#ifdef __cplusplus
}
#endif

#endif /* USLAB_MM_TYPES_H */
