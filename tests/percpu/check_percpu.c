// SPDX-License-Identifier: MIT
/*
 * White-box tests of percpu/: magazines, the depot, drains, tunables, the
 * working-set trim and a randomized model test, against a test pool that
 * stands in for the slab layer (refill/flush callbacks).
 *
 * The mode is whatever the process gets (rseq normally, fallback under the
 * seccomp launcher or valgrind); USLAB_EXPECT_PCP_MODE=<mode> makes the
 * suite check it. Policy tests pin the thread to one CPU so that counts are
 * exact.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/cpuclock.h"
#include "uslab/percpu.h"
#include "percpu/fastpath.h"	/* inline pcp_alloc/pcp_free */
#include "tests/testutil.h"
#include "tests/suite.h"

#define POOL_N	20000

struct tobj {
	int live;		/* handed out to the test */
	int in_pool;		/* on the pool's free stack */
	char pad[56];
};

static struct tobj objs[POOL_N];
static void *pool_stack[POOL_N];
static unsigned int pool_top;
static unsigned long refill_calls, flush_calls;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static int pool_errors;

static void pool_reset(void)
{
	unsigned int i;

	memset(objs, 0, sizeof(objs));
	for (i = 0; i < POOL_N; i++) {
		pool_stack[i] = &objs[POOL_N - 1 - i];
		objs[i].in_pool = 1;
	}
	pool_top = POOL_N;
	refill_calls = flush_calls = 0;
	pool_errors = 0;
}

static unsigned int t_refill(void *owner, void **out, unsigned int nr)
{
	unsigned int i;

	pthread_mutex_lock(&pool_lock);
	refill_calls++;
	for (i = 0; i < nr && pool_top; i++) {
		struct tobj *o = pool_stack[--pool_top];

		if (!o->in_pool)
			pool_errors++;
		o->in_pool = 0;
		out[i] = o;
	}
	pthread_mutex_unlock(&pool_lock);
	return i;
}

static void t_flush(void *owner, void **in, unsigned int nr)
{
	unsigned int i;

	pthread_mutex_lock(&pool_lock);
	flush_calls++;
	for (i = 0; i < nr; i++) {
		struct tobj *o = in[i];

		if (o->in_pool || o->live)
			pool_errors++;	/* flushed twice, or while live */
		o->in_pool = 1;
		pool_stack[pool_top++] = o;
	}
	pthread_mutex_unlock(&pool_lock);
}

/* test_may_lock_refused: the layer above says no to every slow path */
static bool t_refuse;

static bool t_may_lock(void *owner)
{
	return !t_refuse;
}

static const struct pcp_ops t_ops = {
	.refill = t_refill, .flush = t_flush, .may_lock = t_may_lock,
};

static struct tobj *t_alloc(struct pcp_cache *pc)
{
	struct tobj *o = pcp_alloc_fast(pc);

	if (!o)
		o = pcp_alloc_slow(pc);

	if (o) {
		if (o->live || o->in_pool)
			pool_errors++;	/* handed out twice */
		o->live = 1;
	}
	return o;
}

static void t_free(struct pcp_cache *pc, struct tobj *o)
{
	o->live = 0;
	if (!pcp_free_fast(pc, o))
		ck_assert(pcp_free_slow(pc, o));
}

/* The objects a test holds (a test runs alone and never holds more than
 * the pool), in the order it took them. */
static struct tobj *held[POOL_N];

/* held[lo..hi) allocated from @pc, or freed to it, in index order. */
static void t_alloc_range(struct pcp_cache *pc, int lo, int hi)
{
	for (int i = lo; i < hi; i++)
		held[i] = t_alloc(pc);
}

static void t_free_range(struct pcp_cache *pc, int lo, int hi)
{
	for (int i = lo; i < hi; i++)
		t_free(pc, held[i]);
}

static unsigned int pool_out(void)
{
	return POOL_N - pool_top;
}

/* For the test's whole process (a test runs in its own unless CK_FORK=no). */
static int pin_here(void)
{
	cpu_set_t old;

	return test_pin(&old);
}

static struct pcp_cache *t_create(unsigned int limit, unsigned int batch)
{
	struct pcp_cache *pc;

	pool_reset();
	pc = pcp_cache_create("test", NULL, &t_ops, 64);
	ck_assert_ptr_nonnull(pc);
	ck_assert_int_eq(pcp_cache_set_tunables(pc, limit, batch), 0);
	return pc;
}

/* t_create() for a test that counts what one CPU's magazines hold: this
 * thread stays on its CPU (pin_here). */
static struct pcp_cache *t_create_here(unsigned int limit, unsigned int batch)
{
	pin_here();
	return t_create(limit, batch);
}

/*
 * A cache of magazines of @limit (batches of @batch) on this thread's CPU,
 * pinned, that handed out @n objects (held[]) and had them all back: its
 * magazines full, the depot holding the rest up to its limit.
 */
static struct pcp_cache *t_cycled(unsigned int limit, unsigned int batch, int n)
{
	struct pcp_cache *pc = t_create_here(limit, batch);

	for (int i = 0; i < n; i++)
		ck_assert_ptr_nonnull(held[i] = t_alloc(pc));
	ck_assert_uint_eq(pool_out(), n + pcp_cache_objects(pc, NULL));
	t_free_range(pc, 0, n);
	return pc;
}

/* Destroy @pc: every object is back in the pool, none went out twice. */
static void t_destroy(struct pcp_cache *pc)
{
	pcp_cache_destroy(pc);
	ck_assert_uint_eq(pool_out(), 0);
	ck_assert_int_eq(pool_errors, 0);
}

static uint64_t stat_of(struct pcp_cache *pc, enum pcp_stat_item i)
{
	struct pcp_stats st;

	pcp_cache_stats(pc, -1, &st);
	return st.v[i];
}

/* Counter checks hold only where the counters exist. */
#define ck_stat(expr) do {						\
	if (IS_ENABLED(CONFIG_PERCPU_STATS))				\
		ck_assert(expr);					\
} while (0)
/* rseq-mode hits are counted only with CONFIG_PERCPU_HIT_STATS */
#define ck_hits(expr) do {						\
	if (IS_ENABLED(CONFIG_PERCPU_HIT_STATS) ||			\
	    pcp_mode_id() != PCP_MODE_RSEQ)				\
		ck_stat(expr);						\
} while (0)

/* CONFIG_PERCPU_CACHE=n (nocache preset): no magazines at all. */
TEST(off, test_mode_off)
{
	ck_assert_str_eq(pcp_mode(), "off");
	errno = 0;
	ck_assert_ptr_null(pcp_cache_create("off", NULL, &t_ops, 64));
	ck_assert_int_eq(errno, EOPNOTSUPP);
}
END_TEST

TEST(core, test_mode)
{
	const char *want = getenv("USLAB_EXPECT_PCP_MODE");
	const char *mode = pcp_mode();

	ck_assert(!strcmp(mode, "rseq") || !strcmp(mode, "fallback"));
	if (want)
		ck_assert_str_eq(mode, want);
	ck_assert_uint_ge(pcp_nr_cpu_ids(), 1);
	ck_assert_int_eq(uslab_vcpu_set(0), -EOPNOTSUPP);
	ck_assert_int_eq(uslab_vclock_set(1), -EOPNOTSUPP);
}
END_TEST

/*
 * The arrays cover every CPU number the kernel can name, whatever sysfs
 * says (issue 11, finding 2): at least the kernel's cpumask size, and
 * beyond the highest CPU this process may run on.
 */
TEST(core, test_nr_cpu_ids_kernel_bound)
{
	unsigned long mask[1024];
	long n = syscall(__NR_sched_getaffinity, 0, sizeof(mask), mask);
	unsigned int bits, cpu, highest = 0;

	ck_assert_int_gt(n, 0);
	bits = (unsigned int)n * 8;
	for (cpu = 0; cpu < bits; cpu++)
		if (mask[cpu / 64] >> (cpu % 64) & 1)
			highest = cpu;
	if (bits <= 8192)
		ck_assert_uint_ge(pcp_nr_cpu_ids(), bits);
	ck_assert_uint_gt(pcp_nr_cpu_ids(), highest);
}
END_TEST

TEST(core, test_default_limits)
{
	/* the documented table (CONFIG_PERCPU_MAG_SIZE=0 in the default) */
	if (CONFIG_PERCPU_MAG_SIZE == 0) {
		/* small objects: 16 KiB of them, at most 1024 */
		ck_assert_uint_eq(pcp_default_limit(8), 1024);
		ck_assert_uint_eq(pcp_default_limit(16), 1024);
		ck_assert_uint_eq(pcp_default_limit(48), 341);
		ck_assert_uint_eq(pcp_default_limit(64), 256);
		ck_assert_uint_eq(pcp_default_limit(128), 128);
		ck_assert_uint_eq(pcp_default_limit(136), 120);
		ck_assert_uint_eq(pcp_default_limit(256), 120);
		ck_assert_uint_eq(pcp_default_limit(257), 54);
		ck_assert_uint_eq(pcp_default_limit(1024), 54);
		ck_assert_uint_eq(pcp_default_limit(2048),
				  CONFIG_PERCPU_MAG_BYTES / 2048 < 64 ?
				  CONFIG_PERCPU_MAG_BYTES / 2048 : 64);
		ck_assert_uint_eq(pcp_default_limit(16384),
				  CONFIG_PERCPU_MAG_BYTES / 16384 < 64 ?
				  CONFIG_PERCPU_MAG_BYTES / 16384 : 64);
	} else {
		ck_assert_uint_eq(pcp_default_limit(8),
				  CONFIG_PERCPU_MAG_BYTES / 8 < CONFIG_PERCPU_MAG_SIZE ?
				  CONFIG_PERCPU_MAG_BYTES / 8 : CONFIG_PERCPU_MAG_SIZE);
	}
	/*
	 * bounded in bytes whatever the count, but never below the floor in
	 * objects (CONFIG_PERCPU_MAG_MIN, or the count when that is smaller):
	 * the byte cap's objects or the floor, whichever is more, >= 1
	 */
	for (unsigned int sz = 8; sz <= (1u << 20); sz *= 2) {
		unsigned int l = pcp_default_limit(sz);
		unsigned int bytes = CONFIG_PERCPU_MAG_BYTES / sz;

		ck_assert_uint_ge(l, 1);
		ck_assert_uint_le(l, bytes > CONFIG_PERCPU_MAG_MIN ?
				  bytes : CONFIG_PERCPU_MAG_MIN < 1 ? 1 :
				  CONFIG_PERCPU_MAG_MIN);
		ck_assert(l == 1 || (size_t)l * sz <= CONFIG_PERCPU_MAG_BYTES ||
			  l <= CONFIG_PERCPU_MAG_MIN);
	}
	ck_assert_uint_eq(pcp_default_limit(CONFIG_PERCPU_MAG_BYTES * 2),
			  CONFIG_PERCPU_MAG_SIZE == 0 ? CONFIG_PERCPU_MAG_MIN :
			  CONFIG_PERCPU_MAG_SIZE < CONFIG_PERCPU_MAG_MIN ?
			  CONFIG_PERCPU_MAG_SIZE : CONFIG_PERCPU_MAG_MIN);
	/* the large classes: the floor, not the byte cap's 1-6 objects */
	if (CONFIG_PERCPU_MAG_SIZE == 0 && CONFIG_PERCPU_MAG_BYTES == 262144) {
		ck_assert_uint_eq(pcp_default_limit(131072),
				  CONFIG_PERCPU_MAG_MIN > 2 ? CONFIG_PERCPU_MAG_MIN : 2);
		ck_assert_uint_eq(pcp_default_limit(262144), CONFIG_PERCPU_MAG_MIN);
		ck_assert_uint_eq(pcp_default_limit(32768), 8);
	}
	if (CONFIG_PERCPU_BATCHCOUNT == 0)
		ck_assert_uint_eq(pcp_default_batchcount(120), 60);
}
END_TEST

/*
 * The larger magazines of small objects keep the depot's bytes: as many
 * bytes of full magazines as the table's 120-object magazines gave
 * (at most one magazine more, rounded up), in fewer magazines.
 */
TEST(core, test_small_magazines_keep_depot_bytes)
{
	if (CONFIG_PERCPU_MAG_SIZE != 0 || CONFIG_PERCPU_DEPOT_LIMIT <= 0)
		return;
	for (unsigned int sz = 8; sz <= 128; sz += 8) {
		uint64_t per = (uint64_t)pcp_default_limit(sz) * sz;
		uint64_t kept = per * pcp_default_depot_limit(sz);
		uint64_t lim = CONFIG_PERCPU_DEPOT_LIMIT;
		uint64_t n = lim * CONFIG_PERCPU_MAG_BYTES / (120u * sz);
		uint64_t old = (n < lim ? lim : n > 4 * lim ? 4 * lim : n) * 120u * sz;

		ck_assert_uint_gt(pcp_default_limit(sz), 120);
		ck_assert_uint_ge(kept, old);
		ck_assert_uint_lt(kept, old + per);
	}
	/* the table's sizes keep the table's depot */
	ck_assert_uint_eq(pcp_default_depot_limit(256), 4 * CONFIG_PERCPU_DEPOT_LIMIT);
}
END_TEST

/*
 * The caches' per-CPU headers are coloured: with every pcp_cache at the
 * start of its page-aligned block, hdr[cpu] of every cache sat at the
 * same page offset, one set of a 64-set L1 (address bits 6-11), so that
 * the malloc and free hit paths of a program using more than eight
 * classes missed L1 on the header (docs/percpu.md "Cost"). Sixteen
 * caches made one after the other put hdr[0] in sixteen different sets
 * (every block has room for sixteen colours, whatever the number of CPU
 * ids).
 */
TEST(core, test_cache_headers_coloured)
{
	struct pcp_cache *pc[16];
	unsigned int i, j;

	for (i = 0; i < 16; i++) {
		pc[i] = pcp_cache_create("colour", NULL, &t_ops, 64);
		ck_assert_ptr_nonnull(pc[i]);
		ck_assert_uint_eq((uintptr_t)pcp_hdr(pc[i], 0) % 64, 0);
	}
	for (i = 0; i < 16; i++)
		for (j = 0; j < i; j++)
			ck_assert_msg(((uintptr_t)pcp_hdr(pc[i], 0) >> 6) % 64 !=
				      ((uintptr_t)pcp_hdr(pc[j], 0) >> 6) % 64,
				      "caches %u and %u: hdr[0] in one L1 set (page offset %#lx)",
				      j, i, (unsigned long)((uintptr_t)pcp_hdr(pc[i], 0) % 4096));
	for (i = 0; i < 16; i++)
		pcp_cache_destroy(pc[i]);
}
END_TEST

/*
 * mtmalloc's ring (bench/workloads.c, mt): a thread frees the oldest of
 * its last 32 blocks and allocates one of a uniform size; one large class
 * (128 KiB: 1 in 8 of the sizes of mt_128k) gets about 4 of the 32 and its
 * count moves by some 10 blocks over a run. The CPU's loaded and spare
 * magazines take that walk between them only when they hold more than a
 * few objects: with the byte bound alone (2 objects of 128 KiB) every
 * tenth operation on the class went to the depot, one lock and two
 * cache-line transfers each (mt_128k_t2 at 0.60 of tcmalloc). With the
 * default sizing the walk stays on the CPU: fewer than 1 in 200
 * operations take a lock beyond the CPU's own.
 */
TEST(core, test_large_class_ring_stays_on_cpu)
{
	enum { RING = 32, ITERS = 200000 };
	struct tobj *ring[RING] = { 0 };
	uint64_t s = 88172645463325252ull, trips;
	struct pcp_cache *pc;
	unsigned long ops = 0;

	if (CONFIG_PERCPU_MAG_BYTES < 262144)
		return;	/* the size and nocache presets trade these for memory */
	pin_here();
	pool_reset();
	pc = pcp_cache_create("test-128k", NULL, &t_ops, 131072);
	ck_assert_ptr_nonnull(pc);
	for (long i = 0; i < ITERS; i++) {
		struct tobj **slot = &ring[i % RING];

		if (*slot) {
			t_free(pc, *slot);
			ops++;
		}
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		*slot = NULL;
		if (s % 8 == 0) {	/* this class's share of the sizes */
			ck_assert_ptr_nonnull(*slot = t_alloc(pc));
			ops++;
		}
	}
	trips = stat_of(pc, PCP_STAT_DEPOT_GET) + stat_of(pc, PCP_STAT_DEPOT_PUT) +
		stat_of(pc, PCP_STAT_REFILL) + stat_of(pc, PCP_STAT_FLUSH);
	/* back first: under CK_FORK=no a failed check leaves what it held */
	for (int i = 0; i < RING; i++)
		if (ring[i])
			t_free(pc, ring[i]);
	t_destroy(pc);
	ck_assert_uint_gt(ops, ITERS / 5);
	if (IS_ENABLED(CONFIG_PERCPU_STATS))
		ck_assert_msg(trips * 200 < ops, "%llu trips beyond the CPU in %lu operations",
			      (unsigned long long)trips, ops);
}
END_TEST

/*
 * Bonwick's loaded and previous magazines at their boundary (one full,
 * one empty): a program whose count of blocks walks across it, one step
 * down and one up (alloc, free, free, alloc), swapped whole magazines at
 * every step across, so every second operation took the slow path (the
 * CPU lock and two rseq sections: mtmalloc's ring, 34,700 swaps in
 * 500,000 iterations). The slow path now leaves both magazines half full
 * when it misses the other way from the last miss, and the walk stays on
 * the fast paths. For every count of blocks given back before the walk
 * (one of them puts it on the boundary), 400 operations of the walk take
 * at most 4 slow paths.
 */
TEST(core, test_walk_at_magazine_boundary_stays_on_fast_path)
{
	enum { L = 16, B = 8, N = 3 * L, ROUNDS = 100 };
	uint64_t worst = 0;
	int worst_j = -1;

	pin_here();
	for (int j = 1; j <= 2 * L; j++) {
		struct pcp_cache *pc = t_create(L, B);
		int k = N - j;	/* blocks held during the walk */
		uint64_t before, slow;

		t_alloc_range(pc, 0, N);
		t_free_range(pc, k, N);	/* j back: the CPU holds j more */
		before = stat_of(pc, PCP_STAT_ALLOC_SLOW) + stat_of(pc, PCP_STAT_FREE_SLOW);
		for (int r = 0; r < ROUNDS; r++) {
			held[k] = t_alloc(pc);
			t_free(pc, held[k]);
			t_free(pc, held[k - 1]);
			held[k - 1] = t_alloc(pc);
		}
		slow = stat_of(pc, PCP_STAT_ALLOC_SLOW) + stat_of(pc, PCP_STAT_FREE_SLOW) -
		       before;
		if (slow > worst) {
			worst = slow;
			worst_j = j;
		}
		t_free_range(pc, 0, k);
		t_destroy(pc);
	}
	if (IS_ENABLED(CONFIG_PERCPU_STATS))
		ck_assert_msg(worst <= 4, "%llu slow paths in %d operations after %d frees",
			      (unsigned long long)worst, 4 * ROUNDS, worst_j);
}
END_TEST

TEST(core, test_tunables_api)
{
	struct pcp_cache *pc = t_create(16, 8);
	unsigned int l, b;

	ck_assert_int_eq(pcp_cache_set_tunables(pc, 0, 1), -EINVAL);
	ck_assert_int_eq(pcp_cache_set_tunables(pc, 10, 11), -EINVAL);
	ck_assert_int_eq(pcp_cache_set_tunables(pc, 4097, 1), -EINVAL);
	ck_assert_int_eq(pcp_cache_set_tunables(pc, 10, 0), -EINVAL);
	pcp_cache_get_tunables(pc, &l, &b);
	ck_assert_uint_eq(l, 16);
	ck_assert_uint_eq(b, 8);
	ck_assert_int_eq(pcp_cache_set_tunables(pc, 32, 5), 0);
	pcp_cache_get_tunables(pc, &l, &b);
	ck_assert_uint_eq(l, 32);
	ck_assert_uint_eq(b, 5);
	t_destroy(pc);
}
END_TEST

/* First alloc refills one batch; the rest of the batch is served by hits. */
TEST(core, test_refill_and_hits)
{
	struct pcp_cache *pc;

	pc = t_create_here(16, 8);
	held[0] = t_alloc(pc);
	ck_assert_ptr_nonnull(held[0]);
	ck_assert_uint_eq(pool_out(), 8);
	ck_assert_uint_eq(pcp_cache_objects(pc, NULL), 7);
	ck_stat(stat_of(pc, PCP_STAT_REFILL) == 1);
	ck_stat(stat_of(pc, PCP_STAT_ALLOC_SLOW) == 1);
	t_alloc_range(pc, 1, 8);
	ck_assert_uint_eq(pool_out(), 8);
	ck_assert_uint_eq(pcp_cache_objects(pc, NULL), 0);
	ck_hits(stat_of(pc, PCP_STAT_ALLOC_HIT) >= 7);
	/* LIFO: the last freed object comes back first */
	t_free(pc, held[3]);
	ck_assert_ptr_eq(t_alloc(pc), held[3]);
	t_free_range(pc, 0, 8);
	ck_assert_uint_eq(pcp_cache_objects(pc, NULL), 8);
	ck_assert_uint_eq(pool_out(), 8);
	pcp_cache_drain(pc);
	ck_assert_uint_eq(pool_out(), 0);
	ck_assert_uint_eq(pcp_cache_objects(pc, NULL), 0);
	ck_assert_int_eq(pool_errors, 0);
	t_destroy(pc);
}
END_TEST

/*
 * The may_lock hook (the slab layer's checks before a lock): refused, the
 * slow paths take no lock and call neither refill nor flush, alloc gives
 * NULL and free says not done (the object stays the caller's).
 */
TEST(core, test_may_lock_refused)
{
	struct pcp_cache *pc = t_create_here(16, 8);
	struct tobj *o;

	t_refuse = true;
	ck_assert_ptr_null(pcp_alloc_slow(pc));
	ck_assert_uint_eq(refill_calls, 0);
	t_refuse = false;
	o = t_alloc(pc);
	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(refill_calls, 1);
	o->live = 0;
	t_refuse = true;
	ck_assert(!pcp_free_slow(pc, o));
	ck_assert_uint_eq(flush_calls, 0);
	ck_assert_uint_eq(pcp_cache_objects(pc, NULL), 7);
	t_refuse = false;
	ck_assert(pcp_free_slow(pc, o));
	ck_assert_uint_eq(pcp_cache_objects(pc, NULL), 8);
	t_destroy(pc);
}
END_TEST

/*
 * With the depot at its limit, a flush gives the whole full spare back in
 * one call (Bonwick's magazine layer), not one batch of it: a burst of
 * frees takes the layer above's lock once per magazine, half as often.
 */
TEST(core, test_flush_whole_magazine)
{
	enum { L = 8, B = 4, N = 200 };
	struct pcp_cache *pc = t_create_here(L, B);
	unsigned long calls, back;

	ck_assert_int_eq(pcp_cache_set_depot_limit(pc, 0), 0);
	t_alloc_range(pc, 0, N);
	calls = flush_calls;
	back = pool_top;
	t_free_range(pc, 0, N);
	calls = flush_calls - calls;
	back = pool_top - back;
	ck_assert_uint_gt(calls, 0);
	ck_assert_uint_eq(back, calls * L);
	ck_assert_uint_le(pcp_cache_objects(pc, NULL), 2 * L);
	t_destroy(pc);
}
END_TEST

/* Frees beyond two magazines go to the depot up to its limit, then flush. */
TEST(core, test_depot_and_flush)
{
	enum { L = 8, B = 4, N = 2000 };
	struct pcp_cache *pc;
	unsigned long full;
	unsigned int depot;

	pc = t_cycled(L, B, N);
	pcp_cache_objects(pc, &full);
	/* the depot's own limit (pcp_default_depot_limit: bounded in bytes) */
	depot = pcp_cache_get_depot_limit(pc);
	ck_assert_uint_eq(depot, pcp_default_depot_limit(sizeof(struct tobj)));
	if (depot != PCP_DEPOT_UNLIMITED)
		ck_assert_uint_le(full, depot);
	/* a depot of 0 magazines (nocache_defconfig) keeps none: every
	 * full magazine beyond the spare is flushed */
	if (depot)
		ck_stat(stat_of(pc, PCP_STAT_DEPOT_PUT) > 0);
	else
		ck_stat(stat_of(pc, PCP_STAT_DEPOT_PUT) == 0);
	if (depot != PCP_DEPOT_UNLIMITED && (unsigned long)depot * L < N)
		ck_stat(stat_of(pc, PCP_STAT_FLUSH) > 0);
	/* loaded + spare + depot hold at most this many */
	ck_assert_uint_le(pcp_cache_objects(pc, NULL),
			  2 * L + (depot != PCP_DEPOT_UNLIMITED ?
				   (unsigned long)depot * L : N));
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(pc, NULL));
	/* allocation comes back from the depot before refilling */
	if (full) {
		uint64_t refills = stat_of(pc, PCP_STAT_REFILL);

		t_alloc_range(pc, 0, 3 * L);
		ck_stat(stat_of(pc, PCP_STAT_DEPOT_GET) > 0);
		ck_stat(stat_of(pc, PCP_STAT_REFILL) == refills);
		t_free_range(pc, 0, 3 * L);
	}
	t_destroy(pc);
}
END_TEST

/* Bonwick: what the working set did not use for a period goes back. */
TEST(core, test_working_set_trim)
{
	enum { N = 200 };
	struct pcp_cache *pc = t_cycled(8, 4, N);
	unsigned long full;

	pcp_cache_objects(pc, &full);
	ck_assert_uint_gt(pool_out(), 0);
	/* first pass: marks set; the CPU did not change since creation? no */
	pcp_reap_all();
	/* one more period without activity: depot and idle CPU go back */
	pcp_reap_all();
	pcp_reap_all();
	ck_assert_uint_eq(pcp_cache_objects(pc, &full), 0);
	ck_assert_uint_eq(full, 0);
	ck_assert_uint_eq(pool_out(), 0);
	ck_stat(stat_of(pc, PCP_STAT_DRAIN) > 0);
	/* still works afterwards */
	held[0] = t_alloc(pc);
	ck_assert_ptr_nonnull(held[0]);
	t_free(pc, held[0]);
	t_destroy(pc);
}
END_TEST

/* An active working set is kept: trim takes only what went unused. */
TEST(core, test_working_set_kept)
{
	enum { N = 64 };
	struct pcp_cache *pc = t_create_here(8, 4);
	unsigned long full;
	int round;

	for (round = 0; round < 4; round++) {
		t_alloc_range(pc, 0, N);
		t_free_range(pc, 0, N);
		pcp_reap_all();
	}
	pcp_cache_objects(pc, &full);
	/* every round emptied the depot of full magazines: min_full 0 */
	if (CONFIG_PERCPU_DEPOT_LIMIT < 0 || CONFIG_PERCPU_DEPOT_LIMIT >= 6)
		ck_assert_uint_ge(full, 1);
	t_destroy(pc);
}
END_TEST

/*
 * A depot that grows while its cache cycles (docs/percpu.md, "A depot
 * that grows while a cache cycles"): the round trips of sh8bench's ring,
 * N blocks freed and allocated again, more than the two magazines and
 * the depot's own limit hold.
 */
#ifdef CONFIG_PERCPU_DEPOT_GROW_KB
#define T_GROW_KB	CONFIG_PERCPU_DEPOT_GROW_KB
#else
#define T_GROW_KB	0
#endif
enum { GROW_L = 8, GROW_B = 4, GROW_N = 2000 };

/* The test cache's depot can grow to hold GROW_N objects. */
static bool t_depot_can_grow(struct pcp_cache *pc)
{
	unsigned int d = pcp_cache_get_depot_limit(pc);
	uint64_t per = GROW_L * (sizeof(struct tobj) + sizeof(void *));

	return d && d != PCP_DEPOT_UNLIMITED && (uint64_t)d * GROW_L < GROW_N &&
	       (uint64_t)T_GROW_KB * 1024 / per >= GROW_N / GROW_L;
}

/* Calls to the layer above (refills + flushes) of one round trip. */
static unsigned long t_round_trip(struct pcp_cache *pc)
{
	unsigned long calls = refill_calls + flush_calls;

	t_alloc_range(pc, 0, GROW_N);
	t_free_range(pc, 0, GROW_N);
	return refill_calls + flush_calls - calls;
}

TEST(core, test_depot_grows_while_a_cache_cycles)
{
	struct pcp_cache *pc;
	unsigned long first, second, third;

	/*
	 * Only the passes a test makes itself: under valgrind (CK_FORK=no, a
	 * loaded machine) a background pass between two round trips halved
	 * the growth (round trip 3 made 70 calls). Stopped for the rest of
	 * the process, as the adapt tests do.
	 */
	pcp_reaper_set_period(0);
	pc = t_create_here(GROW_L, GROW_B);
	first = t_round_trip(pc);
	second = t_round_trip(pc);
	third = t_round_trip(pc);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(pc, NULL));
	if (!t_depot_can_grow(pc)) {
		/* growth off (size preset) or nothing to grow: each round trip
		 * after the first (which started empty) as the one before */
		ck_assert_uint_eq(third, second);
		t_destroy(pc);
		return;
	}
	/* the first trip flushed (N - 2 L) / L - depot magazines and the
	 * second refilled them; the depot grew by what was flushed, so the
	 * third goes nowhere beyond the CPU and the depot */
	ck_assert_uint_gt(first, 0);
	if (third)
		ck_abort_msg("round trip 3 of %d objects: %lu calls to the layer "
			     "above (the first made %lu): the depot did not grow",
			     GROW_N, third, first);
	ck_assert_uint_eq(pcp_cache_objects(pc, NULL), GROW_N);
	t_destroy(pc);
}
END_TEST

/*
 * Magazines that grow while a cache cycles (docs/percpu.md): round trips
 * of MG_N objects, more than the depot grown to its cap holds (a cache of
 * 512-byte objects: magazines of 54, a depot of 64 growing to 149), make
 * the cache take magazines of PERCPU_MAG_GROW_BYTES (128 objects), and
 * reaper passes without a flush at the limit give the growth back.
 */
#ifdef CONFIG_PERCPU_MAG_GROW_KB
#define T_MAG_GROW_KB		CONFIG_PERCPU_MAG_GROW_KB
#define T_MAG_GROW_BYTES	CONFIG_PERCPU_MAG_GROW_BYTES
#else	/* Kconfig's defaults (a tree without the option fails here) */
#define T_MAG_GROW_KB		512
#define T_MAG_GROW_BYTES	65536
#endif
enum { MG_SIZE = 512, MG_N = 16000, MG_TRIPS = 6 };

/* MG_TRIPS round trips of MG_N objects on this CPU. */
static void t_mag_cycle(struct pcp_cache *pc)
{
	for (int i = 0; i < MG_TRIPS; i++) {
		t_alloc_range(pc, 0, MG_N);
		t_free_range(pc, 0, MG_N);
	}
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(pc, NULL));
}

static unsigned int t_limit(struct pcp_cache *pc)
{
	unsigned int limit, batch;

	pcp_cache_get_tunables(pc, &limit, &batch);
	return limit;
}

/*
 * A cache of MG_SIZE objects on this CPU with the reaper stopped: only the
 * passes the test makes (test_depot_grows_while_a_cache_cycles).
 */
static struct pcp_cache *t_grow_cache(void)
{
	struct pcp_cache *pc;

	pcp_reaper_set_period(0);
	pin_here();
	pool_reset();
	pc = pcp_cache_create("test", NULL, &t_ops, MG_SIZE);
	ck_assert_ptr_nonnull(pc);
	return pc;
}

TEST(core, test_cycling_cache_magazines_grow_and_go_back)
{
	unsigned int base = pcp_default_limit(MG_SIZE), grown = T_MAG_GROW_BYTES / MG_SIZE;
	struct pcp_cache *pc = t_grow_cache();

	ck_assert_uint_eq(t_limit(pc), base);
	t_mag_cycle(pc);
	if (!T_MAG_GROW_KB || !T_GROW_KB || grown <= base || pcp_adapt_enabled() ||
	    pcp_cache_get_depot_limit(pc) == 0 ||
	    pcp_cache_get_depot_limit(pc) == PCP_DEPOT_UNLIMITED ||
	    (uint64_t)T_GROW_KB * 1024 / (base * (MG_SIZE + sizeof(void *))) * base >= MG_N) {
		/*
		 * growth off (size preset; with adapt=1, the adaptive
		 * preset's default, the CPUs size their magazines instead),
		 * or the depot holds the trips
		 */
		ck_assert_uint_eq(t_limit(pc), base);
		t_destroy(pc);
		return;
	}
	if (t_limit(pc) != grown)
		ck_abort_msg("%d round trips of %d objects of %d bytes: magazines "
			     "of %u, not %u", MG_TRIPS, MG_N, MG_SIZE, t_limit(pc),
			     grown);
	/* quiet periods: the growth goes back, the objects stay accounted */
	for (int i = 0; i < 4; i++)
		pcp_reap_all();
	ck_assert_uint_eq(t_limit(pc), base);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(pc, NULL));
	t_destroy(pc);
}
END_TEST

/* A magazine size set by hand (any but the default) never grows. */
TEST(core, test_set_magazine_size_never_grows)
{
	unsigned int base = pcp_default_limit(MG_SIZE);
	struct pcp_cache *pc = t_grow_cache();

	ck_assert_int_eq(pcp_cache_set_tunables(pc, base - 1, base / 2), 0);
	t_mag_cycle(pc);
	ck_assert_uint_eq(t_limit(pc), base - 1);
	t_destroy(pc);
}
END_TEST

/* Another CPU allowed to this thread than @a, or -1 (@old: its mask). */
static int other_cpu(const cpu_set_t *old, int a)
{
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (i != a && CPU_ISSET(i, old))
			return i;
	return -1;
}

/*
 * Pin this thread where it runs (@a) and find another allowed CPU (@b).
 * Return: false, said and unpinned, when only one CPU is allowed: a test
 * of two CPUs then has nothing to check.
 */
static bool pin_with_other(cpu_set_t *old, int *a, int *b, const char *test)
{
	*a = test_pin(old);
	*b = other_cpu(old, *a);
	if (*b >= 0)
		return true;
	fprintf(stderr, "%s: one CPU allowed, nothing to check\n", test);
	test_unpin(old);
	return false;
}

static void move_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
	ck_assert_int_eq(sched_getcpu(), cpu);
}

static bool in_set(struct tobj *const *set, int n, const struct tobj *o)
{
	for (int i = 0; i < n; i++)
		if (set[i] == o)
			return true;
	return false;
}

/*
 * A free on a CPU that holds nothing of the cache puts the block under a
 * batch from the layer above, so that the CPU does not hand it out first
 * (a block another CPU allocated: its neighbours are written there;
 * docs/percpu.md "The first free on a CPU"). Two objects on CPU A; on CPU
 * B, which holds none, one of them freed, then one allocated: another
 * block. Before, B loaded an empty magazine, pushed the block and handed
 * it out again at once.
 */
TEST(core, test_first_free_on_a_cpu_is_not_handed_out_first)
{
	struct pcp_cache *pc;
	cpu_set_t old;
	void *x, *y, *z;
	int a, b;

	if (!pin_with_other(&old, &a, &b, "test_first_free_on_a_cpu_is_not_handed_out_first"))
		return;
	pc = t_create(8, 4);
	ck_assert_ptr_nonnull(x = t_alloc(pc));
	ck_assert_ptr_nonnull(y = t_alloc(pc));
	move_to(b);
	t_free(pc, x);
	ck_assert_ptr_nonnull(z = t_alloc(pc));
	if (z == x)
		ck_abort_msg("CPU %d, holding nothing, handed out first the block "
			     "it was given back (%p, allocated on CPU %d)", b, x, a);
	t_free(pc, z);
	t_free(pc, y);
	test_unpin(&old);
	t_destroy(pc);
}
END_TEST

/*
 * The depot gives a CPU back the full magazines it put (docs/percpu.md,
 * "The depot gives a CPU its own magazines"): CPU A and CPU B each free 4
 * magazines' worth of their own blocks, B last (its magazines the newest
 * in the depot); A then allocates as many as it freed and gets only its
 * own blocks. Before, A took the newest full magazines, B's, as soon as
 * its own two (loaded, spare) were empty.
 */
TEST(core, test_depot_gives_a_cpu_its_own_magazines)
{
	enum { L = 8, N = 4 * L };
	struct tobj *x[N], *y[N], *got[N], *o;
	struct pcp_cache *pc;
	cpu_set_t old;
	int a, b;

	if (!pin_with_other(&old, &a, &b, "test_depot_gives_a_cpu_its_own_magazines"))
		return;
	pc = t_create(L, L / 2);
	ck_assert_int_eq(pcp_cache_set_depot_limit(pc, 2 * N / L), 0);
	for (int i = 0; i < N; i++)
		ck_assert_ptr_nonnull(x[i] = t_alloc(pc));
	move_to(b);
	for (int i = 0; i < N; i++)
		ck_assert_ptr_nonnull(y[i] = t_alloc(pc));
	move_to(a);
	for (int i = 0; i < N; i++)
		t_free(pc, x[i]);
	move_to(b);
	for (int i = 0; i < N; i++)
		t_free(pc, y[i]);
	move_to(a);
	for (int i = 0; i < N; i++) {
		ck_assert_ptr_nonnull(o = t_alloc(pc));
		if (!in_set(x, N, o))
			ck_abort_msg("allocation %d of %d on CPU %d: %s block %p, not one "
				     "it freed", i + 1, N, a,
				     in_set(y, N, o) ? "the other CPU's" : "a new", (void *)o);
		got[i] = o;
	}
	for (int i = 0; i < N; i++)
		t_free(pc, got[i]);
	test_unpin(&old);
	t_destroy(pc);
}
END_TEST

/* The magazine loaded on @cpu. */
static const struct pcp_mag *loaded_mag(struct pcp_cache *pc, int cpu)
{
	void **slots = __atomic_load_n(&pc->hdr[cpu].begin, __ATOMIC_RELAXED);

	return (const void *)((char *)slots - __builtin_offsetof(struct pcp_mag, objs));
}

/*
 * The depot keeps each CPU's magazines apart (docs/percpu.md): the empty
 * magazines CPU A takes when it frees are ones A put back, not the ones
 * CPU B put after them, and A's full magazines under ten of B's still
 * come back to A: A hands out none of B's blocks. Before, A took the
 * newest empty magazine (B's) and looked at the newest four full ones
 * only (B's).
 */
TEST(core, test_depot_keeps_each_cpus_magazines_apart)
{
	enum { L = 8, N = 4 * L, M = 12 * L };
	struct tobj *x[N], *y[M], *o;
	const struct pcp_mag *m, *was;
	struct pcp_cache *pc;
	cpu_set_t old;
	int a, b;

	if (!pin_with_other(&old, &a, &b, "test_depot_keeps_each_cpus_magazines_apart"))
		return;
	pc = t_create(L, L / 2);
	ck_assert_int_eq(pcp_cache_set_depot_limit(pc, 64), 0);
	/* B fills ten magazines, puts them full, takes them back: its empties
	 * stay in the depot */
	move_to(b);
	for (int i = 0; i < M; i++)
		ck_assert_ptr_nonnull(y[i] = t_alloc(pc));
	for (int i = 0; i < M; i++)
		t_free(pc, y[i]);
	for (int i = 0; i < M; i++)
		ck_assert_ptr_nonnull(y[i] = t_alloc(pc));
	/* A does the same with four: two go through the depot and back */
	move_to(a);
	for (int i = 0; i < N; i++)
		ck_assert_ptr_nonnull(x[i] = t_alloc(pc));
	for (int i = 0; i < N; i++)
		t_free(pc, x[i]);
	for (int i = 0; i < N; i++)
		ck_assert_ptr_nonnull(x[i] = t_alloc(pc));
	/* then B, with four: its empties go back last */
	move_to(b);
	for (int i = 0; i < N; i++)
		t_free(pc, y[i]);
	for (int i = 0; i < N; i++)
		ck_assert_ptr_nonnull(y[i] = t_alloc(pc));
	/* A frees into empty magazines from the depot: the ones it put */
	move_to(a);
	was = loaded_mag(pc, a);
	for (int i = 0; i < N; i++) {
		t_free(pc, x[i]);
		m = loaded_mag(pc, a);
		if (m != was && m->cpu == (uint64_t)b)
			ck_abort_msg("free %d of %d on CPU %d loaded an empty magazine "
				     "CPU %d put in the depot (%p)", i + 1, N, a, b,
				     (const void *)m);
		was = m;
	}
	/* B's ten full magazines go in on top of A's two */
	move_to(b);
	for (int i = 0; i < M; i++)
		t_free(pc, y[i]);
	move_to(a);
	for (int i = 0; i < N; i++) {
		ck_assert_ptr_nonnull(o = t_alloc(pc));
		if (in_set(y, M, o))
			ck_abort_msg("allocation %d of %d on CPU %d: block %p, which "
				     "CPU %d freed", i + 1, N, a, (void *)o, b);
		x[i] = o;
	}
	for (int i = 0; i < N; i++)
		t_free(pc, x[i]);
	test_unpin(&old);
	t_destroy(pc);
}
END_TEST

/* Idle reaper passes give the growth back; a limit that was set never grows. */
TEST(core, test_depot_growth_goes_back_when_idle)
{
	struct pcp_cache *pc = t_create_here(GROW_L, GROW_B);
	unsigned long first;
	int pass;

	first = t_round_trip(pc);
	t_round_trip(pc);
	if (!t_depot_can_grow(pc)) {
		t_destroy(pc);
		pc = t_create_here(GROW_L, GROW_B);
		ck_assert_uint_eq(t_round_trip(pc), first);
		t_destroy(pc);
		return;
	}
	ck_assert_uint_eq(t_round_trip(pc), 0);
	/* idle: Bonwick's trim returns the unused magazines, and each pass
	 * without growth halves it (log2 of 2000 / 8 passes and two more) */
	for (pass = 0; pass < 10; pass++)
		pcp_reap_all();
	ck_assert_uint_eq(pool_out(), 0);
	ck_assert_uint_eq(pcp_cache_objects(pc, NULL), 0);
	/* back at its own limit: the next round trip flushes again */
	ck_assert_uint_gt(t_round_trip(pc), 0);
	t_destroy(pc);

	/* a limit set by the program (depot_limit option) stays as set */
	pc = t_create_here(GROW_L, GROW_B);
	ck_assert_int_eq(pcp_cache_set_depot_limit(pc, 4), 0);
	t_round_trip(pc);
	first = t_round_trip(pc);
	ck_assert_uint_gt(first, 0);
	ck_assert_uint_eq(t_round_trip(pc), first);
	t_destroy(pc);
}
END_TEST

TEST(core, test_resize_keeps_objects)
{
	enum { N = 500 };
	struct pcp_cache *pc = t_create(16, 8);

	t_alloc_range(pc, 0, N);
	t_free_range(pc, 0, N / 2);
	ck_assert_int_eq(pcp_cache_set_tunables(pc, 5, 2), 0);
	ck_assert_uint_eq(pcp_cache_objects(pc, NULL), 0);
	ck_assert_uint_eq(pool_out(), N - N / 2);
	t_free_range(pc, N / 2, N);
	ck_assert_uint_le(pcp_cache_objects(pc, NULL),
			  10 + (pcp_cache_get_depot_limit(pc) != PCP_DEPOT_UNLIMITED ?
				5ul * pcp_cache_get_depot_limit(pc) : N));
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(pc, NULL));
	t_destroy(pc);
}
END_TEST

/*
 * Adaptive magazines (docs/percpu.md, "Adaptive sizing"), objects of 64
 * bytes: bounds of 256 and 2048 bytes are 4 and 32 objects. Each CPU
 * starts at the cache's fixed size, 120 objects by default: @limit sets it
 * (mag_size; 0 keeps the default).
 */
static struct pcp_cache *t_adaptive(unsigned long min_b, unsigned long max_b,
				    unsigned long budget_kb, unsigned int limit)
{
	struct pcp_cache *pc;

	pin_here();
	pool_reset();
	/*
	 * Only the passes a test makes itself: under valgrind the suite runs
	 * in one process (CK_FORK=no) for minutes, and a background pass
	 * between two of them reset the low-water mark
	 * (test_adapt_shrinks_on_low_water_then_idle shrank at its first
	 * pass, 32 -> 16). Stopped for the rest of the process.
	 */
	pcp_reaper_set_period(0);
	pcp_adapt_set(true);
	ck_assert_int_eq(pcp_adapt_set_bounds(min_b, max_b, budget_kb), 0);
	pc = pcp_cache_create("adapt", NULL, &t_ops, 64);
	ck_assert_ptr_nonnull(pc);
	if (limit)
		ck_assert_int_eq(pcp_cache_set_tunables(pc, limit, (limit + 1) / 2), 0);
	return pc;
}

/*
 * t_adaptive()'s end, the test's objects all freed: every object out of
 * the pool is in the magazines of @pc or of @g (t_giver()'s cache, or
 * NULL), none in the pool once both are destroyed, and fixed sizes again.
 */
static void t_adaptive_destroy(struct pcp_cache *pc, struct pcp_cache *g)
{
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(pc, NULL) +
				      (g ? pcp_cache_objects(g, NULL) : 0));
	if (g)
		pcp_cache_destroy(g);
	t_destroy(pc);
	pcp_adapt_set(false);
}

static unsigned int mag_hi(struct pcp_cache *pc)
{
	unsigned int lo, hi;

	pcp_cache_mag_range(pc, &lo, &hi);
	return hi;
}

/*
 * A second adaptive cache on this CPU, of 4 KiB objects in 16-object
 * magazines (128 KiB for two; its upper bound is its start size, so it
 * never asks for room). It holds two full magazines, then allocates 20
 * and frees 20 over and over: two slow paths a round, both swaps with the
 * full or empty spare (no miss), holding 16 objects or more at each (half
 * its magazine unused). While another cache of the CPU wants room it
 * shrinks by what is wanted, 16 -> 15 for the 512 bytes of a 64-byte
 * cache's 4 -> 8 (one object: it gives 8 KiB), and drains; it stops there
 * (smaller, its rounds would miss). Objects held[G0 ..].
 */
enum { G0 = 16000, GN = 20, GSIZE = 4096, GLIMIT = 16 };

static struct pcp_cache *t_giver_start(void)
{
	struct pcp_cache *g = pcp_cache_create("giver", NULL, &t_ops, GSIZE);

	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(pcp_cache_set_tunables(g, GLIMIT, GLIMIT / 2), 0);
	t_alloc_range(g, G0, G0 + 2 * GLIMIT);
	t_free_range(g, G0, G0 + 2 * GLIMIT);
	return g;
}

static void t_giver_rounds(struct pcp_cache *g)
{
	for (int r = 0; r < 8 * 16 && mag_hi(g) == GLIMIT; r++) {
		t_alloc_range(g, G0, G0 + GN);
		t_free_range(g, G0, G0 + GN);
	}
}

static struct pcp_cache *t_giver(void)
{
	struct pcp_cache *g = t_giver_start();

	t_giver_rounds(g);
	return g;
}

/* Two magazines of @pc's sizes in force, in bytes of @objsize objects. */
static unsigned long cap_of(struct pcp_cache *pc, unsigned long objsize)
{
	return 2ul * mag_hi(pc) * objsize;
}

/*
 * Slow paths that keep going to the layer above double the magazine, up
 * to the upper bound and no further, once another cache of the CPU gave
 * the room (8 KiB; 4 -> 32 takes 3.5 KiB); bigger batches mean fewer
 * refills.
 */
TEST(core, test_adapt_grows_to_the_bound)
{
	enum { N = 2000 };
	struct pcp_cache *pc = t_adaptive(256, 2048, 4096, 4), *g;
	unsigned long refills;

	ck_assert_uint_eq(mag_hi(pc), 4);	/* before any CPU: the start size */
	t_alloc_range(pc, 0, N);		/* asks; no room yet */
	ck_assert_uint_eq(mag_hi(pc), 4);
	g = t_giver();
	ck_assert_uint_eq(mag_hi(g), GLIMIT - 1);
	refills = refill_calls;
	t_alloc_range(pc, N, 2 * N);
	ck_assert_uint_eq(mag_hi(pc), 32);
	ck_stat(stat_of(pc, PCP_STAT_GROW) == 3);	/* 4 -> 8 -> 16 -> 32 */
	/* with 4-object magazines (batch 2) it would be N / 2 refills */
	ck_assert_uint_lt(refill_calls - refills, N / 8);
	t_free_range(pc, 0, 2 * N);
	ck_assert_uint_eq(mag_hi(pc), 32);
	t_adaptive_destroy(pc, g);
}
END_TEST

/*
 * A cache destroyed while it wants room takes its wish along: the cache
 * made after it keeps its size (16). Before, the CPU kept the dead
 * cache's wish, and the next cache shrank to pay for growth nobody would
 * take (16 -> 15, as test_adapt_grows_to_the_bound's giver does for a
 * live one); under CK_FORK=no (test_percpu_valgrind.sh) with adapt=1 from
 * the start (the adaptive preset) every adapt test after the first cache
 * that asked went wrong.
 */
TEST(core, test_adapt_destroyed_cache_wants_no_room)
{
	enum { N = 2000 };
	struct pcp_cache *pc = t_adaptive(256, 2048, 4096, 4), *g;

	t_alloc_range(pc, 0, N);		/* asks; no room yet */
	ck_assert_uint_eq(mag_hi(pc), 4);
	/* the giver on this CPU first: its per-CPU state is not the dead one's */
	g = t_giver_start();
	t_free_range(pc, 0, N);
	pcp_cache_destroy(pc);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(g, NULL));
	t_giver_rounds(g);
	ck_assert_uint_eq(mag_hi(g), GLIMIT);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(g, NULL));
	t_destroy(g);
	pcp_adapt_set(false);
}
END_TEST

/*
 * Growth is paid by other caches of the CPU: alone, a cache whose every
 * slow path goes to the layer above stays at its fixed size (a CPU's
 * magazines never hold more than the fixed sizes of its caches); a cache
 * whose low-water mark shows half its magazine unused halves while the
 * first one wants room, and the two together hold no more than their
 * fixed sizes. Before: the first grew 4 -> 32 alone (the budget counted
 * growth, 4 MiB of it per CPU), peak RSS above the fixed defaults'.
 */
TEST(core, test_adapt_growth_is_paid_by_other_caches)
{
	enum { N = 2000 };
	struct pcp_cache *pc = t_adaptive(256, 65536, 4096, 4), *g;
	unsigned long fixed;

	t_alloc_range(pc, 0, N);
	ck_assert_uint_eq(mag_hi(pc), 4);
	ck_stat(stat_of(pc, PCP_STAT_GROW) == 0);
	fixed = cap_of(pc, 64) + 2ul * GLIMIT * GSIZE;
	g = t_giver();
	ck_stat(stat_of(g, PCP_STAT_SHRINK) == 1);	/* 16 -> 15: 8 KiB */
	ck_assert_uint_eq(mag_hi(g), GLIMIT - 1);
	t_alloc_range(pc, N, 3 * N);
	/* 4 -> .. -> 64 takes 7.5 KiB of the 8, 128 would take 8 more */
	ck_assert_uint_eq(mag_hi(pc), 64);
	ck_stat(stat_of(pc, PCP_STAT_GROW) == 4);
	ck_assert_uint_le(cap_of(pc, 64) + cap_of(g, GSIZE), fixed);
	t_free_range(pc, 0, 3 * N);
	ck_assert_uint_le(cap_of(pc, 64) + cap_of(g, GSIZE), fixed);
	t_adaptive_destroy(pc, g);
}
END_TEST

/*
 * A change of the bounds reaches CPUs already running: each keeps its
 * cache's bounds in objects (a window's end read them with two divisions
 * by the object size), taken again when the bounds change. Here 2048 bytes
 * (32 objects) stop growth at 32; raised to 4096, the next windows grow
 * 32 -> 64 (7.5 KiB of the giver's 8). A stale copy stayed at 32.
 */
TEST(core, test_adapt_bounds_change_reaches_running_cpus)
{
	enum { N = 2000 };
	struct pcp_cache *pc = t_adaptive(256, 2048, 4096, 4), *g;

	t_alloc_range(pc, 0, 100);	/* asks for room */
	g = t_giver();
	t_alloc_range(pc, 100, N);
	ck_assert_uint_eq(mag_hi(pc), 32);
	ck_assert_int_eq(pcp_adapt_set_bounds(256, 4096, 4096), 0);
	t_alloc_range(pc, N, 2 * N);
	ck_assert_uint_eq(mag_hi(pc), 64);
	t_free_range(pc, 0, 2 * N);
	t_adaptive_destroy(pc, g);
}
END_TEST

/* The per-CPU budget stops growth: 4 KiB is two magazines of 32 objects
 * of 64 bytes beyond the start size of 4 (so 32 after 4 -> 8 -> 16 -> 32),
 * though the upper bound allows 1024 and the giver's room 64. */
TEST(core, test_adapt_budget_stops_growth)
{
	enum { N = 6000 };
	struct pcp_cache *pc = t_adaptive(256, 65536, 4, 4), *g;

	t_alloc_range(pc, 0, 100);	/* asks */
	g = t_giver();
	t_alloc_range(pc, 100, N);
	ck_assert_uint_eq(mag_hi(pc), 32);
	t_free_range(pc, 0, N);
	ck_assert_uint_eq(mag_hi(pc), 32);
	t_adaptive_destroy(pc, g);
}
END_TEST

/*
 * Shrink: a period whose low-water mark is half a magazine or more halves
 * it (and drains the CPU); an idle period takes it back to the start size
 * (here the lower bound; the giver paid for the growth); every step
 * counted. 40 objects stay in the test's hands until after the first
 * pass, so that the second period has slow paths (frees on a full
 * magazine) and never an empty CPU.
 */
TEST(core, test_adapt_shrinks_on_low_water_then_idle)
{
	enum { N = 2000, KEEP = 40 };
	struct pcp_cache *pc = t_adaptive(256, 2048, 4096, 4), *g;
	uint64_t slow;

	t_alloc_range(pc, 0, 100);	/* asks for room */
	g = t_giver();
	t_alloc_range(pc, 100, N);
	t_free_range(pc, 0, N - KEEP);
	ck_assert_uint_eq(mag_hi(pc), 32);
	pcp_reap_all();		/* the alloc phase emptied the CPU: no shrink */
	ck_assert_uint_eq(mag_hi(pc), 32);
	ck_stat(stat_of(pc, PCP_STAT_SHRINK) == 0);
	slow = stat_of(pc, PCP_STAT_FREE_SLOW);
	t_free_range(pc, N - KEEP, N);
	ck_stat(stat_of(pc, PCP_STAT_FREE_SLOW) > slow);
	pcp_reap_all();		/* never below a full magazine: halve */
	ck_assert_uint_eq(mag_hi(pc), 16);
	ck_stat(stat_of(pc, PCP_STAT_SHRINK) == 1);
	pcp_reap_all();		/* idle: back to the start size */
	ck_assert_uint_eq(mag_hi(pc), 4);
	ck_stat(stat_of(pc, PCP_STAT_SHRINK) == 2);
	/* still serves, at the new size */
	t_alloc_range(pc, 0, 8);
	t_free_range(pc, 0, 8);
	t_adaptive_destroy(pc, g);
}
END_TEST

/* Slow paths of @pc so far (adaptive: each one counts in a window). */
static uint64_t slow_of(struct pcp_cache *pc)
{
	return stat_of(pc, PCP_STAT_ALLOC_SLOW) + stat_of(pc, PCP_STAT_FREE_SLOW);
}

/*
 * The reaper's low-water mark includes the window still open: a cycle
 * that empties the CPU (two magazines of 32 allocated, then freed) keeps
 * it from halving at the next pass, also when every slow path of the
 * cycle fell in a window that has not ended yet. The slow paths keep one
 * mark per window (folded into the reaper's at its end), no longer the
 * reaper's on every slow path: a pass that read only the folded mark
 * halved the CPU, 32 -> 16, for objects it had just used. Without
 * PERCPU_STATS the window's position is unknown: the cycles run all the
 * same and no pass may halve.
 */
TEST(core, test_adapt_reaper_sees_the_open_window)
{
	/* PCP_ADAPT_WINDOW: slow paths per window (percpu/magazine.c) */
	enum { N = 400, M = 64, WINDOW = 16 };
	struct pcp_cache *pc = t_adaptive(256, 2048, 4096, 32);
	uint64_t s0 = 0, s1 = 0;
	int tries;

	t_alloc_range(pc, 0, N);
	t_free_range(pc, 0, N);		/* the CPU holds both magazines full */
	for (tries = 0; tries < WINDOW; tries++) {
		pcp_reap_all();		/* each period emptied the CPU: no shrink */
		ck_assert_uint_eq(mag_hi(pc), 32);
		s0 = slow_of(pc);
		t_alloc_range(pc, 0, M);
		t_free_range(pc, 0, M);
		s1 = slow_of(pc);
		if (s1 > s0 && s0 / WINDOW == s1 / WINDOW)
			break;	/* the whole cycle inside the open window */
	}
	ck_stat(s1 > s0 && s0 / WINDOW == s1 / WINDOW);
	pcp_reap_all();
	ck_assert_uint_eq(mag_hi(pc), 32);
	ck_stat(stat_of(pc, PCP_STAT_SHRINK) == 0);
	t_adaptive_destroy(pc, NULL);
}
END_TEST

/*
 * Adaptive, the depot's limit counts objects, not magazines: 16 magazines
 * of the cache's fixed size (4 here) are 64 objects, two of the grown
 * 32-object ones. Counted in magazines, 16 grown ones (512 objects) stayed
 * in the depot: 2 MiB of 64-byte objects where the fixed sizes kept 480
 * KiB, peak RSS above the fixed defaults' on the bundled traces.
 */
TEST(core, test_adapt_depot_limit_counts_objects)
{
	enum { N = 2000 };
	struct pcp_cache *pc = t_adaptive(256, 2048, 4096, 4), *g;
	unsigned long full;

	t_alloc_range(pc, 0, 100);	/* asks for room */
	g = t_giver();
	t_alloc_range(pc, 100, N);
	ck_assert_uint_eq(mag_hi(pc), 32);
	ck_assert_int_eq(pcp_cache_set_depot_limit(pc, 16), 0);
	t_free_range(pc, 0, N);
	pcp_cache_objects(pc, &full);
	ck_assert_uint_eq(full, 2);
	t_adaptive_destroy(pc, g);
}
END_TEST

/*
 * A CPU starts at the cache's fixed size, 120 objects of 64 bytes, not at
 * the lower bound (4), and the upper bound (2048 bytes, 32 objects) does
 * not cap it below that: a run of allocations takes the fixed size's
 * refills. Starting at the lower bound, random-replacement workloads
 * (glibc_thread, alloc_test, mt) ran on small magazines for good: their
 * slow paths are mostly swaps with the spare, which never grow one.
 */
TEST(core, test_adapt_starts_at_the_fixed_size)
{
	enum { N = 2000 };
	unsigned int fixed = max_t(unsigned int, 4, pcp_default_limit(64)), lo, hi;
	struct pcp_cache *pc = t_adaptive(256, 2048, 4096, 0);

	pcp_cache_mag_range(pc, &lo, &hi);	/* the default: 120 objects */
	ck_assert_uint_eq(lo, fixed);
	ck_assert_uint_eq(hi, fixed);
	fixed = 120;	/* the same whatever the configuration's default */
	ck_assert_int_eq(pcp_cache_set_tunables(pc, fixed, fixed / 2), 0);
	t_alloc_range(pc, 0, N);
	ck_assert_uint_eq(mag_hi(pc), fixed);
	ck_stat(stat_of(pc, PCP_STAT_GROW) == 0);
	/* batches of fixed / 2 (60): 34 refills; at 4 .. 32 objects, 125 */
	ck_assert_uint_le(refill_calls, N / 32);
	t_free_range(pc, 0, N);
	pcp_reap_all();
	pcp_reap_all();		/* idle: stays at the start size */
	ck_assert_uint_eq(mag_hi(pc), fixed);
	t_adaptive_destroy(pc, NULL);
}
END_TEST

/*
 * Also where adapt_min is above the fixed size (a mag_size or preset below
 * 4 KiB of objects; slabinfo -w's kv_item at limit 64 started at 102): the
 * start is the fixed size, so that adaptive and fixed magazines are the
 * same until a resize. Before: max(adapt_min, fixed), 64 here.
 */
TEST(core, test_adapt_starts_at_the_fixed_size_below_the_floor)
{
	enum { N = 1000 };
	struct pcp_cache *pc = t_adaptive(4096, 65536, 4096, 16);
	unsigned int lo, hi;

	pcp_cache_mag_range(pc, &lo, &hi);	/* 4096 / 64 = 64 objects */
	ck_assert_uint_eq(lo, 16);
	ck_assert_uint_eq(hi, 16);
	t_alloc_range(pc, 0, N);	/* no room: stays */
	pcp_cache_mag_range(pc, &lo, &hi);
	ck_assert_uint_eq(lo, 16);
	ck_assert_uint_eq(hi, 16);
	/* the cache's batch (8) at the start size: N / 8 refills */
	ck_assert_uint_ge(refill_calls, N / 8);
	t_free_range(pc, 0, N);
	t_adaptive_destroy(pc, NULL);
}
END_TEST

/*
 * Refill failure: the pool runs dry, alloc returns NULL, nothing leaks.
 * Pinned: every object must reach this CPU's magazines; after a migration
 * the other CPU's refill finds the pool dry while up to a magazine of
 * objects waits on the first CPU, and alloc fails before POOL_N (it did,
 * 2 runs in 7, once the first slow path's reaper start made this thread
 * sleep until the reaper runs, and wake on the other CPU).
 */
TEST(core, test_out_of_objects)
{
	struct pcp_cache *pc = t_create_here(64, 32);
	int n = 0;

	while (n < POOL_N && (held[n] = t_alloc(pc)) != NULL)
		n++;
	ck_assert_int_eq(n, POOL_N);
	ck_assert_ptr_null(t_alloc(pc));
	t_free_range(pc, 0, n);
	t_destroy(pc);
}
END_TEST

/*
 * Model test: random allocs and frees (seeded), the reference being the
 * set of live objects; after every step, objects out of the pool equal
 * live objects plus cached ones, and nothing is handed out twice.
 */
TEST_LOOP(core, test_model_random, 0, 4)
{
	enum { N = 3000 };
	static struct tobj *live[N];
	unsigned int seed = 12345 + (unsigned int)_i, nlive = 0, step;
	const unsigned int STEPS = test_iters(20000, 4000);
	struct pcp_cache *pc = t_create(1 + _i * 7, 1 + _i * 3);

	for (step = 0; step < STEPS; step++) {
		unsigned int r = (unsigned int)rand_r(&seed);

		if ((r & 1) && nlive < N) {
			live[nlive] = t_alloc(pc);
			ck_assert_ptr_nonnull(live[nlive]);
			nlive++;
		} else if (nlive) {
			unsigned int k = (r >> 1) % nlive;

			t_free(pc, live[k]);
			live[k] = live[--nlive];
		}
		if (r % 997 == 0)
			pcp_cache_drain(pc);
		if (r % 1499 == 0)
			pcp_reap_all();
		if (step % 64 == 0 || step == STEPS - 1)
			ck_assert_uint_eq(pool_out(),
					  nlive + pcp_cache_objects(pc, NULL));
		ck_assert_int_eq(pool_errors, 0);
	}
	while (nlive)
		t_free(pc, live[--nlive]);
	t_destroy(pc);
}
END_TEST

/* Threads on every CPU: frees of objects allocated elsewhere. */
struct xarg {
	struct pcp_cache *pc;
	int id;
};

static struct tobj *xfer[4][4096];
static pthread_barrier_t xbar;

static void *cross_thread(void *arg)
{
	struct xarg *a = arg;
	int round, i, peer = (a->id + 1) % 4, rounds = (int)test_iters(50, 5);

	for (round = 0; round < rounds; round++) {
		for (i = 0; i < 4096; i++)
			xfer[a->id][i] = t_alloc(a->pc);
		pthread_barrier_wait(&xbar);
		/* free what the neighbour allocated, on whatever CPU we are */
		for (i = 0; i < 4096; i++)
			t_free(a->pc, xfer[peer][(i * 7) % 4096]);
		pthread_barrier_wait(&xbar);
	}
	return NULL;
}

TEST(core, test_threads)
{
	struct pcp_cache *pc = t_create(32, 16);
	pthread_t th[4];
	struct xarg a[4];
	int i;

	pcp_thread_cache_set(true);	/* fallback mode: with thread caches */
	pthread_barrier_init(&xbar, NULL, 4);
	for (i = 0; i < 4; i++) {
		a[i].pc = pc;
		a[i].id = i;
		pthread_create(&th[i], NULL, cross_thread, &a[i]);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(pool_errors, 0);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(pc, NULL));
	t_destroy(pc);
}
END_TEST

/*
 * fork with the hooks the malloc layer installs: the child's magazines and
 * depot work, its reaper is not running and is not started, and the
 * parent's objects cached before the fork are still accounted for.
 */
TEST(core, test_fork)
{
	struct pcp_cache *pc = t_create(16, 8);
	int i, status;
	pid_t pid;

	pcp_thread_cache_set(true);	/* fallback mode: with thread caches */
	ck_assert_int_eq(pthread_atfork(pcp_fork_prepare, pcp_fork_parent,
					pcp_fork_child), 0);
	t_alloc_range(pc, 0, 40);
	t_free_range(pc, 0, 20);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;

		if (pcp_reaper_running())
			bad |= 1;
		t_free_range(pc, 20, 40);
		for (i = 0; i < 40; i++)
			if (!(held[i] = t_alloc(pc)))
				bad |= 2;
		t_free_range(pc, 0, 40);
		pcp_cache_drain(pc);
		if (pool_out() != 0 || pool_errors)
			bad |= 4;
		if (pcp_reaper_running())
			bad |= 8;	/* never started in a child */
		_exit(bad);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* the parent goes on with its own state */
	t_free_range(pc, 20, 40);
	t_destroy(pc);
}
END_TEST

/*
 * These tests count what the per-CPU policy does. In fallback mode a
 * cache per thread stands in front of it (percpu/tcache.c) and batches
 * the operations, so it is off for them (its own suite,
 * check_percpu_tcache.c, turns it on); test_threads and test_fork run
 * with it.
 */
static void core_setup(void)
{
	pcp_thread_cache_set(false);
}

/* Without per-CPU caching only "off" runs; with it, "core". */
static const struct test_case cases[] = {
	{ .name = "off", .timeout = 60, .skip = IS_ENABLED(CONFIG_PERCPU_CACHE) },
	{ .name = "core", .timeout = 60, .skip = !IS_ENABLED(CONFIG_PERCPU_CACHE),
	  .setup = core_setup },
};

int main(void)
{
	return test_run_suite(test_suite("percpu", cases, ARRAY_SIZE(cases)));
}
