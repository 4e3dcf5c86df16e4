// SPDX-License-Identifier: MIT
/*
 * Stress of the per-CPU layer in front of a slab cache: more threads than
 * CPUs, each switching its own affinity between CPUs in a loop (forced
 * migrations), signals at a high rate (setitimer and pthread_kill), objects
 * allocated on one thread and freed on another, while another thread
 * drains, resizes and rewrites the tunables through slabinfo.
 *
 * Checks: no object is handed out twice (a state word per object, set
 * with compare-and-swap on every alloc and free) and none is lost: objects
 * free in slabs + objects in magazines + live objects = objects created.
 * Prints the rseq abort count.
 *
 * The controlling thread, which is the one that initialised the per-CPU
 * layer, allocates and frees too: in fallback mode entered after uslab
 * registered its own rseq area (membarrier refused), that thread once ran
 * the lock-free fast path beside the others' locked paths (issue 11,
 * finding 1).
 *
 * USLAB_STRESS_SECONDS sets the length of each case (default 2; `make
 * stress` runs 30). USLAB_EXPECT_PCP_MODE=<mode> asserts the mode.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "slab/internal.h"
#include "tests/suite.h"

#define OBJ_MAGIC	0x5eed5eedu
#define HOLD		256
#define MAILBOX		1024
#define MAX_THREADS	32

struct sobj {
	unsigned int magic;
	atomic_int state;	/* 0 free, 1 handed out */
	char pad[56];
};

static struct kmem_cache *cache;
static atomic_int stop;
static atomic_long errors_double, errors_state, allocs, frees, signals;
static pthread_mutex_t mbox_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sobj *mbox[MAILBOX];
static unsigned int mbox_n;
static cpu_set_t allowed;
static int allowed_cpus[1024], nr_allowed;

static void sobj_ctor(void *p)
{
	struct sobj *o = p;

	o->magic = OBJ_MAGIC;
	atomic_init(&o->state, 0);
}

static double stress_seconds(void)
{
	const char *e = getenv("USLAB_STRESS_SECONDS");
	double d = e ? atof(e) : 2.0;

	return d > 0 ? d : 2.0;
}

static void on_signal(int sig)
{
	atomic_fetch_add_explicit(&signals, 1, memory_order_relaxed);
}

static struct sobj *s_alloc(void)
{
	struct sobj *o = kmem_cache_alloc(cache, GFP_KERNEL);
	int zero = 0;

	if (!o)
		return NULL;
	if (o->magic != OBJ_MAGIC)
		atomic_fetch_add(&errors_state, 1);
	if (!atomic_compare_exchange_strong(&o->state, &zero, 1))
		atomic_fetch_add(&errors_double, 1);	/* handed out twice */
	atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
	return o;
}

static void s_free(struct sobj *o)
{
	int one = 1;

	if (!atomic_compare_exchange_strong(&o->state, &one, 0))
		atomic_fetch_add(&errors_state, 1);
	kmem_cache_free(cache, o);
	atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
}

static void migrate(unsigned int *seed)
{
	cpu_set_t set;

	if (nr_allowed < 2)
		return;
	if (rand_r(seed) % 4 == 0) {
		sched_setaffinity(0, sizeof(allowed), &allowed);
		return;
	}
	CPU_ZERO(&set);
	CPU_SET(allowed_cpus[(unsigned int)rand_r(seed) % (unsigned int)nr_allowed], &set);
	sched_setaffinity(0, sizeof(set), &set);
}

struct worker {
	pthread_t th;
	unsigned int seed;
	struct sobj *held[HOLD];
	unsigned int nheld;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long ops = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned int r = (unsigned int)rand_r(&w->seed);

		if (++ops % 256 == 0)
			migrate(&w->seed);
		if ((r & 3) < 2 && w->nheld < HOLD) {
			struct sobj *o = s_alloc();

			if (o)
				w->held[w->nheld++] = o;
		} else if ((r & 3) == 2 && w->nheld) {
			/* hand an object to another thread */
			pthread_mutex_lock(&mbox_lock);
			if (mbox_n < MAILBOX)
				mbox[mbox_n++] = w->held[--w->nheld];
			pthread_mutex_unlock(&mbox_lock);
		} else if ((r & 3) == 3 && w->nheld < HOLD) {
			pthread_mutex_lock(&mbox_lock);
			if (mbox_n)
				w->held[w->nheld++] = mbox[--mbox_n];
			pthread_mutex_unlock(&mbox_lock);
		} else if (w->nheld) {
			unsigned int k = (r >> 4) % w->nheld;

			s_free(w->held[k]);
			w->held[k] = w->held[--w->nheld];
		}
	}
	return NULL;
}

static void setup(void)
{
	int cpu;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	nr_allowed = 0;
	for (cpu = 0; cpu < CPU_SETSIZE && nr_allowed < 1024; cpu++)
		if (CPU_ISSET(cpu, &allowed))
			allowed_cpus[nr_allowed++] = cpu;
	atomic_store(&stop, 0);
	atomic_store(&errors_double, 0);
	atomic_store(&errors_state, 0);
	mbox_n = 0;
	cache = kmem_cache_create("pcp-stress", sizeof(struct sobj), 0, 0,
				  sobj_ctor);
	ck_assert_ptr_nonnull(cache);
	/* the nocache preset has no magazines: the slab layer alone is stressed */
	ck_assert(IS_ENABLED(CONFIG_PERCPU_CACHE) == (cache->pcp != NULL));
	/* small magazines: many refills, flushes and depot exchanges */
	ck_assert_int_eq(kmem_cache_set_tunables(cache, 8, 4, 0), 0);
}

/* Free objects on the slabs' freelists, counted by walking them. */
static unsigned long slab_free_objects(struct kmem_cache *s, unsigned long *created)
{
	struct list_head *lists[] = { &s->partial, &s->full, &s->empty };
	unsigned long nfree = 0, nslabs = 0;
	struct page *slab;
	unsigned int i;

	slab_lock(s);
	for (i = 0; i < ARRAY_SIZE(lists); i++) {
		list_for_each_entry(slab, lists[i], slab_list) {
			void *p;

			for (p = slab->freelist; p; p = get_freepointer(s, p))
				nfree++;
			/* and those never handed out (slab->fresh on) */
			nfree += slab->objects - slab->fresh;
			nslabs++;
		}
	}
	*created = nslabs * s->objects;
	ck_assert_uint_eq(nslabs, s->nr_slabs);
	slab_unlock(s);
	return nfree;
}

/* The controlling thread's share: a burst of allocs, some handed over. */
static void controller_ops(struct worker *me)
{
	unsigned int i, n = 1 + (unsigned int)rand_r(&me->seed) % 64;

	for (i = 0; i < n && me->nheld < HOLD; i++) {
		struct sobj *o = s_alloc();

		if (o)
			me->held[me->nheld++] = o;
	}
	pthread_mutex_lock(&mbox_lock);
	while (me->nheld && mbox_n < MAILBOX && rand_r(&me->seed) % 4 == 0)
		mbox[mbox_n++] = me->held[--me->nheld];
	while (mbox_n && me->nheld < HOLD && rand_r(&me->seed) % 4 == 0)
		me->held[me->nheld++] = mbox[--mbox_n];
	pthread_mutex_unlock(&mbox_lock);
	while (me->nheld > HOLD / 4)
		s_free(me->held[--me->nheld]);
}

static void run_and_check(struct worker *w, int nthreads, bool churn)
{
	static struct worker me;
	const char *want = getenv("USLAB_EXPECT_PCP_MODE");
	struct itimerval it = { { 0, 200 }, { 0, 200 } };	/* 5 kHz */
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	struct timespec t0, now, nap = { 0, 20000 };
	unsigned long created, in_slabs, in_mags, live = 0;
	double secs = stress_seconds();
	struct pcp_stats st;
	unsigned int seed = 99, rounds = 0;
	char line[64];
	int i;

	if (want && *want)
		ck_assert_str_eq(pcp_mode(), want);
	me.seed = 7;
	me.nheld = 0;
	signal(SIGALRM, on_signal);
	signal(SIGUSR1, on_signal);
	for (i = 0; i < nthreads; i++) {
		w[i].seed = 1000u + (unsigned int)i;
		w[i].nheld = 0;
		ck_assert_int_eq(pthread_create(&w[i].th, NULL, worker_main, &w[i]), 0);
	}
	setitimer(ITIMER_REAL, &it, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		/* signals at a high rate, at chosen threads */
		for (i = 0; i < nthreads; i++)
			pthread_kill(w[i].th, SIGUSR1);
		if (churn && rounds++ % 8 == 0) {
			unsigned int limit = 1 + (unsigned int)rand_r(&seed) % 64;
			unsigned int batch = 1 + (unsigned int)rand_r(&seed) % limit;

			switch (rand_r(&seed) % 3) {
			case 0:
				ck_assert_int_eq(kmem_cache_set_tunables(cache, limit, batch, 0), 0);
				break;
			case 1:
				snprintf(line, sizeof(line), "pcp-stress %u %u 0", limit, batch);
				ck_assert_int_eq(slabinfo_write(line), 0);
				break;
			default:
				kmem_cache_shrink(cache);
			}
		}
		controller_ops(&me);
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - t0.tv_sec) +
		 (double)(now.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	atomic_store(&stop, 1);
	setitimer(ITIMER_REAL, &off, NULL);
	for (i = 0; i < nthreads; i++)
		pthread_join(w[i].th, NULL);

	for (i = 0; i < nthreads; i++)
		live += w[i].nheld;
	live += mbox_n + me.nheld;
	in_mags = cache->pcp ? pcp_cache_objects(cache->pcp, NULL) : 0;
	in_slabs = slab_free_objects(cache, &created);
	memset(&st, 0, sizeof(st));
	if (cache->pcp)
		pcp_cache_stats(cache->pcp, -1, &st);
	printf("%s: %d threads on %d CPUs, %.1f s: %ld allocs, %ld frees, "
	       "%ld signals; created %lu = in slabs %lu + in magazines %lu + "
	       "live %lu; rseq aborts %llu (mode %s%s)\n",
	       churn ? "resize+drain" : "migrate+signal", nthreads, nr_allowed,
	       secs, atomic_load(&allocs), atomic_load(&frees),
	       atomic_load(&signals), created, in_slabs, in_mags, live,
	       (unsigned long long)st.v[PCP_STAT_RSEQ_ABORT], pcp_mode(),
	       IS_ENABLED(CONFIG_PERCPU_STATS) ? "" : ", stats off");
	fflush(stdout);
	ck_assert_int_eq(atomic_load(&errors_double), 0);
	ck_assert_int_eq(atomic_load(&errors_state), 0);
	ck_assert_uint_eq(in_slabs + in_mags + live, created);
	ck_assert_uint_eq(cache->nr_inuse, in_mags + live);

	/* everything back: the cache is empty and can be destroyed */
	for (i = 0; i < nthreads; i++)
		while (w[i].nheld)
			s_free(w[i].held[--w[i].nheld]);
	while (me.nheld)
		s_free(me.held[--me.nheld]);
	while (mbox_n)
		s_free(mbox[--mbox_n]);
	kmem_cache_shrink(cache);
	ck_assert_uint_eq(cache->nr_inuse, 0);
	if (cache->pcp)
		ck_assert_uint_eq(pcp_cache_objects(cache->pcp, NULL), 0);
	kmem_cache_destroy(cache);
}

TEST(stress, test_migrate_and_signal)
{
	static struct worker w[MAX_THREADS];
	int n;

	setup();
	n = 2 * nr_allowed + 2;
	run_and_check(w, n > MAX_THREADS ? MAX_THREADS : n, false);
}
END_TEST

TEST(stress, test_resize_and_drain_while_hammering)
{
	static struct worker w[MAX_THREADS];
	int n;

	setup();
	n = nr_allowed + 1 < 3 ? 3 : nr_allowed + 1;
	run_and_check(w, n > MAX_THREADS ? MAX_THREADS : n, true);
}
END_TEST

int main(void)
{
	const struct test_case cases[] = {
		{ .name = "stress", .timeout = (double)(60 + 4 * stress_seconds()) },
	};

	return test_run_suite(test_suite("percpu_stress", cases, ARRAY_SIZE(cases)));
}
