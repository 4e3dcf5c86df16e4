// SPDX-License-Identifier: MIT
/*
 * Signal handlers that allocate while their own thread is inside the
 * allocator (lib/sigsafe.h): no lock is taken, allocations come from the
 * lock-free magazines or page_alloc's emergency mappings, frees are
 * deferred and given back when the thread next misses.
 *
 * The deterministic cases hold the zone lock (the innermost lock: every
 * path that needs memory from page_alloc ends there) exactly as an
 * interrupted large kmalloc does, and then allocate and free as a handler
 * would: before sigsafe sections this deadlocked on the first miss (the
 * mutex is not recursive). The last case sends real signals.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include "tests/suite.h"
#include "tests/testutil.h"
#include "page_alloc/internal.h"
#include "slab/internal.h"

/* Sizes a handler might ask for: small classes, the largest, buddy blocks. */
static size_t handler_size(uint64_t *s)
{
	static const size_t sizes[] = { 8, 24, 64, 200, 1000, 4096, 12000,
					65536, 262144, 300000, 1 << 20 };

	return sizes[rnd(s) % (sizeof(sizes) / sizeof(sizes[0]))];
}

/*
 * Each case runs in its own process: page_alloc and the kmalloc classes a
 * case uses exist before it holds the zone lock (creating them takes it).
 */
static void warm_up(void)
{
	uint64_t s = 1;

	for (int i = 0; i < 64; i++)
		kfree(kmalloc(handler_size(&s), GFP_KERNEL));
}

TEST(core, test_alloc_free_under_zone_lock)
{
	uint64_t seed = test_seed_from_env("USLAB_TEST_SEED", "sigsafe");
	enum { N = 48 };
	unsigned long emerg_before = page_alloc_emergency_total;
	unsigned char *p[N];
	size_t sz[N];
	int i;

	warm_up();

	pa_lock_irqsave();	/* as a large kmalloc interrupted by the signal */
	ck_assert(sigsafe_reentered());
	for (i = 0; i < N; i++) {
		sz[i] = handler_size(&seed);
		p[i] = kmalloc(sz[i], GFP_KERNEL);
		ck_assert_msg(p[i], "kmalloc(%zu) in the handler's place failed", sz[i]);
		ck_assert_uint_ge(ksize(p[i]), sz[i]);
		memset(p[i], i + 1, sz[i]);
	}
	/* half of them freed "in the handler": lock-free or deferred */
	for (i = 0; i < N; i += 2)
		kfree(p[i]);
	pa_unlock_irqrestore();
	ck_assert(!sigsafe_reentered());

	/* the next large kmalloc gives the deferred frees back */
	kfree(kmalloc(1 << 20, GFP_KERNEL));
	ck_assert_ptr_null(sigsafe.deferred);
	ck_assert_uint_gt(page_alloc_emergency_total, emerg_before);
	for (i = 1; i < N; i += 2) {
		for (size_t k = 0; k < sz[i]; k += 509)
			ck_assert_uint_eq(p[i][k], (unsigned char)(i + 1));
		kfree(p[i]);
	}
	ck_assert_uint_eq(page_alloc_emergency_count, 0);
}
END_TEST

/* A handler's cache object: constructed, freed by kmem_cache_free later. */
static void ctor_fill(void *obj)
{
	memset(obj, 0x5a, 96);
}

TEST(core, test_cache_object_under_zone_lock)
{
	struct kmem_cache *s = kmem_cache_create("sigsafe_ctor", 96, 0, 0, ctor_fill);
	void *o[40];
	int i;

	ck_assert_ptr_nonnull(s);
	warm_up();
	pa_lock_irqsave();
	/* a new cache's magazines are empty: each one is an emergency object */
	for (i = 0; i < 40; i++) {
		o[i] = kmem_cache_alloc(s, GFP_KERNEL);
		ck_assert_ptr_nonnull(o[i]);
		ck_assert_uint_eq(((unsigned char *)o[i])[95], 0x5a);
	}
	for (i = 0; i < 40; i++)
		kmem_cache_free(s, o[i]);
	pa_unlock_irqrestore();
	kfree(kmalloc(1 << 20, GFP_KERNEL));	/* drains */
	ck_assert_ptr_null(sigsafe.deferred);
	ck_assert_uint_eq(page_alloc_emergency_count, 0);
	kmem_cache_destroy(s);
}
END_TEST

/*
 * The first use of a kmalloc class in the handler's place: making the
 * cache takes slab_mutex and the zone lock, so the handler gets an
 * emergency block of the class's size and alignment instead (robust
 * signals-large hung here: a handler's first 16 KiB malloc interrupted a
 * large kmalloc that held the zone lock). Outside, the class is made.
 */
TEST(core, test_first_use_of_class_under_zone_lock)
{
	/* the two largest classes: no other test of this process made them */
	static const size_t sizes[] = { KMALLOC_MAX_CACHE_SIZE / 2, KMALLOC_MAX_CACHE_SIZE };
	void *p[3], *q;
	int i;

	kfree(kmalloc(64, GFP_KERNEL));		/* page_alloc and slab up */
	drain_all_pages(false);			/* every page now needs the zone lock */
	pa_lock_irqsave();
	for (i = 0; i < 2; i++) {
		p[i] = kmalloc(sizes[i], GFP_KERNEL);
		ck_assert_ptr_nonnull(p[i]);
		ck_assert_uint_ge(page_alloc_emergency_size(p[i]), sizes[i]);
		/* a power-of-two class is aligned to its size, here too */
		ck_assert_uint_eq((uintptr_t)p[i] & (sizes[i] - 1), 0);
		memset(p[i], 0xa5, sizes[i]);
	}
	p[2] = kmalloc_aligned(5000, 8192, GFP_KERNEL);
	ck_assert_ptr_nonnull(p[2]);
	ck_assert_uint_eq((uintptr_t)p[2] & 8191, 0);
	pa_unlock_irqrestore();

	q = kmalloc(sizes[0], GFP_KERNEL);	/* outside: the cache is made */
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq(page_alloc_emergency_size(q), 0);
	ck_assert_ptr_nonnull(kmalloc_slab(sizes[0]));
	kfree(q);
	for (i = 0; i < 3; i++)
		kfree(p[i]);
	ck_assert_uint_eq(page_alloc_emergency_count, 0);
}
END_TEST

/*
 * The same with the kmalloc classes debug caches (slab_debug=FZP,kmalloc-*,
 * as USLAB_OPTIONS=debug or a CONFIG_SLAB_DEBUG_ON build): the handler
 * gets an emergency block, which has no debug metadata after the object
 * (kmalloc wrote the asked size there: a SIGSEGV past a 256 KiB block),
 * and a class first used in the handler's place is an emergency block too
 * (it was NULL).
 */
TEST(core, test_debug_kmalloc_under_zone_lock)
{
	static const size_t made = KMALLOC_MAX_CACHE_SIZE / 2, fresh = KMALLOC_MAX_CACHE_SIZE;
	struct kmem_cache_setting set;
	void *p[2];
	int i;

	ck_assert_int_eq(kmem_cache_debug_parse("FZP,kmalloc-*", &set, 1), 1);
	ck_assert_int_eq(kmem_cache_setting_add(&set), 0);
	kfree(kmalloc(made, GFP_KERNEL));	/* the class is made, a debug cache */
	ck_assert(slab_debug(kmalloc_slab(made)));
	drain_all_pages(false);
	pa_lock_irqsave();
	p[0] = kmalloc(made, GFP_KERNEL);
	p[1] = kmalloc(fresh, GFP_KERNEL);
	for (i = 0; i < 2; i++) {
		size_t sz = i ? fresh : made;

		ck_assert_ptr_nonnull(p[i]);
		ck_assert_uint_ge(page_alloc_emergency_size(p[i]), sz);
		ck_assert_uint_eq((uintptr_t)p[i] & (sz - 1), 0);
		memset(p[i], 0xa5, sz);
	}
	pa_unlock_irqrestore();
	for (i = 0; i < 2; i++)
		kfree(p[i]);
	ck_assert_uint_eq(page_alloc_emergency_count, 0);
	p[0] = kmalloc(fresh, GFP_KERNEL);	/* outside: the class is made */
	ck_assert_ptr_nonnull(p[0]);
	ck_assert_uint_eq(page_alloc_emergency_size(p[0]), 0);
	ck_assert(slab_debug(kmalloc_slab(fresh)));
	kfree(p[0]);
}
END_TEST

/*
 * realloc and malloc_usable_size in a handler check the block first
 * (ksize_checked()); on a debug cache that check walked the slab's
 * freelist under the cache lock, which the interrupted thread may hold:
 * robust signals-threads with USLAB_OPTIONS=debug hung so, every thread in
 * its handler waiting on the lock. Here the lock is held as an
 * interrupted free holds it; the check answers without it.
 */
TEST(core, test_debug_usable_size_under_cache_lock)
{
	struct kmem_cache_setting set;
	struct kmem_cache *s;
	unsigned char *p;

	ck_assert_int_eq(kmem_cache_debug_parse("FZP,kmalloc-*", &set, 1), 1);
	ck_assert_int_eq(kmem_cache_setting_add(&set), 0);
	p = kmalloc(100, GFP_KERNEL);
	ck_assert_ptr_nonnull(p);
	s = kmalloc_slab(100);
	ck_assert(slab_debug(s));
	memset(p, 3, 100);
	slab_lock(s);		/* as a free of the class interrupted by the signal */
	ck_assert(sigsafe_reentered());
	ck_assert_uint_eq(ksize_checked(p, "malloc_usable_size", 0), 100);
	slab_unlock(s);
	ck_assert_uint_eq(ksize_checked(p, "malloc_usable_size", 0), 100);
	kfree(p);
}
END_TEST

/*
 * The bound is on bytes out at once (EP_MAX_BYTES, 256 MiB), not on a
 * number of blocks: a table of 64 slots refused the 65th 1 MiB block.
 * Past the bound: a clean ENOMEM, counted, no unbounded mapping.
 */
TEST(core, test_emergency_bound_is_bytes_not_slots)
{
	enum { MAX = 300 };	/* 1 MiB blocks: the bound is 256 of them */
	static void *p[MAX];
	unsigned long failed = page_alloc_emergency_failed;
	int n = 0;

	warm_up();
	pa_lock_irqsave();
	while (n < MAX && (p[n] = kmalloc(1 << 20, GFP_KERNEL | __GFP_NOWARN)))
		n++;
	ck_assert_int_eq(errno, ENOMEM);
	pa_unlock_irqrestore();
	ck_assert_int_eq(n, 256);	/* 64 with the old table */
	ck_assert_uint_eq(page_alloc_emergency_failed, failed + 1);
	/* krealloc and ksize know the emergency blocks */
	ck_assert_uint_ge(ksize(p[0]), 1 << 20);
	memset(p[0], 7, 100);
	p[0] = krealloc(p[0], 100, GFP_KERNEL);
	ck_assert_ptr_nonnull(p[0]);
	ck_assert_uint_eq(((unsigned char *)p[0])[99], 7);
	while (n--)
		kfree(p[n]);
	ck_assert_uint_eq(page_alloc_emergency_count, 0);
}
END_TEST

/*
 * Many small blocks out at once in the handler's place (hundreds of
 * threads in fallback mode, or handlers that keep their blocks): each one
 * is there (the 64-slot table failed the 65th), zeroed, aligned to its
 * class, apart from every other; freed in any order from another thread;
 * afterwards the pool's pages go back with malloc_trim's
 * page_alloc_emergency_trim() and a second round needs no new chunk.
 */
static const size_t small_sizes[] = { 8, 24, 64, 96, 200, 512, 1000, 2048,
				       4096, 8192, 12000, 16384 };
#define NR_SMALL 3000
static unsigned char *small_p[NR_SMALL];
static size_t small_sz[NR_SMALL];

static void *free_odd_ones(void *arg)
{
	(void)arg;
	for (int i = 1; i < NR_SMALL; i += 2)
		kfree(small_p[i]);
	return NULL;
}

static void fill_small_under_zone_lock(uint64_t *seed)
{
	pa_lock_irqsave();
	for (int i = 0; i < NR_SMALL; i++) {
		size_t sz = small_sizes[rnd(seed) % ARRAY_SIZE(small_sizes)];

		small_sz[i] = sz;
		small_p[i] = kmalloc(sz, GFP_KERNEL | __GFP_ZERO);
		ck_assert_msg(small_p[i], "block %d of %zu bytes: %s", i, sz,
			      "refused in the handler's place");
		ck_assert_uint_ge(ksize(small_p[i]), sz);
		for (size_t k = 0; k < sz; k += 61)
			ck_assert_uint_eq(small_p[i][k], 0);
		memset(small_p[i], (i % 251) + 1, sz);
	}
	pa_unlock_irqrestore();
}

TEST(core, test_emergency_many_small_blocks)
{
	uint64_t seed = test_seed_from_env("USLAB_TEST_SEED", "sigsafe");
	unsigned long total = page_alloc_emergency_total;
	unsigned long failed = page_alloc_emergency_failed;
	pthread_t t;
	size_t trimmed;

	warm_up();
	drain_all_pages(false);
	fill_small_under_zone_lock(&seed);
	/* the magazines serve a few (lock-free), the rest are emergency blocks */
	ck_assert_uint_gt(page_alloc_emergency_count, NR_SMALL / 2);
	ck_assert_uint_eq(page_alloc_emergency_total, total + page_alloc_emergency_count);
	for (int i = 0; i < NR_SMALL; i++) {
		size_t a = small_sz[i] & -small_sz[i];

		ck_assert_uint_eq((uintptr_t)small_p[i] & (a - 1), 0);
		if (page_alloc_emergency_size(small_p[i]))
			ck_assert_uint_eq((uintptr_t)small_p[i] & 63, 0);
		for (size_t k = 0; k < small_sz[i]; k += 509)
			ck_assert_uint_eq(small_p[i][k], (unsigned char)((i % 251) + 1));
		ck_assert_uint_eq(small_p[i][small_sz[i] - 1],
				  (unsigned char)((i % 251) + 1));
	}
	/* half freed by another thread, half here; then each is foreign */
	ck_assert_int_eq(pthread_create(&t, NULL, free_odd_ones, NULL), 0);
	for (int i = 0; i < NR_SMALL; i += 2)
		kfree(small_p[i]);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(page_alloc_emergency_count, 0);
	for (int i = 0; i < NR_SMALL; i++) {
		ck_assert_uint_eq(page_alloc_emergency_size(small_p[i]), 0);
		/* twice: not an emergency block now */
		ck_assert(!page_alloc_emergency_free(small_p[i]));
	}
	trimmed = page_alloc_emergency_trim();
	ck_assert_uint_gt(trimmed, 0);
	ck_assert_uint_eq(page_alloc_emergency_trim(), 0);	/* nothing left */
	/* the same again comes from the chunks trimmed (no mapping: count of
	 * blocks handed out grows, the failures do not) */
	fill_small_under_zone_lock(&seed);
	for (int i = 0; i < NR_SMALL; i++)
		kfree(small_p[i]);
	ck_assert_uint_eq(page_alloc_emergency_count, 0);
	ck_assert_uint_eq(page_alloc_emergency_failed, failed);
}
END_TEST

/*
 * Threads that all act as handlers inside the allocator at once (each one
 * holds a sigsafe section, as an interrupted thread does), allocating,
 * checking and freeing emergency blocks of every kind while chunks empty,
 * give their pages back and change class under them: no block handed out
 * twice (each carries its owner's pattern, checked before it is freed),
 * none refused, the count back to 0.
 */
#define RACE_THREADS 6
#define RACE_KEEP 48
static atomic_int race_bad;

static void *race_worker(void *arg)
{
	uint64_t s = (uintptr_t)arg * 7919 + 1;
	unsigned char tag = (unsigned char)(uintptr_t)arg + 1;
	unsigned char *keep[RACE_KEEP] = { 0 };
	size_t sz[RACE_KEEP] = { 0 };

	sigsafe_enter();	/* as a handler that interrupted the allocator */
	for (int it = 0; it < 20000; it++) {
		unsigned int k = (unsigned int)(rnd(&s) % RACE_KEEP);

		if (keep[k]) {
			for (size_t i = 0; i < sz[k]; i += 37)
				if (keep[k][i] != tag)
					atomic_fetch_add(&race_bad, 1);
			if (keep[k][sz[k] - 1] != tag)
				atomic_fetch_add(&race_bad, 1);
			if (!page_alloc_emergency_free(keep[k]))
				atomic_fetch_add(&race_bad, 1);
			keep[k] = NULL;
		}
		sz[k] = rnd(&s) % 8 ? 1 + rnd(&s) % 3000 : 1 + rnd(&s) % 70000;
		keep[k] = page_alloc_emergency_alloc(sz[k], 0);
		if (!keep[k]) {
			atomic_fetch_add(&race_bad, 1);
			continue;
		}
		memset(keep[k], tag, sz[k]);
		if (it % 1000 == 999)
			page_alloc_emergency_trim();
	}
	for (int k = 0; k < RACE_KEEP; k++)
		if (keep[k] && !page_alloc_emergency_free(keep[k]))
			atomic_fetch_add(&race_bad, 1);
	sigsafe_exit();
	return NULL;
}

TEST(core, test_emergency_blocks_from_many_threads)
{
	unsigned long failed = page_alloc_emergency_failed;
	pthread_t t[RACE_THREADS];

	for (uintptr_t i = 0; i < RACE_THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, race_worker, (void *)i), 0);
	for (int i = 0; i < RACE_THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_int_eq(atomic_load(&race_bad), 0);
	ck_assert_uint_eq(page_alloc_emergency_count, 0);
	ck_assert_uint_eq(page_alloc_emergency_failed, failed);
}
END_TEST

/* Real signals: a timer's handler allocates while the thread does large kmallocs. */
static volatile sig_atomic_t handled;
static uint64_t handler_seed = 99;

static void on_alarm(int sig)
{
	void *a, *b;

	(void)sig;
	a = kmalloc(handler_size(&handler_seed), GFP_KERNEL);
	b = kmalloc(handler_size(&handler_seed), GFP_KERNEL);
	if (a && b) {
		memset(a, 1, 8);
		memset(b, 2, 8);
		handled++;
	}
	kfree(a);
	kfree(b);
}

TEST(core, test_timer_handler_allocates)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	uint64_t seed = 7;
	struct timespec t0, t;
	void *keep[32] = { 0 };

	warm_up();
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 2000; i++) {
			unsigned int k = (unsigned int)(rnd(&seed) % 32);

			kfree(keep[k]);
			keep[k] = kmalloc(handler_size(&seed), GFP_KERNEL);
			ck_assert_ptr_nonnull(keep[k]);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 2);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	for (int k = 0; k < 32; k++)
		kfree(keep[k]);
	kfree(kmalloc(1 << 20, GFP_KERNEL));	/* drains what is left */
	ck_assert_int_gt(handled, 100);
	ck_assert_ptr_null(sigsafe.deferred);
	ck_assert_uint_eq(page_alloc_emergency_count, 0);
}
END_TEST

static const struct test_case cases[] = {
	{ .name = "core", .timeout = 60 },	/* a deadlock fails by timeout */
};

int main(void)
{
	return test_run_suite(test_suite("sigsafe", cases, ARRAY_SIZE(cases)));
}
