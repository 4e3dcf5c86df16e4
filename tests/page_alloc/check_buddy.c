// SPDX-License-Identifier: MIT
/*
 * Check suite for page_alloc/: a seeded randomized model test, exhaustion at
 * a cap, memory given back to the OS, own mappings, threads, buddyinfo, and
 * (with CONFIG_PAGE_ALLOC_DEBUG) the exact reports of bad frees.
 *
 * White-box: walks pa_zone from page_alloc/internal.h to check the free
 * lists against the allocator's own counts and the test's reference model.
 *
 * BUDDY_SEED=<n> reproduces a run of the randomized tests; the seed in use
 * is printed on stderr.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/log.h"
#include "tests/testutil.h"
#include "page_alloc/internal.h"
#include "tests/suite.h"

/* ------------------------------------------------------------------ */
/* helpers */

static unsigned long test_seed(void)
{
	return test_seed_from_env("BUDDY_SEED", "check_buddy");
}

struct span {
	unsigned long pfn, npages;
	int free;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->pfn < y->pfn ? -1 : x->pfn > y->pfn;
}

/* The zone lock as page_alloc takes it (a sigsafe section). */
static void t_lock(void)
{
	pa_lock_irqsave();
}

static void t_unlock(void)
{
	pa_unlock_irqrestore();
}

/*
 * Blocks on the per-CPU page lists: handed out by the zone, free to
 * callers. Checked like free blocks (aligned, inside the sections, not
 * PG_buddy, counts agree) and added to @spans as free.
 */
static unsigned long verify_pagelists(struct span *spans, size_t *n, size_t max)
{
	unsigned long pages = 0;
	unsigned int i, o;

	for (i = 0; i < PA_NR_PAGELISTS; i++) {
		unsigned long cpu_pages = 0;

		for (o = 0; o < PAGELIST_NR_ORDERS; o++) {
			struct page *p;

			if (!pa_pagelists[i].lists[o].next) {	/* never used: made at first use */
				ck_assert_uint_eq(pa_pagelists[i].count, 0);
				continue;
			}
			list_for_each_entry(p, &pa_pagelists[i].lists[o], buddy_list) {
				unsigned long pfn = page_to_pfn(p);

				ck_assert_msg(!PageFlag(p, PG_buddy) && !PageFlag(p, PG_head),
					      "page list block with flags %#lx at pfn %lu", p->flags, pfn);
				ck_assert_uint_eq(p->order, o);
				ck_assert_msg((pfn & ((1UL << o) - 1)) == 0, "page list pfn %lu not aligned", pfn);
				ck_assert_msg(pa_page_in_buddy(p) && pa_page_in_buddy(p + (1UL << o) - 1),
					      "page list block outside the sections");
				ck_assert_uint_le(p->buddy_resident, 1U << o);
				if (spans) {
					ck_assert(*n < max);
					spans[(*n)++] = (struct span){ pfn, 1UL << o, 1 };
				}
				cpu_pages += 1UL << o;
			}
		}
		ck_assert_uint_eq(cpu_pages, pa_pagelists[i].count);
		ck_assert_uint_le(cpu_pages, CONFIG_PAGE_ALLOC_PCP_HIGH);
		pages += cpu_pages;
		/* the rest of the list's fresh region: free, on no list */
		if (pa_pagelists[i].region_end) {
			unsigned long at = pa_pagelists[i].region, end = pa_pagelists[i].region_end;

			ck_assert_uint_lt(at, end);	/* used up: none */
			ck_assert_uint_le(end - at, 1UL << PAGELIST_REGION_ORDER);
			ck_assert_msg(pa_page_in_buddy(page_alloc_map + at) &&
				      pa_page_in_buddy(page_alloc_map + end - 1),
				      "page list region outside the sections");
			if (spans) {
				ck_assert(*n < max);
				spans[(*n)++] = (struct span){ at, end - at, 1 };
			}
			pages += end - at;
		}
	}
	return pages;
}

/*
 * Check the zone's free lists: every free block is a PG_buddy head of its
 * list's order, naturally aligned, inside the buddy sections, with no free
 * buddy of the same order left unmerged, and the counts agree. When @live
 * is given, free blocks and live blocks must tile the sections exactly: no
 * overlap, free + allocated = total pages.
 * Return: number of free blocks seen.
 */
static unsigned long verify_zone(const struct span *live, size_t nlive)
{
	static struct span spans[1 << 16];
	size_t n = 0, i;
	unsigned long total_pages, free_pages = 0, live_pages = 0, nblocks = 0;
	unsigned long list_pages;
	size_t resident = 0;
	unsigned int o;

	t_lock();
	total_pages = pa_zone.nr_sections * SECTION_PAGES;
	for (o = 0; o < NR_PAGE_ORDERS; o++) {
		struct page *p;
		unsigned long cnt = 0;
		int seen_clean = 0;

		list_for_each_entry(p, &pa_zone.free_area[o], buddy_list) {
			unsigned long pfn = page_to_pfn(p);

			ck_assert_msg(PageFlag(p, PG_buddy), "free block without PG_buddy at pfn %lu", pfn);
			ck_assert_uint_eq(p->order, o);
			ck_assert_msg((pfn & ((1UL << o) - 1)) == 0, "pfn %lu not aligned to order %u", pfn, o);
			ck_assert_msg(pa_page_in_buddy(p) && pa_page_in_buddy(p + (1UL << o) - 1),
				      "free block outside the sections");
			ck_assert_uint_le(p->buddy_resident, 1U << o);
			/* resident blocks first, known-zero ones after */
			if (!p->buddy_resident)
				seen_clean = 1;
			else
				ck_assert_msg(!seen_clean, "resident block after a clean one (order %u)", o);
			ck_assert_int_eq(!!PageFlag(p, PG_resident), !!p->buddy_resident);
			if (o < MAX_PAGE_ORDER) {
				struct page *b = page_alloc_map + (pfn ^ (1UL << o));

				ck_assert_msg(!(PageFlag(b, PG_buddy) && b->order == o),
					      "free buddies left unmerged: pfn %lu and %lu, order %u",
					      pfn, page_to_pfn(b), o);
			}
			if (live) {
				ck_assert(n < ARRAY_SIZE(spans));
				spans[n++] = (struct span){ pfn, 1UL << o, 1 };
			}
			free_pages += 1UL << o;
			resident += (size_t)p->buddy_resident << PAGE_SHIFT;
			cnt++;
		}
		ck_assert_uint_eq(cnt, pa_zone.nr_free[o]);
		nblocks += cnt;
	}
	ck_assert_uint_eq((size_t)free_pages << PAGE_SHIFT, pa_zone.bytes_free);
	ck_assert_uint_eq(resident, pa_zone.bytes_free_resident);
	list_pages = verify_pagelists(live ? spans : NULL, &n, ARRAY_SIZE(spans));
	if (live) {
		for (i = 0; i < nlive; i++) {
			ck_assert(n < ARRAY_SIZE(spans));
			spans[n++] = live[i];
			live_pages += live[i].npages;
		}
		qsort(spans, n, sizeof(spans[0]), span_cmp);
		for (i = 1; i < n; i++)
			ck_assert_msg(spans[i - 1].pfn + spans[i - 1].npages <= spans[i].pfn,
				      "overlap: %s block at pfn %lu (+%lu) and %s block at pfn %lu",
				      spans[i - 1].free ? "free" : "live", spans[i - 1].pfn,
				      spans[i - 1].npages, spans[i].free ? "free" : "live",
				      spans[i].pfn);
		ck_assert_msg(free_pages + list_pages + live_pages == total_pages,
			      "pages not conserved: free %lu + page lists %lu + live %lu != total %lu",
			      free_pages, list_pages, live_pages, total_pages);
		ck_assert_uint_eq((size_t)(live_pages + list_pages) << PAGE_SHIFT,
				  pa_zone.bytes_allocated - pa_zone.bytes_large);
	}
	t_unlock();
	return nblocks;
}

/* Every page of an allocated block points to its head, the head knows it. */
static void check_block(struct page *page, unsigned int order)
{
	unsigned long i;

	ck_assert(PageFlag(page, PG_head));
	ck_assert(!PageFlag(page, PG_buddy));
	ck_assert_uint_eq(page->order, order);
	for (i = 0; i < (1UL << order); i++)
		ck_assert_ptr_eq(page[i].compound_head, page);
	ck_assert(IS_ALIGNED((unsigned long)page_address(page), order_bytes(order)));
}

static void stamp(struct page *page, unsigned int order, uint64_t tag)
{
	uint64_t *first = page_address(page);
	uint64_t *last = (uint64_t *)((char *)first + order_bytes(order)) - 1;

	*first = tag;
	*last = ~tag;
}

static void check_stamp(struct page *page, unsigned int order, uint64_t tag)
{
	uint64_t *first = page_address(page);
	uint64_t *last = (uint64_t *)((char *)first + order_bytes(order)) - 1;

	ck_assert_msg(*first == tag && *last == ~tag,
		      "block at %p (order %u) overwritten", (void *)first, order);
}

static int is_zero(const void *p, size_t len)
{
	const uint64_t *q = p;
	size_t i;

	for (i = 0; i < len / sizeof(*q); i++)
		if (q[i])
			return 0;
	return 1;
}

/* Resident pages of [addr, addr + len), by mincore; a page no longer
 * mapped at all (a trim gives whole free sections back) is not resident. */
static size_t resident_pages(void *addr, size_t len)
{
	static unsigned char vec[1 << 16];
	size_t n = len >> PAGE_SHIFT, i, cnt = 0;

	ck_assert(n <= sizeof(vec));
	if (mincore(addr, len, vec) != 0) {
		ck_assert_int_eq(errno, ENOMEM);
		for (i = 0; i < n; i++)
			if (mincore((char *)addr + (i << PAGE_SHIFT), PAGE_SIZE, vec + i))
				vec[i] = 0;
	}
	for (i = 0; i < n; i++)
		cnt += vec[i] & 1;
	return cnt;
}

static unsigned int random_order(uint64_t *s)
{
	/* mostly small orders, as slabs ask, sometimes the largest */
	uint64_t r = rnd(s) % 100;

	if (r < 50)
		return (unsigned int)(rnd(s) % 2);
	if (r < 85)
		return (unsigned int)(rnd(s) % 5);
	return (unsigned int)(rnd(s) % NR_PAGE_ORDERS);
}

/* ------------------------------------------------------------------ */
/* randomized model test */

#define MODEL_STEPS	4000
#define MODEL_LIVE	256

TEST(core, test_model_random)
{
	static struct span live[MODEL_LIVE];
	static struct page *pages[MODEL_LIVE];
	static uint64_t tags[MODEL_LIVE];
	uint64_t s = test_seed() * 2654435761UL + 17;
	size_t nlive = 0, start_alloc;
	int step;

	ck_assert_int_eq(page_alloc_init(), 0);
	start_alloc = pa_zone.bytes_allocated - pa_zone.bytes_large;
	ck_assert_uint_eq(start_alloc, 0);
	for (step = 0; step < MODEL_STEPS; step++) {
		int do_alloc = nlive == 0 ||
			(nlive < MODEL_LIVE && rnd(&s) % 100 < 55);

		if (do_alloc) {
			unsigned int order = random_order(&s);
			gfp_t gfp = rnd(&s) % 4 == 0 ? __GFP_ZERO : 0;
			struct page *p = alloc_pages(gfp, order);

			ck_assert_msg(p != NULL, "step %d: order %u failed (errno %d)", step, order, errno);
			check_block(p, order);
			if (gfp & __GFP_ZERO)
				ck_assert_msg(is_zero(page_address(p), order_bytes(order)),
					      "step %d: __GFP_ZERO block not zero", step);
			live[nlive] = (struct span){ page_to_pfn(p), 1UL << order, 0 };
			pages[nlive] = p;
			tags[nlive] = rnd(&s);
			stamp(p, order, tags[nlive]);
			nlive++;
		} else {
			size_t i = (size_t)(rnd(&s) % nlive);
			unsigned int order = (unsigned int)__builtin_ctzl(live[i].npages);

			check_stamp(pages[i], order, tags[i]);
			if (rnd(&s) % 2)
				__free_pages(pages[i], order);
			else
				free_pages((unsigned long)page_address(pages[i]), order);
			nlive--;
			live[i] = live[nlive];
			pages[i] = pages[nlive];
			tags[i] = tags[nlive];
		}
		verify_zone(live, nlive);
	}
	while (nlive) {
		nlive--;
		__free_pages(pages[nlive], (unsigned int)__builtin_ctzl(live[nlive].npages));
		verify_zone(live, nlive);
	}
	/* Everything merged back into whole sections, once the per-CPU
	 * lists are drained. */
	drain_all_pages(false);
	verify_zone(live, 0);
	for (unsigned int o = 0; o < MAX_PAGE_ORDER; o++)
		ck_assert_uint_eq(pa_zone.nr_free[o], 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* exhaustion at a cap */

TEST(core, test_exhaustion_cap)
{
	static struct page *p[1024];
	unsigned int big = MAX_PAGE_ORDER < 10 ? MAX_PAGE_ORDER : 10;	/* 4 MiB */
	struct page_alloc_stats st;
	size_t n = 0, i;
	struct page *q;
	void *l;

	ck_assert_int_eq(page_alloc_init(), 0);
	page_alloc_set_limit(1 << 20);
	ck_assert_uint_eq(page_alloc_set_limit(1 << 20), 1 << 20);
	for (;;) {
		errno = 0;
		q = alloc_pages(__GFP_NOWARN, 0);
		if (!q)
			break;
		ck_assert_uint_lt(n, ARRAY_SIZE(p));
		p[n++] = q;
	}
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_uint_eq(n, (1 << 20) / PAGE_SIZE);
	/* Every kind of request fails at the cap, and nothing leaks. */
	errno = 0;
	ck_assert_ptr_null(alloc_pages(__GFP_NOWARN, 3));
	ck_assert_int_eq(errno, ENOMEM);
	errno = 0;
	ck_assert_ptr_null(alloc_pages_large(8 << 20, 0, __GFP_NOWARN));
	ck_assert_int_eq(errno, ENOMEM);
	page_alloc_get_stats(&st);
	ck_assert_uint_eq(st.bytes_allocated, 1 << 20);
	if (IS_ENABLED(CONFIG_STATS))
		ck_assert_uint_ge(st.enomem, 3);
	verify_zone(NULL, 0);

	/* Free some: allocation works again, up to the cap. */
	for (i = 0; i < 8; i++)
		__free_pages(p[--n], 0);
	q = alloc_pages(0, 3);
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_null(alloc_pages(__GFP_NOWARN, 0));
	__free_pages(q, 3);
	while (n)
		__free_pages(p[--n], 0);
	verify_zone(NULL, 0);

	/* Own mappings count against the same cap. */
	page_alloc_set_limit(12 << 20);
	l = alloc_pages_large(10 << 20, 0, 0);
	ck_assert_ptr_nonnull(l);
	errno = 0;
	ck_assert_ptr_null(alloc_pages(__GFP_NOWARN, big));
	ck_assert_int_eq(errno, ENOMEM);
	free_pages_large(l);
	q = alloc_pages(0, big);
	ck_assert_ptr_nonnull(q);
	__free_pages(q, big);

	ck_assert_uint_eq(page_alloc_set_limit(0), 12 << 20);
	page_alloc_get_stats(&st);
	ck_assert_uint_eq(st.bytes_allocated, 0);

	/* Bad orders are EINVAL, not ENOMEM. */
	errno = 0;
	ck_assert_ptr_null(alloc_pages(0, MAX_PAGE_ORDER + 1));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* memory back to the OS */

/* 64 MiB in blocks of order 10 (or the largest, if smaller) */
#define RSS_ORDER	(MAX_PAGE_ORDER < 10 ? MAX_PAGE_ORDER : 10)
#define RSS_BLOCKS	(16 << (10 - RSS_ORDER))
#define RSS_PAGES	(1UL << RSS_ORDER)

static void alloc_touch_free(struct page **p, size_t *span_pages)
{
	int i;

	for (i = 0; i < RSS_BLOCKS; i++) {
		p[i] = alloc_pages(0, RSS_ORDER);
		ck_assert_ptr_nonnull(p[i]);
		memset(page_address(p[i]), 0x5a, order_bytes(RSS_ORDER));
		ck_assert_uint_eq(resident_pages(page_address(p[i]), order_bytes(RSS_ORDER)),
				  RSS_PAGES);
	}
	*span_pages = RSS_BLOCKS * RSS_PAGES;
	for (i = 0; i < RSS_BLOCKS; i++)
		__free_pages(p[i], RSS_ORDER);
}

TEST(core, test_rss_returned)
{
	struct page *p[RSS_BLOCKS];
	size_t total = RSS_BLOCKS * order_bytes(RSS_ORDER);
	size_t span, res, rss_full, rss_after, trimmed;
	struct page_alloc_stats st;
	struct page *z;
	int i;

	ck_assert_int_eq(page_alloc_init(), 0);

	/* 1. High watermark: freed memory stays resident until a trim. */
	page_alloc_set_resident_free((size_t)1 << 40);
	alloc_touch_free(p, &span);
	rss_full = test_rss_bytes();
	res = 0;
	for (i = 0; i < RSS_BLOCKS; i++)
		res += resident_pages(page_address(p[i]), order_bytes(RSS_ORDER));
	ck_assert_uint_eq(res, span);
	page_alloc_get_stats(&st);
	ck_assert_uint_ge(st.bytes_free_resident, total);

	trimmed = page_alloc_trim();
	ck_assert_uint_ge(trimmed, total);
	rss_after = test_rss_bytes();
	res = 0;
	for (i = 0; i < RSS_BLOCKS; i++)
		res += resident_pages(page_address(p[i]), order_bytes(RSS_ORDER));
	ck_assert_uint_eq(res, 0);
	ck_assert_msg(rss_full - rss_after >= total - total / 8,
		      "RSS fell by %zu bytes only after trim (expected ~%zu)",
		      rss_full - rss_after, total);
	page_alloc_get_stats(&st);
	ck_assert_uint_eq(st.bytes_free_resident, 0);

	/* Known-zero memory is handed out with __GFP_ZERO without a memset:
	 * the block is still not resident afterwards. */
	z = alloc_pages(__GFP_ZERO, RSS_ORDER);
	ck_assert_ptr_nonnull(z);
	ck_assert_uint_eq(resident_pages(page_address(z), order_bytes(RSS_ORDER)), 0);
	ck_assert(is_zero(page_address(z), order_bytes(RSS_ORDER)));
	__free_pages(z, RSS_ORDER);
	page_alloc_trim();

	/* 2. Watermark of 2 blocks, no share of the heap: frees give memory
	 * back without a trim. */
	page_alloc_set_resident_free_pct(0);
	page_alloc_set_resident_free(2 * order_bytes(RSS_ORDER));
	alloc_touch_free(p, &span);
	rss_after = test_rss_bytes();
	res = 0;
	for (i = 0; i < RSS_BLOCKS; i++)
		res += resident_pages(page_address(p[i]), order_bytes(RSS_ORDER));
	ck_assert_uint_le(res, 2 * RSS_PAGES);
	page_alloc_get_stats(&st);
	ck_assert_uint_le(st.bytes_free_resident, 2 * order_bytes(RSS_ORDER));
	ck_assert_msg(rss_full - rss_after >= total - total / 4,
		      "RSS %zu after frees under the watermark, %zu with all resident",
		      rss_after, rss_full);

	/* Freed dirty memory handed out again with __GFP_ZERO is zeroed. */
	z = alloc_pages(__GFP_ZERO, 2);
	ck_assert_ptr_nonnull(z);
	ck_assert(is_zero(page_address(z), order_bytes(2)));
	__free_pages(z, 2);
	verify_zone(NULL, 0);

	/* 3. The whole recent peak may stay: a burst of frees keeps its
	 * memory resident until page_alloc_decay(), which gives back all but
	 * the watermark (nothing is in use any more). */
	page_alloc_set_resident_free_pct(100);
	page_alloc_set_decay_agent(true);
	page_alloc_trim();
	alloc_touch_free(p, &span);
	res = 0;
	for (i = 0; i < RSS_BLOCKS; i++)
		res += resident_pages(page_address(p[i]), order_bytes(RSS_ORDER));
	ck_assert_uint_eq(res, span);
	ck_assert_uint_ge(page_alloc_decay(), total - 2 * order_bytes(RSS_ORDER));
	res = 0;
	for (i = 0; i < RSS_BLOCKS; i++)
		res += resident_pages(page_address(p[i]), order_bytes(RSS_ORDER));
	page_alloc_get_stats(&st);
	ck_assert_uint_le(st.bytes_free_resident,
			  max_t(size_t, 2 * order_bytes(RSS_ORDER), st.bytes_allocated));
	ck_assert_uint_le(res, 2 * RSS_PAGES + (st.bytes_allocated >> PAGE_SHIFT));
	/* 4. No decay agent (no reaper, a fork child): only the watermark. */
	page_alloc_set_decay_agent(false);
	alloc_touch_free(p, &span);
	page_alloc_get_stats(&st);
	ck_assert_uint_le(st.bytes_free_resident,
			  max_t(size_t, 2 * order_bytes(RSS_ORDER), st.bytes_allocated));
	page_alloc_set_resident_free_pct(CONFIG_PAGE_ALLOC_RESIDENT_FREE_PCT);
	verify_zone(NULL, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* own mappings */

static void check_large(char *a, size_t size, size_t align)
{
	struct page *head = virt_to_page(a);
	size_t bytes = ALIGN_UP(size, PAGE_SIZE), off;
	char *probe[3];
	int i;

	ck_assert_ptr_nonnull(a);
	ck_assert(page_alloc_owns(a));
	ck_assert(page_alloc_owns(a + bytes - 1));
	ck_assert_msg(IS_ALIGNED((unsigned long)a, align), "%p not aligned to %zu", a, align);
	ck_assert(PageFlag(head, PG_large));
	ck_assert(PageFlag(head, PG_head));
	ck_assert_uint_eq(head->large_size, bytes);
	ck_assert_uint_eq(head->large_pages, bytes >> PAGE_SHIFT);
	for (off = 0; off < bytes; off += PAGE_SIZE)
		ck_assert_ptr_eq(compound_head(virt_to_page(a + off)), head);
	ck_assert_ptr_eq(compound_head(virt_to_page(a + bytes / 2 + 123)), head);
	ck_assert_ptr_eq(compound_head(virt_to_page(a + bytes - 1)), head);
	/* Fresh zero memory, writable; touch three pages only, to keep the
	 * suite's RSS small. */
	probe[0] = a;
	probe[1] = a + ALIGN_DOWN(bytes / 2, PAGE_SIZE);
	probe[2] = a + bytes - PAGE_SIZE;
	for (i = 0; i < 3; i++)
		ck_assert_msg(is_zero(probe[i], PAGE_SIZE),
			      "own mapping %p (+%zu, align %zu) not zero at +%zu",
			      a, bytes, align, (size_t)(probe[i] - a));
	for (i = 0; i < 3; i++)
		memset(probe[i], 0xa5, PAGE_SIZE);
}

TEST(core, test_large)
{
	static const size_t sizes[] = {
		(4UL << 20) + 1, 5UL << 20, (17UL << 20) + 123, 40UL << 20,
		(PAGE_SIZE << MAX_PAGE_ORDER) + PAGE_SIZE, 3 * PAGE_SIZE,
	};
	static const size_t aligns[] = {
		0, PAGE_SIZE, 64 << 10, 2 << 20, 4 << 20, 32 << 20,
	};
	static char *held[64];
	struct page_alloc_stats st;
	uint64_t s = test_seed() + 99;
	size_t i, j, n = 0, bytes;
	char *a, *b, *top;

	ck_assert_int_eq(page_alloc_init(), 0);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		for (j = 0; j < ARRAY_SIZE(aligns); j++) {
			a = alloc_pages_large(sizes[i], aligns[j], __GFP_ZERO);
			check_large(a, sizes[i], aligns[j] ? aligns[j] : PAGE_SIZE);
			held[n++] = a;
		}
	page_alloc_get_stats(&st);
	ck_assert_uint_gt(st.bytes_large, 0);
	ck_assert_uint_eq(st.bytes_large, st.bytes_allocated);

	/* A freed mapping stays mapped in the cache and the next one that
	 * fits reuses it, without an mmap ... */
	a = held[0];
	bytes = virt_to_page(a)->large_size;
	t_lock();
	top = page_alloc_end;
	t_unlock();
	page_alloc_get_stats(&st);
	{
		unsigned long maps = st.large_maps, reuse = st.large_reuse;

		/* no decay thread here: the watermark alone bounds the cache */
		page_alloc_set_resident_free(64 << 20);
		free_pages_large(a);
		page_alloc_get_stats(&st);
		ck_assert_uint_eq(st.bytes_large_cached, bytes);
		b = alloc_pages_large(bytes, PAGE_SIZE, __GFP_ZERO);
		check_large(b, bytes, PAGE_SIZE);	/* zeroed on reuse */
		ck_assert_ptr_eq(b, a);
		page_alloc_get_stats(&st);
		if (IS_ENABLED(CONFIG_STATS)) {
			ck_assert_uint_eq(st.large_maps, maps);
			ck_assert_uint_eq(st.large_reuse, reuse + 1);
		}
		ck_assert_uint_eq(st.bytes_large_cached, 0);
		page_alloc_set_resident_free((size_t)CONFIG_PAGE_ALLOC_RESIDENT_FREE_KB << 10);
	}
	/* ... and after a trim its memory is gone, its address range reused:
	 * no new address space. */
	free_pages_large(b);
	page_alloc_trim();
	ck_assert_uint_eq(resident_pages(a, bytes), 0);
	b = alloc_pages_large(bytes, PAGE_SIZE, __GFP_ZERO);
	check_large(b, bytes, PAGE_SIZE);
	t_lock();
	ck_assert_ptr_eq(page_alloc_end, top);
	t_unlock();
	held[0] = b;

	/* Random frees and reallocations: address space does not creep. */
	for (i = 0; i < 300; i++) {
		size_t k = (size_t)(rnd(&s) % n);
		size_t sz = (size_t)(rnd(&s) % (24UL << 20)) + 1;
		size_t al = PAGE_SIZE << (rnd(&s) % 11);

		free_pages_large(held[k]);
		held[k] = alloc_pages_large(sz, al, __GFP_ZERO);
		check_large(held[k], sz, al);
	}
	while (n)
		free_pages_large(held[--n]);
	page_alloc_trim();	/* the cache goes back to the OS */
	page_alloc_get_stats(&st);
	ck_assert_uint_eq(st.bytes_large_cached, 0);
	ck_assert_uint_eq(st.bytes_large, 0);
	ck_assert_uint_eq(st.bytes_allocated, 0);
	/* A new section does not take the address range of a freed own
	 * mapping while the reservation can grow: a double free of the
	 * mapping stays a free of no block, not of a slab's memory. */
	{
		struct page *sec[8];
		char *gone = alloc_pages_large(8 * SECTION_SIZE, SECTION_SIZE, 0);

		ck_assert_ptr_nonnull(gone);
		free_pages_large(gone);
		page_alloc_trim();
		for (i = 0; i < ARRAY_SIZE(sec); i++) {
			sec[i] = alloc_pages(0, MAX_PAGE_ORDER);
			ck_assert_ptr_nonnull(sec[i]);
			ck_assert_msg((char *)page_address(sec[i]) + SECTION_SIZE <= gone ||
				      (char *)page_address(sec[i]) >= gone + 8 * SECTION_SIZE,
				      "section %p inside the freed mapping %p", page_address(sec[i]), gone);
		}
		for (i = 0; i < ARRAY_SIZE(sec); i++)
			__free_pages(sec[i], MAX_PAGE_ORDER);
	}

	/* The struct pages inside a big mapping are never made resident
	 * (only its first and last are written), nor after its free. */
	a = alloc_pages_large(40UL << 20, 0, 0);
	ck_assert_ptr_nonnull(a);
	{
		char *m = (char *)ALIGN_UP((unsigned long)(virt_to_page(a) + 1), PAGE_SIZE);
		size_t mlen = 8 * PAGE_SIZE;	/* well inside 640 KiB of map */

		ck_assert_uint_eq(resident_pages(m, mlen), 0);
		memset(a, 1, 40UL << 20);
		ck_assert_uint_eq(resident_pages(m, mlen), 0);
		free_pages_large(a);
		page_alloc_trim();	/* out of the cache, back to the OS */
		ck_assert_uint_eq(resident_pages(m, mlen), 0);
	}

	/* Bad arguments. */
	errno = 0;
	ck_assert_ptr_null(alloc_pages_large(0, 0, 0));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(alloc_pages_large(PAGE_SIZE, 3 * PAGE_SIZE, 0));
	ck_assert_int_eq(errno, EINVAL);
	free_pages_large(NULL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* threads */

#define NR_THREADS	4
#define THREAD_OPS	20000
#define THREAD_LIVE	64

/* Stamps go in the first and last word of a block, or of a mapping's first
 * MAX_PAGE_ORDER block; ord > MAX_PAGE_ORDER marks an own mapping. */
static unsigned int stamp_order(unsigned int ord)
{
	return ord > MAX_PAGE_ORDER ? MAX_PAGE_ORDER : ord;
}

static void *thread_fn(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg;
	struct page *p[THREAD_LIVE] = { NULL };
	unsigned int ord[THREAD_LIVE];
	uint64_t tag[THREAD_LIVE];
	int i;

	for (i = 0; i < THREAD_OPS; i++) {
		int k = (int)(rnd(&s) % THREAD_LIVE);

		if (p[k]) {
			check_stamp(p[k], stamp_order(ord[k]), tag[k]);
			if (ord[k] > MAX_PAGE_ORDER)
				free_pages_large(page_address(p[k]));
			else
				__free_pages(p[k], ord[k]);
			p[k] = NULL;
			continue;
		}
		if (rnd(&s) % 64 == 0) {
			void *a = alloc_pages_large(order_bytes(MAX_PAGE_ORDER) + PAGE_SIZE, 0, 0);

			ck_assert_ptr_nonnull(a);
			p[k] = virt_to_page(a);
			ck_assert_ptr_eq(compound_head(virt_to_page((char *)a + PAGE_SIZE)), p[k]);
			ord[k] = MAX_PAGE_ORDER + 1;
		} else {
			ord[k] = (unsigned int)(rnd(&s) % 5);
			p[k] = alloc_pages(rnd(&s) % 2 ? __GFP_ZERO : 0, ord[k]);
			ck_assert_ptr_nonnull(p[k]);
			check_block(p[k], ord[k]);
		}
		tag[k] = rnd(&s);
		stamp(p[k], stamp_order(ord[k]), tag[k]);
	}
	for (i = 0; i < THREAD_LIVE; i++) {
		if (!p[i])
			continue;
		check_stamp(p[i], stamp_order(ord[i]), tag[i]);
		if (ord[i] > MAX_PAGE_ORDER)
			free_pages_large(page_address(p[i]));
		else
			__free_pages(p[i], ord[i]);
	}
	return NULL;
}

TEST(core, test_threads)
{
	pthread_t t[NR_THREADS];
	struct page_alloc_stats st;
	uintptr_t seed = test_seed();
	int i;

	ck_assert_int_eq(page_alloc_init(), 0);
	page_alloc_set_resident_free(1 << 20);	/* exercise the return policy too */
	for (i = 0; i < NR_THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, thread_fn,
						(void *)(seed * 7919 + (uintptr_t)i + 1)), 0);
	for (i = 0; i < NR_THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	verify_zone(NULL, 0);
	page_alloc_get_stats(&st);
	ck_assert_uint_eq(st.bytes_allocated, 0);
	ck_assert_uint_eq(st.bytes_large, 0);
	/* the exited threads' CPUs' lists still hold blocks: give them back */
	drain_all_pages(false);
	verify_zone(NULL, 0);
	page_alloc_get_stats(&st);
	ck_assert_uint_eq(st.bytes_pagelists, 0);
	for (i = 0; i < MAX_PAGE_ORDER; i++)
		ck_assert_uint_eq(st.nr_free[i], 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* fork */

TEST(core, test_fork)
{
	struct page *p, *q;
	int status;
	pid_t pid;

	ck_assert_int_eq(page_alloc_init(), 0);
	p = alloc_pages(0, 2);
	ck_assert_ptr_nonnull(p);
	page_alloc_fork_prepare();
	pid = fork();
	if (pid == 0) {
		page_alloc_fork_child();
		q = alloc_pages(0, 2);
		__free_pages(p, 2);
		_exit(q ? 0 : 1);
	}
	page_alloc_fork_parent();
	ck_assert_int_ge(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	__free_pages(p, 2);
	verify_zone(NULL, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* buddyinfo */

TEST(core, test_buddyinfo)
{
	char buf[1024], tiny[16];
	struct page_alloc_stats st;
	struct page *p;
	unsigned long v;
	size_t n, kb;
	char *line, *end, *save = NULL;
	unsigned int o;

	ck_assert_int_eq(page_alloc_init(), 0);
	/* Above the per-CPU lists' orders and their regions': splits a
	 * section, one free block per order from @ord up. */
	const unsigned int ord = PAGELIST_REGION_ORDER < MAX_PAGE_ORDER ? PAGELIST_REGION_ORDER : 0;

	p = alloc_pages(0, ord);
	ck_assert_ptr_nonnull(p);
	n = page_alloc_buddyinfo(buf, sizeof(buf));
	ck_assert_uint_eq(n, strlen(buf));
	page_alloc_get_stats(&st);

	line = strtok_r(buf, "\n", &save);
	ck_assert_ptr_nonnull(line);
	ck_assert_msg(strncmp(line, "Node 0, zone    uslab ", 22) == 0, "got '%s'", line);
	end = line + 22;
	for (o = 0; o < NR_PAGE_ORDERS; o++) {
		char *next;

		v = strtoul(end, &next, 10);
		ck_assert_ptr_ne(next, end);
		ck_assert_uint_eq(v, st.nr_free[o]);
		end = next;
	}
	ck_assert_str_eq(end, " ");
	for (o = ord; o < MAX_PAGE_ORDER; o++)
		ck_assert_uint_ge(st.nr_free[o], 1);

	line = strtok_r(NULL, "\n", &save);
	ck_assert_int_eq(sscanf(line, "allocated %zu kB", &kb), 1);
	ck_assert_uint_eq(kb, order_bytes(ord) >> 10);
	line = strtok_r(NULL, "\n", &save);
	ck_assert_int_eq(sscanf(line, "large %zu kB", &kb), 1);
	line = strtok_r(NULL, "\n", &save);
	ck_assert_int_eq(sscanf(line, "free_resident %zu kB", &kb), 1);
	line = strtok_r(NULL, "\n", &save);
	ck_assert_int_eq(sscanf(line, "free_returned %zu kB", &kb), 1);
	ck_assert_uint_eq(kb, st.bytes_free_returned >> 10);
	ck_assert_uint_ge(kb, (order_bytes(MAX_PAGE_ORDER) - order_bytes(ord) -
			       st.bytes_pagelists) >> 10);
	line = strtok_r(NULL, "\n", &save);
	ck_assert_int_eq(sscanf(line, "limit %zu kB", &kb), 1);
	line = strtok_r(NULL, "\n", &save);
	ck_assert_int_eq(sscanf(line, "pagelists %zu kB", &kb), 1);
	ck_assert_uint_eq(kb, st.bytes_pagelists >> 10);
	line = strtok_r(NULL, "\n", &save);
	ck_assert_int_eq(sscanf(line, "large_cached %zu kB", &kb), 1);
	ck_assert_uint_eq(kb, st.bytes_large_cached >> 10);
	line = strtok_r(NULL, "\n", &save);
	ck_assert_int_eq(sscanf(line, "splits %lu", &v), 1);
	ck_assert_uint_eq(v, st.splits);
	if (IS_ENABLED(CONFIG_STATS))
		ck_assert_uint_ge(v, MAX_PAGE_ORDER - ord);
	ck_assert_ptr_null(strtok_r(NULL, "\n", &save));

	/* Truncation: always terminated, never past the buffer. */
	memset(tiny, 'x', sizeof(tiny));
	n = page_alloc_buddyinfo(tiny, 10);
	ck_assert_uint_eq(n, 9);
	ck_assert_uint_eq(tiny[9], '\0');
	ck_assert_uint_eq(tiny[10], 'x');
	ck_assert_uint_eq(page_alloc_buddyinfo(tiny, 0), 0);
	__free_pages(p, ord);
}
END_TEST

/* ------------------------------------------------------------------ */
/* debug reports (CONFIG_PAGE_ALLOC_DEBUG) */

/*
 * Run @fn in a child whose log goes to a pipe (test_catch_abort); the
 * child must abort, and its report must contain @expect.
 */
static void expect_report(void (*fn)(int fd, void *), void *arg, const char *expect)
{
	char out[2048];

	test_catch_abort(fn, arg, out, sizeof(out));
	ck_assert_msg(strstr(out, expect) != NULL, "report '%s' lacks '%s'", out, expect);
}

static void do_double_free(int fd, void *arg)
{
	struct page *p = arg;

	__free_pages(p, 1);
	__free_pages(p, 1);
}

static void do_wrong_order(int fd, void *arg)
{
	__free_pages(arg, 0);
}

static void do_free_tail(int fd, void *arg)
{
	__free_pages((struct page *)arg + 1, 0);
}

static void do_free_large_interior(int fd, void *arg)
{
	free_pages_large((char *)arg + PAGE_SIZE);
}

TEST_IF(IS_ENABLED(CONFIG_PAGE_ALLOC_DEBUG), core, test_debug_reports)
{
	char expect[256];
	struct page *p;
	void *l;

	ck_assert_int_eq(page_alloc_init(), 0);
	p = alloc_pages(0, 1);
	ck_assert_ptr_nonnull(p);
	snprintf(expect, sizeof(expect), "__free_pages(%p, order 1): block",
		 page_address(p));
	expect_report(do_double_free, p, expect);
	strcpy(expect, "double free");
	expect_report(do_double_free, p, expect);
	snprintf(expect, sizeof(expect), "__free_pages(%p, order 0): order differs",
		 page_address(p));
	expect_report(do_wrong_order, p, expect);
	snprintf(expect, sizeof(expect), "__free_pages(%p, order 0): not the head",
		 page_address(p + 1));
	expect_report(do_free_tail, p, expect);
	l = alloc_pages_large(order_bytes(MAX_PAGE_ORDER) * 2, 0, 0);
	ck_assert_ptr_nonnull(l);
	snprintf(expect, sizeof(expect), "free_pages_large(%p): not the start",
		 (char *)l + PAGE_SIZE);
	expect_report(do_free_large_interior, l, expect);
	free_pages_large(l);
	__free_pages(p, 1);
}
END_TEST


/*
 * Freed own mappings stay mapped for the next large allocations while
 * large blocks are being allocated (issue 18, item 4: mimalloc-bench's
 * malloc-large refaulted its buffers every iteration), outside a small
 * allowance, up to CONFIG_PAGE_ALLOC_LARGE_CACHE_PCT of the large blocks
 * in use; a decay period without large allocations gives them back.
 */
/*
 * Only the first and last struct page of an own mapping are written
 * (issue 18: the struct pages of gmalloc's 167 MiB of arrays, of which it
 * uses a few MiB, were 2.6 MiB of its 84 MiB peak RSS): the map pages
 * inside a mapping stay untouched, and compound_head() still leads every
 * page to its head, also in a mapping made from cached ranges that were
 * split and joined again (the struct pages that end up inside are zeroed)
 * and in one made from a PROT_NONE range.
 */
static void check_heads(char *a, size_t bytes)
{
	struct page *head = virt_to_page(a);
	size_t off;

	for (off = 0; off < bytes; off += PAGE_SIZE) {
		struct page *p = virt_to_page(a + off);

		ck_assert_msg(compound_head(p) == head, "page %zu of %p: head %p, want %p",
			      off >> PAGE_SHIFT, a, compound_head(p), head);
		ck_assert(!PageFlag(p, PG_slab_page));
	}
}

TEST(core, test_large_struct_pages_untouched)
{
	const size_t big = 24UL << 20, part = 10UL << 20;
	struct page_alloc_stats st0, st1;
	char *a, *y, *z, *w, *m;
	size_t mlen;

	ck_assert_int_eq(page_alloc_init(), 0);
	page_alloc_set_decay_agent(true);
	page_alloc_trim();
	a = alloc_pages_large(big, 0, 0);
	ck_assert_ptr_nonnull(a);
	m = (char *)ALIGN_UP((unsigned long)(virt_to_page(a) + 1), PAGE_SIZE);
	mlen = (size_t)((char *)ALIGN_DOWN((unsigned long)(virt_to_page(a) +
			(big >> PAGE_SHIFT) - 1), PAGE_SIZE) - m);
	ck_assert_uint_ge(mlen, 16 * PAGE_SIZE);
	ck_assert_uint_eq(resident_pages(m, mlen), 0);
	memset(a, 1, big);
	ck_assert_uint_eq(resident_pages(m, mlen), 0);
	/* inside pointers still find the head */
	ck_assert_ptr_eq(compound_head(virt_to_page(a + big / 2)), virt_to_page(a));
	ck_assert_ptr_eq(compound_head(virt_to_page(a + big - 1)), virt_to_page(a));
	ck_assert_ptr_null(page_large_head(virt_to_page(a)));

	/* split the cached range in two, free both (joined), take it whole */
	free_pages_large(a);
	page_alloc_get_stats(&st0);
	y = alloc_pages_large(part, 0, 0);
	z = alloc_pages_large(big - part, 0, 0);
	ck_assert_ptr_eq(y, a);
	ck_assert_ptr_eq(z, a + part);
	check_heads(y, part);
	check_heads(z, big - part);
	free_pages_large(y);
	free_pages_large(z);
	w = alloc_pages_large(big, 0, 0);
	page_alloc_get_stats(&st1);
	ck_assert_ptr_eq(w, a);
	/*
	 * three mappings taken from the cache of freed ones; none where the
	 * build keeps no free memory resident (the nocache preset's
	 * watermark and share of 0: each freed mapping went back at once,
	 * and the same addresses came from the address space)
	 */
	ck_assert_uint_eq(st1.large_reuse - st0.large_reuse,
			  CONFIG_PAGE_ALLOC_RESIDENT_FREE_KB ||
			  CONFIG_PAGE_ALLOC_RESIDENT_FREE_PCT ? 3 : 0);
	check_heads(w, big);
	/* again, freed the other way round (the upper part joins first) */
	free_pages_large(w);
	y = alloc_pages_large(part, 0, 0);
	z = alloc_pages_large(big - part, 0, 0);
	ck_assert_ptr_eq(z, a + part);
	free_pages_large(z);
	free_pages_large(y);
	w = alloc_pages_large(big, 0, 0);
	ck_assert_ptr_eq(w, a);
	check_heads(w, big);
	free_pages_large(w);

	/* back to PROT_NONE, then a mapping made from that range */
	page_alloc_trim();
	page_alloc_get_stats(&st0);
	y = alloc_pages_large(part, 0, 0);
	page_alloc_get_stats(&st1);
	ck_assert_ptr_eq(y, a);
	ck_assert_uint_eq(st1.large_reuse, st0.large_reuse);
	check_heads(y, part);
	free_pages_large(y);
	page_alloc_trim();
}
END_TEST

TEST(core, test_large_cache_kept_and_decays)
{
	enum { N = 8 };
	const size_t sz = 8UL << 20;
	struct page_alloc_stats st;
	unsigned long maps;
	char *a[N];
	int i;

	ck_assert_int_eq(page_alloc_init(), 0);
	page_alloc_set_decay_agent(true);
	page_alloc_set_resident_free_pct(0);
	page_alloc_set_resident_free(1 << 20);
	page_alloc_decay();
	for (i = 0; i < N; i++) {
		a[i] = alloc_pages_large(sz, 0, 0);
		ck_assert_ptr_nonnull(a[i]);
		memset(a[i], 1, sz);
	}
	/* half of them freed and taken again: no new mapping */
	for (i = 0; i < N / 2; i++)
		free_pages_large(a[i]);
	page_alloc_get_stats(&st);
	if (CONFIG_PAGE_ALLOC_LARGE_CACHE_PCT >= 100)
		ck_assert_uint_eq(st.bytes_large_cached, N / 2 * sz);
	maps = st.large_maps;
	for (i = 0; i < N / 2; i++) {
		a[i] = alloc_pages_large(sz, 0, 0);
		ck_assert_ptr_nonnull(a[i]);
	}
	page_alloc_get_stats(&st);
	if (IS_ENABLED(CONFIG_STATS) && CONFIG_PAGE_ALLOC_LARGE_CACHE_PCT >= 100)
		ck_assert_uint_eq(st.large_maps, maps);
	ck_assert_uint_eq(st.bytes_large_cached, 0);

	/* all freed: kept while the last period saw large allocations ... */
	for (i = 0; i < N; i++)
		free_pages_large(a[i]);
	pa_decay_tick();
	page_alloc_get_stats(&st);
	if (CONFIG_PAGE_ALLOC_LARGE_CACHE_PCT >= 100)
		ck_assert_uint_eq(st.bytes_large_cached, N * sz);
	/* ... and given back once a whole period saw none */
	for (i = 0; i < 4; i++)
		pa_decay_tick();
	page_alloc_get_stats(&st);
	ck_assert_uint_eq(st.bytes_large_cached, 0);
	ck_assert_uint_eq(resident_pages(a[0], sz), 0);
	page_alloc_set_decay_agent(false);
	page_alloc_set_resident_free((size_t)CONFIG_PAGE_ALLOC_RESIDENT_FREE_KB << 10);
	page_alloc_set_resident_free_pct(CONFIG_PAGE_ALLOC_RESIDENT_FREE_PCT);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the address space follows RLIMIT_AS */

/* VmSize of this process in bytes. */
static size_t vm_size(void)
{
	char line[256];
	size_t kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %zu kB", &kb) == 1)
			break;
	fclose(f);
	return kb << 10;
}

/*
 * A growing heap makes its sections in batches (buddy_grow_batch(): a
 * quarter of those made, at most 16 at a time), so that the system calls
 * that take the mmap lock for writing (an mprotect and the reservation's
 * mmaps per grow) are a few dozen for a big heap, not one set per 4 MiB:
 * 64 sections held beyond those free take at most 24 grows (64 when each
 * grow made one). The sections made ahead are on the free list, whole.
 */
TEST(core, test_sections_grow_in_batches)
{
	struct page *held[256];
	unsigned long grows0, made0, grows, made, free0;
	size_t n = 0, want, i;

	ck_assert_int_eq(page_alloc_init(), 0);
	t_lock();
	grows0 = pa_zone.section_grows;
	made0 = pa_zone.nr_sections;
	free0 = pa_zone.nr_free[MAX_PAGE_ORDER];
	t_unlock();
	want = free0 + 64;
	ck_assert_uint_le(want, ARRAY_SIZE(held));
	for (n = 0; n < want; n++) {
		held[n] = alloc_pages(__GFP_NOWARN, MAX_PAGE_ORDER);
		ck_assert_ptr_nonnull(held[n]);
	}
	t_lock();
	grows = pa_zone.section_grows - grows0;
	made = pa_zone.nr_sections - made0;
	t_unlock();
	ck_assert_uint_ge(made, 64);
	ck_assert_msg(grows >= 1 && grows <= 24,
		      "%lu grows made %lu sections (want at most 24)", grows, made);
	/* what was made ahead is free, whole sections, untouched */
	t_lock();
	ck_assert_uint_eq(pa_zone.nr_free[MAX_PAGE_ORDER], made - 64);
	t_unlock();
	for (i = 0; i < n; i++)
		__free_pages(held[i], MAX_PAGE_ORDER);
	verify_zone(NULL, 0);
}
END_TEST

/*
 * page_alloc_populate() makes pages resident without a write of ours
 * (content kept: a page written before keeps its bytes, a new one reads
 * zero), page_alloc_residency() reports each page, and a range not mapped
 * is an error, not a crash (docs/page_alloc.md "Pages populated ahead").
 */
TEST(core, test_populate_makes_pages_resident_content_kept)
{
	struct page *pg = alloc_pages(0, 3);
	unsigned char vec[8];
	unsigned long pop0 = page_alloc_populated();
	char *p;
	int i;

	ck_assert_ptr_nonnull(pg);
	p = page_address(pg);
	ck_assert_int_eq(madvise(p, 8 * PAGE_SIZE, MADV_DONTNEED), 0);
	p[0] = 'x';			/* page 0 written, 1..7 not */
	ck_assert_int_eq(page_alloc_residency(p, 8 * PAGE_SIZE, vec), 0);
	ck_assert(vec[0] & 1);
	for (i = 1; i < 8; i++)
		ck_assert_msg(!(vec[i] & 1), "page %d resident before", i);
	ck_assert(!page_alloc_resident(p + 3 * PAGE_SIZE));
	ck_assert_int_eq(page_alloc_populate(p, 4 * PAGE_SIZE), 0);
	ck_assert_uint_eq(page_alloc_populated() - pop0, 4);
	ck_assert_int_eq(page_alloc_residency(p, 8 * PAGE_SIZE, vec), 0);
	for (i = 0; i < 8; i++)
		ck_assert_msg(!(vec[i] & 1) == (i >= 4), "page %d", i);
	ck_assert_int_eq(p[0], 'x');
	for (i = 1; i < 4; i++)
		ck_assert_int_eq(p[i * PAGE_SIZE + 5], 0);
	__free_pages(pg, 3);
	/* nothing mapped there */
	p = mmap(NULL, PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(munmap(p, PAGE_SIZE), 0);
	ck_assert(!page_alloc_resident(p));
	ck_assert_int_eq(page_alloc_residency(p, PAGE_SIZE, vec), -ENOMEM);
	ck_assert_int_lt(page_alloc_populate(p, PAGE_SIZE), 0);
}
END_TEST

/*
 * Sections made ahead come from the top only: when the top has room for
 * one section but not for the batch (something mapped above it), the
 * grow makes one there, and the address range of a freed own mapping
 * stays free (a double free of that mapping must stay a free of no
 * block: "Sections and own mappings share it", docs/page_alloc.md).
 */
TEST(core, test_sections_ahead_only_from_the_top)
{
	struct page *held[512];
	size_t n = 0, i;
	char *gone, *top, *sec;
	void *block;
	unsigned long k;

	ck_assert_int_eq(page_alloc_init(), 0);
	gone = alloc_pages_large(16 * SECTION_SIZE, SECTION_SIZE, 0);
	ck_assert_ptr_nonnull(gone);
	free_pages_large(gone);
	page_alloc_trim();
	/* no whole free section left, and enough made for a batch */
	for (;;) {
		t_lock();
		k = pa_zone.nr_sections;
		i = pa_zone.nr_free[MAX_PAGE_ORDER];
		t_unlock();
		if (!i && k >= 2 * 4)
			break;
		ck_assert_uint_lt(n, ARRAY_SIZE(held));
		held[n] = alloc_pages(__GFP_NOWARN, MAX_PAGE_ORDER);
		ck_assert_ptr_nonnull(held[n]);
		n++;
	}
	/* room for one section at the top, not for two */
	t_lock();
	top = (char *)ALIGN_UP((unsigned long)page_alloc_end, SECTION_SIZE);
	t_unlock();
	block = mmap(top + SECTION_SIZE, PAGE_SIZE, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ck_assert_ptr_eq(block, top + SECTION_SIZE);
	held[n] = alloc_pages(__GFP_NOWARN, MAX_PAGE_ORDER);
	ck_assert_ptr_nonnull(held[n]);
	sec = page_address(held[n]);
	n++;
	munmap(block, PAGE_SIZE);
	ck_assert_msg(sec + SECTION_SIZE <= gone || sec >= gone + 16 * SECTION_SIZE,
		      "section %p made inside the freed mapping %p", sec, gone);
	ck_assert_ptr_eq(sec, top);
	for (i = 0; i < n; i++)
		__free_pages(held[i], MAX_PAGE_ORDER);
	verify_zone(NULL, 0);
}
END_TEST

/*
 * A setrlimit(RLIMIT_AS) made after init holds (issue 20, item 5): with
 * 64 MiB of room, sections stop at it with ENOMEM instead of growing
 * into a reservation made up front; freed sections serve an own mapping
 * (the address space is released when the reservation cannot grow), and
 * after a trim the address space is the program's again.
 */
TEST(core, test_rlimit_as_followed)
{
	struct rlimit old, rl;
	struct page *held[64];
	size_t n = 0, room = 64UL << 20, i;
	unsigned long grows0, made0;
	char *end0, *big;
	void *own;

	ck_assert_int_eq(page_alloc_init(), 0);
	page_alloc_trim();
	ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
	t_lock();
	end0 = page_alloc_end;
	t_unlock();
	t_lock();
	grows0 = pa_zone.section_grows;
	made0 = pa_zone.nr_sections;
	t_unlock();
	rl.rlim_cur = rl.rlim_max = vm_size() + room;
	rl.rlim_max = old.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
	errno = 0;
	while (n < ARRAY_SIZE(held) &&
	       (held[n] = alloc_pages(__GFP_NOWARN, MAX_PAGE_ORDER)))
		n++;
	ck_assert_int_eq(errno, ENOMEM);
	/* under the limit, one section a grow (buddy_grow_batch()) */
	t_lock();
	ck_assert_uint_eq(pa_zone.section_grows - grows0,
			  pa_zone.nr_sections - made0);
	t_unlock();
	/* the map grows with the heap (1/64), the rest is sections */
	ck_assert_uint_le(n * SECTION_SIZE, room);
	ck_assert_uint_ge(n * SECTION_SIZE, room - 3 * SECTION_SIZE);

	/* Freed as buddy blocks, their address space serves an own mapping. */
	for (i = 0; i < n; i++)
		__free_pages(held[i], MAX_PAGE_ORDER);
	big = alloc_pages_large(room - 3 * SECTION_SIZE, 0, __GFP_NOWARN);
	ck_assert_ptr_nonnull(big);
	free_pages_large(big);

	/* After a trim the reservation is back where it was, and the
	 * program maps what uslab held. */
	page_alloc_trim();
	t_lock();
	ck_assert_ptr_eq(page_alloc_end, end0);
	t_unlock();
	own = mmap(NULL, room - 3 * SECTION_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(own, MAP_FAILED);
	munmap(own, room - 3 * SECTION_SIZE);
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &old), 0);
}
END_TEST

static const struct test_case cases[] = {
	{ .name = "core", .timeout = 120 },
};

int main(void)
{
	test_seed();
	return test_run_suite(test_suite("buddy", cases, ARRAY_SIZE(cases)));
}
