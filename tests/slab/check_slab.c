// SPDX-License-Identifier: MIT
/*
 * Check suite for slab/: many sizes, alignments and constructors (no
 * overlap, alignment, the constructor contract), ksize and the kmalloc edge
 * cases, kmem_cache_shrink giving pages back, cross-thread alloc/free,
 * destroy with live objects, the exact report of every debug check, bulk
 * calls, slabinfo and its tunables, __GFP_NOFAIL, fork, and a seeded
 * randomized model test of a cache.
 *
 * White-box: reads struct kmem_cache (slab/internal.h) to check the slab
 * lists against the cache's counters and the reference model.
 *
 * SLAB_SEED=<n> reproduces a run of the randomized test; the seed in use is
 * printed on stderr.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/log.h"
#include "lib/sigsafe.h"
#include "tests/testutil.h"
#include "slab/internal.h"
#include "tests/suite.h"

/* ------------------------------------------------------------------ */
/* helpers */

static unsigned long test_seed(void)
{
	return test_seed_from_env("SLAB_SEED", "check_slab");
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Objects of @s held in per-CPU magazines and the depot (free, not live). */
static unsigned long cached_objects(struct kmem_cache *s)
{
	return s->pcp ? pcp_cache_objects(s->pcp, NULL) : 0;
}

enum slab_list { ON_PARTIAL, ON_FULL, ON_EMPTY };

/* A slab of @s on @list: its own, and in the state that list promises. */
static void check_slab_state(struct kmem_cache *s, struct page *slab, enum slab_list list)
{
	unsigned int free = 0;
	void *p;

	ck_assert(PageFlag(slab, PG_slab) && slab->slab_cache == s);
	switch (list) {
	case ON_PARTIAL:
		ck_assert(slab->inuse > 0 && slab->inuse < slab->objects);
		break;
	case ON_FULL:
		ck_assert_uint_eq(slab->inuse, slab->objects);
		ck_assert(slab->freelist == NULL);
		ck_assert_uint_eq(slab->fresh, slab->objects);
		break;
	case ON_EMPTY:
		ck_assert_uint_eq(slab->inuse, 0);
		/* objects never handed out are not on the freelist */
		ck_assert_uint_le(slab->fresh, slab->objects);
		for (p = slab->freelist; p; p = get_freepointer(s, p))
			free++;
		ck_assert_uint_eq(free + slab->objects - slab->fresh, slab->objects);
		break;
	}
}

/*
 * The slabs on @head, each checked against @list's promise; there must be
 * @nr of them. Their objects in use are added to @inuse. Return: slabs.
 */
static unsigned long check_slab_list(struct kmem_cache *s, struct list_head *head,
				     unsigned long nr, enum slab_list list,
				     unsigned long *inuse)
{
	struct page *slab;
	unsigned long n = 0;

	list_for_each_entry(slab, head, slab_list) {
		check_slab_state(s, slab, list);
		*inuse += slab->inuse;
		n++;
	}
	ck_assert_uint_eq(n, nr);
	return n;
}

/*
 * Lists and counters of @s agree with each other. Return: live objects
 * (handed out by the slab layer and not sitting in a magazine).
 */
static unsigned long check_cache_invariants(struct kmem_cache *s)
{
	unsigned long n, before, inuse, total;

	/*
	 * The reaper may drain an idle CPU's magazines into the slabs between
	 * the two readings (it only drains, while this test's one thread
	 * waits here): read again until the magazines held the same number
	 * before and after the slab lists were walked.
	 */
	do {
		before = cached_objects(s);
		inuse = 0;
		slab_lock(s);
		total = check_slab_list(s, &s->partial, s->nr_partial, ON_PARTIAL, &inuse) +
			check_slab_list(s, &s->full, s->nr_full, ON_FULL, &inuse) +
			check_slab_list(s, &s->empty, s->nr_empty, ON_EMPTY, &inuse);
		ck_assert_uint_le(s->nr_empty, s->min_partial);
		ck_assert_uint_eq(total, s->nr_slabs);
		ck_assert_uint_eq(inuse, s->nr_inuse);
		slab_unlock(s);
		n = cached_objects(s);
	} while (n != before);
	ck_assert_uint_le(n, inuse);
	return inuse - n;
}

/* A report test's child: what it expects, then the bug (@fd: the log). */
typedef void (*report_fn)(int fd);

static void call_report_fn(int fd, void *fn)
{
	(*(report_fn *)fn)(fd);
}

/*
 * Run @fn in a child whose log goes to a pipe (test_catch_abort). The
 * child first writes the report it expects ("EXPECT <line>"), then
 * triggers the check, which must abort after writing exactly that line.
 */
static void expect_report(report_fn fn)
{
	char buf[2048], *nl, *report;

	test_catch_abort(call_report_fn, &fn, buf, sizeof(buf));
	ck_assert_msg(!strncmp(buf, "EXPECT ", 7), "no expectation: %s", buf);
	nl = strchr(buf, '\n');
	ck_assert_ptr_nonnull(nl);
	*nl = '\0';
	report = nl + 1;
	nl = strchr(report, '\n');
	ck_assert_ptr_nonnull(nl);
	*nl = '\0';
	ck_assert_str_eq(report, buf + 7);
}

/*
 * "@tag uslab: <@fmt>" and a newline to @fd, a line the report must hold:
 * expect_line() for expect_report()'s one line, want() for
 * expect_report_lines()' lines ('#' for digits that vary).
 */
static void announce(int fd, const char *tag, const char *fmt, ...) __printf(3, 4);
static void announce(int fd, const char *tag, const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s uslab: ", tag);
	va_list ap;

	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	ck_assert_int_eq(write(fd, line, (size_t)n), n);
}
#define expect_line(fd, ...)	announce(fd, "EXPECT", __VA_ARGS__)
#define want(fd, ...)		announce(fd, "WANT", __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* sizes, alignments, constructors */

static const unsigned int test_sizes[] = {
	1, 7, 8, 13, 24, 40, 64, 100, 127, 192, 250, 500, 1000, 1500, 4000,
	4096, 5000, 9000, 20000, 70000,
};
static const unsigned int test_aligns[] = { 0, 8, 16, 64, 256, 4096 };

TEST(core, test_sizes_alignments)
{
	/* fewer objects a cache under valgrind: the same checks (test_iters) */
	unsigned int si, ai, f, i, nobj = test_iters(150, 40);
	uintptr_t addrs[150];

	for (si = 0; si < ARRAY_SIZE(test_sizes); si++)
	for (ai = 0; ai < ARRAY_SIZE(test_aligns); ai++)
	for (f = 0; f < 2; f++) {
		unsigned int size = test_sizes[si], align = test_aligns[ai];
		unsigned int want = align ? align : 8;
		struct kmem_cache *s;
		void *objs[150];

		s = kmem_cache_create("sizes", size, align,
				      f ? SLAB_HWCACHE_ALIGN : 0, NULL);
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(kmem_cache_size(s), size);
		if (f && size > 32)
			want = want > 64 ? want : 64;
		for (i = 0; i < nobj; i++) {
			objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
			ck_assert_ptr_nonnull(objs[i]);
			ck_assert_msg((uintptr_t)objs[i] % want == 0,
				      "size %u align %u: %p", size, align, objs[i]);
			memset(objs[i], (int)(i & 0xff), size);
			addrs[i] = (uintptr_t)objs[i];
		}
		for (i = 0; i < nobj; i++) {
			unsigned char *p = objs[i];

			ck_assert_uint_eq(p[0], i & 0xff);
			ck_assert_uint_eq(p[size - 1], i & 0xff);
		}
		qsort(addrs, nobj, sizeof(addrs[0]), ptr_cmp);
		for (i = 1; i < nobj; i++)
			ck_assert_msg(addrs[i - 1] + size <= addrs[i],
				      "overlap at size %u", size);
		check_cache_invariants(s);
		for (i = 0; i < nobj; i++)
			kmem_cache_free(s, objs[i]);
		ck_assert_uint_eq(check_cache_invariants(s), 0);
		kmem_cache_destroy(s);
	}
}
END_TEST

/*
 * 8-byte objects are 8 bytes apart, hardened or not: the free mark and
 * the freelist link share word 0 (a 16-byte stride spread espresso's
 * 8-byte cubes over twice the cache lines of every peer: 23 million L1
 * misses in its loop against mimalloc's 12 thousand, docs/benchmarks.md
 * "Where the time goes"). Objects go through the slabs' freelists and
 * back (more than the magazines hold), with the program's data in them,
 * and each comes back once.
 */
TEST(core, test_8_byte_objects_have_an_8_byte_stride)
{
	struct kmem_cache *s = kmem_cache_create("eight", 8, 0, 0, NULL);
	struct kmem_cache *k = kmalloc_slab(8);
	unsigned int n = test_iters(6000, 1500), i, round;
	uint64_t **objs = calloc(n, sizeof(*objs));
	uintptr_t *addrs = calloc(n, sizeof(*addrs));

	ck_assert_ptr_nonnull(objs);
	ck_assert_ptr_nonnull(addrs);
	/* (debug caches keep red zones and their words outside) */
	if (!slab_debug(s))
		ck_assert_uint_eq(s->size, 8);
	if (!slab_debug(k))
		ck_assert_uint_eq(k->size, 8);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < n; i++) {
			objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
			ck_assert_ptr_nonnull(objs[i]);
			/* the program's data: what a link would never be */
			*objs[i] = ~(uint64_t)i;
			addrs[i] = (uintptr_t)objs[i];
		}
		for (i = 0; i < n; i++)
			ck_assert_uint_eq(*objs[i], ~(uint64_t)i);
		qsort(addrs, n, sizeof(addrs[0]), ptr_cmp);
		for (i = 1; i < n; i++)
			ck_assert_uint_gt(addrs[i], addrs[i - 1]);	/* each once */
		/* fresh objects: some run of neighbours 8 bytes apart */
		if (!round && !slab_debug(s)) {
			unsigned int adjacent = 0;

			for (i = 1; i < n; i++)
				adjacent += addrs[i] - addrs[i - 1] == 8;
			ck_assert_uint_gt(adjacent, n / 2);
		}
		check_cache_invariants(s);
		/* every other object first: freelists through the slabs */
		for (i = 0; i < n; i += 2)
			kmem_cache_free(s, objs[i]);
		for (i = 1; i < n; i += 2)
			kmem_cache_free(s, objs[i]);
		if (round == 1)
			kmem_cache_shrink(s);
		ck_assert_uint_eq(check_cache_invariants(s), 0);
	}
	kmem_cache_destroy(s);
	free(objs);
	free(addrs);
}
END_TEST

static unsigned long ctor_calls;
#define CTOR_MAGIC 0x5eedf00dU

struct ctor_obj {
	unsigned int magic;
	unsigned int state;
	char pad[52];
};

static void test_ctor(void *p)
{
	struct ctor_obj *o = p;

	__atomic_fetch_add(&ctor_calls, 1, __ATOMIC_RELAXED);
	o->magic = CTOR_MAGIC;
	o->state = 0;
}

TEST(core, test_constructor_contract)
{
	struct kmem_cache *s;
	struct ctor_obj *objs[1000];
	unsigned long calls;
	unsigned int i, round;
	cpu_set_t cpus;

	/* frees on one CPU are reused there: no migration between them */
	test_pin(&cpus);
	ctor_calls = 0;
	s = kmem_cache_create("ctor", sizeof(struct ctor_obj), 0, 0, test_ctor);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(ctor_calls, 0);	/* no slab yet */
	for (i = 0; i < 1000; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		ck_assert_uint_eq(objs[i]->magic, CTOR_MAGIC);
		ck_assert_uint_eq(objs[i]->state, 0);
	}
	/* Once per object of each slab created, at creation. */
	ck_assert_uint_eq(ctor_calls, s->nr_slabs * s->objects);
	calls = ctor_calls;
	for (round = 0; round < 3; round++) {
		/* Every other object: slabs stay partial, none is discarded. */
		for (i = round & 1; i < 1000; i += 2) {
			/* Users give objects back in the constructed state. */
			objs[i]->state = 0;
			kmem_cache_free(s, objs[i]);
		}
		for (i = round & 1; i < 1000; i += 2) {
			objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
			/* The free pointer never clobbers a ctor object. */
			ck_assert_uint_eq(objs[i]->magic, CTOR_MAGIC);
			ck_assert_uint_eq(objs[i]->state, 0);
			objs[i]->state = 1;
		}
	}
	ck_assert_uint_eq(ctor_calls, calls);	/* not on reuse */
	for (i = 0; i < 1000; i++)
		kmem_cache_free(s, objs[i]);
	/* Slabs made again after being given back are constructed again. */
	kmem_cache_shrink(s);
	objs[0] = kmem_cache_alloc(s, GFP_KERNEL);
	ck_assert_uint_eq(ctor_calls, s->slabs_allocated * s->objects);
	ck_assert_uint_gt(ctor_calls, calls);
	kmem_cache_free(s, objs[0]);
	kmem_cache_destroy(s);
	test_unpin(&cpus);
}
END_TEST

/* ------------------------------------------------------------------ */
/* kmalloc */

/*
 * A refill that runs out of slabs makes all the slabs the rest of its
 * batch needs in one window without the cache lock, then puts them on
 * the lists under one retake (not one unlock/lock round trip per slab:
 * gmalloc_t1 made 292,000 order-0 slabs in 104,000 refills). Seen from
 * the constructor, which runs while a slab is made: every object of the
 * four slabs of one refill sees the cache's slab count it had before the
 * refill (one by one, the count grew between the slabs).
 */
static struct kmem_cache *window_cache;
static unsigned long window_seen[8], window_nseen;

static void window_ctor(void *p)
{
	unsigned long n = window_cache->nr_slabs;	/* this thread's only */

	if (!window_nseen || window_seen[window_nseen - 1] != n)
		if (window_nseen < ARRAY_SIZE(window_seen))
			window_seen[window_nseen++] = n;
}

TEST(core, test_refill_makes_its_slabs_in_one_window)
{
	void *objs[256];
	int n;

	window_nseen = 0;
	window_cache = kmem_cache_create("grow-window", 512, 0, 0, window_ctor);
	ck_assert_ptr_nonnull(window_cache);
	n = 4 * (int)window_cache->objects;
	ck_assert_int_le(n, (int)ARRAY_SIZE(objs));
	ck_assert_int_eq(slab_alloc_bulk(window_cache, GFP_KERNEL, objs, n, 0), n);
	ck_assert_uint_eq(window_cache->nr_slabs, 4);
	ck_assert_uint_eq(window_cache->nr_full, 4);
	ck_assert_uint_eq(window_nseen, 1);
	ck_assert_uint_eq(window_seen[0], 0);
	for (int i = 1; i < n; i++)
		for (int j = 0; j < i; j++)
			ck_assert_ptr_ne(objs[i], objs[j]);
	slab_free_bulk(window_cache, objs, n, 0);
	kmem_cache_destroy(window_cache);
}
END_TEST

/*
 * A refill that needs new slabs makes them before it takes the cache lock
 * (grow_ahead()): it takes the lock once, not once more per window
 * (grow_relocks stays). From an empty cache, four slabs' worth; then from
 * a cache whose partial slab holds fewer free objects than the refill
 * asks (the fill's common case); then a refill the cache can serve makes
 * nothing. A constructor's cache keeps the window.
 */
TEST(core, test_refill_grows_before_the_lock)
{
	struct kmem_cache *s = kmem_cache_create("grow-ahead", 512, 0, 0, NULL);
	static void *objs[512];
	unsigned long win;
	int n, m, i;

	ck_assert_ptr_nonnull(s);
	/*
	 * A debug cache (the debug preset: slab_debug on every cache)
	 * prepares its objects at the making, so it keeps the window: one
	 * round trip of the lock per refill that grows (grow_ahead())
	 */
	win = slab_debug(s) ? 1 : 0;
	n = 4 * (int)s->objects;
	ck_assert_int_le(n + 2 * (int)s->objects, (int)ARRAY_SIZE(objs));
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, objs, n, 0), n);
	ck_assert_uint_eq(s->nr_slabs, 4);
	ck_assert_uint_eq(s->nr_full, 4);
	ck_assert_uint_eq(s->grow_relocks, win);
	/* a partial slab with a third of its objects, a refill of a slab's worth */
	m = (int)s->objects / 3;
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, objs + n, (int)s->objects - m, 0),
			 (int)s->objects - m);
	ck_assert_uint_eq(s->grow_relocks, 2 * win);
	ck_assert_uint_eq(s->nr_slabs, 5);
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, objs + n + s->objects - m,
					 (int)s->objects, 0), (int)s->objects);
	ck_assert_uint_eq(s->grow_relocks, 3 * win);
	ck_assert_uint_eq(s->nr_slabs, 6);
	ck_assert_uint_eq(s->nr_empty, 0);
	n += 2 * (int)s->objects - m;
	for (i = 1; i < n; i++)
		ck_assert_ptr_ne(objs[i], objs[i - 1]);
	/*
	 * objs[0] stays: its slab keeps room whether or not the cache keeps
	 * empty slabs (the nocache preset, CONFIG_SLAB_KEEP_EMPTY=n, returns
	 * the others at once and would have to make one)
	 */
	slab_free_bulk(s, objs + 1, n - 1, 0);
	/* room for it: nothing made */
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, objs + 1, 8, 0), 8);
	ck_assert_uint_eq(s->slabs_allocated, 6);
	slab_free_bulk(s, objs, 9, 0);
	kmem_cache_destroy(s);

	window_cache = kmem_cache_create("grow-window-ctor", 512, 0, 0, window_ctor);
	ck_assert_ptr_nonnull(window_cache);
	ck_assert_int_eq(slab_alloc_bulk(window_cache, GFP_KERNEL, objs, 8, 0), 8);
	ck_assert_uint_eq(window_cache->grow_relocks, 1);
	slab_free_bulk(window_cache, objs, 8, 0);
	kmem_cache_destroy(window_cache);
}
END_TEST

/*
 * Small objects get slabs of 2^SLAB_MIN_ORDER pages (32 KiB by default),
 * not one page: the kmalloc classes up to a page whose one-page slab held
 * four objects (kmalloc-8 .. kmalloc-1k) are order 3 and keep at most as
 * many bytes of empty slabs as before (one 32 KiB slab, not 2-5 pages).
 */
TEST_IF(SLAB_MIN_ORDER == 3 && IS_ENABLED(CONFIG_SLAB_KEEP_EMPTY), core,
	test_small_objects_get_32k_slabs)
{
	unsigned int i;

	for_each_kmalloc_class(i) {
		struct kmem_cache *s = kmalloc_slab(kmalloc_info[i].size);

		ck_assert_ptr_nonnull(s);
		if (s->size * 4 > PAGE_SIZE)
			continue;
		ck_assert_msg(s->order == 3, "%s: order %u", s->name, s->order);
		ck_assert_uint_eq(s->objects, (PAGE_SIZE << 3) / s->size);
		ck_assert_msg(s->min_partial == 1, "%s: %u empty slabs kept",
			      s->name, s->min_partial);
	}
}
END_TEST

/*
 * A 32 KiB slab costs memory only as its objects are handed out: objects
 * leave in address order and a slab's untouched pages are not written, so
 * after one page's worth of objects the slab's later pages are still not
 * resident.
 */
static bool test_page_resident(const void *p)
{
	unsigned char vec = 0;

	ck_assert_int_eq(mincore((void *)((uintptr_t)p & PAGE_MASK), PAGE_SIZE, &vec), 0);
	return vec & 1;
}

/*
 * Not in a debug-on build (the debug preset): a debug cache poisons and
 * red-zones every object of a slab when it makes it (allocate_slab()),
 * so all its pages are touched at once, by design.
 */
TEST_IF(SLAB_MIN_ORDER == 3 && !IS_ENABLED(CONFIG_SLAB_DEBUG_ON), core,
	test_big_slab_touched_as_used)
{
	struct kmem_cache *s = kmem_cache_create("lazy-pages", 256, 0, 0, NULL);
	unsigned int per_page, i;
	void *first, *objs[64];
	char *base;

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->order, 3);
	per_page = PAGE_SIZE / s->size;
	ck_assert_uint_le(per_page, ARRAY_SIZE(objs));
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, &first, 1, 0), 1);
	base = slab_base(virt_to_slab(first));
	ck_assert_ptr_eq(first, base);
	/* whatever the block held before: its pages past the first dropped */
	ck_assert_int_eq(madvise(base + PAGE_SIZE, 7 * PAGE_SIZE, MADV_DONTNEED), 0);
	/* the rest of page 0 and all of page 1 */
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, objs, (int)(2 * per_page - 1), 0),
			 (int)(2 * per_page - 1));
	for (i = 0; i < 2 * per_page - 1; i++)
		ck_assert_ptr_eq(virt_to_slab(objs[i]), virt_to_slab(first));
	/* page 1 was touched by the refill itself (each object's mark) */
	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
		ck_assert(test_page_resident(base + PAGE_SIZE));
	for (i = 2; i < 8; i++)
		ck_assert_msg(!test_page_resident(base + (size_t)i * PAGE_SIZE),
			      "page %u of the slab touched before use", i);
	slab_free_bulk(s, objs, (int)(2 * per_page - 1), 0);
	slab_free_bulk(s, &first, 1, 0);
	kmem_cache_destroy(s);
}
END_TEST

/*
 * Fresh pages populated ahead (docs/slab.md "Fresh pages of the big
 * classes"). kmalloc-8k keeps its mark in page_alloc's shadow, so the
 * slab layer never writes its objects. fill_setup() takes objects until
 * one is the first of a slab whose other objects are all fresh, drops
 * those pages, and forgets the probes of the tests before; the refill
 * after it hands out object 1, whose probe is its second page (the byte
 * at 4/5 of the class), and the next refill of two gets objects 2 and 3.
 */
struct fill_case {
	struct kmem_cache *s;
	void *held[64];
	int nheld;
	char *base;
};

/*
 * Without page_alloc's shadow (under valgrind) the class keeps its mark
 * in its objects: each refill's marks touch their pages, and nothing is
 * probed or populated. Checks that, and says so (true).
 */
static bool fill_marks_in_objects(struct kmem_cache *s)
{
	unsigned long before = s->fill_prefaults;
	void *a, *b;

	if (s->mark_mul != 1)
		return false;
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, &a, 1, 0), 1);
	/* its second half, past its mark (which slab_free_bulk() wants) */
	ck_assert(s->mark_off + sizeof(unsigned long) <= s->object_size / 2 ||
		  s->mark_off >= s->object_size);
	memset((char *)a + s->object_size / 2, 1, s->object_size / 2);
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, &b, 1, 0), 1);
	ck_assert(test_page_resident(b));	/* its mark */
	ck_assert_uint_eq(s->fill_prefaults, before);
	ck_assert_uint_eq(s->fill_probe, 0);
	slab_free_bulk(s, &a, 1, 0);
	slab_free_bulk(s, &b, 1, 0);
	return true;
}

/* false: the marks are in the objects (checked, nothing else to do) */
static bool fill_setup_size(struct fill_case *c, size_t size)
{
	struct kmem_cache *s = kmalloc_slab(size);
	struct page *slab;

	ck_assert_ptr_nonnull(s);
	c->s = s;
	/* the mark is in the shadow: nothing of the slab layer writes them */
	if (fill_marks_in_objects(s))
		return false;
	ck_assert_uint_eq(s->size, size);
	/* the callers take objects 1..3 of a slab at least */
	ck_assert_uint_ge(s->objects, 4);
	for (c->nheld = 0;; c->nheld++) {
		ck_assert_int_lt(c->nheld, (int)ARRAY_SIZE(c->held));
		ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, &c->held[c->nheld], 1, 0), 1);
		slab = virt_to_slab(c->held[c->nheld]);
		if (c->held[c->nheld] == slab_base(slab) && slab->fresh == 1 &&
		    !slab->freelist)
			break;
	}
	c->nheld++;
	c->base = slab_base(slab);
	/* the pages after object 0's (its page keeps object 1's start) */
	ck_assert_int_eq(madvise((void *)ALIGN_UP((uintptr_t)c->base + s->size, PAGE_SIZE),
				 (size_t)(s->objects - 1) * s->size, MADV_DONTNEED), 0);
	s->fill_probe = 0;
	s->fill_wait = 0;
	s->fill_backoff = 0;
	s->fill_seen = 0;
	return true;
}

static bool fill_setup(struct fill_case *c)
{
	return fill_setup_size(c, 8192);
}

static void fill_done(struct fill_case *c, void **objs, int n)
{
	if (n)
		slab_free_bulk(c->s, objs, n, 0);
	slab_free_bulk(c->s, c->held, c->nheld, 0);
}

TEST_IF(IS_ENABLED(CONFIG_SLAB_FREE_HARDENED), core,
	test_fresh_pages_populated_when_blocks_are_written)
{
	struct fill_case c;
	unsigned long before;
	void *a, *b, *d;

	if (!fill_setup(&c))
		return;
	before = c.s->fill_prefaults;
	ck_assert_int_eq(slab_alloc_bulk(c.s, GFP_KERNEL, &a, 1, 0), 1);
	ck_assert_ptr_eq(a, c.base + 8192);
	ck_assert_uint_eq(c.s->fill_probe & PAGE_MASK, (uintptr_t)a + PAGE_SIZE);
	memset(a, 1, 8192);	/* the program writes its block */
	/* one look that says so: not yet acted on */
	ck_assert_int_eq(slab_alloc_bulk(c.s, GFP_KERNEL, &b, 1, 0), 1);
	ck_assert_ptr_eq(b, c.base + 2 * 8192);
	ck_assert_int_eq(c.s->fill_seen, 2);
	ck_assert_uint_eq(c.s->fill_prefaults, before);
	ck_assert(!test_page_resident(b));
	memset(b, 1, 8192);
	/* the second: object 3's first page before any write */
	ck_assert_int_eq(slab_alloc_bulk(c.s, GFP_KERNEL, &d, 1, 0), 1);
	ck_assert_ptr_eq(d, c.base + 3 * 8192);
	ck_assert_int_eq(c.s->fill_seen, 3);
	ck_assert_uint_eq(c.s->fill_prefaults, before + 1);
	ck_assert(test_page_resident(d));
	/* its second page is the next probe: the program's to touch */
	ck_assert_uint_eq(c.s->fill_probe & PAGE_MASK, (uintptr_t)d + PAGE_SIZE);
	ck_assert(!test_page_resident((char *)d + PAGE_SIZE));
	fill_done(&c, &d, 1);
	slab_free_bulk(c.s, &a, 1, 0);
	slab_free_bulk(c.s, &b, 1, 0);
}
END_TEST

TEST_IF(IS_ENABLED(CONFIG_SLAB_FREE_HARDENED), core,
	test_fresh_pages_not_populated_when_only_first_bytes_written)
{
	struct fill_case c;
	unsigned long before;
	void *a, *b[2];

	if (!fill_setup(&c))
		return;
	before = c.s->fill_prefaults;
	ck_assert_int_eq(slab_alloc_bulk(c.s, GFP_KERNEL, &a, 1, 0), 1);
	ck_assert_ptr_eq(a, c.base + 8192);
	memset(a, 1, 16);	/* alloc_test's 16 bytes */
	ck_assert_int_eq(slab_alloc_bulk(c.s, GFP_KERNEL, b, 2, 0), 2);
	ck_assert_ptr_eq(b[0], c.base + 2 * 8192);
	ck_assert_uint_eq(c.s->fill_prefaults, before);
	ck_assert(!test_page_resident(b[0]));
	ck_assert(!test_page_resident((char *)b[0] + PAGE_SIZE));
	ck_assert(!test_page_resident(b[1]));
	fill_done(&c, b, 2);
	slab_free_bulk(c.s, &a, 1, 0);
}
END_TEST

/*
 * A slab's pages may be resident with what an earlier slab left there: a
 * probe on such a page says nothing about the program, so none is taken
 * there (alloc_test's RSS went 25 -> 65 MiB when it was): of objects 1
 * and 2 handed out together, 2 (the top) has its second page resident,
 * so the probe is object 1's; with it resident too, there is none.
 */
TEST_IF(IS_ENABLED(CONFIG_SLAB_FREE_HARDENED), core,
	test_fill_probe_not_on_a_resident_page)
{
	struct fill_case c;
	void *a[2];

	if (!fill_setup(&c))
		return;
	memset(c.base + 2 * 8192 + PAGE_SIZE, 0, PAGE_SIZE);
	ck_assert_int_eq(slab_alloc_bulk(c.s, GFP_KERNEL, a, 2, 0), 2);
	ck_assert_ptr_eq(a[0], c.base + 8192);
	ck_assert_ptr_eq(a[1], c.base + 2 * 8192);
	ck_assert_uint_eq(c.s->fill_probe & PAGE_MASK, (uintptr_t)a[0] + PAGE_SIZE);
	slab_free_bulk(c.s, a, 2, 0);
	fill_done(&c, NULL, 0);

	if (!fill_setup(&c))
		return;
	memset(c.base + 8192 + PAGE_SIZE, 0, PAGE_SIZE);
	memset(c.base + 2 * 8192 + PAGE_SIZE, 0, PAGE_SIZE);
	ck_assert_int_eq(slab_alloc_bulk(c.s, GFP_KERNEL, a, 2, 0), 2);
	ck_assert_ptr_eq(a[1], c.base + 2 * 8192);
	ck_assert_uint_eq(c.s->fill_probe, 0);
	slab_free_bulk(c.s, a, 2, 0);
	fill_done(&c, NULL, 0);
}
END_TEST

/*
 * kmalloc-2k never has a probe (its 4/5 prefix never leaves the page an
 * object starts on), so its refills go by what the last look of any class
 * found: after kmalloc-8k's program was seen writing its blocks (two
 * looks in a row), a
 * kmalloc-2k refill populates its fresh objects' pages; after it was
 * seen writing only their first bytes, it does not.
 */
TEST_IF(IS_ENABLED(CONFIG_SLAB_FREE_HARDENED), core,
	test_class_without_probe_follows_the_last_look)
{
	struct fill_case c, c2;
	int round;

	for (round = 0; round < 2; round++) {
		bool writes = round == 0;
		void *a, *b, *e, *q[8];
		unsigned long before;
		int i, k, last;

		if (!fill_setup(&c))
			return;
		ck_assert_int_eq(slab_alloc_bulk(c.s, GFP_KERNEL, &a, 1, 0), 1);
		memset(a, 1, writes ? 8192 : 16);
		ck_assert_int_eq(slab_alloc_bulk(c.s, GFP_KERNEL, &b, 1, 0), 1);
		memset(b, 1, writes ? 8192 : 16);
		ck_assert_int_eq(slab_alloc_bulk(c.s, GFP_KERNEL, &e, 1, 0), 1);
		ck_assert_int_eq(c.s->fill_seen, writes ? 3 : 1);
		/*
		 * objects 1..8 of a kmalloc-2k slab, pages 1..4 dropped; of
		 * a slab of fewer (the size preset's order 0 minimum: 4
		 * objects), objects 1..3 and page 1
		 */
		ck_assert(fill_setup_size(&c2, 2048));
		k = min_t(int, 8, (int)c2.s->objects - 1);
		last = (int)(((size_t)(k + 1) * 2048 - 1) / PAGE_SIZE);
		ck_assert_int_ge(last, 1);
		before = c2.s->fill_prefaults;
		ck_assert_int_eq(slab_alloc_bulk(c2.s, GFP_KERNEL, q, k, 0), k);
		ck_assert_ptr_eq(q[0], c2.base + 2048);
		ck_assert_uint_eq(c2.s->fill_probe, 0);
		ck_assert_uint_eq(c2.s->fill_prefaults - before, (writes ? 1 : 0));
		for (i = 1; i <= last; i++)
			ck_assert_msg(test_page_resident(c2.base + i * PAGE_SIZE) == writes,
				      "round %d: page %d", round, i);
		fill_done(&c2, q, k);
		fill_done(&c, &e, 1);
		slab_free_bulk(c.s, &a, 1, 0);
		slab_free_bulk(c.s, &b, 1, 0);
	}
}
END_TEST

/*
 * madvise() of this program (the library's objects are linked in, so
 * page_alloc's calls come here): MADV_POPULATE_WRITE calls counted, and
 * those made with an allocator lock held (sigsafe's depth: every lock of
 * the library is taken inside a section).
 */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif
static int populate_calls, populate_calls_locked;

int madvise(void *addr, size_t len, int advice)
{
	if (advice == MADV_POPULATE_WRITE) {
		__atomic_fetch_add(&populate_calls, 1, __ATOMIC_RELAXED);
		if (sigsafe.depth)
			__atomic_fetch_add(&populate_calls_locked, 1, __ATOMIC_RELAXED);
	}
	return (int)syscall(SYS_madvise, addr, len, advice);
}

/*
 * Once the probes were found written three times in a row, the looks
 * back off (the next after 1, 3, 7 refills): the refills between leave no
 * probe and populate all of their objects' prefixes, each with one
 * madvise, so a block then arrives with both of its pages resident.
 * Before, every refill left a probe on its object's second page, which
 * reached the program out of memory.
 */
TEST_IF(IS_ENABLED(CONFIG_SLAB_FREE_HARDENED), core,
	test_looks_back_off_while_blocks_are_written)
{
	struct fill_case c;
	static void *o[16];
	int i, whole = 0, calls;

	if (!fill_setup(&c))
		return;
	for (i = 0; i < (int)ARRAY_SIZE(o); i++) {
		calls = populate_calls;
		ck_assert_int_eq(slab_alloc_bulk(c.s, GFP_KERNEL, &o[i], 1, 0), 1);
		ck_assert_int_le(populate_calls - calls, 1);
		if (test_page_resident(o[i]) && test_page_resident((char *)o[i] + PAGE_SIZE)) {
			whole++;
			/* not the program's: no probe of this refill's */
			ck_assert_uint_ne(c.s->fill_probe & PAGE_MASK,
					  (uintptr_t)o[i] + PAGE_SIZE);
		}
		memset(o[i], 1, 8192);	/* the program writes its block */
	}
	ck_assert_int_eq(c.s->fill_seen, 3);
	/* refills 7, 8 and 11..16 (1-based): looks at 6 and 10 */
	ck_assert_int_ge(whole, 6);
	fill_done(&c, o, (int)ARRAY_SIZE(o));
}
END_TEST

/*
 * Through kmalloc, the per-CPU layer refills kmalloc-8k under its CPU
 * lock; the populates of a program that writes its blocks wait until
 * slab_alloc_miss() has that lock dropped (the batch's page faults would
 * otherwise make the threads sharing the CPU wait), and they still come
 * before the block reaches the program.
 */
TEST_IF(IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) && IS_ENABLED(CONFIG_PERCPU_CACHE), core,
	test_refill_populates_outside_the_cpu_lock)
{
	struct kmem_cache *s = kmalloc_slab(8192);
	static void *p[400];
	unsigned long before;
	int i, resident = 0;

	ck_assert_ptr_nonnull(s);
	if (fill_marks_in_objects(s))
		return;
	before = s->fill_prefaults;
	populate_calls = populate_calls_locked = 0;
	for (i = 0; i < (int)ARRAY_SIZE(p); i++) {
		unsigned char vec[2];

		p[i] = kmalloc(8192, GFP_KERNEL);
		ck_assert_ptr_nonnull(p[i]);
		ck_assert_int_eq(mincore(p[i], 2 * PAGE_SIZE, vec), 0);
		resident += (vec[0] & vec[1] & 1);
		memset(p[i], 1, 8192);
	}
	ck_assert_uint_gt(s->fill_prefaults, before);
	ck_assert_int_gt(populate_calls, 0);
	ck_assert_int_eq(populate_calls_locked, 0);
	/* most blocks arrived resident: populated before malloc returned */
	ck_assert_msg(resident > (int)ARRAY_SIZE(p) / 2, "%d of %zu resident",
		      resident, ARRAY_SIZE(p));
	for (i = 0; i < (int)ARRAY_SIZE(p); i++)
		kfree(p[i]);
}
END_TEST

TEST(core, test_kmalloc_ksize)
{
	size_t sz;

	for (sz = 1; sz <= 20000; sz += (sz < 300 ? 1 : 97)) {
		unsigned char *p = kmalloc(sz, GFP_KERNEL);
		size_t ks = ksize(p);

		ck_assert_ptr_nonnull(p);
		ck_assert_msg(ks >= sz, "ksize %zu < %zu", ks, sz);
		ck_assert((uintptr_t)p % 8 == 0);
		memset(p, 0xab, ks);	/* all of ksize is usable */
		kfree(p);
	}
}
END_TEST

TEST(core, test_kmalloc_pow2_aligned)
{
	size_t sz;
	void *p[4];
	int i;

	for (sz = 8; sz <= ((size_t)4 << 20); sz <<= 1) {
		for (i = 0; i < 4; i++) {
			p[i] = kmalloc(sz, GFP_KERNEL);
			ck_assert_ptr_nonnull(p[i]);
			ck_assert_msg((uintptr_t)p[i] % sz == 0,
				      "kmalloc(%zu) = %p", sz, p[i]);
		}
		for (i = 0; i < 4; i++)
			kfree(p[i]);
	}
}
END_TEST

TEST(core, test_kmalloc_edges)
{
	unsigned char *p, *q;
	size_t i;

	ck_assert_ptr_eq(kmalloc(0, GFP_KERNEL), ZERO_SIZE_PTR);
	ck_assert_ptr_eq(kzalloc(0, GFP_KERNEL), ZERO_SIZE_PTR);
	kfree(NULL);
	kfree(ZERO_SIZE_PTR);
	kfree_sensitive(NULL);
	ck_assert_uint_eq(ksize(NULL), 0);
	ck_assert_uint_eq(ksize(ZERO_SIZE_PTR), 0);

	errno = 0;
	ck_assert_ptr_null(kmalloc_array(SIZE_MAX / 2, 3, GFP_KERNEL));
	ck_assert_int_eq(errno, ENOMEM);
	errno = 0;
	ck_assert_ptr_null(kcalloc((size_t)1 << 33, (size_t)1 << 33, GFP_KERNEL));
	ck_assert_int_eq(errno, ENOMEM);
	errno = 0;
	ck_assert_ptr_null(kmalloc(KMALLOC_MAX_SIZE + 1, GFP_KERNEL | __GFP_NOWARN));
	ck_assert_int_eq(errno, ENOMEM);

	/* kzalloc/kcalloc zero memory that was dirty before. */
	p = kmalloc(200, GFP_KERNEL);
	memset(p, 0xff, 200);
	kfree(p);
	p = kzalloc(200, GFP_KERNEL);
	for (i = 0; i < 200; i++)
		ck_assert_uint_eq(p[i], 0);
	kfree(p);
	p = kcalloc(10, 20, GFP_KERNEL);
	for (i = 0; i < 200; i++)
		ck_assert_uint_eq(p[i], 0);
	kfree(p);
	p = kmalloc_array(10, 20, GFP_KERNEL);
	ck_assert_uint_ge(ksize(p), 200);
	kfree(p);

	/* Beyond the caches: page blocks, then an own mapping. */
	p = kmalloc(KMALLOC_MAX_CACHE_SIZE + 1, GFP_KERNEL);
	ck_assert_ptr_nonnull(p);
	ck_assert((uintptr_t)p % PAGE_SIZE == 0);
	ck_assert_uint_ge(ksize(p), KMALLOC_MAX_CACHE_SIZE + 1);
	memset(p, 1, ksize(p));
	kfree(p);
	p = kzalloc((size_t)9 << 20, GFP_KERNEL);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_ge(ksize(p), (size_t)9 << 20);
	ck_assert_uint_eq(p[(9 << 20) - 1], 0);
	memset(p, 2, (size_t)9 << 20);
	kfree(p);

	/* krealloc keeps contents across every kind of backing, both ways. */
	{
		static const size_t steps[] = {
			10, 100, 5000, 100000, (size_t)6 << 20, 50, 3, 20000,
		};
		size_t k, j;

		p = krealloc(NULL, steps[0], GFP_KERNEL);
		ck_assert_ptr_nonnull(p);
		for (j = 0; j < steps[0]; j++)
			p[j] = (unsigned char)(j * 3);
		for (k = 1; k < ARRAY_SIZE(steps); k++) {
			size_t keep = steps[k - 1] < steps[k] ? steps[k - 1] : steps[k];

			q = krealloc(p, steps[k], GFP_KERNEL);
			ck_assert_ptr_nonnull(q);
			ck_assert_uint_ge(ksize(q), steps[k]);
			for (j = 0; j < keep; j++)
				ck_assert_uint_eq(q[j], (unsigned char)(j * 3 + k - 1));
			for (j = 0; j < steps[k]; j++)
				q[j] = (unsigned char)(j * 3 + k);
			p = q;
		}
	}
	q = krealloc(p, 0, GFP_KERNEL);
	ck_assert_ptr_eq(q, ZERO_SIZE_PTR);

	p = kmalloc(64, GFP_KERNEL);
	memset(p, 0x5a, 64);
	kfree_sensitive(p);
}
END_TEST

TEST(core, test_kmalloc_aligned)
{
	size_t align, sizes[] = { 1, 24, 100, 3000, 70000 };
	unsigned int k;
	void *p;

	for (align = 1; align <= ((size_t)8 << 20); align <<= 1) {
		for (k = 0; k < ARRAY_SIZE(sizes); k++) {
			p = kmalloc_aligned(sizes[k], align, GFP_KERNEL);
			ck_assert_ptr_nonnull(p);
			ck_assert_msg((uintptr_t)p % align == 0,
				      "kmalloc_aligned(%zu, %zu) = %p", sizes[k], align, p);
			ck_assert_uint_ge(ksize(p), sizes[k]);
			memset(p, 0x11, sizes[k]);
			kfree(p);
		}
	}
	errno = 0;
	ck_assert_ptr_null(kmalloc_aligned(10, 3, GFP_KERNEL));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_eq(kmalloc_slab(8), kmalloc_slab(1));
	ck_assert_ptr_eq(kmalloc_slab(96), kmalloc_slab(81));
	ck_assert_str_eq(kmem_cache_name(kmalloc_slab(96)), "kmalloc-96");
	ck_assert_str_eq(kmem_cache_name(kmalloc_slab(150)), "kmalloc-160");
	ck_assert_str_eq(kmem_cache_name(kmalloc_slab(170)), "kmalloc-192");
	ck_assert_str_eq(kmem_cache_name(kmalloc_slab(1100)), "kmalloc-1280");
	ck_assert_str_eq(kmem_cache_name(kmalloc_slab(8192)), "kmalloc-8k");
	ck_assert_ptr_null(kmalloc_slab(KMALLOC_MAX_CACHE_SIZE + 1));
}
END_TEST

/* First use of every class from 4 threads at once: one cache per class. */
#define LR_THREADS 4
static pthread_barrier_t lr_barrier;
static struct kmem_cache *lr_seen[LR_THREADS][16];

static void *lr_thread(void *arg)
{
	unsigned long id = (unsigned long)arg;
	unsigned int c;

	pthread_barrier_wait(&lr_barrier);
	for (c = 0; c < 16; c++) {
		size_t size = c < 13 ? (size_t)8 << c : 96 + c;
		void *p = kmalloc(size, GFP_KERNEL);

		ck_assert_ptr_nonnull(p);
		lr_seen[id][c] = size <= KMALLOC_MAX_CACHE_SIZE ?
				 virt_to_slab(p)->slab_cache : NULL;
		kfree(p);
	}
	return NULL;
}

TEST(core, test_kmalloc_lazy_race)
{
	pthread_t th[LR_THREADS];
	static char buf[65536];
	unsigned long i;
	unsigned int c;
	char *l;

	pthread_barrier_init(&lr_barrier, NULL, LR_THREADS);
	for (i = 0; i < LR_THREADS; i++)
		pthread_create(&th[i], NULL, lr_thread, (void *)i);
	for (i = 0; i < LR_THREADS; i++)
		pthread_join(th[i], NULL);
	for (c = 0; c < 16; c++)
		for (i = 1; i < LR_THREADS; i++)
			ck_assert_ptr_eq(lr_seen[i][c], lr_seen[0][c]);
	/* Exactly one kmalloc-64 line in slabinfo. */
	slabinfo_show(buf, sizeof(buf));
	l = strstr(buf, "\nkmalloc-64 ");
	ck_assert_ptr_nonnull(l);
	ck_assert_ptr_null(strstr(l + 1, "\nkmalloc-64 "));
	ck_assert_ptr_eq(kmalloc_slab(64), lr_seen[0][3]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* shrink, destroy, bulk */

TEST(core, test_shrink_returns_pages)
{
	struct kmem_cache *s;
	struct page_alloc_stats st;
	size_t base, full, before_shrink;
	unsigned long slabs;
	static void *objs[6000];
	unsigned int i;

	s = kmem_cache_create("shrinkme", 256, 0, 0, NULL);
	ck_assert_ptr_nonnull(s);
	page_alloc_get_stats(&st);
	base = st.bytes_allocated;
	for (i = 0; i < 6000; i++)
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
	page_alloc_get_stats(&st);
	full = st.bytes_allocated;
	ck_assert_uint_ge(full - base, 6000 * 256);
	for (i = 0; i < 6000; i++)
		kmem_cache_free(s, objs[i]);
	ck_assert_uint_eq(check_cache_invariants(s), 0);
	page_alloc_get_stats(&st);
	before_shrink = st.bytes_allocated;
	if (!s->pcp) {
		/* Only min_partial empty slabs stay until shrink. */
		ck_assert_uint_lt(before_shrink, full);
		ck_assert_uint_eq(before_shrink - base,
				  (size_t)s->nr_empty << (PAGE_SHIFT + s->order));
	}
	slabs = s->nr_slabs;
	/* nocache builds keep no empty slab at all. */
	ck_assert(slabs > 0 || (!s->pcp && !s->min_partial));
	/* Magazines drained, every slab given back, page_alloc sees it. */
	ck_assert_int_eq(kmem_cache_shrink(s), 0);
	ck_assert_uint_eq(s->nr_slabs, 0);
	ck_assert_uint_eq(cached_objects(s), 0);
	page_alloc_get_stats(&st);
	ck_assert_uint_ge(before_shrink - st.bytes_allocated,
			  (size_t)slabs << (PAGE_SHIFT + s->order));
	/* A cache with live objects reports that slabs remain. */
	objs[0] = kmem_cache_alloc(s, GFP_KERNEL);
	ck_assert_int_eq(kmem_cache_shrink(s), 1);
	kmem_cache_free(s, objs[0]);
	kmem_cache_destroy(s);
}
END_TEST

TEST(core, test_destroy_with_live_objects)
{
	struct kmem_cache *s;
	void *a, *b, *c;
	int fds[2];
	char buf[512], want[512];
	ssize_t n;

	s = kmem_cache_create("leaky", 48, 0, 0, NULL);
	a = kmem_cache_alloc(s, GFP_KERNEL);
	b = kmem_cache_alloc(s, GFP_KERNEL);
	c = kmem_cache_alloc(s, GFP_KERNEL);
	ck_assert_int_eq(pipe(fds), 0);
	uslab_log_set_fd(fds[1]);
	kmem_cache_destroy(s);
	uslab_log_set_fd(2);
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	/* Magazine refills may have spread the three over several slabs. */
	snprintf(want, sizeof(want), "uslab: kmem_cache_destroy leaky: Slab cache "
		 "still has objects (3 objects in %lu slabs)\n", s->nr_slabs);
	ck_assert_uint_ge(s->nr_slabs, 1);
	ck_assert_str_eq(buf, want);
	/* The cache stays: its objects are still valid and can be freed. */
	ck_assert_ptr_eq(kmem_cache_find("leaky"), s);
	memset(a, 1, 48);
	kmem_cache_free(s, a);
	kmem_cache_free(s, b);
	kmem_cache_free(s, c);
	kmem_cache_destroy(s);
	ck_assert_ptr_null(kmem_cache_find("leaky"));
}
END_TEST

TEST(core, test_bulk)
{
	struct kmem_cache *s = kmem_cache_create("bulk", 72, 0, 0, NULL);
	void *objs[1000];
	int i, j;

	ck_assert_int_eq(kmem_cache_alloc_bulk(s, GFP_KERNEL | __GFP_ZERO, 1000, objs),
			 1000);
	for (i = 0; i < 1000; i++) {
		for (j = 0; j < 72; j++)
			ck_assert_uint_eq(((unsigned char *)objs[i])[j], 0);
		memset(objs[i], i & 0xff, 72);
	}
	for (i = 0; i < 1000; i++)
		ck_assert_uint_eq(((unsigned char *)objs[i])[71], i & 0xff);
	ck_assert_uint_eq(check_cache_invariants(s), 1000);
	kmem_cache_free_bulk(s, 1000, objs);
	ck_assert_uint_eq(check_cache_invariants(s), 0);
	/* NULL cache: objects of any cache, kfree_bulk style. */
	objs[0] = kmalloc(10, GFP_KERNEL);
	objs[1] = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free_bulk(NULL, 2, objs);
	ck_assert_uint_eq(check_cache_invariants(s), 0);
	kmem_cache_destroy(s);
}
END_TEST

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

/* Every object of @s (all @n of them free) taken again once each, by one
 * refill into @again: the lists and counters agree; then @s destroyed. */
static void take_all_once_and_destroy(struct kmem_cache *s, void **again,
				      unsigned int n)
{
	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, again, (int)n, 0), (int)n);
	ck_assert_uint_eq(check_cache_invariants(s), n);
	qsort(again, n, sizeof(again[0]), cmp_ptr);
	for (unsigned int i = 1; i < n; i++)
		ck_assert_ptr_ne(again[i - 1], again[i]);
	slab_free_bulk(s, again, (int)n, 0);
	ck_assert_uint_eq(check_cache_invariants(s), 0);
	kmem_cache_destroy(s);
}

/*
 * A flush gives objects back in runs of one slab (slab_free_bulk(): one
 * detached freelist per run). Runs of one object (slabs interleaved), long
 * runs that take a full slab to empty, and chunks that end inside a run:
 * the lists and counters agree after each flush, and every object comes
 * back exactly once when all are taken again.
 */
TEST(core, test_free_bulk_runs)
{
	enum { N = 600, CHUNK = 37 };	/* over three slabs of 32 KiB */
	struct kmem_cache *s = kmem_cache_create("bulk-runs", 200, 0, 0, NULL);
	void *objs[N], *order[N], *again[N];
	unsigned int per, nslabs, i, j, k = 0;

	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, objs, N, 0), N);
	per = s->objects;
	ck_assert_uint_gt(per, 2);
	nslabs = (N + per - 1) / per;
	ck_assert_uint_gt(nslabs, 2);
	/* first half: one object of each slab in turn (runs of one) */
	for (j = 0; j < per / 2; j++)
		for (i = 0; i < nslabs; i++)
			if (i * per + j < N)
				order[k++] = objs[i * per + j];
	/* then the rest of each slab in address order (long runs) */
	for (i = 0; i < nslabs; i++)
		for (j = per / 2; j < per; j++)
			if (i * per + j < N)
				order[k++] = objs[i * per + j];
	ck_assert_uint_eq(k, N);
	/* a new cache's slabs hand out whole, in turn: objs[i * per] on */
	for (i = 0; i < N; i++)
		ck_assert_ptr_eq(virt_to_slab(objs[i]),
				 virt_to_slab(objs[i / per * per]));
	ck_assert_ptr_ne(virt_to_slab(objs[0]), virt_to_slab(objs[per]));
	for (i = 0; i < N; i += CHUNK) {
		unsigned int n = N - i < CHUNK ? N - i : CHUNK;

		slab_free_bulk(s, order + i, (int)n, 0);
		ck_assert_uint_eq(check_cache_invariants(s), N - i - n);
	}
	take_all_once_and_destroy(s, again, N);
}
END_TEST

/* ------------------------------------------------------------------ */
/* threads: producers hand objects to consumers */

#define XT_PER_PRODUCER	test_iters(40000, 4000)
#define XT_PRODUCERS	3
#define XT_CONSUMERS	3

struct xt_obj {
	unsigned long stamp;
	unsigned long check;
	char pad[40];
};

static struct {
	struct test_ring ring;		/* tail: objects consumed */
	struct kmem_cache *s;
} xt = { .ring = TEST_RING_INIT };

static void *xt_producer(void *arg)
{
	unsigned long id = (unsigned long)arg, i;

	for (i = 0; i < XT_PER_PRODUCER; i++) {
		void *p;
		unsigned long stamp = (id << 32) | i;

		if (i & 1) {
			struct xt_obj *o = kmem_cache_alloc(xt.s, GFP_KERNEL);

			ck_assert_ptr_nonnull(o);
			o->stamp = stamp;
			o->check = ~stamp;
			p = o;
		} else {
			unsigned long *k = kmalloc(16 + (i % 700), GFP_KERNEL);

			ck_assert_ptr_nonnull(k);
			k[0] = stamp | 1UL << 63;
			k[1] = ~k[0];
			p = k;
		}
		test_ring_put(&xt.ring, p, 0);
	}
	test_ring_done(&xt.ring);
	return NULL;
}

static void *xt_consumer(void *arg)
{
	size_t unused;
	void *v;

	while (test_ring_get(&xt.ring, &v, &unused)) {
		unsigned long *p = v;

		/* An object shared by two live allocations fails this. */
		ck_assert_uint_eq(p[1], ~p[0]);
		if (p[0] >> 63)
			kfree(p);
		else
			kmem_cache_free(xt.s, p);
	}
	return NULL;
}

TEST(core, test_cross_thread)
{
	pthread_t th[XT_PRODUCERS + XT_CONSUMERS];
	unsigned long i;

	xt.s = kmem_cache_create("xthread", sizeof(struct xt_obj), 0, 0, NULL);
	xt.ring.producers_left = XT_PRODUCERS;
	for (i = 0; i < XT_PRODUCERS; i++)
		pthread_create(&th[i], NULL, xt_producer, (void *)i);
	for (i = 0; i < XT_CONSUMERS; i++)
		pthread_create(&th[XT_PRODUCERS + i], NULL, xt_consumer, NULL);
	for (i = 0; i < XT_PRODUCERS + XT_CONSUMERS; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_eq(xt.ring.tail, XT_PRODUCERS * XT_PER_PRODUCER);
	ck_assert_uint_eq(check_cache_invariants(xt.s), 0);
	for (i = 0; i < 13; i++) {
		struct kmem_cache *k = kmalloc_slab(8UL << (i < 12 ? i : 0));

		if (k)
			ck_assert_uint_eq(check_cache_invariants(k), 0);
	}
	kmem_cache_destroy(xt.s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* randomized model test */

TEST(core, test_random_model)
{
	uint64_t st = test_seed() * 2654435761UL + 1;
	struct kmem_cache *s;
	enum { CAP_MAX = 3000, SZ = 40 };
	/* under valgrind 6000 steps (still two fill-and-drain periods) over
	 * at most 600 live objects (6 slabs): every invariant is checked every
	 * step, over fewer objects */
	const unsigned int STEPS = test_iters(30000, 6000), CAP = test_iters(CAP_MAX, 600);
	static unsigned char *live[CAP_MAX];
	static unsigned long tag[CAP_MAX];
	unsigned int nlive = 0, step, i;
	unsigned long next_tag = 1;

	/*
	 * No reaper: a flush it has begun holds its objects outside every
	 * magazine while it waits for the slab lock the check holds, counted
	 * nowhere (both readings of check_cache_invariants() agree then).
	 * nocache_defconfig's 100 ms reaper met it: 3023 in slabs, 2999 live.
	 */
	pcp_reaper_stop();
	s = kmem_cache_create("model", SZ, 0, 0, NULL);
	for (step = 0; step < STEPS; step++) {
		unsigned int op = (unsigned int)(rnd(&st) % 100);
		/* Drift between filling up and draining, to reach empty slabs. */
		unsigned int fill = (step / 3000) % 2 ? 30 : 70;

		if (op < fill && nlive < CAP) {
			unsigned int k = 1 + (unsigned int)(rnd(&st) % 8), j;
			void *objs[8];

			if (k > CAP - nlive)
				k = CAP - nlive;
			if (k > 1)
				ck_assert_int_eq(kmem_cache_alloc_bulk(s, GFP_KERNEL, k, objs),
						 (int)k);
			else
				objs[0] = kmem_cache_alloc(s, GFP_KERNEL);
			for (j = 0; j < k; j++) {
				live[nlive] = objs[j];
				tag[nlive] = next_tag++;
				memset(live[nlive], (int)(tag[nlive] & 0xff), SZ);
				memcpy(live[nlive], &tag[nlive], sizeof(tag[0]));
				nlive++;
			}
		} else if (op < 98 && nlive) {
			unsigned int idx = (unsigned int)(rnd(&st) % nlive);
			unsigned long t;

			memcpy(&t, live[idx], sizeof(t));
			ck_assert_uint_eq(t, tag[idx]);
			ck_assert_uint_eq(live[idx][SZ - 1], tag[idx] & 0xff);
			kmem_cache_free(s, live[idx]);
			live[idx] = live[--nlive];
			tag[idx] = tag[nlive];
		} else {
			kmem_cache_shrink(s);
			ck_assert_uint_eq(s->nr_empty, 0);
		}
		ck_assert_uint_eq(check_cache_invariants(s), nlive);
		ck_assert_uint_ge(s->nr_slabs * s->objects, nlive);
		if (step % 500 == 0) {
			uintptr_t addrs[CAP_MAX];

			for (i = 0; i < nlive; i++) {
				unsigned long t;

				memcpy(&t, live[i], sizeof(t));
				ck_assert_uint_eq(t, tag[i]);
				addrs[i] = (uintptr_t)live[i];
			}
			qsort(addrs, nlive, sizeof(addrs[0]), ptr_cmp);
			for (i = 1; i < nlive; i++)
				ck_assert_uint_le(addrs[i - 1] + SZ, addrs[i]);
		}
	}
	while (nlive)
		kmem_cache_free(s, live[--nlive]);
	ck_assert_uint_eq(check_cache_invariants(s), 0);
	kmem_cache_destroy(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* debug checks: corrupt, then assert the exact report */

static void dbg_double_free(int fd)
{
	struct kmem_cache *s = kmem_cache_create("dbl", 32, 0,
						 SLAB_CONSISTENCY_CHECKS, NULL);
	void *o = kmem_cache_alloc(s, GFP_KERNEL);

	kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, o);
	expect_line(fd, "kmem_cache_free(dbl): double free of object 0x%lx",
		    (unsigned long)o);
	kmem_cache_free(s, o);
}

static void dbg_redzone_right(int fd)
{
	struct kmem_cache *s = kmem_cache_create("rz", 24, 0, SLAB_RED_ZONE, NULL);
	char *o = kmem_cache_alloc(s, GFP_KERNEL);

	expect_line(fd, "Redzone overwritten at 0x%lx (cache rz, object 0x%lx)",
		    (unsigned long)(o + 24), (unsigned long)o);
	o[24] = 0;	/* one past the end */
	kmem_cache_free(s, o);
}

static void dbg_redzone_left(int fd)
{
	struct kmem_cache *s = kmem_cache_create("rzl", 100, 0, SLAB_RED_ZONE, NULL);
	char *o = kmem_cache_alloc(s, GFP_KERNEL);

	expect_line(fd, "Redzone overwritten at 0x%lx (cache rzl, object 0x%lx)",
		    (unsigned long)(o - 1), (unsigned long)o);
	o[-1] = 0;	/* one before the start */
	kmem_cache_free(s, o);
}

static void dbg_poison(int fd)
{
	struct kmem_cache *s = kmem_cache_create("poi", 64, 0, SLAB_POISON, NULL);
	char *o = kmem_cache_alloc(s, GFP_KERNEL), *again;

	kmem_cache_alloc(s, GFP_KERNEL);	/* keeps the slab when o is freed */

	kmem_cache_free(s, o);
	o[10] = 1;	/* use after free */
	expect_line(fd, "Poison overwritten at 0x%lx (cache poi, object 0x%lx)",
		    (unsigned long)(o + 10), (unsigned long)o);
	again = kmem_cache_alloc(s, GFP_KERNEL);	/* LIFO: the same object */
	(void)again;
}

static void dbg_poison_intact(int fd)
{
	struct kmem_cache *s = kmem_cache_create("poi2", 64, 0, SLAB_POISON, NULL);
	unsigned char *o = kmem_cache_alloc(s, GFP_KERNEL);
	int i;

	kmem_cache_alloc(s, GFP_KERNEL);	/* keeps the slab when o is freed */

	kmem_cache_free(s, o);
	/* Freed objects read 0x6b, ending in 0xa5. */
	for (i = 0; i < 63; i++)
		if (o[i] != POISON_FREE)
			_exit(3);
	if (o[63] != POISON_END)
		_exit(4);
	o = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, o);
	expect_line(fd, "kmem_cache_free(poi2): double free of object 0x%lx",
		    (unsigned long)o);
	kmem_cache_free(s, o);
}

static void dbg_not_boundary(int fd)
{
	struct kmem_cache *s = kmem_cache_create("bp", 64, 0,
						 SLAB_CONSISTENCY_CHECKS, NULL);
	char *o = kmem_cache_alloc(s, GFP_KERNEL);

	expect_line(fd, "kmem_cache_free(bp): invalid pointer 0x%lx (not at an "
		    "object boundary)", (unsigned long)(o + 8));
	kmem_cache_free(s, o + 8);
}

static void dbg_wrong_cache(int fd)
{
	struct kmem_cache *a = kmem_cache_create("cache-a", 64, 0,
						 SLAB_CONSISTENCY_CHECKS, NULL);
	struct kmem_cache *b = kmem_cache_create("cache-b", 64, 0,
						 SLAB_CONSISTENCY_CHECKS, NULL);
	void *o = kmem_cache_alloc(a, GFP_KERNEL);

	expect_line(fd, "kmem_cache_free(cache-b): invalid pointer 0x%lx (object "
		    "of cache cache-a)", (unsigned long)o);
	kmem_cache_free(b, o);
}

static void dbg_not_slab(int fd)
{
	struct kmem_cache *s = kmem_cache_create("ns", 64, 0,
						 SLAB_CONSISTENCY_CHECKS, NULL);
	static char not_ours[64];

	expect_line(fd, "kmem_cache_free(ns): invalid pointer 0x%lx (not a slab "
		    "object)", (unsigned long)not_ours);
	kmem_cache_free(s, not_ours);
}

/*
 * Hardened frees (CONFIG_SLAB_FREE_HARDENED, issue 11 finding 3): caches
 * without debug flags stop a double free and an interior free with one
 * line before the object could be handed out twice (a double free when
 * the second copy would be handed out or reach the slab).
 *
 * Here an object of a new cache @name (@size bytes, @ctor) is freed twice
 * in a row: the second free, into the magazine, only stores the mark; it
 * is found when the object would be handed out again.
 */
static void double_free_in_magazine(int fd, const char *name, unsigned int size,
				    void (*ctor)(void *))
{
	struct kmem_cache *s = kmem_cache_create(name, size, 0, 0, ctor);
	void *o = kmem_cache_alloc(s, GFP_KERNEL);

	kmem_cache_free(s, o);
	expect_line(fd, "kmem_cache_free(%s): double free of object 0x%lx",
		    name, (unsigned long)o);
	kmem_cache_free(s, o);	/* a store only: found when handed out */
	if (kmem_cache_alloc(s, GFP_KERNEL) == o)
		kmem_cache_alloc(s, GFP_KERNEL);	/* must stop here */
}

static void hard_double_free_magazine(int fd)
{
	double_free_in_magazine(fd, "hard-dbl", 64, NULL);
}

/*
 * Free @o of @s so that it reaches its slab's freelist while the slab
 * stays: returns a live object of the same slab, which keeps it (two
 * allocations in a row may come from different slabs: a migration between
 * them, each CPU's magazine refilled on its own, issue 20 finding 3, seen
 * in fallback mode); the other objects taken on the way are freed and
 * kmem_cache_shrink() gives empty slabs back.
 */
static void *free_keeping_slab(struct kmem_cache *s, void *o)
{
	void *keep = NULL, *other[1024];
	unsigned int i, n = 0;

	while (!keep && n < ARRAY_SIZE(other)) {
		void *k = kmem_cache_alloc(s, GFP_KERNEL);

		ck_assert_ptr_nonnull(k);
		if (virt_to_slab(k) == virt_to_slab(o))
			keep = k;
		else
			other[n++] = k;
	}
	ck_assert_ptr_nonnull(keep);
	for (i = 0; i < n; i++)
		kmem_cache_free(s, other[i]);
	kmem_cache_free(s, o);
	kmem_cache_shrink(s);
	ck_assert_ptr_eq(virt_to_slab(o), virt_to_slab(keep));
	return keep;
}

/* The first free reached the slab's freelist (magazines drained). */
static void double_free_reaching_slab(int fd, const char *name,
				      unsigned int size)
{
	struct kmem_cache *s = kmem_cache_create(name, size, 0, 0, NULL);
	void *o = kmem_cache_alloc(s, GFP_KERNEL);
	void *keep = free_keeping_slab(s, o);
	unsigned int i;

	expect_line(fd, "kmem_cache_free(%s): double free of object 0x%lx",
		    name, (unsigned long)o);
	kmem_cache_free(s, o);
	/* o is in the magazine and on the freelist: the second one stops */
	for (i = 0; i < 256; i++)
		kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, keep);
}

static void hard_double_free_slab(int fd)
{
	double_free_reaching_slab(fd, "hard-slab", 48);
}

/*
 * Both copies of a double free reach the slab before either is handed out
 * again (the second free only stores the mark, the flush finds it): the
 * slab looks empty while @live is still in use; caught before the slab
 * can be reused.
 */
static void double_free_both_flushed(int fd, const char *name,
				     unsigned int size)
{
	struct kmem_cache *s = kmem_cache_create(name, size, 0, 0, NULL);
	void *o = kmem_cache_alloc(s, GFP_KERNEL);
	void *live = free_keeping_slab(s, o);

	expect_line(fd, "kmem_cache_free(%s): double free of object 0x%lx",
		    name, (unsigned long)o);
	kmem_cache_free(s, o);
	kmem_cache_shrink(s);	/* must stop here */
	kmem_cache_free(s, live);
}

static void hard_double_free_both_flushed(int fd)
{
	double_free_both_flushed(fd, "hard-both", 48);
}

/*
 * 8-byte objects hold the freelist link in the mark's word (xor'd with
 * the slab's mark): the same double frees are stopped the same way.
 */
static void hard8_double_free_magazine(int fd)
{
	double_free_in_magazine(fd, "hard8-dbl", 8, NULL);
}

static void hard8_double_free_slab(int fd)
{
	double_free_reaching_slab(fd, "hard8-slab", 8);
}

static void hard8_double_free_both_flushed(int fd)
{
	double_free_both_flushed(fd, "hard8-both", 8);
}

static void hard8_interior(int fd)
{
	struct kmem_cache *s = kmem_cache_create("hard8-int", 8, 0, 0, NULL);
	char *o = kmem_cache_alloc(s, GFP_KERNEL);

	expect_line(fd, "kmem_cache_free(hard8-int): invalid pointer 0x%lx (not "
		    "at an object boundary)", (unsigned long)(o + 4));
	kmem_cache_free(s, o + 4);
}

/*
 * A write into an 8-byte object on its slab's freelist (after its free)
 * replaces its link: the refill that reaches it stops with a report
 * instead of following the written word as a link.
 */
static void hard8_write_on_freelist(int fd)
{
	struct kmem_cache *s = kmem_cache_create("hard8-wr", 8, 0, 0, NULL);
	unsigned long *o = kmem_cache_alloc(s, GFP_KERNEL);
	void *keep = free_keeping_slab(s, o);
	unsigned int i;

	expect_line(fd, "kmem_cache_free(hard8-wr): double free of object 0x%lx",
		    (unsigned long)o);
	*o = 0x1234567890UL;	/* a use after free */
	for (i = 0; i < 8192; i++)
		kmem_cache_alloc(s, GFP_KERNEL);	/* must stop on the way */
	kmem_cache_free(s, keep);
}

/*
 * The first free emptied the slab and kmem_cache_shrink() gave it back:
 * the second free finds no slab there, inside uslab's range. It must
 * stop as a double free does (it used to be reported as "not a slab
 * object" and ignored: the program went on).
 */
static void hard_double_free_released_slab(int fd)
{
	struct kmem_cache *s = kmem_cache_create("hard-gone", 64, 0, 0, NULL);
	void *o = kmem_cache_alloc(s, GFP_KERNEL);

	kmem_cache_free(s, o);
	ck_assert_int_eq(kmem_cache_shrink(s), 0);
	ck_assert_ptr_null(virt_to_slab(o));
	expect_line(fd, "kmem_cache_free(hard-gone): invalid pointer 0x%lx (no slab "
		    "is allocated there)", (unsigned long)o);
	kmem_cache_free(s, o);
}

static void hard_interior(int fd)
{
	struct kmem_cache *s = kmem_cache_create("hard-int", 96, 0, 0, NULL);
	char *o = kmem_cache_alloc(s, GFP_KERNEL);

	expect_line(fd, "kmem_cache_free(hard-int): invalid pointer 0x%lx (not "
		    "at an object boundary)", (unsigned long)(o + 16));
	kmem_cache_free(s, o + 16);
}

/* A constructor cache: the mark lives outside the constructed object. */
static void hard_ctor_double(int fd)
{
	double_free_in_magazine(fd, "hard-ctor", sizeof(struct ctor_obj), test_ctor);
}

static void hard_kfree_double(int fd)
{
	void *o = kmalloc(64, GFP_KERNEL);

	kfree(o);
	expect_line(fd, "kfree(kmalloc-64): double free of object 0x%lx",
		    (unsigned long)o);
	kfree(o);
	if (kmalloc(64, GFP_KERNEL) == o)
		kmalloc(64, GFP_KERNEL);	/* must stop here */
}

static void hard_kfree_fast_interior(int fd)
{
	char *o = kmalloc(64, GFP_KERNEL);

	expect_line(fd, "kfree(kmalloc-64): invalid pointer 0x%lx (not at an "
		    "object boundary)", (unsigned long)(o + 16));
	kfree_fast(o + 16);
}

/* Past the last object of a slab: a multiple of the size, still no object. */
static void hard_slab_tail(int fd)
{
	struct kmem_cache *s = kmem_cache_create("hard-tail", 1000, 0, 0, NULL);
	char *o = kmem_cache_alloc(s, GFP_KERNEL);
	struct page *slab = virt_to_slab(o);
	char *past = (char *)slab_base(slab) + (size_t)s->objects * s->size;

	ck_assert_ptr_eq(virt_to_slab(past), slab);
	expect_line(fd, "kmem_cache_free(hard-tail): invalid pointer 0x%lx (not "
		    "at an object boundary)", (unsigned long)past);
	kmem_cache_free(s, past);
}

/*
 * The last object of a new slab was never handed out (objects are taken
 * from a slab in address order, nothing is written to the others): its
 * free must stop when it reaches the slab, not put it on the freelist
 * that the untouched rest will be handed out from again.
 */
static void hard_free_never_allocated(int fd)
{
	struct kmem_cache *s = kmem_cache_create("hard-fresh", 1000, 0, 0, NULL);
	char *o, *last;
	struct page *slab;

	/* one object per refill: the rest of the slab stays untaken */
	ck_assert_int_eq(kmem_cache_set_tunables(s, 1, 1, 0), 0);
	o = kmem_cache_alloc(s, GFP_KERNEL);
	slab = virt_to_slab(o);
	ck_assert_uint_gt(slab->objects, 1);
	last = (char *)slab_base(slab) + (size_t)(slab->objects - 1) * s->size;
	ck_assert_uint_lt(slab->fresh, slab->objects);
	expect_line(fd, "kmem_cache_free(hard-fresh): double free of object 0x%lx",
		    (unsigned long)last);
	kmem_cache_free(s, last);
	kmem_cache_shrink(s);	/* the flush must stop here */
	kmem_cache_free(s, o);
}

TEST(hardened, test_hardened_reports)
{
	if (!IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
		return;
	expect_report(hard_double_free_magazine);
	expect_report(hard_double_free_slab);
	expect_report(hard_double_free_both_flushed);
	expect_report(hard_double_free_released_slab);
	expect_report(hard_interior);
	expect_report(hard_ctor_double);
	expect_report(hard8_double_free_magazine);
	expect_report(hard8_double_free_slab);
	expect_report(hard8_double_free_both_flushed);
	expect_report(hard8_interior);
	if (!IS_ENABLED(CONFIG_SLAB_DEBUG_ON))
		expect_report(hard8_write_on_freelist);
	if (!IS_ENABLED(CONFIG_SLAB_DEBUG_ON)) {
		/* (debug preset: kmalloc caches report from their slow path) */
		expect_report(hard_kfree_double);
		expect_report(hard_kfree_fast_interior);
	}
	expect_report(hard_slab_tail);
	/* debug caches prepare every object up front (docs/slab.md) */
	if (!IS_ENABLED(CONFIG_SLAB_DEBUG_ON))
		expect_report(hard_free_never_allocated);
}
END_TEST

/*
 * A refill's first touch of never-written objects (their magazine mark)
 * happens with the cache lock dropped: that store is usually its page's
 * first, a page fault, and under the lock every other CPU refilling the
 * cache waited for the kernel (12,900 context switches in gmalloc_t2's
 * quiet run against mimalloc's 70). The slab's pages past the first
 * object's are made PROT_NONE after the first refill; the SIGSEGV handler
 * notes whether the cache lock was held and makes the page usable again.
 */
static struct kmem_cache *fresh_cache;
static volatile sig_atomic_t fresh_faults, fresh_faults_locked;
static uintptr_t fresh_lo, fresh_hi;

static void fresh_segv(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr & ~(uintptr_t)(PAGE_SIZE - 1);

	(void)sig;
	(void)uc;
	if (a < fresh_lo || a >= fresh_hi)
		abort();	/* not the test's page: a real crash */
	fresh_faults++;
	if (owned_by_me(&fresh_cache->lock))
		fresh_faults_locked++;
	if (mprotect((void *)a, PAGE_SIZE, PROT_READ | PROT_WRITE))
		abort();
}

TEST(hardened, test_refill_touches_fresh_objects_unlocked)
{
	struct sigaction sa = { .sa_sigaction = fresh_segv, .sa_flags = SA_SIGINFO }, old;
	void *objs[64];
	struct page *slab;
	int n;

	/* without marks a refill writes nothing; debug caches write at grow */
	if (!IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) || IS_ENABLED(CONFIG_SLAB_DEBUG_ON))
		return;
	fresh_cache = kmem_cache_create("fresh-unlocked", 2000, 0, 0, NULL);
	ck_assert_int_eq(slab_alloc_bulk(fresh_cache, GFP_KERNEL, objs, 1, 0), 1);
	slab = virt_to_slab(objs[0]);
	ck_assert_ptr_nonnull(slab);
	ck_assert_uint_eq(slab->fresh, 1);
	fresh_lo = ((uintptr_t)objs[0] & ~(uintptr_t)(PAGE_SIZE - 1)) + PAGE_SIZE;
	fresh_hi = (uintptr_t)slab_base(slab) + (PAGE_SIZE << slab->slab_order);
	ck_assert_uint_gt(fresh_hi, fresh_lo);	/* the slab has pages untouched */
	n = slab->objects - slab->fresh;
	n = n < (int)ARRAY_SIZE(objs) - 1 ? n : (int)ARRAY_SIZE(objs) - 1;
	ck_assert_int_eq(sigaction(SIGSEGV, &sa, &old), 0);
	ck_assert_int_eq(mprotect((void *)fresh_lo, fresh_hi - fresh_lo, PROT_NONE), 0);
	/* the rest of this slab: objects never written */
	ck_assert_int_eq(slab_alloc_bulk(fresh_cache, GFP_KERNEL, objs + 1, n, 0), n);
	mprotect((void *)fresh_lo, fresh_hi - fresh_lo, PROT_READ | PROT_WRITE);
	ck_assert_int_eq(sigaction(SIGSEGV, &old, NULL), 0);
	ck_assert_ptr_eq(virt_to_slab(objs[n]), slab);
	ck_assert_uint_ge((uintptr_t)objs[n], fresh_lo);	/* one was on them */
	ck_assert_int_gt(fresh_faults, 0);
	ck_assert_int_eq(fresh_faults_locked, 0);
	slab_free_bulk(fresh_cache, objs, n + 1, 0);
	kmem_cache_destroy(fresh_cache);
}
END_TEST

/*
 * A flush does its per-object work (the mark's check and store, the free
 * pointer) before it takes the cache lock, and only splices the detached
 * runs under it: the lock's hold time is per run, not per object, and a
 * cold object's miss (or here a page fault) never holds it. The pages of
 * one slab whose objects are all flushed are made PROT_NONE before the
 * flush; the SIGSEGV handler notes whether the cache lock was held at
 * each first touch.
 */
TEST(core, test_flush_touches_objects_unlocked)
{
	struct sigaction sa = { .sa_sigaction = fresh_segv, .sa_flags = SA_SIGINFO }, old;
	void *objs[64];
	struct page *slab;
	int i, n;

	fresh_faults = fresh_faults_locked = 0;
	fresh_cache = kmem_cache_create("flush-unlocked", 2000, 0, 0, NULL);
	if (slab_debug(fresh_cache)) {	/* debug caches check under the lock */
		kmem_cache_destroy(fresh_cache);
		return;
	}
	/* a new cache's first refill of one slab's worth: that whole slab */
	n = (int)fresh_cache->objects;
	ck_assert_int_le(n, (int)ARRAY_SIZE(objs));
	ck_assert_int_eq(slab_alloc_bulk(fresh_cache, GFP_KERNEL, objs, n, 0), n);
	slab = virt_to_slab(objs[0]);
	ck_assert_ptr_nonnull(slab);
	for (i = 1; i < n; i++)
		ck_assert_ptr_eq(virt_to_slab(objs[i]), slab);
	fresh_lo = (uintptr_t)slab_base(slab);
	fresh_hi = fresh_lo + (PAGE_SIZE << slab->slab_order);
	ck_assert_int_eq(sigaction(SIGSEGV, &sa, &old), 0);
	ck_assert_int_eq(mprotect((void *)fresh_lo, fresh_hi - fresh_lo, PROT_NONE), 0);
	slab_free_bulk(fresh_cache, objs, n, 0);
	mprotect((void *)fresh_lo, fresh_hi - fresh_lo, PROT_READ | PROT_WRITE);
	ck_assert_int_eq(sigaction(SIGSEGV, &old, NULL), 0);
	ck_assert_int_gt(fresh_faults, 0);
	ck_assert_int_eq(fresh_faults_locked, 0);
	ck_assert_uint_eq(check_cache_invariants(fresh_cache), 0);
	kmem_cache_destroy(fresh_cache);
}
END_TEST

/*
 * A flush of more runs than one hold of the cache lock splices
 * (SLAB_FLUSH_RUNS, 64): runs of one object, slabs in turn, 300 of them
 * in one call. The lists and counters agree after it, and every object
 * comes back exactly once when all are taken again.
 */
TEST(core, test_free_bulk_many_runs)
{
	enum { N = 600 };	/* over three slabs of 32 KiB */
	struct kmem_cache *s = kmem_cache_create("bulk-many-runs", 200, 0, 0, NULL);
	static void *objs[N], *order[N], *again[N];
	unsigned int per, nslabs, i, j, k = 0;

	ck_assert_int_eq(slab_alloc_bulk(s, GFP_KERNEL, objs, N, 0), N);
	per = s->objects;
	nslabs = (N + per - 1) / per;
	ck_assert_uint_gt(nslabs, 2);
	for (j = 0; j < per; j++)
		for (i = 0; i < nslabs; i++)
			if (i * per + j < N)
				order[k++] = objs[i * per + j];
	ck_assert_uint_eq(k, N);
	slab_free_bulk(s, order, N, 0);
	ck_assert_uint_eq(check_cache_invariants(s), 0);
	take_all_once_and_destroy(s, again, N);
}
END_TEST

/* Lock-held assertions (lib/lock.h), each report exact. */
static void lock_not_held(int fd)
{
	struct kmem_cache *s = kmem_cache_create("lock-held", 64, 0, 0, NULL);

	expect_line(fd, "kmem_cache lock: not held by this thread");
	slab_assert_locked(s);
}

static void lock_taken_twice(int fd)
{
	struct kmem_cache *s = kmem_cache_create("lock-twice", 64, 0, 0, NULL);

	slab_lock(s);
	expect_line(fd, "kmem_cache lock: taken again by the thread that holds it");
	slab_lock(s);
}

static void lock_released_by_other(int fd)
{
	struct kmem_cache *s = kmem_cache_create("lock-other", 64, 0, 0, NULL);

	expect_line(fd, "kmem_cache lock: released by a thread that does not hold it");
	slab_unlock(s);
}

TEST(core, test_lock_owner)
{
	expect_report(lock_not_held);
	if (IS_ENABLED(CONFIG_DEBUG_LOCKS)) {
		expect_report(lock_taken_twice);
		expect_report(lock_released_by_other);
	}
}
END_TEST

/*
 * Every object offset passes the boundary test and every other offset of
 * the slab fails it, for many sizes (the multiply-compare of
 * slab_free_check against plain division).
 */
TEST(hardened, test_hardened_boundary_exhaustive)
{
	static const unsigned int sizes[] = { 8, 16, 24, 40, 96, 100, 192, 640,
					      1000, 3000, 4096, 5000, 9000 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct kmem_cache *s = kmem_cache_create("hard-n", sizes[i], 0, 0, NULL);
		uint64_t n, bytes = PAGE_SIZE << s->order;

		if (slab_debug(s)) {
			/* debug caches check boundaries on their slow path:
			 * magic and limit 0 send every free there */
			ck_assert(s->obj_magic == 0 && s->obj_limit == 0);
			kmem_cache_destroy(s);
			continue;
		}

		uint64_t wrong = 0, first = 0;

		/* one assertion per size: this runs under valgrind too */
		for (n = 0; n < bytes; n++) {
			bool obj = n % s->size == 0 && n / s->size < s->objects;

			if ((n * s->obj_magic < s->obj_limit) != obj && !wrong++)
				first = n;
		}
		ck_assert_msg(!wrong, "size %u: %lu offsets wrong, first %lu",
			      s->size, (unsigned long)wrong, (unsigned long)first);
		kmem_cache_destroy(s);
	}
}
END_TEST

TEST(debug, test_debug_reports)
{
	expect_report(dbg_double_free);
	expect_report(dbg_redzone_right);
	expect_report(dbg_redzone_left);
	expect_report(dbg_poison);
	expect_report(dbg_poison_intact);
	expect_report(dbg_not_boundary);
	expect_report(dbg_wrong_cache);
	expect_report(dbg_not_slab);
}
END_TEST

/* ------------------------------------------------------------------ */
/* slab_debug=FZPU,<cache> at run time: exact reports with call sites */

/*
 * The call sites SLAB_STORE_USER must name. Exported (the suite links
 * with --export-dynamic) so that dladdr finds them; the empty asm keeps
 * the call from becoming a tail call, so the return address is inside.
 */
void *dbg_site_alloc(struct kmem_cache *s);
void dbg_site_free(struct kmem_cache *s, void *p);
void *dbg_site_kmalloc(size_t n);
void dbg_site_kfree(void *p);

__attribute__((__noinline__, __used__, __visibility__("default")))
void *dbg_site_alloc(struct kmem_cache *s)
{
	void *p = kmem_cache_alloc(s, GFP_KERNEL);

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((__noinline__, __used__, __visibility__("default")))
void dbg_site_free(struct kmem_cache *s, void *p)
{
	kmem_cache_free(s, p);
	__asm__ volatile("" ::: "memory");
}

__attribute__((__noinline__, __used__, __visibility__("default")))
void *dbg_site_kmalloc(size_t n)
{
	void *p = kmalloc(n, GFP_KERNEL);

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((__noinline__, __used__, __visibility__("default")))
void dbg_site_kfree(void *p)
{
	kfree(p);
	__asm__ volatile("" ::: "memory");
}

/* "NAME+0x#/0xSIZE (check_slab)": the size from the symbol table */
static const char *site_pat(void *fn, const char *name)
{
	static char buf[4][160];
	static int next;
	const ElfW(Sym) *sym = NULL;
	Dl_info info;
	char *b = buf[next++ & 3];

	ck_assert(dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT));
	ck_assert_ptr_nonnull(sym);
	snprintf(b, sizeof(buf[0]), "%s+0x#/0x%lx (check_slab)", name,
		 (unsigned long)sym->st_size);
	return b;
}

/* '#' matches one or more of [0-9a-fx]; everything else is literal */
static bool glob_line(const char *pat, const char *s)
{
	while (*pat) {
		if (*pat == '#') {
			size_t n = strspn(s, "0123456789abcdefx");

			if (!n)
				return false;
			s += n;
			pat++;
			continue;
		}
		if (*pat++ != *s++)
			return false;
	}
	return !*s;
}

/*
 * Run @fn in a child as expect_report() does; the child announces every
 * line of the report ("WANT <pattern>", '#' for digits that vary: code
 * offsets, age, cpu), then triggers the check, which must abort after
 * writing exactly those lines.
 */
static void expect_report_lines(report_fn fn)
{
	char buf[8192], *want_l[16], *got_l[16], *line, *save;
	unsigned int nw = 0, ng = 0, i;

	test_catch_abort(call_report_fn, &fn, buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "WANT ", 5)) {
			ck_assert_uint_lt(nw, 16);
			want_l[nw++] = line + 5;
		} else {
			ck_assert_uint_lt(ng, 16);
			got_l[ng++] = line;
		}
	}
	ck_assert_uint_gt(nw, 0);
	for (i = 0; i < nw && i < ng; i++)
		ck_assert_msg(glob_line(want_l[i], got_l[i]),
			      "report line %u:\n  got  '%s'\n  want '%s'", i + 1,
			      got_l[i], want_l[i]);
	ck_assert_msg(ng == nw, "report has %u lines, want %u (last: '%s')", ng,
		      nw, ng ? got_l[ng - 1] : "");
}

/* The cache "ucache" (50-byte objects, no flags from its creator) made a
 * debug cache by the setting alone. */
static struct kmem_cache *ucache(const char *flags)
{
	char item[64];
	struct kmem_cache *s;

	snprintf(item, sizeof(item), "slab_debug.ucache=%s", flags);
	ck_assert_int_eq(kmem_cache_setting(item), 0);
	s = kmem_cache_create("ucache", 50, 0, 0, NULL);
	ck_assert_ptr_nonnull(s);
	return s;
}

static void user_lines(int fd, const char *by, bool freed)
{
	want(fd, "Allocated in %s age=#ms cpu=# pid=%d",
	     site_pat(dbg_site_alloc, "dbg_site_alloc"), (int)gettid());
	if (freed)
		want(fd, "Freed in %s age=#ms cpu=# pid=%d",
		     site_pat(dbg_site_free, "dbg_site_free"), (int)gettid());
	if (!strcmp(by, "free"))
		want(fd, "Found by kmem_cache_free called from %s",
		     site_pat(dbg_site_free, "dbg_site_free"));
	else
		want(fd, "Found by an allocation called from %s",
		     site_pat(dbg_site_alloc, "dbg_site_alloc"));
}

static void user_redzone(int fd)
{
	struct kmem_cache *s = ucache("FZPU");
	char *o = dbg_site_alloc(s);

	want(fd, "Redzone overwritten at 0x%lx (cache ucache, object 0x%lx)",
	     (unsigned long)(o + 50), (unsigned long)o);
	want(fd, "First byte 0x78 instead of 0xcc, at offset 50 of the object");
	user_lines(fd, "free", false);
	o[50] = 'x';	/* one past the end */
	dbg_site_free(s, o);
}

static void user_poison(int fd)
{
	struct kmem_cache *s = ucache("FZPU");
	char *o = dbg_site_alloc(s);

	dbg_site_alloc(s);	/* keeps the slab when o is freed */
	dbg_site_free(s, o);
	want(fd, "Poison overwritten at 0x%lx (cache ucache, object 0x%lx)",
	     (unsigned long)(o + 10), (unsigned long)o);
	want(fd, "First byte 0x01 instead of 0x6b, at offset 10 of the object");
	user_lines(fd, "alloc", true);
	o[10] = 1;	/* use after free */
	dbg_site_alloc(s);	/* LIFO, no magazines: the same object */
}

static void user_double_free(int fd)
{
	struct kmem_cache *s = ucache("FZPU");
	char *o = dbg_site_alloc(s);

	dbg_site_alloc(s);
	dbg_site_free(s, o);
	want(fd, "kmem_cache_free(ucache): double free of object 0x%lx",
	     (unsigned long)o);
	user_lines(fd, "free", true);
	dbg_site_free(s, o);
}

static void user_interior(int fd)
{
	struct kmem_cache *s = ucache("FZPU");
	char *o = dbg_site_alloc(s);

	want(fd, "kmem_cache_free(ucache): invalid pointer 0x%lx (not at an "
	     "object boundary)", (unsigned long)(o + 8));
	want(fd, "Pointer is 8 bytes into object 0x%lx", (unsigned long)o);
	user_lines(fd, "free", false);
	dbg_site_free(s, o + 8);
}

/* F alone: the same double free, one line (no U: no call sites) */
static void user_f_only(int fd)
{
	struct kmem_cache *s = ucache("F");
	char *o = dbg_site_alloc(s);

	ck_assert(s->flags & SLAB_CONSISTENCY_CHECKS);
	ck_assert(!(s->flags & (SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER)));
	/* keeps the slab when o is freed: a build without SLAB_KEEP_EMPTY
	 * (nocache_defconfig) gives an empty slab back at once, and the
	 * second free is then of no slab at all */
	dbg_site_alloc(s);
	dbg_site_free(s, o);
	want(fd, "kmem_cache_free(ucache): double free of object 0x%lx",
	     (unsigned long)o);
	dbg_site_free(s, o);
}

/*
 * kmalloc-64 in the kernel's list syntax, after the cache exists: it is
 * re-made (the old one, renamed kmalloc-64-old, keeps its object), and
 * kmalloc(50) is guarded from byte 50 on.
 */
static void user_kmalloc_overflow(int fd)
{
	struct kmem_cache_setting sets[4];
	struct kmem_cache *s;
	void *early = kmalloc(50, GFP_KERNEL);
	char *p;
	int n, i;

	n = kmem_cache_debug_parse("FZPU,kmalloc-64", sets, 4);
	ck_assert_int_eq(n, 1);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(kmem_cache_setting_add(&sets[i]), 0);
	s = kmalloc_slab(50);
	ck_assert_str_eq(s->name, "kmalloc-64");
	ck_assert(slab_debug(s) && (s->flags & SLAB_STORE_USER));
	ck_assert_ptr_nonnull(kmem_cache_find("kmalloc-64-old"));
	/* free()'s route: the page tag must not send it to the new cache */
	kfree_fast(early);
	ck_assert_ptr_eq(kmalloc(50, GFP_KERNEL) == early ? NULL : s, s);
	p = dbg_site_kmalloc(50);
	ck_assert_ptr_eq(virt_to_slab(p)->slab_cache, s);
	ck_assert_uint_eq(ksize(p), 50);
	want(fd, "Redzone overwritten at 0x%lx (cache kmalloc-64, object 0x%lx)",
	     (unsigned long)(p + 50), (unsigned long)p);
	want(fd, "First byte 0x78 instead of 0xcc, at offset 50 of the object");
	want(fd, "Allocated in %s age=#ms cpu=# pid=%d",
	     site_pat(dbg_site_kmalloc, "dbg_site_kmalloc"), (int)gettid());
	want(fd, "Found by kfree called from %s",
	     site_pat(dbg_site_kfree, "dbg_site_kfree"));
	p[50] = 'x';
	dbg_site_kfree(p);
}

/* Forks and aborts by design, and re-makes kmalloc caches as debug caches:
 * only where each test has its own process. */
TEST_IF(!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no"), debug,
	test_slab_debug_reports)
{
	expect_report_lines(user_redzone);
	expect_report_lines(user_poison);
	expect_report_lines(user_double_free);
	expect_report_lines(user_interior);
	expect_report_lines(user_f_only);
	expect_report_lines(user_kmalloc_overflow);
}
END_TEST

/*
 * The kernel's resolution (mm/slub.c kmem_cache_flags): the first block
 * naming a cache wins, '-' switches it off, a block without names is for
 * every other cache; a prefix with '*'. Debug caches have no magazines.
 */
TEST_IF(!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no"), debug,
	test_slab_debug_resolution)
{
	struct kmem_cache_setting sets[8];
	struct kmem_cache *a, *b, *c, *d;
	int n, i;

	ck_assert_int_eq(kmem_cache_debug_parse("Q", sets, 8), -EINVAL);
	ck_assert_int_eq(kmem_cache_debug_parse("F,", sets, 8), -EINVAL);
	ck_assert_int_eq(kmem_cache_debug_parse("F,a,b,c", sets, 2), -ENOSPC);
	n = kmem_cache_debug_parse("zp,conn*;U,conn_b;-,conn_c,other;F", sets, 8);
	ck_assert_int_eq(n, 5);
	ck_assert_str_eq(sets[0].cache, "conn*");
	ck_assert_int_eq(sets[0].value, SLAB_RED_ZONE | SLAB_POISON);
	ck_assert_int_eq(sets[2].value, 0);
	ck_assert_str_eq(sets[4].cache, "");
	ck_assert_int_eq(sets[4].value, SLAB_CONSISTENCY_CHECKS);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(kmem_cache_setting_add(&sets[i]), 0);
	a = kmem_cache_create("conn_a", 40, 0, 0, NULL);
	b = kmem_cache_create("conn_b", 40, 0, 0, NULL);	/* conn* came first */
	c = kmem_cache_create("other", 40, 0, SLAB_POISON, NULL);
	d = kmem_cache_create("plain", 40, 0, 0, NULL);
	ck_assert_uint_eq(a->flags & SLAB_DEBUG_FLAGS, SLAB_RED_ZONE | SLAB_POISON);
	ck_assert_uint_eq(b->flags & SLAB_DEBUG_FLAGS, SLAB_RED_ZONE | SLAB_POISON);
	ck_assert_uint_eq(c->flags & SLAB_DEBUG_FLAGS, SLAB_POISON);	/* its own */
	ck_assert_uint_eq(d->flags & SLAB_DEBUG_FLAGS, SLAB_CONSISTENCY_CHECKS);
	ck_assert_ptr_null(kmem_cache_pcp(a));
	ck_assert_ptr_null(kmem_cache_pcp(d));
	/* "" (slab_debug alone) is FZPU for every cache */
	ck_assert_int_eq(kmem_cache_debug_parse("", sets, 8), 1);
	ck_assert_int_eq(sets[0].value, SLAB_DEBUG_FLAGS);
	ck_assert_str_eq(sets[0].cache, "");
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);
	kmem_cache_destroy(c);
	kmem_cache_destroy(d);
	kmem_cache_settings_clear();
}
END_TEST

/* Debug caches keep working for correct programs, kmalloc caches included. */
TEST(debug, test_debug_clean_run)
{
	struct kmem_cache *s = kmem_cache_create("dbgok", 50, 0,
		SLAB_RED_ZONE | SLAB_POISON | SLAB_CONSISTENCY_CHECKS, NULL);
	void *objs[500];
	int i, round;

	for (round = 0; round < 3; round++) {
		for (i = 0; i < 500; i++) {
			objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
			memset(objs[i], 0x33, 50);
		}
		for (i = 0; i < 500; i++)
			kmem_cache_free(s, objs[i]);
	}
	check_cache_invariants(s);
	kmem_cache_destroy(s);
}
END_TEST

/*
 * Red zones without poisoning (slab_debug=Z, FZ, ZU: issue 20 finding 2):
 * the free-list link and the free mark of objects smaller than two words
 * stay out of the red zone, so correct programs run clean at every small
 * size (kmalloc-8 aborted with "Redzone overwritten").
 */
TEST(debug, test_redzone_small_objects_clean)
{
	static const slab_flags_t flags[] = {
		SLAB_RED_ZONE, SLAB_RED_ZONE | SLAB_CONSISTENCY_CHECKS,
		SLAB_RED_ZONE | SLAB_STORE_USER,
	};
	unsigned int f, size, i, round;
	void *objs[64];

	for (f = 0; f < ARRAY_SIZE(flags); f++)
	for (size = 1; size <= 24; size++) {
		struct kmem_cache *s = kmem_cache_create("rz-small", size, 0,
							 flags[f], NULL);

		ck_assert_ptr_nonnull(s);
		for (round = 0; round < 3; round++) {
			for (i = 0; i < ARRAY_SIZE(objs); i++) {
				objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
				ck_assert_ptr_nonnull(objs[i]);
				memset(objs[i], 0x5a, size);
			}
			for (i = 0; i < ARRAY_SIZE(objs); i++)
				kmem_cache_free(s, objs[i]);
		}
		ck_assert_uint_eq(check_cache_invariants(s), 0);
		kmem_cache_destroy(s);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* slabinfo and tunables */

TEST(core, test_slabinfo)
{
	static char buf[65536];
	struct kmem_cache *s = kmem_cache_create("info-cache", 300, 0, 0, NULL);
	void *objs[20];
	char *line, name[64];
	unsigned long a, n, as, ns, sa;
	unsigned int sz, ops, pps, lim, bat, sh;
	int i;

	for (i = 0; i < 20; i++)
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
	ck_assert_uint_gt(slabinfo_show(buf, sizeof(buf)), 0);
	{
		static const char head[] = "slabinfo - version: 2.1\n# name            "
			"<active_objs> <num_objs> <objsize> <objperslab> "
			"<pagesperslab> : tunables <limit> <batchcount> "
			"<sharedfactor> : slabdata <active_slabs> <num_slabs> "
			"<sharedavail>\n";

		static const char version[] = "slabinfo - version: 2.1\n";
		const char *cols = buf + strlen(version);

		ck_assert(!strncmp(buf, version, strlen(version)));
		/* The per-CPU layer's mode line may come before the columns. */
		if (!strncmp(cols, "# percpu: ", 10))
			cols = strchr(cols, '\n') + 1;
		ck_assert(!strncmp(cols, head + strlen(version),
				   strlen(head) - strlen(version)));
	}
	line = strstr(buf, "\ninfo-cache ");
	ck_assert_ptr_nonnull(line);
	ck_assert_int_eq(sscanf(line + 1, "%63s %lu %lu %u %u %u : tunables %u %u %u"
				" : slabdata %lu %lu %lu", name, &a, &n, &sz, &ops,
				&pps, &lim, &bat, &sh, &as, &ns, &sa), 12);
	ck_assert_uint_eq(a, 20);
	ck_assert_uint_eq(n, s->nr_slabs * s->objects);
	ck_assert_uint_eq(sz, s->size);
	ck_assert_uint_eq(ops, s->objects);
	ck_assert_uint_eq(pps, 1U << s->order);
	ck_assert_uint_eq(ns, s->nr_slabs);

	ck_assert_int_eq(slabinfo_write("info-cache 64 16 4\n"), 0);
	slabinfo_show(buf, sizeof(buf));
	line = strstr(buf, "\ninfo-cache ");
	ck_assert_int_eq(sscanf(line + 1, "%63s %lu %lu %u %u %u : tunables %u %u %u",
				name, &a, &n, &sz, &ops, &pps, &lim, &bat, &sh), 9);
	ck_assert_uint_eq(lim, 64);
	ck_assert_uint_eq(bat, 16);
	ck_assert_uint_eq(sh, 4);
	ck_assert_int_eq(slabinfo_write("no-such-cache 64 16 4"), -ENOENT);
	ck_assert_int_eq(slabinfo_write("info-cache 64 65 4"), -EINVAL);
	ck_assert_int_eq(slabinfo_write("info-cache 0 0 0"), -EINVAL);
	ck_assert_int_eq(slabinfo_write("info-cache 64 16"), -EINVAL);
	ck_assert_int_eq(slabinfo_write("info-cache 64 16 4 junk"), -EINVAL);
	ck_assert_int_eq(slabinfo_write("info-cache -1 16 4"), -EINVAL);
	ck_assert_int_eq(kmem_cache_set_tunables(s, 5000, 1, 0), -EINVAL);
	ck_assert_int_eq(kmem_cache_set_tunables(s, 10, 10, 0), 0);

	/* Truncation keeps the buffer a C string. */
	ck_assert_uint_eq(slabinfo_show(buf, 10), 9);
	ck_assert_uint_eq(strlen(buf), 9);
	ck_assert_int_eq(slabinfo_write_fd(-1), -EBADF);
	for (i = 0; i < 20; i++)
		kmem_cache_free(s, objs[i]);
	kmem_cache_destroy(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* gfp flags, creation errors, fork */

/*
 * __GFP_NOFAIL holds for the first object of a kmalloc class not made
 * yet: making the class takes a struct kmem_cache, which must wait for
 * memory as the object does. Before, that allocation went without
 * __GFP_NOFAIL and kmalloc returned NULL (test_gfp_nofail under
 * test_percpu_modes.sh's fallback runs failed so, 7 of 30 runs at load
 * 18: a thread that had moved to a CPU without struct kmem_cache objects
 * in its magazine needed a new slab for one under the page limit).
 * Here every slab allocation but __GFP_NOFAIL's fails (failslab), the
 * magazines drained first. It needs a process of its own (a class that
 * no test made yet).
 */
TEST_IF(!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no"), core,
	test_gfp_nofail_new_kmalloc_class)
{
	static char buf[1 << 16];
	static const struct { const char *name; size_t size; } cand[] = {
		{ "kmalloc-3584 ", 3584 }, { "kmalloc-1792 ", 1792 },
		{ "kmalloc-2560 ", 2560 }, { "kmalloc-7k ", 7168 },
		{ "kmalloc-28k ", 28672 }, { "kmalloc-56k ", 57344 },
	};
	size_t size = 0, i;
	void *p;

	ck_assert_uint_gt(slabinfo_show(buf, sizeof(buf)), 0);
	for (i = 0; i < ARRAY_SIZE(cand) && !size; i++)
		if (!strstr(buf, cand[i].name))
			size = cand[i].size;
	ck_assert_uint_gt(size, 0);	/* one class not made yet */
	kmem_cache_shrink_all();	/* no struct kmem_cache in a magazine */
	ck_assert_int_eq(kmem_cache_set_fault("100"), 0);
	p = kmalloc(size, GFP_KERNEL | __GFP_NOWARN);
	ck_assert_ptr_null(p);
	p = kmalloc(size, GFP_KERNEL | __GFP_NOFAIL);
	ck_assert_int_eq(kmem_cache_set_fault("0"), 0);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_ge(ksize(p), size);
	kfree(p);
}
END_TEST

TEST(core, test_gfp_nofail)
{
	struct page_alloc_stats st;
	static void *objs[100000];
	unsigned int n = 0, i;
	void *p;

	page_alloc_get_stats(&st);
	page_alloc_set_limit(st.bytes_allocated + ((size_t)1 << 20));
	while (n < 100000 && (objs[n] = kmalloc(256, GFP_KERNEL | __GFP_NOWARN)))
		n++;
	ck_assert_uint_lt(n, 100000);
	ck_assert_int_eq(errno, ENOMEM);
	/* Freed objects leave empty slabs held by kmalloc-256 (min_partial). */
	for (i = 0; i < n; i++)
		kfree(objs[i]);
	for (i = 0; i < 100; i++) {
		objs[i] = kmalloc(2048, GFP_KERNEL | __GFP_NOWARN);
		if (!objs[i])
			break;
	}
	/* __GFP_NOFAIL shrinks the caches and gets its memory. */
	p = kmalloc(2048, GFP_KERNEL | __GFP_NOFAIL);
	ck_assert_ptr_nonnull(p);
	kfree(p);
	while (i--)
		kfree(objs[i]);
	page_alloc_set_limit(0);
}
END_TEST

TEST(core, test_create_errors)
{
	errno = 0;
	ck_assert_ptr_null(kmem_cache_create("bad", 0, 0, 0, NULL));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(kmem_cache_create("bad", 64, 24, 0, NULL));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(kmem_cache_create(NULL, 64, 0, 0, NULL));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(kmem_cache_create("huge", (8U << 20), 0, 0, NULL));
	ck_assert_int_eq(errno, EINVAL);
	kmem_cache_destroy(NULL);
}
END_TEST

/* aborts by design: only where each test runs in its own process */
TEST_SIGNAL_IF(!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no"), core,
	       test_panic_flag, SIGABRT)
{
	kmem_cache_create("panic", 0, 0, SLAB_PANIC, NULL);
}
END_TEST

static void rcu_cb_ctor(void *p)
{
	memset(p, 0x77, 8);
}

TEST(core, test_fork)
{
	struct kmem_cache *s = kmem_cache_create("forky", 128, 0,
						 SLAB_TYPESAFE_BY_RCU, rcu_cb_ctor);
	void *o = kmem_cache_alloc(s, GFP_KERNEL);
	void *k = kmalloc(100, GFP_KERNEL);
	pid_t pid;
	int status;

	slab_fork_prepare();
	pid = fork();
	if (pid == 0) {
		void *objs[200];
		int i;

		slab_fork_child();
		/* Everything works in the child, call_rcu included. */
		kfree(k);
		kmem_cache_free(s, o);
		for (i = 0; i < 200; i++)
			objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		for (i = 0; i < 200; i++)
			kmem_cache_free(s, objs[i]);
		kmem_cache_shrink(s);
		kmem_cache_destroy(s);
		_exit(kmem_cache_find("forky") ? 1 : 0);
	}
	slab_fork_parent();
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	kfree(k);
	kmem_cache_free(s, o);
	kmem_cache_destroy(s);
}
END_TEST

static const struct test_case cases[] = {
	{ .name = "core", .timeout = 120 },
	{ .name = "hardened", .timeout = 60 },
	{ .name = "debug", .timeout = 60, .skip = !IS_ENABLED(CONFIG_SLAB_DEBUG) },
};

int main(void)
{
	return test_run_suite(test_suite("slab", cases, ARRAY_SIZE(cases)));
}
