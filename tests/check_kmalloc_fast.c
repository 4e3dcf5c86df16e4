// SPDX-License-Identifier: MIT
/*
 * Check suite for slab/kmalloc_fast.c, the malloc layer's fast paths:
 * kmalloc_fast() picks the same class as kmalloc() for every size, and
 * every page of a slab carries PG_slab_page and its cache, so that
 * kfree_fast() finds the cache from the object's own struct page.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "slab/internal.h"
#include "tests/suite.h"

START_TEST(test_every_size_same_class)
{
	size_t size;

	for (size = 1; size <= KMALLOC_MAX_CACHE_SIZE; size++) {
		struct kmem_cache *s = kmalloc_slab(size);
		void *p = kmalloc_fast(size, GFP_KERNEL);
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

/* Objects on every page of multi-page slabs: the page itself names the cache. */
START_TEST(test_tail_pages_name_the_cache)
{
	enum { N = 64 };
	static const size_t sizes[] = { 64, 1024, 3000, 4096, KMALLOC_MAX_CACHE_SIZE };
	void *v[N];
	unsigned int i, k, tails = 0;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct kmem_cache *s = kmalloc_slab(sizes[k]);

		for (i = 0; i < N; i++) {
			struct page *page;

			v[i] = kmalloc_fast(sizes[k], GFP_KERNEL);
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
START_TEST(test_non_slab_blocks)
{
	struct kmem_cache *s = kmalloc_slab(KMALLOC_MAX_CACHE_SIZE);
	struct page_alloc_stats st0, st1;
	void *obj, *big;
	struct page *slab;
	unsigned long i, n;

	obj = kmalloc_fast(KMALLOC_MAX_CACHE_SIZE, GFP_KERNEL);
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

static Suite *kmalloc_fast_suite(void)
{
	Suite *su = suite_create("kmalloc_fast");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_every_size_same_class);
	tcase_add_test(tc, test_tail_pages_name_the_cache);
	tcase_add_test(tc, test_non_slab_blocks);
	suite_add_tcase(su, tc);
	return su;
}

int main(void)
{
	return test_run_suite(kmalloc_fast_suite());
}
