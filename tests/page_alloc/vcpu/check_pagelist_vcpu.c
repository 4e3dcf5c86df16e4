// SPDX-License-Identifier: MIT
/*
 * page_alloc in the simulator's library (USLAB_VCPU=1, linked with
 * libuslab-core-vcpu.a): its per-CPU page lists are per virtual CPU (the
 * CPU lib/cpuclock.h says runs), and its decay is its own periodic work on
 * the virtual clock, with no other layer involved (no cache, no percpu
 * reaper). Each test runs in its own process (Check's fork).
 */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include "lib/cpuclock.h"
#include "page_alloc/internal.h"
#include "tests/suite.h"

#define MS	1000000ull

static struct page *alloc_touched(unsigned int order)
{
	struct page *page = alloc_pages(GFP_KERNEL, order);

	ck_assert_ptr_nonnull(page);
	memset(page_address(page), 0x5a, PAGE_SIZE << order);
	return page;
}

TEST(core, test_pagelists_are_per_virtual_cpu)
{
	struct page *p1, *p2;

	ck_assert_int_eq(uslab_vcpu_set(1), 0);
	p1 = alloc_touched(0);
	/* the refill's batch went to CPU 1's list, not CPU 0's */
	ck_assert_uint_gt(pa_pagelists[1].count, 0);
	ck_assert_uint_eq(pa_pagelists[0].count, 0);
	ck_assert_int_eq(uslab_vcpu_set(2), 0);
	p2 = alloc_touched(1);
	ck_assert_uint_gt(pa_pagelists[2].count, 0);
	ck_assert_uint_eq(pa_pagelists[1].allocs[0], 1);
	ck_assert_uint_eq(pa_pagelists[2].allocs[1], 1);
	/* a block freed on CPU 3 goes to CPU 3's list, whoever took it */
	ck_assert_int_eq(uslab_vcpu_set(3), 0);
	__free_pages(p1, 0);
	__free_pages(p2, 1);
	ck_assert_uint_eq(pa_pagelists[3].count, 3);
	ck_assert_uint_eq(pa_pagelists[3].frees[0], 1);
	ck_assert_uint_eq(pa_pagelists[3].frees[1], 1);
	ck_assert_uint_eq(pa_pagelists[0].count, 0);
}
END_TEST

/*
 * A free beyond the watermark wants page_alloc's decay; the next safe
 * point starts it on the virtual clock, whose ticks then drain a page list
 * that saw no traffic for a tick (two ticks: the first notes the traffic).
 */
TEST(core, test_decay_drains_idle_pagelists_on_virtual_time)
{
	const uint64_t tick = (uint64_t)CONFIG_PAGE_ALLOC_DECAY_MS * MS / 4;
	struct page *big, *p;

	ck_assert_int_eq(uslab_vcpu_set(1), 0);
	p = alloc_touched(0);
	__free_pages(p, 0);
	ck_assert_uint_gt(pa_pagelists[1].count, 0);

	page_alloc_set_resident_free(PAGE_SIZE);
	big = alloc_touched(PAGELIST_MAX_ORDER + 2);	/* past the lists */
	__free_pages(big, PAGELIST_MAX_ORDER + 2);
	ck_assert_int_eq(page_alloc_decayd_state, PAGE_ALLOC_DECAYD_WANTED);
	page_alloc_decayd_poll();
	ck_assert(page_alloc_decayd_running());

	ck_assert_int_eq(uslab_vclock_set(tick - 1), 0);
	ck_assert_uint_gt(pa_pagelists[1].count, 0);	/* no tick yet */
	ck_assert_int_eq(uslab_vclock_set(2 * tick), 0);
	ck_assert_uint_eq(pa_pagelists[1].count, 0);
	ck_assert_uint_ge(pa_pagelists[1].drains, 1);
}
END_TEST

/* Without the decay work (reaper_ms=0, sim --no-reaper) nothing drains. */
TEST(core, test_no_decay_when_disabled)
{
	struct page *big, *p;

	page_alloc_decayd_disable();
	ck_assert_int_eq(uslab_vcpu_set(1), 0);
	p = alloc_touched(0);
	__free_pages(p, 0);
	page_alloc_set_resident_free(PAGE_SIZE);
	big = alloc_touched(PAGELIST_MAX_ORDER + 2);
	__free_pages(big, PAGELIST_MAX_ORDER + 2);
	page_alloc_decayd_poll();
	ck_assert(!page_alloc_decayd_running());
	ck_assert_int_eq(uslab_vclock_set(10000 * MS), 0);
	ck_assert_uint_gt(pa_pagelists[1].count, 0);
}
END_TEST

/*
 * Two CPUs taking fresh blocks in turn (a heap that two threads fill) get
 * them from different 2 MiB regions, whose page faults take different
 * page-table locks: list refills (order 3, a slab) and the zone's orders
 * above the lists (order 5) alike. Before, the two lists took alternate
 * batches of one region (docs/page_alloc.md).
 */
#define REGION_SHIFT	(PAGE_SHIFT + PAGELIST_REGION_ORDER)

static uintptr_t region_of(struct page *page)
{
	return (uintptr_t)page_address(page) >> REGION_SHIFT;
}

TEST(core, test_fresh_blocks_of_two_cpus_in_regions_apart)
{
	enum { N = 48 };
	static struct page *blk[2][N];
	unsigned int i, j, c, d;

	for (i = 0; i < N; i++) {
		for (c = 0; c < 2; c++) {
			unsigned int order = i % 4 == 3 ? 5 : 3;

			ck_assert_int_eq(uslab_vcpu_set((int)c), 0);
			blk[c][i] = alloc_touched(order);
		}
	}
	for (c = 0; c < 2; c++)
		for (d = 0; d < 2; d++)
			if (c != d)
				for (i = 0; i < N; i++)
					for (j = 0; j < N; j++)
						ck_assert_msg(region_of(blk[c][i]) != region_of(blk[d][j]),
							      "CPU %u's block %u and CPU %u's block %u share a 2 MiB region",
							      c, i, d, j);
}
END_TEST

/* A drain (trim, ENOMEM) gives a list's region back to the buddy whole. */
TEST(core, test_drain_gives_the_region_back)
{
	struct page_alloc_stats st;
	struct page *p;

	ck_assert_int_eq(uslab_vcpu_set(1), 0);
	p = alloc_touched(3);
	ck_assert_uint_ne(pa_pagelists[1].region_end, 0);
	__free_pages(p, 3);
	page_alloc_get_stats(&st);
	ck_assert_uint_gt(st.bytes_pagelists, 0);
	ck_assert_uint_gt(drain_all_pages(false), 0);
	ck_assert_uint_eq(pa_pagelists[1].region_end, 0);
	page_alloc_get_stats(&st);
	ck_assert_uint_eq(st.bytes_pagelists, 0);
	ck_assert_uint_eq(st.bytes_allocated, 0);
}
END_TEST

static const struct test_case cases[] = {
	{ .name = "core", .timeout = 30 },
};

int main(void)
{
	return test_run_suite(test_suite("pagelist_vcpu", cases, ARRAY_SIZE(cases)));
}
