// SPDX-License-Identifier: MIT
/*
 * Check suite for the kmalloc size classes and their one route
 * (slab/kmalloc.c): the kmalloc_info[] table and kmalloc_index() agree for
 * every size, the rounding waste stays within the documented bound, the
 * kmalloc-N caches carry the table's names and sizes with small per-slab
 * waste, malloc's byte-table route and kmalloc() pick the same cache, and
 * every page of a slab carries PG_slab_page and its cache so that
 * kfree_fast() finds the cache from the object's own struct page, and
 * freeing and handing out a block above 1 KiB never touches its memory.
 */
#include <check.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slab/internal.h"
#include "slab/fastpath.h"
#include "tests/suite.h"

TEST(core, test_table_shape)
{
	unsigned int i, n = 0;

	for_each_kmalloc_class(i) {
		unsigned int sz = kmalloc_info[i].size;
		char want[32];

		if (sz % 1024 == 0)
			snprintf(want, sizeof(want), "kmalloc-%uk", sz / 1024);
		else
			snprintf(want, sizeof(want), "kmalloc-%u", sz);
		ck_assert_str_eq(kmalloc_info[i].name, want);
		if (i)
			ck_assert_uint_gt(sz, kmalloc_info[i - 1].size);
		/* from 16 up every class is a multiple of 16 (malloc's alignment) */
		if (sz >= 16)
			ck_assert_uint_eq(sz % 16, 0);
		n++;
	}
	ck_assert_uint_eq(n, NR_KMALLOC_CLASSES);
	ck_assert_uint_eq(kmalloc_info[0].size, 8);
	ck_assert_uint_eq(kmalloc_info[NR_KMALLOC_CLASSES - 1].size,
			  KMALLOC_MAX_CACHE_SIZE);
	/* four classes per doubling above 128 */
	for_each_kmalloc_class(i) {
		unsigned int sz = kmalloc_info[i].size, c = 0, j;

		if (sz < 256 || (sz & (sz - 1)))
			continue;
		for_each_kmalloc_class(j)
			c += kmalloc_info[j].size > sz / 2 && kmalloc_info[j].size <= sz;
		ck_assert_uint_eq(c, 4);
	}
}
END_TEST

/*
 * kmalloc_index() is the smallest class that fits, for every size; above
 * 128 B the waste is under 12.5% of the power of two above the size and
 * under 20% of the class, from 16 to 128 B under 16 bytes.
 */
TEST(core, test_every_size_smallest_class)
{
	size_t size;

	for (size = 1; size <= KMALLOC_MAX_CACHE_SIZE; size++) {
		unsigned int idx = kmalloc_index(size);
		size_t cls = kmalloc_info[idx].size;
		size_t pow2 = (size_t)1 << (64 - __builtin_clzl(size));

		ck_assert_uint_lt(idx, NR_KMALLOC_CLASSES);
		ck_assert_msg(cls >= size && (!idx || kmalloc_info[idx - 1].size < size),
			      "size %zu -> %s", size, kmalloc_info[idx].name);
		if (size <= KMALLOC_SMALL_MAX)
			ck_assert_uint_eq(kmalloc_index_small(size), idx);
		if (size >= 16 && size <= 128)
			ck_assert_uint_lt(cls - size, 16);
		if (size > 128) {
			ck_assert_msg((cls - size) * 8 < pow2, "size %zu -> %zu", size, cls);
			ck_assert_msg((cls - size) * 5 < cls, "size %zu -> %zu", size, cls);
		}
	}
}
END_TEST

/* The caches are the table's: name, size, and a slab tail of at most 12%. */
TEST(core, test_caches_follow_table)
{
	unsigned int i;

	for_each_kmalloc_class(i) {
		struct kmem_cache *s = kmalloc_slab(kmalloc_info[i].size);
		size_t slab = PAGE_SIZE << s->order;

		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(kmem_cache_name(s), kmalloc_info[i].name);
		ck_assert_uint_eq(s->object_size, kmalloc_info[i].size);
		ck_assert_ptr_eq(kmalloc_slab(kmalloc_info[i].size - (i ? 1 : 0)), s);
		ck_assert_uint_ge(s->objects, 1);
		ck_assert_msg((slab - (size_t)s->objects * s->size) * 100 <=
			      slab * CONFIG_SLAB_MAX_WASTE_PERCENT,
			      "%s: %u objects in order %u", s->name, s->objects, s->order);
	}
}
END_TEST

/*
 * A fresh slab's pages are touched only as far as its objects reach
 * (objects are handed out in address order): the part of the last used
 * page that no object fills is memory the program holds for nothing, at
 * most SLAB_PAGE_TAIL_PERCENT (3) of the objects' bytes for every class
 * (main before: kmalloc-320/640/1280/2560/5120/10240 and the 3 * 2^k
 * classes left a quarter or half of their last page, 6.7%, on every slab;
 * gmalloc seq 256 held 306 MiB against glibc's 267).
 */
/*
 * Not in a debug-on build (the debug preset): a debug cache poisons and
 * red-zones every object of a slab when it makes it (allocate_slab()), so
 * the whole slab is touched at once and no page is spared by the order
 * (its red zones and tracks make strides such as kmalloc-5k's 5168 bytes,
 * for which no order up to SLAB_TAIL_MAX_ORDER ends within 3%).
 */
TEST_IF(!IS_ENABLED(CONFIG_SLAB_DEBUG_ON), core, test_slab_last_page_filled)
{
	unsigned int i;

	for_each_kmalloc_class(i) {
		struct kmem_cache *s = kmalloc_slab(kmalloc_info[i].size);
		size_t used = (size_t)s->objects * s->size;
		size_t tail = ALIGN_UP(used, PAGE_SIZE) - used;

		ck_assert_msg(tail * 100 <= used * SLAB_PAGE_TAIL_PERCENT,
			      "%s: %u objects of %u in order %u leave %zu bytes "
			      "of their last page", s->name, s->objects, s->size,
			      s->order, tail);
		ck_assert_uint_le(used, PAGE_SIZE << s->order);
		ck_assert_uint_le(s->order, MAX_PAGE_ORDER);
	}
}
END_TEST

TEST(core, test_every_size_same_class)
{
	size_t size;

	for (size = 1; size <= KMALLOC_MAX_CACHE_SIZE; size += size < 4096 ? 1 : 61) {
		struct kmem_cache *s = kmalloc_slab(size);
		void *p = __kmalloc_index(kmalloc_index(size), GFP_KERNEL);
		struct page *page;

		ck_assert_ptr_nonnull(s);
		ck_assert_ptr_nonnull(p);
		page = virt_to_page(p);
		ck_assert_msg(compound_head(page)->slab_cache == s,
			      "size %zu: cache %s, kmalloc uses %s", size,
			      compound_head(page)->slab_cache->name, s->name);
		ck_assert_uint_ge(ksize(p), size);
		memset(p, 0xa5, size);
		kfree_fast(p);
	}
}
END_TEST

/* @p and @q, two blocks of @size bytes, both come from @s and hold it. */
static void assert_both_from(struct kmem_cache *s, void *p, void *q, size_t size)
{
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(q);
	ck_assert_msg(compound_head(virt_to_page(p))->slab_cache == s &&
		      compound_head(virt_to_page(q))->slab_cache == s,
		      "size %zu: not from %s", size, s->name);
	ck_assert_uint_ge(ksize(p), size);
}

/*
 * malloc's inline route (kmalloc_small_fast(): kmalloc_small_pcp[size],
 * one entry per byte size) gives every size up to KMALLOC_SMALL_MAX an
 * object of kmalloc's own class for that size, and once the class is
 * made, its entry is that class's magazines (never a neighbour's). Size
 * 0 (malloc(0)) is served as 1.
 */
TEST(core, test_small_table_every_size)
{
	size_t size;

	ck_assert(kmalloc_small_ready());
	for (size = 0; size <= KMALLOC_SMALL_MAX; size++) {
		struct kmem_cache *s = kmalloc_slab(size ? size : 1);
		void *p = kmalloc_small_fast(size, GFP_KERNEL);
		void *q = kmalloc_small_fast(size, GFP_KERNEL);

		ck_assert_ptr_nonnull(s);
		assert_both_from(s, p, q, size);
		if (IS_ENABLED(CONFIG_PERCPU_CACHE) && !slab_debug(s))
			ck_assert_msg(kmalloc_small_pcp[size] == s->pcp,
				      "size %zu: entry is not %s's magazines",
				      size, s->name);
		memset(p, 0x5a, size);
		memset(q, 0x5a, size);
		kfree_fast(q);
		kfree_fast(p);
	}
}
END_TEST

/*
 * malloc's second inline route (kmalloc_mid_fast(): kmalloc_mid_pcp[],
 * one entry per 256 bytes of size) gives every size above
 * KMALLOC_SMALL_MAX up to KMALLOC_MAX_CACHE_SIZE an object of kmalloc's
 * own class for that size, and once the class is made, the entry of
 * every one of its sizes is its magazines when its free mark is in the
 * shadow (the route checks it there), the bypass cache otherwise.
 */
TEST(core, test_mid_table_every_size)
{
	size_t size;
	unsigned int served = 0;

	ck_assert(kmalloc_small_ready());
	for (size = KMALLOC_SMALL_MAX + 1; size <= KMALLOC_MAX_CACHE_SIZE; size++) {
		struct kmem_cache *s = kmalloc_slab(size);
		struct pcp_cache *want;
		void *p, *q, *last;

		ck_assert_ptr_nonnull(s);
		/* make the class and fill this CPU's magazine */
		p = kmalloc(size, GFP_KERNEL);
		ck_assert_ptr_nonnull(p);
		kfree_fast(p);
		last = p;
		want = s->pcp;
		if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) &&
		    s->mark_mul != 1ULL << (64 - PAGE_ALLOC_SHADOW_SHIFT))
			want = PCP_BYPASS;
		if (!IS_ENABLED(CONFIG_PERCPU_CACHE) || slab_debug(s))
			want = PCP_BYPASS;
		ck_assert_msg(kmalloc_mid_pcp[(size + 255) >> KMALLOC_MID_SHIFT] == want,
			      "size %zu: entry is not %s's magazines", size, s->name);
		/* a hit when this CPU's magazine holds the block just freed */
		p = kmalloc_mid_fast(size, GFP_KERNEL);
		if (p && want != PCP_BYPASS && p == last)
			served++;
		q = kmalloc(size, GFP_KERNEL);
		assert_both_from(s, p, q, size);
		memset(p, 0x5a, 16);
		kfree_fast(q);
		kfree_fast(p);
		/* only the sizes where a class starts and ends: fast enough */
		if (size % 256 == 1 && size > 4096)
			size += 254;
	}
	if (IS_ENABLED(CONFIG_PERCPU_CACHE) && !strcmp(pcp_mode(), "rseq") &&
	    page_alloc_shadow && !IS_ENABLED(CONFIG_SLAB_DEBUG_ON))
		ck_assert_uint_gt(served, 0);
}
END_TEST

/*
 * malloc_usable_size()'s and realloc's size (ksize_checked()) of a live
 * kmalloc object comes from free()'s tables with no struct page read
 * (kmalloc_usable_fast()): the same size as ksize() for every class, and
 * no answer (0: the whole check runs and reports) for a free object, an
 * interior pointer, NULL and a pointer not the heap's.
 */
TEST(core, test_usable_size_from_the_tables)
{
	const bool fast = IS_ENABLED(CONFIG_PERCPU_CACHE) &&
			  IS_ENABLED(CONFIG_SLAB_FREE_HARDENED);
	unsigned int answered = 0;
	int local;

	for (unsigned int i = 0; i < NR_KMALLOC_CLASSES; i++) {
		size_t size = kmalloc_info[i].size;
		unsigned char *p = kmalloc(size, GFP_KERNEL), *q;
		struct kmem_cache *s = kmalloc_slab(size);
		size_t n = kmalloc_usable_fast(p);

		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(ksize_checked(p, "test", 0), ksize(p));
		if (fast && !slab_debug(s)) {
			ck_assert_msg(n == ksize(p), "%s: %zu, ksize %zu",
				      s->name, n, ksize(p));
			answered++;
		}
		/* inside the object (kmalloc-8's next object starts at p + 8) */
		ck_assert_uint_eq(kmalloc_usable_fast(p + (size > 8 ? 8 : 4)), 0);
		q = kmalloc(size, GFP_KERNEL);	/* keeps the slab */
		kfree(p);
		ck_assert_uint_eq(kmalloc_usable_fast(p), 0);	/* free */
		kfree(q);
	}
	ck_assert_uint_eq(kmalloc_usable_fast(NULL), 0);
	ck_assert_uint_eq(kmalloc_usable_fast(&local), 0);
	if (fast && !IS_ENABLED(CONFIG_SLAB_DEBUG_ON))
		ck_assert_uint_eq(answered, NR_KMALLOC_CLASSES);
}
END_TEST

/* kzalloc and kcalloc zero what the route hands out, recycled or fresh. */
TEST(core, test_zeroed_on_the_route)
{
	static const size_t sizes[] = { 24, 64, 1000, 1500, 20000, 200000 };

	for (unsigned int k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (int round = 0; round < 3; round++) {
			unsigned char *p = kmalloc(sizes[k], GFP_KERNEL);

			ck_assert_ptr_nonnull(p);
			memset(p, 0xee, sizes[k]);
			kfree(p);
			p = kzalloc(sizes[k], GFP_KERNEL);
			ck_assert_ptr_nonnull(p);
			for (size_t j = 0; j < sizes[k]; j++)
				ck_assert_msg(!p[j], "kzalloc(%zu)[%zu] = %#x", sizes[k], j, p[j]);
			kfree(p);
		}
	}
}
END_TEST

/* Objects on every page of multi-page slabs: the page itself names the cache. */
TEST(core, test_tail_pages_name_the_cache)
{
	enum { N = 64 };
	static const size_t sizes[] = { 64, 1024, 3000, 4096, KMALLOC_MAX_CACHE_SIZE };
	void *v[N];
	unsigned int i, k, tails = 0;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct kmem_cache *s = kmalloc_slab(sizes[k]);

		for (i = 0; i < N; i++) {
			struct page *page;

			v[i] = kmalloc(sizes[k], GFP_KERNEL);
			ck_assert_ptr_nonnull(v[i]);
			page = virt_to_page((char *)v[i] + sizes[k] - 1);
			ck_assert(PageFlag(page, PG_slab_page));
			ck_assert_ptr_eq(page->slab_cache, s);
			tails += PageFlag(page, PG_tail);
		}
		for (i = 0; i < N; i++)
			kfree_fast(v[i]);
		/* Empty slabs go back to page_alloc without the marks. */
		ck_assert_int_eq(kmem_cache_shrink(s), 0);
	}
	ck_assert_uint_gt(tails, 0);
}
END_TEST

/* A slab given back and reused as a plain block: kfree_fast takes kfree's way. */
TEST(core, test_non_slab_blocks)
{
	struct kmem_cache *s = kmalloc_slab(KMALLOC_MAX_CACHE_SIZE);
	struct page_alloc_stats st0, st1;
	void *obj, *big;
	struct page *slab;
	unsigned long i, n;

	obj = kmalloc(KMALLOC_MAX_CACHE_SIZE, GFP_KERNEL);
	ck_assert_ptr_nonnull(obj);
	slab = compound_head(virt_to_page(obj));
	n = 1UL << slab->slab_order;
	kfree_fast(obj);
	ck_assert_int_eq(kmem_cache_shrink(s), 0);
	kmem_cache_shrink_all();
	/* Whatever the pages are now, none claims a slab it is not in. */
	for (i = 0; i < n; i++)
		ck_assert(!PageFlag(&slab[i], PG_slab_page) ||
			  PageFlag(compound_head(&slab[i]), PG_slab));

	page_alloc_get_stats(&st0);
	big = kmalloc(3 * KMALLOC_MAX_CACHE_SIZE, GFP_KERNEL);
	ck_assert_ptr_nonnull(big);
	ck_assert(!PageFlag(virt_to_page(big), PG_slab_page));
	memset(big, 1, 3 * KMALLOC_MAX_CACHE_SIZE);
	kfree_fast(big);
	page_alloc_get_stats(&st1);
	ck_assert_uint_eq(st1.bytes_allocated, st0.bytes_allocated);
}
END_TEST

static bool page_resident(const void *p)
{
	unsigned char vec = 0;

	ck_assert_int_eq(mincore((void *)((uintptr_t)p & PAGE_MASK), 1, &vec), 0);
	return vec & 1;
}

/*
 * The hardened free's mark of a class above KMALLOC_SMALL_MAX lies outside
 * the block (page_alloc's shadow): frees, allocations and the checks of
 * malloc_usable_size never touch a block the program does not write, so
 * its pages stay out of memory (glibc's bench-malloc-thread writes none
 * of its blocks; with the mark in word 0 each block's first page became
 * resident at its first free).
 */
TEST_IF(IS_ENABLED(CONFIG_PERCPU_CACHE) && !IS_ENABLED(CONFIG_SLAB_DEBUG_ON),
	core, test_free_leaves_large_objects_untouched)
{
	enum { N = 4 };
	static const size_t sizes[] = { 4096, 8192, 20480, 32768 };
	cpu_set_t old;
	void *v[N];
	unsigned int i, k, n, round;

	/*
	 * Without a heap shadow (its place taken: a sanitizer's own shadow,
	 * valgrind) every class keeps its mark in the block
	 * (slab_mark_layout), so a free writes it: check that layout here
	 * and say so, the residency below holds only with the shadow.
	 */
	if (page_alloc_init() || !page_alloc_shadow) {
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			ck_assert_uint_eq(kmalloc_slab(sizes[k])->mark_mul, 1);
		printf("test_free_leaves_large_objects_untouched: no heap shadow in "
		       "this process: the marks are in the blocks (checked), "
		       "residency not checked\n");
		return;
	}
	test_pin(&old);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct kmem_cache *s = kmalloc_slab(sizes[k]);
		unsigned int limit = 0, batch = 0;

		ck_assert_ptr_nonnull(s);
		/*
		 * empty magazines: the frees below fit in them, none flushes
		 * (a flush links the block on its slab's freelist, in the
		 * block). A CPU holds a loaded and a spare magazine: with
		 * the nocache preset's magazines of at most 16 KiB, one
		 * object of kmalloc-20480 and -32768 each, so two blocks.
		 */
		kmem_cache_shrink(s);
		pcp_cache_get_tunables(s->pcp, &limit, &batch);
		n = min_t(unsigned int, N, 2 * limit);
		ck_assert_uint_ge(n, 2);
		for (i = 0; i < n; i++) {
			v[i] = kmalloc(sizes[k], GFP_KERNEL);
			ck_assert_ptr_nonnull(v[i]);
			ck_assert_uint_eq((uintptr_t)v[i] % PAGE_SIZE, 0);
			ck_assert_int_eq(madvise(v[i], sizes[k], MADV_DONTNEED), 0);
			ck_assert(!page_resident(v[i]));
		}
		for (round = 0; round < 3; round++) {
			for (i = 0; i < n; i++)
				kfree_fast(v[i]);
			for (i = 0; i < n; i++)
				ck_assert_msg(!page_resident(v[i]),
					      "kmalloc-%zu: a free touched block %u",
					      sizes[k], i);
			for (i = 0; i < n; i++) {
				v[i] = kmalloc(sizes[k], GFP_KERNEL);
				ck_assert_ptr_nonnull(v[i]);
				ck_assert_uint_eq(ksize_checked(v[i], "test", 0),
						  s->object_size);
			}
			for (i = 0; i < n; i++)
				ck_assert_msg(!page_resident(v[i]),
					      "kmalloc-%zu: an allocation touched block %u",
					      sizes[k], i);
		}
		/* the probe sees a write */
		memset(v[0], 1, 64);
		ck_assert(page_resident(v[0]));
		for (i = 0; i < n; i++)
			kfree_fast(v[i]);
	}
	test_unpin(&old);
}
END_TEST

TEST_SUITE_MAIN("kmalloc_classes", "core", 60)
