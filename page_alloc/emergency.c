// SPDX-License-Identifier: MIT
/*
 * Emergency blocks: memory for a signal handler that interrupted its own
 * thread inside the allocator (lib/sigsafe.h). That thread may hold any
 * allocator lock, so these blocks come from memory of their own, handed
 * out and taken back without a lock, and free(), kfree(), realloc() and
 * malloc_usable_size() know them later, from any thread. They sit outside
 * the reserved range: page_alloc_owns() is false for them, and the callers
 * that see a pointer they do not own ask here before calling it foreign.
 *
 * In fallback mode (no rseq) every operation is a locked section, so
 * nearly every allocation of a handler that interrupts an allocating
 * thread comes here; hundreds of threads on a few CPUs keep hundreds of
 * them out at once, and a handler's block may outlive the handler for as
 * long as the program keeps it (docs/percpu.md, "Signal handlers that
 * allocate"). Two kinds, so that neither the number nor the rate costs a
 * failure:
 *
 * - pooled: sizes up to EP_MAX_SIZE (with their alignment) are blocks of
 *   a power-of-two class (64 B .. 16 KiB), aligned to their size, carved
 *   from 64 KiB chunks of one range reserved (PROT_NONE) at the first use
 *   and made writable a chunk at a time. A chunk serves one class at a
 *   time; its bitmap says which blocks are out (claimed by CAS, given back
 *   by an atomic and). A chunk a free empties gives its pages back
 *   (madvise) and may then serve any class, unless it is the chunk its
 *   class allocated from last (one warm chunk per class, so that a handler
 *   that allocates and frees pays no system call); malloc_trim gives those
 *   back too (page_alloc_emergency_trim()). No system call on the way but
 *   the mprotect of a fresh chunk.
 * - mapped: larger sizes and alignments, and small ones when the pool is
 *   full or cannot be had, are mappings of their own (an mmap, a munmap on
 *   free), remembered in a table of segments of 64, 128, 256, ... slots,
 *   each mapped when the ones before are full and kept.
 *
 * Bound: EP_MAX_BYTES of blocks out at once (a pooled block counts its
 * class size, a mapping its length); past it, or when the kernel refuses
 * a mapping, the allocation fails with ENOMEM, as a GFP_ATOMIC one may.
 * The pool's range is EP_NR_CHUNKS chunks (32 MiB of address space, its
 * bitmaps included, resident only where used); the table, at most
 * EP_NR_SEGS segments.
 *
 * Locking: none. A pooled block is claimed by setting its bit with a CAS;
 * a chunk's class word says which class its bits belong to (EP_FREE: none
 * yet; EP_BUSY: being emptied by a free or a trim, which first claimed
 * every bit, so no allocation can start on it). An allocation that claimed
 * a bit checks the class word again and gives the bit back if the chunk
 * changed class in between (a chunk of the same class again has the same
 * layout). A mapped slot's address word is claimed and released by CAS (0
 * free, 1 being filled or emptied, else the block); the length is written
 * before the address is published. Every step is async-signal-safe (no
 * lock, no stdio; mmap, mprotect, madvise and munmap are system calls).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "page_alloc/internal.h"

#define EP_CHUNK_SHIFT	16
#define EP_CHUNK	(1UL << EP_CHUNK_SHIFT)
#define EP_MIN_SHIFT	6			/* 64 B: the smallest class */
#define EP_MAX_SHIFT	14			/* 16 KiB: the largest */
#define EP_MAX_SIZE	(1UL << EP_MAX_SHIFT)
#define EP_NR_CLASSES	(EP_MAX_SHIFT - EP_MIN_SHIFT + 1)
#define EP_WORDS	((EP_CHUNK >> EP_MIN_SHIFT) / 64)	/* bitmap words */
#define EP_NR_CHUNKS	512u			/* 32 MiB of pool */
#define EP_MAX_BYTES	(256UL << 20)		/* out at once, both kinds */

/* A chunk's class word. */
#define EP_UNMADE	0u	/* not yet writable (or its mprotect failed) */
#define EP_FREE		1u	/* writable, all bits clear, serves no class */
#define EP_BUSY		2u	/* emptied now: every bit claimed */
#define EP_CLS(c)	(3u + (c))

struct ep_chunk {
	unsigned int cls;
	unsigned long map[EP_WORDS];
};

/* The descriptors, then the chunks, each chunk aligned to its size. */
#define EP_DESC_BYTES	(((EP_NR_CHUNKS * sizeof(struct ep_chunk)) + EP_CHUNK - 1) & \
			 ~(EP_CHUNK - 1))
#define EP_RANGE	(EP_DESC_BYTES + (size_t)EP_NR_CHUNKS * EP_CHUNK)

static char *ep_base;			/* the range: NULL until reserved */
#define ep_desc		((struct ep_chunk *)ep_base)
#define ep_chunks	(ep_base + EP_DESC_BYTES)
static unsigned int ep_made;		/* chunks taken from the range */
static unsigned int ep_hint[EP_NR_CLASSES];	/* where each class last allocated */

/* Mapped blocks: the slot table, segment k of EP_SEG0 << k slots. */
#define EP_SEG0		64u
#define EP_NR_SEGS	11u	/* 131,008 slots: more than EP_MAX_BYTES of pages */
#define EP_SLOT_BUSY	1UL

struct ep_slot {
	unsigned long addr;
	size_t bytes;
};
static struct ep_slot ep_seg0[EP_SEG0];
static struct ep_slot *ep_seg[EP_NR_SEGS] = { ep_seg0 };
static unsigned int ep_mapped;		/* mapped blocks out: the scan's gate */

static size_t ep_bytes;			/* both kinds, out now */

/* Blocks out now (both kinds). */
unsigned int page_alloc_emergency_count;
/* Blocks ever handed out (stats, tests). */
unsigned long page_alloc_emergency_total;
/* Allocations that failed (the bound, or the kernel refused memory). */
unsigned long page_alloc_emergency_failed;

static void ep_count(long blocks, long bytes)
{
	__atomic_add_fetch(&page_alloc_emergency_count, (unsigned int)blocks,
			   __ATOMIC_RELAXED);
	__atomic_add_fetch(&ep_bytes, (size_t)bytes, __ATOMIC_RELAXED);
}

/* Reserve @bytes of the bound. Return: false past EP_MAX_BYTES. */
static bool ep_charge(size_t bytes)
{
	size_t old = __atomic_load_n(&ep_bytes, __ATOMIC_RELAXED);

	do {
		if (old > EP_MAX_BYTES || bytes > EP_MAX_BYTES - old)
			return false;
	} while (!__atomic_compare_exchange_n(&ep_bytes, &old, old + bytes, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

/* ------------------------------------------------------------------ */
/* Pooled blocks */

static inline unsigned int ep_nr_blocks(unsigned int c)
{
	return (unsigned int)(EP_CHUNK >> (c + EP_MIN_SHIFT));
}

/* The bits of word @w that name blocks of class @c. */
static inline unsigned long ep_valid(unsigned int c, unsigned int w)
{
	unsigned int n = ep_nr_blocks(c);

	if (n >= (w + 1) * 64)
		return ~0UL;
	return n > w * 64 ? (1UL << (n - w * 64)) - 1 : 0;
}

/* Chunk @i (the range is reserved: a chunk's class word said so). */
static inline char *ep_chunk_addr(unsigned int i)
{
	return ep_chunks + ((size_t)i << EP_CHUNK_SHIFT);
}

/*
 * A mapping of @bytes aligned to @align (a power of two, at least a page),
 * @prot and MAP_PRIVATE | MAP_ANONYMOUS | @flags: mapped @align - PAGE_SIZE
 * larger, the ends beside the aligned block unmapped again. The pool's
 * range (reserved) and the mapped blocks both come from here.
 * Return: the block, or MAP_FAILED.
 */
static void *emerg_map(size_t bytes, size_t align, int prot, int flags)
{
	size_t extra = align - PAGE_SIZE, head;
	char *p;

	if (bytes + extra < bytes)
		return MAP_FAILED;
	p = mmap(NULL, bytes + extra, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	if (p == MAP_FAILED || !extra)
		return p;
	head = (align - ((uintptr_t)p & (align - 1))) & (align - 1);
	if (head)
		munmap(p, head);
	if (extra - head)
		munmap(p + head + bytes, extra - head);
	return p + head;
}

/*
 * The pool's range, reserved at the first use: PROT_NONE (no commit
 * charge), the descriptors made writable at once (resident as touched).
 * Two handlers may race here; the loser unmaps its own.
 */
static bool ep_reserve(void)
{
	char *p, *none = NULL;

	if (__atomic_load_n(&ep_base, __ATOMIC_ACQUIRE))
		return true;
	p = emerg_map(EP_RANGE, EP_CHUNK, PROT_NONE, MAP_NORESERVE);
	if (p == MAP_FAILED)
		return false;
	if (mprotect(p, EP_DESC_BYTES, PROT_READ | PROT_WRITE)) {
		munmap(p, EP_RANGE);
		return false;
	}
	/* one word says where both the descriptors and the chunks are */
	if (!__atomic_compare_exchange_n(&ep_base, &none, p, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		munmap(p, EP_RANGE);
	return true;
}

/*
 * Claim a free block of class @c in chunk @i (whose class word said @c).
 * Return: the block, or NULL (full, or it changed class meanwhile).
 */
static void *ep_claim(unsigned int i, unsigned int c)
{
	struct ep_chunk *ch = &ep_desc[i];
	unsigned int words = (ep_nr_blocks(c) + 63) / 64;

	for (unsigned int w = 0; w < words; w++) {
		unsigned long valid = ep_valid(c, w);
		unsigned long v = __atomic_load_n(&ch->map[w], __ATOMIC_RELAXED);
		unsigned long free;

		while ((free = ~v & valid)) {
			unsigned long bit = free & -free;

			if (!__atomic_compare_exchange_n(&ch->map[w], &v, v | bit, false,
							 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
				continue;
			if (__atomic_load_n(&ch->cls, __ATOMIC_SEQ_CST) != EP_CLS(c)) {
				/* emptied and given to another class meanwhile */
				__atomic_and_fetch(&ch->map[w], ~bit, __ATOMIC_SEQ_CST);
				return NULL;
			}
			return ep_chunk_addr(i) +
			       ((size_t)(w * 64 + (unsigned int)__builtin_ctzl(bit)) <<
				(c + EP_MIN_SHIFT));
		}
	}
	return NULL;
}

/* A chunk not yet taken from the range, made writable for class @c. */
static void *ep_make_chunk(unsigned int c)
{
	unsigned int i = __atomic_load_n(&ep_made, __ATOMIC_RELAXED);
	struct ep_chunk *ch;

	do {
		if (i >= EP_NR_CHUNKS)
			return NULL;
	} while (!__atomic_compare_exchange_n(&ep_made, &i, i + 1, true,
					      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	/* only this thread knows chunk i until its class word is set */
	if (mprotect(ep_chunk_addr(i), EP_CHUNK, PROT_READ | PROT_WRITE))
		return NULL;	/* stays EP_UNMADE: never used */
	ch = &ep_desc[i];
	ch->map[0] = 1;		/* its first block is ours */
	__atomic_store_n(&ch->cls, EP_CLS(c), __ATOMIC_SEQ_CST);
	return ep_chunk_addr(i);
}

/*
 * A block of class @c: from a chunk of the class (the one it last used
 * first), else from an emptied chunk, else from a fresh one.
 * Return: the block (not yet zeroed), or NULL when the pool is full.
 */
static void *ep_pool_alloc(unsigned int c)
{
	unsigned int n, start, i, k;
	void *p;

	if (!ep_reserve())
		return NULL;
	n = __atomic_load_n(&ep_made, __ATOMIC_SEQ_CST);
	if (n > EP_NR_CHUNKS)
		n = EP_NR_CHUNKS;
	start = __atomic_load_n(&ep_hint[c], __ATOMIC_RELAXED);
	for (k = 0; k < n; k++) {
		i = (start + k) % n;
		if (__atomic_load_n(&ep_desc[i].cls, __ATOMIC_SEQ_CST) != EP_CLS(c))
			continue;
		p = ep_claim(i, c);
		if (p)
			goto found;
	}
	for (i = 0; i < n; i++) {
		unsigned int expect = EP_FREE;

		if (__atomic_load_n(&ep_desc[i].cls, __ATOMIC_RELAXED) != EP_FREE ||
		    !__atomic_compare_exchange_n(&ep_desc[i].cls, &expect, EP_CLS(c),
						 false, __ATOMIC_SEQ_CST,
						 __ATOMIC_RELAXED))
			continue;
		p = ep_claim(i, c);
		if (p)
			goto found;
	}
	p = ep_make_chunk(c);
	if (!p)
		return NULL;
	i = (unsigned int)(((char *)p - ep_chunks) >> EP_CHUNK_SHIFT);
found:
	__atomic_store_n(&ep_hint[c], i, __ATOMIC_RELAXED);
	return p;
}

/*
 * Give chunk @i's pages back and free it for any class, if every block of
 * class @c in it is free: claim every bit (word by word, from the first,
 * so that two of these never hold parts), mark it busy, madvise, clear.
 * A block allocated meanwhile stops it (the claims are undone).
 * Return: true when the chunk was emptied.
 */
static bool ep_retire(unsigned int i, unsigned int c)
{
	struct ep_chunk *ch = &ep_desc[i];
	unsigned int w;

	if (__atomic_load_n(&ch->cls, __ATOMIC_SEQ_CST) != EP_CLS(c))
		return false;
	for (w = 0; w < EP_WORDS; w++) {
		unsigned long expect = 0;

		if (!__atomic_compare_exchange_n(&ch->map[w], &expect, ~0UL, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			break;
	}
	if (w < EP_WORDS) {
		while (w--)
			__atomic_store_n(&ch->map[w], 0, __ATOMIC_SEQ_CST);
		return false;
	}
	/* every bit is ours: nobody can hand out a block here now */
	__atomic_store_n(&ch->cls, EP_BUSY, __ATOMIC_SEQ_CST);
	madvise(ep_chunk_addr(i), EP_CHUNK, MADV_DONTNEED);
	for (w = 0; w < EP_WORDS; w++)
		__atomic_store_n(&ch->map[w], 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ch->cls, EP_FREE, __ATOMIC_SEQ_CST);
	return true;
}

/*
 * The live pooled block @p: its chunk, class, word and bit.
 * Return: false when @p is not the start of a block that is out.
 */
static bool ep_pool_find(const void *p, unsigned int *ip, unsigned int *cp,
			 unsigned int *wp, unsigned long *bitp)
{
	char *base = __atomic_load_n(&ep_base, __ATOMIC_SEQ_CST);
	uintptr_t off = (uintptr_t)p - (uintptr_t)(base + EP_DESC_BYTES);
	unsigned int i, c, cls, b;

	if (!base || off >= (uintptr_t)EP_NR_CHUNKS * EP_CHUNK)
		return false;
	i = (unsigned int)(off >> EP_CHUNK_SHIFT);
	cls = __atomic_load_n(&ep_desc[i].cls, __ATOMIC_SEQ_CST);
	if (cls < EP_CLS(0))
		return false;
	c = cls - EP_CLS(0);
	off &= EP_CHUNK - 1;
	if (off & ((1UL << (c + EP_MIN_SHIFT)) - 1))
		return false;		/* inside a block */
	b = (unsigned int)(off >> (c + EP_MIN_SHIFT));
	*ip = i;
	*cp = c;
	*wp = b / 64;
	*bitp = 1UL << (b % 64);
	return __atomic_load_n(&ep_desc[i].map[b / 64], __ATOMIC_SEQ_CST) & *bitp;
}

static bool ep_in_pool(const void *p)
{
	char *base = __atomic_load_n(&ep_base, __ATOMIC_RELAXED);

	return base && (uintptr_t)p - (uintptr_t)(base + EP_DESC_BYTES) <
		       (uintptr_t)EP_NR_CHUNKS * EP_CHUNK;
}

/* ------------------------------------------------------------------ */
/* Mapped blocks */

/* Segment @k of the slot table, mapped if it is not yet. Return: NULL if
 * the kernel refused. */
static struct ep_slot *ep_segment(unsigned int k)
{
	struct ep_slot *seg = __atomic_load_n(&ep_seg[k], __ATOMIC_ACQUIRE), *none = NULL;
	size_t bytes = (size_t)(EP_SEG0 << k) * sizeof(struct ep_slot);

	if (seg)
		return seg;
	seg = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (seg == MAP_FAILED)
		return NULL;
	if (!__atomic_compare_exchange_n(&ep_seg[k], &none, seg, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(seg, bytes);
		return none;
	}
	return seg;
}

/* A free slot, claimed (its address word EP_SLOT_BUSY). Return: NULL if
 * every segment is full or cannot be mapped. */
static struct ep_slot *ep_slot_claim(void)
{
	for (unsigned int k = 0; k < EP_NR_SEGS; k++) {
		struct ep_slot *seg = ep_segment(k);

		if (!seg)
			return NULL;
		for (unsigned int j = 0; j < EP_SEG0 << k; j++) {
			unsigned long expect = 0;

			if (__atomic_compare_exchange_n(&seg[j].addr, &expect, EP_SLOT_BUSY,
							false, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return &seg[j];
		}
	}
	return NULL;
}

static void *ep_mapped_alloc(size_t bytes, size_t align)
{
	struct ep_slot *slot = ep_slot_claim();
	void *p;

	if (!slot)
		return NULL;
	p = emerg_map(bytes, align, PROT_READ | PROT_WRITE, 0);
	if (p == MAP_FAILED) {
		__atomic_store_n(&slot->addr, 0, __ATOMIC_RELEASE);
		return NULL;
	}
	slot->bytes = bytes;
	__atomic_add_fetch(&ep_mapped, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&slot->addr, (unsigned long)p, __ATOMIC_RELEASE);
	return p;
}

/* The slot of the mapped block @p, or NULL. Scans only while any is out. */
static struct ep_slot *ep_slot_find(const void *p)
{
	if (!__atomic_load_n(&ep_mapped, __ATOMIC_SEQ_CST))
		return NULL;
	for (unsigned int k = 0; k < EP_NR_SEGS; k++) {
		struct ep_slot *seg = __atomic_load_n(&ep_seg[k], __ATOMIC_ACQUIRE);

		if (!seg)
			break;
		for (unsigned int j = 0; j < EP_SEG0 << k; j++)
			if (__atomic_load_n(&seg[j].addr, __ATOMIC_ACQUIRE) ==
			    (unsigned long)p)
				return &seg[j];
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The entries */

/**
 * page_alloc_emergency_alloc - @size bytes (zeroed) aligned to @align
 * (a power of two; 0 means the natural alignment of a pooled block, at
 * least 64 bytes), outside the reserved range: a pooled block up to 16 KiB, else an
 * own mapping (aligned to at least a page).
 * Context: async-signal-safe; no lock. A pooled block costs a few atomic
 * instructions and a memset (an mprotect when it needs a fresh chunk); a
 * mapping, mmap and maybe munmap.
 * Return: the block, or NULL with errno ENOMEM (the bound of EP_MAX_BYTES
 * out at once reached, or the kernel refused memory).
 */
void *page_alloc_emergency_alloc(size_t size, size_t align)
{
	size_t want = size > align ? size : align;
	size_t bytes;
	void *p;

	if (!size || (align & (align - 1)))
		goto nomem;
	if (want <= EP_MAX_SIZE) {
		unsigned int c = 0;

		while ((1UL << (c + EP_MIN_SHIFT)) < want)
			c++;
		bytes = 1UL << (c + EP_MIN_SHIFT);
		if (!ep_charge(bytes))
			goto nomem;
		p = ep_pool_alloc(c);
		if (p) {
			memset(p, 0, bytes);
			goto out;
		}
		/* the pool is full or cannot be had: a mapping of its own */
		__atomic_sub_fetch(&ep_bytes, bytes, __ATOMIC_RELAXED);
	}
	if (align < PAGE_SIZE)
		align = PAGE_SIZE;
	bytes = (size + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1);
	if (bytes < size || !ep_charge(bytes))
		goto nomem;
	p = ep_mapped_alloc(bytes, align);
	if (!p) {
		__atomic_sub_fetch(&ep_bytes, bytes, __ATOMIC_RELAXED);
		goto nomem;
	}
out:
	__atomic_add_fetch(&page_alloc_emergency_count, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&page_alloc_emergency_total, 1, __ATOMIC_RELAXED);
	return p;
nomem:
	__atomic_add_fetch(&page_alloc_emergency_failed, 1, __ATOMIC_RELAXED);
	errno = ENOMEM;
	return NULL;
}

/**
 * page_alloc_emergency_size - the usable size of emergency block @p.
 * Context: any; lock-free.
 * Return: its bytes, or 0 when @p is not an emergency block that is out.
 */
size_t page_alloc_emergency_size(const void *p)
{
	unsigned int i, c, w;
	unsigned long bit;
	struct ep_slot *slot;

	if (ep_in_pool(p))
		return ep_pool_find(p, &i, &c, &w, &bit) ? 1UL << (c + EP_MIN_SHIFT) : 0;
	slot = ep_slot_find(p);
	return slot ? slot->bytes : 0;
}

/**
 * page_alloc_emergency_free - give back @p if it is an emergency block.
 * Context: any, also a signal handler; lock-free.
 * Return: true when @p was one (and is free now); false for any other
 * pointer, and for a block freed already (the caller reports it).
 */
bool page_alloc_emergency_free(const void *p)
{
	unsigned int i, c, w;
	unsigned long bit, old;
	struct ep_slot *slot;
	size_t bytes;

	if (ep_in_pool(p)) {
		if (!ep_pool_find(p, &i, &c, &w, &bit))
			return false;
		old = __atomic_fetch_and(&ep_desc[i].map[w], ~bit, __ATOMIC_SEQ_CST);
		if (!(old & bit))
			return false;	/* another thread freed it just now */
		ep_count(-1, -(long)(1UL << (c + EP_MIN_SHIFT)));
		/* emptied: pages back, unless its class allocates here */
		if (old == bit && i != __atomic_load_n(&ep_hint[c], __ATOMIC_RELAXED))
			ep_retire(i, c);
		return true;
	}
	slot = ep_slot_find(p);
	if (!slot)
		return false;
	old = (unsigned long)p;
	if (!__atomic_compare_exchange_n(&slot->addr, &old, EP_SLOT_BUSY, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;	/* another thread frees it now */
	bytes = slot->bytes;
	munmap((void *)p, bytes);
	__atomic_sub_fetch(&ep_mapped, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&slot->addr, 0, __ATOMIC_RELEASE);
	ep_count(-1, -(long)bytes);
	return true;
}

/**
 * page_alloc_emergency_trim - give back the pages of every pooled chunk
 * with no block out (the warm chunk of each class too).
 * Context: any; lock-free (madvise per chunk).
 * Return: bytes given back.
 */
size_t page_alloc_emergency_trim(void)
{
	unsigned int n = __atomic_load_n(&ep_made, __ATOMIC_SEQ_CST);
	size_t ret = 0;

	if (!__atomic_load_n(&ep_base, __ATOMIC_ACQUIRE))
		return 0;
	if (n > EP_NR_CHUNKS)
		n = EP_NR_CHUNKS;
	for (unsigned int i = 0; i < n; i++) {
		unsigned int cls = __atomic_load_n(&ep_desc[i].cls, __ATOMIC_SEQ_CST);

		if (cls >= EP_CLS(0) && ep_retire(i, cls - EP_CLS(0)))
			ret += EP_CHUNK;
	}
	return ret;
}
