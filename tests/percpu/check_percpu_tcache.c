// SPDX-License-Identifier: MIT
/*
 * Fallback mode's cache per thread (percpu/tcache.c; docs/percpu.md
 * "Modes"), white-box, against a test pool standing in for the slab
 * layer. The suite always runs in fallback mode: started in rseq mode it
 * runs itself again under tests/percpu/percpu_no_rseq (a seccomp filter
 * that makes rseq fail), the way a sandbox without rseq runs the library;
 * valgrind runs it in fallback mode anyway (test_percpu_valgrind.sh).
 *
 * What it checks: a hit takes no lock; a thread's exit gives its objects
 * back; a signal handler that interrupts its thread's cache operation
 * never corrupts it or gets an object twice; fork in a thread (the child
 * gives back the caches of the threads that did not come along); destroy
 * takes the objects out of other (living) threads' caches; a drain
 * (kmem_cache_shrink) takes this thread's at once and the others' at
 * their next operation; the statistics count every operation once.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/sigsafe.h"
#include "uslab/percpu.h"
#include "percpu/fastpath.h"
#include "percpu/internal.h"
#include "tests/testutil.h"
#include "tests/suite.h"

#define POOL_N	20000

struct tobj {
	int live;		/* handed out to the test (exchanged atomically) */
	int in_pool;
	char pad[56];
};

static struct tobj objs[POOL_N];
static void *pool_stack[POOL_N];
static unsigned int pool_top;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static int pool_errors, twice;
/* a hook the callbacks run (under the CPU lock, the thread cache busy) */
static void (*in_callback)(void);

static void pool_reset(void)
{
	unsigned int i;

	memset(objs, 0, sizeof(objs));
	for (i = 0; i < POOL_N; i++) {
		pool_stack[i] = &objs[POOL_N - 1 - i];
		objs[i].in_pool = 1;
	}
	pool_top = POOL_N;
	pool_errors = twice = 0;
	in_callback = NULL;
}

static unsigned int pool_out(void)
{
	unsigned int n;

	pthread_mutex_lock(&pool_lock);
	n = POOL_N - pool_top;
	pthread_mutex_unlock(&pool_lock);
	return n;
}

static unsigned int t_refill(void *owner, void **out, unsigned int nr)
{
	unsigned int i;

	if (in_callback)
		in_callback();
	pthread_mutex_lock(&pool_lock);
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

	if (in_callback)
		in_callback();
	pthread_mutex_lock(&pool_lock);
	for (i = 0; i < nr; i++) {
		struct tobj *o = in[i];

		if (o->in_pool || __atomic_load_n(&o->live, __ATOMIC_RELAXED))
			pool_errors++;	/* flushed twice, or while live */
		o->in_pool = 1;
		pool_stack[pool_top++] = o;
	}
	pthread_mutex_unlock(&pool_lock);
}

/* As the slab layer's: no lock from a handler inside the allocator. */
static bool t_may_lock(void *owner)
{
	return !sigsafe_reentered();
}

static const struct pcp_ops t_ops = {
	.refill = t_refill, .flush = t_flush, .may_lock = t_may_lock,
};

static struct tobj *t_alloc(struct pcp_cache *pc)
{
	struct tobj *o = pcp_alloc_fast(pc);

	if (!o)
		o = pcp_alloc_slow(pc);
	/* a handler may run between the hand-out and this exchange */
	if (o && __atomic_exchange_n(&o->live, 1, __ATOMIC_RELAXED))
		__atomic_add_fetch(&twice, 1, __ATOMIC_RELAXED);
	return o;
}

static void t_free(struct pcp_cache *pc, struct tobj *o)
{
	__atomic_store_n(&o->live, 0, __ATOMIC_RELAXED);
	if (!pcp_free_fast(pc, o))
		ck_assert(pcp_free_slow(pc, o));
}

static struct pcp_cache *t_create(void)
{
	struct pcp_cache *pc;

	pool_reset();
	pcp_thread_cache_set(true);
	pc = pcp_cache_create("tc", NULL, &t_ops, 64);
	ck_assert_ptr_nonnull(pc);
	ck_assert_int_eq(pcp_cache_set_tunables(pc, 64, 32), 0);
	return pc;
}

static void t_destroy(struct pcp_cache *pc)
{
	pcp_cache_destroy(pc);
	ck_assert_uint_eq(pool_out(), 0);
	ck_assert_int_eq(pool_errors, 0);
	ck_assert_int_eq(twice, 0);
}

/* Objects of @pc in thread caches (every thread's). */
static unsigned long tc_objects(struct pcp_cache *pc)
{
	return pcp_tc_account(pc, NULL);
}

static uint64_t stat_of(struct pcp_cache *pc, enum pcp_stat_item i)
{
	struct pcp_stats st;

	pcp_cache_stats(pc, -1, &st);
	return st.v[i];
}

#define ck_stat(expr) do {						\
	if (IS_ENABLED(CONFIG_PERCPU_STATS))				\
		ck_assert(expr);					\
} while (0)

/* @n allocations then their frees, from this thread. */
static void t_cycle(struct pcp_cache *pc, struct tobj **h, int n)
{
	for (int i = 0; i < n; i++)
		ck_assert_ptr_nonnull(h[i] = t_alloc(pc));
	for (int i = 0; i < n; i++)
		t_free(pc, h[i]);
}

TEST(core, test_tc_mode_is_fallback)
{
	ck_assert_str_eq(pcp_mode(), "fallback");
	ck_assert(pcp_thread_cache_enabled());
	pcp_thread_cache_set(false);
	ck_assert(!pcp_thread_cache_enabled());
	pcp_thread_cache_set(true);
}
END_TEST

/*
 * A hit is served by the thread's cache: after the first batch, a
 * thousand alloc/free pairs of one object take the CPU's lock (counted
 * as fallback_op) no more, and every operation is counted once (allocs =
 * hits + misses).
 */
TEST(core, test_tc_hits_take_no_lock)
{
	struct pcp_cache *pc = t_create();
	struct tobj *h[8];
	uint64_t locked;
	int i;

	t_cycle(pc, h, 8);
	locked = stat_of(pc, PCP_STAT_FALLBACK_OP);
	for (i = 0; i < 1000; i++)
		t_cycle(pc, h, 1);
	ck_stat(stat_of(pc, PCP_STAT_FALLBACK_OP) == locked);
	ck_assert_uint_ge(tc_objects(pc), 1);
	ck_stat(stat_of(pc, PCP_STAT_ALLOC_HIT) + stat_of(pc, PCP_STAT_ALLOC_SLOW) == 1008);
	ck_stat(stat_of(pc, PCP_STAT_FREE_HIT) + stat_of(pc, PCP_STAT_FREE_SLOW) == 1008);
	ck_stat(stat_of(pc, PCP_STAT_ALLOC_HIT) >= 1000);
	/* what the thread holds is counted with the cache's objects */
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(pc, NULL));
	t_destroy(pc);
}
END_TEST

/* With the thread cache off, every operation takes the CPU's lock again. */
TEST(core, test_tc_off_takes_the_lock)
{
	struct pcp_cache *pc = t_create();
	struct tobj *h[1];
	uint64_t locked;

	pcp_thread_cache_set(false);
	t_cycle(pc, h, 1);
	locked = stat_of(pc, PCP_STAT_FALLBACK_OP);
	t_cycle(pc, h, 1);
	ck_stat(stat_of(pc, PCP_STAT_FALLBACK_OP) == locked + 2);
	ck_assert_uint_eq(tc_objects(pc), 0);
	pcp_thread_cache_set(true);
	t_destroy(pc);
}
END_TEST

/* ------------------------------------------------------------------ */

struct worker {
	struct pcp_cache *pc;
	pthread_barrier_t *hold;	/* wait here (twice) holding a full cache */
	unsigned long held;		/* tc_objects() seen while holding */
	int n;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct tobj *h[200];

	t_cycle(w->pc, h, w->n);
	w->held = tc_objects(w->pc);
	if (w->hold) {
		pthread_barrier_wait(w->hold);	/* holding */
		pthread_barrier_wait(w->hold);	/* the main thread did its part */
	}
	return NULL;
}

/* Each thread's exit gives its objects back: none stay in a thread cache. */
TEST(core, test_tc_thread_exit_returns_objects)
{
	struct pcp_cache *pc = t_create();
	struct worker w[4];
	pthread_t th[4];
	int i;

	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ .pc = pc, .n = 100 };
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ck_assert_uint_ge(w[i].held, 1);	/* it had a cache */
	}
	ck_assert_uint_eq(tc_objects(pc), 0);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(pc, NULL));
	ck_stat(stat_of(pc, PCP_STAT_ALLOC_HIT) + stat_of(pc, PCP_STAT_ALLOC_SLOW) == 400);
	ck_stat(stat_of(pc, PCP_STAT_FREE_HIT) + stat_of(pc, PCP_STAT_FREE_SLOW) == 400);
	t_destroy(pc);
}
END_TEST

/*
 * kmem_cache_destroy()'s contract: nobody uses the cache any more, but
 * threads that did are alive with objects in their caches. Destroy takes
 * them all back; the id goes to the next cache, whose bins start empty.
 */
TEST(core, test_tc_destroy_takes_living_threads_objects)
{
	struct pcp_cache *pc = t_create(), *pc2;
	pthread_barrier_t hold;
	struct worker w[3];
	pthread_t th[3];
	struct tobj *h[4];
	int i;

	pthread_barrier_init(&hold, NULL, 4);
	for (i = 0; i < 3; i++) {
		w[i] = (struct worker){ .pc = pc, .hold = &hold, .n = 60 };
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	pthread_barrier_wait(&hold);
	for (i = 0; i < 3; i++)
		ck_assert_uint_ge(w[i].held, 1);
	ck_assert_uint_ge(tc_objects(pc), 3);
	pcp_cache_destroy(pc);
	ck_assert_uint_eq(pool_out(), 0);	/* nothing left in their caches */
	ck_assert_int_eq(pool_errors, 0);

	/* a new cache (likely the same id): this thread's bin starts empty */
	pc2 = pcp_cache_create("tc2", NULL, &t_ops, 64);
	ck_assert_ptr_nonnull(pc2);
	ck_assert_uint_eq(tc_objects(pc2), 0);
	t_cycle(pc2, h, 4);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(pc2, NULL));
	pthread_barrier_wait(&hold);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&hold);
	t_destroy(pc2);
}
END_TEST

/*
 * A drain (kmem_cache_shrink(), a resize): this thread's cache empties at
 * once; another thread's at its next operation on the cache.
 */
TEST(core, test_tc_drain_reaches_thread_caches)
{
	struct pcp_cache *pc = t_create();
	pthread_barrier_t hold;
	struct worker w = { .pc = pc, .n = 60 };
	pthread_t th;
	struct tobj *h[60];

	pthread_barrier_init(&hold, NULL, 2);
	w.hold = &hold;
	ck_assert_int_eq(pthread_create(&th, NULL, worker_main, &w), 0);
	pthread_barrier_wait(&hold);
	t_cycle(pc, h, 60);
	ck_assert_uint_gt(tc_objects(pc), w.held);	/* both threads hold some */
	pcp_cache_drain(pc);
	/* only the other thread's objects are still out */
	ck_assert_uint_eq(tc_objects(pc), w.held);
	ck_assert_uint_eq(pool_out(), w.held);
	/* its next operation on the cache gives them back first */
	t_cycle(pc, h, 1);	/* (this thread's, to show it still works) */
	pthread_barrier_wait(&hold);
	pthread_join(th, NULL);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(pc, NULL));
	t_destroy(pc);
}
END_TEST

static struct pcp_cache *drain_pc;

static void *drain_next_op(void *arg)
{
	struct tobj *h[60];
	unsigned long *after = ((void **)arg)[0];

	t_cycle(drain_pc, h, 60);
	pthread_barrier_wait((pthread_barrier_t *)((void **)arg)[1]);
	/* main drained: one operation, then what this thread holds */
	ck_assert_ptr_nonnull(h[0] = t_alloc(drain_pc));
	*after = tc_objects(drain_pc);
	t_free(drain_pc, h[0]);
	return NULL;
}

/* The other thread's next operation sees the drain and empties its bin. */
TEST(core, test_tc_drain_seen_at_next_operation)
{
	pthread_barrier_t hold;
	void *args[2];
	unsigned long after = ULONG_MAX;
	pthread_t th;

	drain_pc = t_create();
	pthread_barrier_init(&hold, NULL, 2);
	args[0] = &after;
	args[1] = &hold;
	ck_assert_int_eq(pthread_create(&th, NULL, drain_next_op, args), 0);
	while (tc_objects(drain_pc) == 0)
		usleep(1000);
	pcp_cache_drain(drain_pc);
	pthread_barrier_wait(&hold);
	pthread_join(th, NULL);
	/* after its first operation it held only the new batch, less one */
	ck_assert_uint_lt(after, 60);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(drain_pc, NULL));
	t_destroy(drain_pc);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Signal handlers */

static struct pcp_cache *sig_pc;
static volatile sig_atomic_t sig_runs, sig_got;
/* frees refused to a handler (the slab layer would defer them) */
static struct tobj *sig_kept[4096];
static volatile sig_atomic_t sig_nr_kept;

/* No ck_assert here: Check's bookkeeping takes a lock. */
static void sig_alloc_free(int sig)
{
	struct tobj *o[3];
	int i, n = 0;

	sig_runs++;
	for (i = 0; i < 3; i++)
		if ((o[n] = t_alloc(sig_pc)))
			n++;
	sig_got += n;
	for (i = 0; i < n; i++) {
		__atomic_store_n(&o[i]->live, 0, __ATOMIC_RELAXED);
		if (!pcp_free_fast(sig_pc, o[i]) && !pcp_free_slow(sig_pc, o[i])) {
			if (sig_nr_kept < (sig_atomic_t)ARRAY_SIZE(sig_kept))
				sig_kept[sig_nr_kept++] = o[i];
			else
				abort();
		}
	}
}

/* What handlers could not free, freed now (from the thread). */
static void sig_free_kept(void)
{
	while (sig_nr_kept > 0)
		t_free(sig_pc, sig_kept[--sig_nr_kept]);
}

/*
 * A handler raised inside the thread cache's own batch (the callbacks run
 * under the CPU lock, the cache busy): it must not wait on the lock its
 * thread holds, nor use the half-done cache. Its allocations are refused
 * (NULL: the slab layer would give an emergency block), its thread's
 * operation completes, nothing is lost or handed out twice.
 */
static void raise_usr1(void)
{
	raise(SIGUSR1);
}

TEST(core, test_tc_handler_inside_a_batch)
{
	struct sigaction sa = { .sa_handler = sig_alloc_free };
	unsigned long busy0 = __atomic_load_n(&pcp_tc_nr_busy, __ATOMIC_RELAXED);
	struct tobj *h[200];

	sig_pc = t_create();
	sigaction(SIGUSR1, &sa, NULL);
	sig_runs = sig_got = 0;
	in_callback = raise_usr1;
	t_cycle(sig_pc, h, 200);	/* refills and flushes, each raising */
	in_callback = NULL;
	ck_assert_int_gt(sig_runs, 0);
	ck_assert_int_eq(sig_got, 0);	/* refused, never the busy cache */
	/* each of its three allocations found the cache busy */
	ck_assert_uint_ge(__atomic_load_n(&pcp_tc_nr_busy, __ATOMIC_RELAXED) - busy0,
			  3 * (unsigned long)sig_runs);
	sig_free_kept();
	ck_assert_int_eq(twice, 0);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(sig_pc, NULL));
	t_destroy(sig_pc);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

/*
 * Another thread sends signals to this one as fast as it can while this
 * thread churns its cache: handlers land inside its hits and misses (the
 * cache busy: they take the locked path) and between them (they use the
 * cache). No object is handed out twice and every object is accounted
 * for.
 */
static int sig_stop;		/* the sender thread reads it: atomics */

static void *sig_sender(void *arg)
{
	pthread_t target = *(pthread_t *)arg;

	while (!__atomic_load_n(&sig_stop, __ATOMIC_RELAXED)) {
		pthread_kill(target, SIGUSR2);
		sched_yield();
	}
	return NULL;
}

TEST(core, test_tc_handler_interrupting_cache_ops)
{
	struct sigaction sa = { .sa_handler = sig_alloc_free };
	unsigned long busy0 = __atomic_load_n(&pcp_tc_nr_busy, __ATOMIC_RELAXED);
	unsigned int rounds = test_iters(20000, 2000), r;
	pthread_t self = pthread_self(), sender;
	struct tobj *h[100];
	time_t start = time(NULL);

	sig_pc = t_create();
	/*
	 * A first miss outside any handler: it starts the reaper thread
	 * (pcp_reaper_kick), and pthread_create is no call for a handler
	 * (TSan: "signal-unsafe call inside of a signal"). What runs in the
	 * handlers below is the thread cache's busy flag, the subject here.
	 */
	t_cycle(sig_pc, h, 100);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);
	sig_runs = sig_got = 0;
	__atomic_store_n(&sig_stop, 0, __ATOMIC_RELAXED);
	ck_assert_int_eq(pthread_create(&sender, NULL, sig_sender, &self), 0);
	/*
	 * The rounds, for at most 3 s (the sender's storm slows them down
	 * by as much as the machine lets it: 45 s for 20000 rounds on two
	 * vCPUs, millions of handler runs), and until handlers ran often
	 * enough (bounded at 20 s)
	 */
	for (r = 0; (r < rounds && time(NULL) - start < 3) ||
		    (sig_runs < 1000 && time(NULL) - start < 20); r++)
		t_cycle(sig_pc, h, 1 + (int)(r % 97));
	__atomic_store_n(&sig_stop, 1, __ATOMIC_RELAXED);
	pthread_join(sender, NULL);
	signal(SIGUSR2, SIG_DFL);
	sig_free_kept();
	ck_assert_int_gt(sig_runs, 0);
	ck_assert_int_gt(sig_got, 0);
	/* how many landed inside a cache operation: the machine's timing
	 * (none under valgrind, which delivers signals between blocks of
	 * its own); test_tc_handler_inside_a_batch makes sure of some */
	printf("%d handler runs, %lu allocations around a busy cache\n", (int)sig_runs,
	       __atomic_load_n(&pcp_tc_nr_busy, __ATOMIC_RELAXED) - busy0);
	ck_assert_int_eq(twice, 0);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(sig_pc, NULL));
	t_destroy(sig_pc);
}
END_TEST

/* ------------------------------------------------------------------ */
/* fork */

static struct pcp_cache *fork_pc;
static pthread_barrier_t fork_hold;

/* A thread that holds a full cache while another thread forks. */
static void *fork_holder(void *arg)
{
	struct tobj *h[60];

	t_cycle(fork_pc, h, 60);
	pthread_barrier_wait(&fork_hold);
	pthread_barrier_wait(&fork_hold);
	return NULL;
}

/*
 * The forking thread: the child has only it. What the holder's cache and
 * the main thread's held is the child's to give back: counted in the
 * cache's objects at once, given back at the child's first miss.
 */
static void *fork_forker(void *arg)
{
	int *status = arg, bad = 0;
	struct tobj *h[60];
	pid_t pid;

	t_cycle(fork_pc, h, 20);
	pid = fork();
	if (pid == 0) {
		unsigned long tc = tc_objects(fork_pc);

		if (pool_out() != pcp_cache_objects(fork_pc, NULL))
			bad |= 1;
		if (tc < 3)
			bad |= 2;	/* the three threads' caches */
		/* a miss (more than this thread's bin holds) gives the
		 * others' caches back */
		t_cycle(fork_pc, h, 60);
		if (tc_objects(fork_pc) >= tc)
			bad |= 4;
		pcp_cache_destroy(fork_pc);
		if (pool_out() != 0 || pool_errors || twice)
			bad |= 8;
		_exit(bad);
	}
	if (pid < 0 || waitpid(pid, status, 0) != pid)
		*status = -1;
	return NULL;
}

/* As the slab layer's handlers: the child's sigsafe depth as before
 * prepare (its locks were re-made, not left; slab_fork_child()). */
static unsigned long fork_depth;

static void t_fork_prepare(void)
{
	fork_depth = sigsafe.depth;
	pcp_fork_prepare();
}

static void t_fork_child(void)
{
	pcp_fork_child();
	sigsafe.depth = fork_depth;
}

TEST(core, test_tc_fork_in_a_thread)
{
	pthread_t holder, forker;
	struct tobj *h[30];
	int status = -1;

	fork_pc = t_create();
	ck_assert_int_eq(pthread_atfork(t_fork_prepare, pcp_fork_parent,
					t_fork_child), 0);
	t_cycle(fork_pc, h, 30);
	pthread_barrier_init(&fork_hold, NULL, 2);
	ck_assert_int_eq(pthread_create(&holder, NULL, fork_holder, NULL), 0);
	pthread_barrier_wait(&fork_hold);
	ck_assert_int_eq(pthread_create(&forker, NULL, fork_forker, &status), 0);
	pthread_join(forker, NULL);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* the parent's threads and caches go on as they were */
	pthread_barrier_wait(&fork_hold);
	pthread_join(holder, NULL);
	t_cycle(fork_pc, h, 30);
	ck_assert_uint_eq(pool_out(), pcp_cache_objects(fork_pc, NULL));
	t_destroy(fork_pc);
}
END_TEST

/* ------------------------------------------------------------------ */

/*
 * Many threads, many caches, threads made and ending while others work:
 * the model's count (pool = live + cached, nothing twice) after each.
 */
#define MT_CACHES	5

static struct pcp_cache *mt_pc[MT_CACHES];

static void *mt_worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	struct tobj *h[64] = { 0 };
	int k[64];

	for (int r = 0; r < 3000; r++) {
		int i = (int)(rand_r(&seed) % 64);

		if (h[i]) {
			t_free(mt_pc[k[i]], h[i]);
			h[i] = NULL;
		} else {
			k[i] = (int)(rand_r(&seed) % MT_CACHES);
			h[i] = t_alloc(mt_pc[k[i]]);
		}
	}
	for (int i = 0; i < 64; i++)
		if (h[i])
			t_free(mt_pc[k[i]], h[i]);
	return NULL;
}

TEST(core, test_tc_threads_come_and_go)
{
	pthread_t th[4];
	unsigned long cached;
	int i, gen;

	pool_reset();
	pcp_thread_cache_set(true);
	for (i = 0; i < MT_CACHES; i++)
		ck_assert_ptr_nonnull(mt_pc[i] = pcp_cache_create("mt", NULL, &t_ops, 64));
	for (gen = 0; gen < 6; gen++) {
		for (i = 0; i < 4; i++)
			ck_assert_int_eq(pthread_create(&th[i], NULL, mt_worker,
							(void *)(uintptr_t)(gen * 4 + i + 1)), 0);
		if (gen == 3)
			pcp_cache_drain(mt_pc[0]);	/* while they run */
		for (i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		for (i = 0, cached = 0; i < MT_CACHES; i++)
			cached += pcp_cache_objects(mt_pc[i], NULL);
		ck_assert_uint_eq(pool_out(), cached);
		ck_assert_int_eq(twice, 0);
		ck_assert_int_eq(pool_errors, 0);
	}
	for (i = 0; i < MT_CACHES; i++)
		pcp_cache_destroy(mt_pc[i]);
	ck_assert_uint_eq(pool_out(), 0);
}
END_TEST

static const struct test_case cases[] = {
	{ .name = "core", .timeout = 120, .skip = !IS_ENABLED(CONFIG_PERCPU_CACHE) },
};

/*
 * In rseq mode, run again under the seccomp launcher beside this program
 * (build/tests/percpu/percpu_no_rseq): the thread cache is fallback mode's.
 */
static void run_in_fallback(char **argv)
{
	char self[PATH_MAX], launcher[PATH_MAX + 32];
	ssize_t n;
	char *slash;

	if (!IS_ENABLED(CONFIG_PERCPU_CACHE) || pcp_mode_id() == PCP_MODE_FALLBACK)
		return;
	if (getenv("USLAB_TC_REEXEC")) {
		fprintf(stderr, "still in %s mode under percpu_no_rseq\n", pcp_mode());
		exit(1);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		perror("/proc/self/exe");
		exit(1);
	}
	self[n] = '\0';
	snprintf(launcher, sizeof(launcher), "%s", self);
	slash = strrchr(launcher, '/');
	strcpy(slash + 1, "percpu_no_rseq");
	setenv("USLAB_TC_REEXEC", "1", 1);
	execl(launcher, launcher, self, (char *)NULL);
	perror(launcher);
	exit(1);
}

int main(int argc, char **argv)
{
	pcp_init();
	run_in_fallback(argv);
	return test_run_suite(test_suite("percpu-tcache", cases, ARRAY_SIZE(cases)));
}
