/* SPDX-License-Identifier: MIT */
/*
 * malloc's policy, written once: which cache or block serves a size, what
 * the aligned family asks kmalloc for, when realloc moves, what malloc(0)
 * and the error cases return. Inline, so that the exported symbols
 * (malloc/malloc.c, in libuslab.so and libuslab.a) pay no extra call, and
 * instantiated as functions with the uslab_ prefix by malloc/policy.c, which
 * is also linked into the simulator's virtual-CPU core
 * (libuslab-core-vcpu.a): `uslab sim` and `uslab tune` run these rules, not
 * a copy of them (mimalloc separates alloc.c from alloc-override.c so).
 *
 * Nothing here takes a lock, uses TLS, stdio, dlsym or liburcu.
 */
#ifndef USLAB_MALLOC_POLICY_H
#define USLAB_MALLOC_POLICY_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "lib/sigsafe.h"
#include "uslab/page_alloc.h"
#include "uslab/slab.h"
#include "malloc/internal.h"
#include "slab/fastpath.h"

#define MALLOC_GFP	(GFP_KERNEL | __GFP_NOWARN)

/* malloc/policy.c; hidden, so the fast paths load them PC-relative */
#define __malloc_hidden	__attribute__((__visibility__("hidden")))
/*
 * malloc_small - the gate of malloc's inline route: @end is one past the
 * largest size it serves (malloc_small_end below). It sits at a fixed
 * offset in a page of its own, not wherever the rest of .bss puts it: the
 * first load of every malloc, it was measured to cost alloc_test (blocks of
 * 8 B .. 64 KiB, each written whole) 20% of its CPU time at page offset
 * 0x010 and nothing at 0xf10, the same code (docs/benchmarks.md "Latest
 * full run": likely 4 KiB aliasing with the blocks' stores, whose page
 * offsets cluster at the start of a page). @below is never touched.
 */
#define MALLOC_SMALL_END_OFFSET	0xf10
struct malloc_small {
	char below[MALLOC_SMALL_END_OFFSET];
	size_t end;
	size_t mid_end;		/* the second route's gate, beside the first */
};
extern struct malloc_small malloc_small __malloc_hidden;
#define malloc_small_end (malloc_small.end)
#define malloc_mid_end (malloc_small.mid_end)
extern unsigned long malloc_foreign_frees __malloc_hidden;
void *malloc_fail(void) __malloc_hidden;
void *malloc_slow(size_t size, gfp_t gfp) __malloc_hidden;
void *malloc_sized(size_t size, gfp_t gfp) __malloc_hidden;
void *malloc_mid(size_t size) __malloc_hidden;
void malloc_free_foreign(const void *p) __malloc_hidden;

/*
 * Fast path: one compare against malloc_small_end (malloc(0) included: it
 * is kmalloc(1); 0 until the first malloc's slow route opens it and
 * while debugging), then kmalloc_small_fast() inline
 * (the class's magazines from one table, rseq pop, the free mark). Sizes
 * up to KMALLOC_MAX_CACHE_SIZE take the second inline route below
 * malloc_mid_end (opened and closed with malloc_small_end):
 * kmalloc_mid_fast(), the same pop from a table by size / 256 with the
 * mark in the shadow, where kmalloc() spent three calls and fls (a third
 * of glibc_thread's malloc calls, half of alloc_test's: docs/percpu.md
 * "Cost"). Everything larger takes malloc_sized().
 */
static __always_inline void *__uslab_malloc(size_t size)
{
	if (likely(size < malloc_small_end))
		return kmalloc_small_fast(size, MALLOC_GFP);
	/* a function of its own: inline here, its tail merged with the small
	 * route's and cost that route two moves */
	return malloc_mid(size);
}

/* Fast path: kfree_small_fast() inline; pointers not ours are foreign. */
static __always_inline void __uslab_free(void *p)
{
	kfree_small_fast(p, malloc_free_foreign);
}

/* malloc()'s route, then zeroed (the slab layer never promises zeroes). */
static __always_inline void *__uslab_calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (unlikely(__builtin_mul_overflow(n, size, &total)))
		return malloc_fail();
	if (likely(total < malloc_small_end)) {
		p = kmalloc_small_fast(total, MALLOC_GFP);
		if (likely(p))
			memset(p, 0, total);
		return p;
	}
	/* kmalloc zeroes cached sizes; page_alloc knows which pages are clean */
	return malloc_sized(total, MALLOC_GFP | __GFP_ZERO);
}

/*
 * 0 for NULL and pointers not ours; a freed block or a pointer inside one
 * is reported as free() reports it, and stops the program in hardened
 * builds (ksize_checked()).
 */
static __always_inline size_t __uslab_malloc_usable_size(void *p)
{
	return ksize_checked(p, "malloc_usable_size", _RET_IP_);
}

/*
 * realloc keeps the block when the new size fits and would not waste more
 * than half of it; otherwise it moves (a shrink by more than half moves to
 * a smaller class). realloc(p, 0) frees and returns NULL, as glibc does
 * (the C standard leaves it to the implementation). A pointer uslab does
 * not own: EINVAL, the block left alone. A freed block or a pointer
 * inside a block: free()'s report, and abort in hardened builds.
 */
static __always_inline void *__uslab_realloc(void *p, size_t size)
{
	size_t have;
	void *q;

	if (!p)
		return __uslab_malloc(size);
	if (!size) {
		__uslab_free(p);
		return NULL;
	}
	/*
	 * free()'s checks: a freed block or a pointer inside one stops here
	 * (reported; hardened builds abort), before it is kept, copied from
	 * or freed again. Emergency blocks too (lib/sigsafe.h).
	 */
	have = ksize_checked(p, "realloc", _RET_IP_);
	if (unlikely(!have)) {
		errno = EINVAL;	/* not ours, or refused above */
		return NULL;
	}
	if (unlikely(size > MALLOC_MAX_SIZE))
		return malloc_fail();
	if (size <= have && size >= have / 2)
		return p;
	if (size > have && have > (PAGE_SIZE << MAX_PAGE_ORDER) &&
	    !sigsafe_reentered()) {
		/*
		 * An own mapping grows by moving its pages, as glibc's mremap
		 * of an mmapped chunk: no copy, and the old and the new block
		 * are never both resident (a block grown by steps to 16 MiB
		 * peaked at 63 MiB of RSS where glibc's took 20)
		 */
		q = realloc_pages_large(p, size, MALLOC_GFP);
		if (q)
			return q;
	}
	q = __uslab_malloc(size);
	if (!q)
		return NULL;	/* the old block stays valid */
	memcpy(q, p, size < have ? size : have);
	kfree(p);
	return q;
}

/*
 * The aligned family. Alignments up to MALLOC_ALIGN come from the plain
 * classes (every class of 16 bytes or more is 16-aligned); larger ones from
 * kmalloc_aligned(), which reaches the page allocator's own mappings for
 * alignments above a page (4 MiB and beyond). @align is a power of two.
 * Return: the block, or NULL with errno ENOMEM.
 */
static inline void *__uslab_aligned(size_t align, size_t size)
{
	void *p;

	if (unlikely(size > MALLOC_MAX_SIZE || align > MALLOC_MAX_SIZE / 2 + 1))
		return malloc_fail();
	if (align <= MALLOC_ALIGN)
		return __uslab_malloc(size < align ? align : size);
	p = kmalloc_aligned(size ? size : 1, align, MALLOC_GFP);
	if (unlikely(!p))
		return malloc_fail();
	return p;
}

static inline bool malloc_is_pow2(size_t x)
{
	return x && !(x & (x - 1));
}

/* POSIX: EINVAL for a bad alignment, ENOMEM; errno left as it was. */
static inline int __uslab_posix_memalign(void **out, size_t align, size_t size)
{
	int saved = errno;
	void *p;

	if (!malloc_is_pow2(align) || align % sizeof(void *))
		return EINVAL;
	p = __uslab_aligned(align, size);
	if (!p) {
		errno = saved;	/* the error is the return value */
		return ENOMEM;
	}
	*out = p;
	return 0;
}

/*
 * glibc's memalign rounds an alignment that is not a power of two up to the
 * next one and fails with EINVAL only when that is impossible. glibc 2.36
 * treats aligned_alloc exactly as memalign.
 */
static inline void *__uslab_memalign(size_t align, size_t size)
{
	/* glibc's bound: 2^63 itself rounds to nothing and is only too much
	 * memory (ENOMEM, from __uslab_aligned) */
	if (align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	if (align < sizeof(void *))
		align = sizeof(void *);
	if (!malloc_is_pow2(align))
		align = (size_t)1 << (64 - __builtin_clzl(align));
	return __uslab_aligned(align, size);
}

static inline void *__uslab_valloc(size_t size)
{
	return __uslab_aligned(PAGE_SIZE, size);
}

static inline void *__uslab_pvalloc(size_t size)
{
	size_t rounded;

	if (unlikely(__builtin_add_overflow(size, PAGE_SIZE - 1, &rounded)))
		return malloc_fail();
	rounded &= PAGE_MASK;
	return __uslab_aligned(PAGE_SIZE, rounded ? rounded : PAGE_SIZE);
}

#endif /* USLAB_MALLOC_POLICY_H */
