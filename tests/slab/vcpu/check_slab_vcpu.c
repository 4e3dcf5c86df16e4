// SPDX-License-Identifier: MIT
/*
 * The slab layer in the simulator's library (USLAB_VCPU=1, linked with
 * libuslab-core-vcpu.a): refills on named virtual CPUs, so that what
 * depends on the CPU a refill runs on is checked whatever CPUs the
 * machine running the test has. Each test runs in its own process
 * (Check's fork).
 */
#include <check.h>
#include <stdint.h>
#include "lib/cpuclock.h"
#include "uslab/page_alloc.h"
#include "uslab/slab.h"
#include "slab/internal.h"
#include "tests/suite.h"

static struct page *slab_of(const void *obj)
{
	return compound_head(virt_to_page(obj));
}

/*
 * Two CPUs refilling one cache by turns take their fresh objects from
 * slabs of their own (docs/slab.md "Fresh objects: one slab per CPU"):
 * no slab hands fresh objects to both, so the two CPUs' first touches
 * (the marks' page faults, the program's writes) never meet on a page.
 * Freed objects stay open to every CPU.
 */
TEST(core, test_fresh_objects_one_slab_per_cpu)
{
	struct kmem_cache *s = kmem_cache_create("fresh-per-cpu", 256, 0, 0, NULL);
	static void *objs[2][64];
	int n, k, r, c;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(uslab_vcpu_set_nr(2), 0);
	n = (int)s->objects / 8;
	ck_assert_int_ge(n, 2);
	/* four refills each, by turns: before, each took the next run of
	 * the one partial slab */
	for (r = 0; r < 4; r++)
		for (c = 0; c < 2; c++) {
			ck_assert_int_eq(uslab_vcpu_set(c), 0);
			ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL,
							 objs[c] + r * n, n, 0), n);
		}
	for (c = 0; c < 2; c++)
		for (k = 1; k < 4 * n; k++)
			ck_assert_ptr_eq(slab_of(objs[c][k]), slab_of(objs[c][0]));
	ck_assert_ptr_ne(slab_of(objs[0][0]), slab_of(objs[1][0]));
	ck_assert_ptr_eq(s->fresh_slab[0], slab_of(objs[0][0]));
	ck_assert_ptr_eq(s->fresh_slab[1], slab_of(objs[1][0]));
	ck_assert_uint_eq(s->fresh_held, 2 * (s->objects - 4 * (unsigned int)n));

	/* CPU 1 frees its objects; CPU 0 takes them back before anything
	 * fresh of its own */
	ck_assert_int_eq(uslab_vcpu_set(1), 0);
	slab_free_bulk(s, objs[1], n, 0);
	ck_assert_int_eq(uslab_vcpu_set(0), 0);
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, objs[0] + 4 * n, n, 0), n);
	for (k = 4 * n; k < 5 * n; k++)
		ck_assert_ptr_eq(slab_of(objs[0][k]), slab_of(objs[1][0]));
	ck_assert_uint_eq(s->fresh_held, 2 * (s->objects - 4 * (unsigned int)n));

	slab_free_bulk(s, objs[0], 5 * n, 0);
	slab_free_bulk(s, objs[1] + n, 3 * n, 0);
	ck_assert_uint_eq(s->nr_inuse, 0);
	kmem_cache_destroy(s);
}
END_TEST

/*
 * A CPU's fresh slab used up is no slot's any more, and a slab given
 * back takes its slot along: the slot never points at a slab the cache
 * no longer has.
 */
TEST(core, test_fresh_slot_released_with_its_slab)
{
	struct kmem_cache *s = kmem_cache_create("fresh-slot-release", 512, 0, 0, NULL);
	static void *objs[256];
	struct page *slab;
	int n;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(uslab_vcpu_set_nr(2), 0);
	ck_assert_int_eq(uslab_vcpu_set(1), 0);
	n = (int)s->objects;
	ck_assert_int_le(n + 1, (int)ARRAY_SIZE(objs));
	/* a whole slab: used up, no slot's */
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, objs, n, 0), n);
	slab = slab_of(objs[0]);
	ck_assert_int_eq(slab->frozen, 0);
	ck_assert_ptr_null(s->fresh_slab[1]);
	ck_assert_uint_eq(s->fresh_held, 0);
	/* one of the next: CPU 1's */
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, objs + n, 1, 0), 1);
	slab = slab_of(objs[n]);
	ck_assert_ptr_eq(s->fresh_slab[1], slab);
	ck_assert_int_eq(slab->frozen, 2);
	ck_assert_uint_eq(s->fresh_held, s->objects - 1);
	/* all back and shrunk: the slab is gone, and so is the slot */
	slab_free_bulk(s, objs, n + 1, 0);
	ck_assert_int_eq(kmem_cache_shrink(s), 0);
	ck_assert_ptr_null(s->fresh_slab[1]);
	ck_assert_uint_eq(s->fresh_held, 0);
	kmem_cache_destroy(s);
}
END_TEST

/*
 * The order a refill's fresh objects leave the magazine in (docs/slab.md
 * "Fresh objects: the order they leave in"): a slab's first run its upper
 * half first, then its lower half from the slab's first object, each
 * ascending; the next run ascending from where the first ended. Before,
 * every run left highest first, so a heap filled and then written was
 * written down through each run.
 */
TEST(core, test_fresh_runs_leave_ascending)
{
	struct kmem_cache *s = kmem_cache_create("fresh-order", 256, 0, 0, NULL);
	static void *p[64];
	char *base;
	size_t h, j, m, k, n = 64;

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_ge(s->objects, n);
	ck_assert_int_eq(uslab_vcpu_set_nr(1), 0);
	ck_assert_int_eq(uslab_vcpu_set(0), 0);
	for (k = 0; k < n; k++) {
		p[k] = kmem_cache_alloc(s, GFP_KERNEL);
		ck_assert_ptr_nonnull(p[k]);
	}
	/* the first run: objects h..m-1, then 0..h-1 */
	base = slab_base(slab_of(p[0]));
	ck_assert_uint_eq(((char *)p[0] - base) % s->size, 0);
	h = (size_t)((char *)p[0] - base) / s->size;
	ck_assert_uint_ge(h, 1);
	for (j = 1; j < n && p[j] != base; j++)
		ck_assert_ptr_eq(p[j], (char *)p[j - 1] + s->size);
	ck_assert_uint_lt(j, n);		/* object 0 came */
	m = j + h;
	ck_assert_uint_eq(h, m / 2);		/* the upper half: the larger */
	ck_assert_uint_le(m + 2, n);
	for (k = j + 1; k < m; k++)
		ck_assert_ptr_eq(p[k], (char *)p[k - 1] + s->size);
	/* the second run: ascending from where the first ended */
	ck_assert_ptr_eq(p[m], base + m * s->size);
	ck_assert_ptr_eq(p[m + 1], base + (m + 1) * s->size);
	for (k = 0; k < n; k++)
		kmem_cache_free(s, p[k]);
	kmem_cache_destroy(s);
}
END_TEST

TEST_SUITE_MAIN("slab_vcpu", "core", 30)
