// SPDX-License-Identifier: MIT
/*
 * Hostile workloads for a preloaded malloc: run on glibc and on uslab by
 * tests/malloc/test_malloc_robust.sh, one case per invocation (`robust CASE
 * [SECONDS]`). Each case checks what it can (contents, errno, no double
 * hand-out) and exits 0; a crash, a hang (the script's timeout) or a
 * failed check is a failure. None of them measures time.
 *
 *   enomem     allocate until ENOMEM (under ulimit -v), free, allocate again
 *   threads    thousands of short-lived threads; some pthread_exit while
 *              others free their blocks
 *   fork       fork from several threads that allocate; the child
 *              allocates, starts a thread and exits
 *   signals    SIGUSR1 at a high rate to allocating threads whose handler
 *              mallocs and frees
 *   signals-large  the same with blocks beyond the kmalloc caches: threads
 *              malloc, free and trim blocks of 300 KiB .. 6 MiB (page
 *              allocator, zone lock) while handlers on those same threads
 *              malloc 16 KiB .. 6 MiB (issue 11, finding 4: a handler that
 *              interrupted its thread inside the zone lock hung)
 *   signals-threads  ROBUST_THREADS (64; at most 300) threads, each with
 *              its own 20 kHz timer whose handler mallocs, callocs,
 *              reallocs and frees, one block in four kept past the
 *              handler in a table other threads free from, while the
 *              threads allocate and main moves them between CPUs: no
 *              handler allocation may fail while memory exists (in
 *              fallback mode most of them failed with ENOMEM: the
 *              emergency table had 64 slots)
 *   signals-fork  the same, and two more threads (with timers too) fork
 *              15 times each; a child frees 64 of the shared blocks (the
 *              handlers' among them) after checking them, allocates in
 *              two threads and exits 0
 *   migrate    threads moving themselves between CPUs while allocating
 *              and freeing each other's blocks
 *   larson     larson: threads replace random slots of a shared array
 *              (cross-thread frees, random sizes), bounded time
 *   xmalloc    xmalloc-test: producers malloc, consumers free, high rate
 *   align      memalign family with big alignments, realloc to 0,
 *              malloc_usable_size, C23 sized frees
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tests/testutil.h"

#define FAIL(...)							\
	do {								\
		fprintf(stderr, "robust: " __VA_ARGS__);		\
		fputc('\n', stderr);					\
		exit(1);						\
	} while (0)

static double seconds = 2.0;
static atomic_int stop;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * A block carries its size in its first word and a pattern derived from
 * its address after it.
 */
static void *blk_new(size_t n)
{
	unsigned char *p;

	if (n < 16)
		n = 16;
	p = malloc(n);
	if (!p)
		FAIL("malloc(%zu): %s", n, strerror(errno));
	memset(p, (int)(((uintptr_t)p >> 4) & 0xff), n);
	*(size_t *)p = n;
	return p;
}

static void blk_check_free(void *v)
{
	unsigned char *p = v, c = (unsigned char)(((uintptr_t)p >> 4) & 0xff);
	size_t n = *(size_t *)v, i;

	if (n < 16 || n > ((size_t)1 << 30) || malloc_usable_size(v) < n)
		FAIL("block %p: size word %zu corrupt", v, n);
	for (i = sizeof(size_t); i < n; i += 61)
		if (p[i] != c)
			FAIL("block %p (%zu bytes) corrupt at %zu", v, n, i);
	if (p[n - 1] != c)
		FAIL("block %p (%zu bytes) corrupt at its end", v, n);
	free(p);
}

static void start_threads(int n, void *(*fn)(void *), pthread_t *t)
{
	long i;

	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)i))
			FAIL("pthread_create");
}

static void join_threads(int n, pthread_t *t)
{
	int i;

	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* Tell the workers to stop (@phase: 1, or 2 for a second group) and wait
 * for the @n of them in @t. */
static void stop_threads(int phase, int n, pthread_t *t)
{
	atomic_store(&stop, phase);
	join_threads(n, t);
}

/* ---- enomem ---------------------------------------------------------- */

static int case_enomem(void)
{
	size_t cap = 1 << 20, n = 0, i, again;
	void **v = calloc(cap, sizeof(*v));
	int pass;

	if (!v)
		FAIL("calloc of the table");
	errno = 0;
	if (malloc((size_t)1 << 44) || errno != ENOMEM)
		FAIL("malloc(16 TiB) under ulimit -v: not NULL/ENOMEM");
	for (pass = 0; pass < 2; pass++) {
		for (n = 0; n < cap; n++) {
			/* small, medium and large blocks */
			size_t sz = n % 3 == 0 ? 64 : n % 3 == 1 ? 3000 : 70000;

			errno = 0;
			v[n] = malloc(sz);
			if (!v[n])
				break;
			memset(v[n], 1, sz);
		}
		if (n == cap)
			FAIL("no ENOMEM after %zu blocks: run under ulimit -v", n);
		if (errno != ENOMEM)
			FAIL("malloc failed with errno %d, not ENOMEM", errno);
		printf("pass %d: ENOMEM after %zu blocks\n", pass, n);
		for (i = 0; i < n; i++)
			free(v[i]);
		/* the allocator is consistent again: large and small work */
		again = 0;
		for (i = 0; i < 64; i++) {
			void *p = malloc(i % 2 ? 1 << 20 : 100);

			if (p) {
				again++;
				free(p);
			}
		}
		if (again != 64)
			FAIL("only %zu of 64 allocations after freeing", again);
	}
	free(v);
	return 0;
}

/* ---- threads ---------------------------------------------------------- */

#define SLOTS 4096
static _Atomic(void *) slot[SLOTS];

/*
 * Put a new block into a random shared slot and free the one that was
 * there, most often another thread's: the exchange makes each block have
 * exactly one owner.
 */
static void slot_swap(uint64_t *s, size_t maxsz)
{
	size_t i = xorshift64(s) % SLOTS, sz = 8 + xorshift64(s) % maxsz;
	void *old = atomic_exchange(&slot[i], blk_new(sz));

	if (old)
		blk_check_free(old);
}

static void slots_free(void)
{
	size_t i;

	for (i = 0; i < SLOTS; i++) {
		void *p = atomic_exchange(&slot[i], NULL);

		if (p)
			blk_check_free(p);
	}
}

static void *short_thread(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg * 2654435761u + 1;
	int i;

	for (i = 0; i < 200; i++)
		slot_swap(&s, i % 8 ? 200 : 5000);
	if ((uintptr_t)arg % 3 == 0)
		pthread_exit(NULL);	/* unwinds: allocates inside libgcc */
	return NULL;
}

static int case_threads(void)
{
	pthread_t t[8];
	long rss_mid = 0, rss_end;
	int round, k;

	for (round = 0; round < 500; round++) {
		for (k = 0; k < 8; k++)
			if (pthread_create(&t[k], NULL, short_thread,
					   (void *)(uintptr_t)(round * 8 + k + 1)))
				FAIL("pthread_create");
		join_threads(8, t);
		if (round == 100)
			rss_mid = (long)(test_rss_bytes() / 1024);
	}
	rss_end = (long)(test_rss_bytes() / 1024);
	slots_free();
	printf("4000 threads, RSS after 800: %ld KiB, after 4000: %ld KiB\n",
	       rss_mid, rss_end);
	/* per-thread state must not accumulate */
	if (rss_mid && rss_end > 2 * rss_mid + 16384)
		FAIL("RSS grows with the thread count");
	return 0;
}

/* ---- fork ------------------------------------------------------------- */

static void *child_thread(void *arg)
{
	blk_check_free(blk_new(1000));
	return arg;
}

static void *forker(void *arg)
{
	uint64_t s = (uintptr_t)arg + 7;
	int i;

	for (i = 0; i < 25; i++) {
		pid_t pid;
		int st;

		slot_swap(&s, 3000);
		pid = fork();
		if (pid < 0)
			FAIL("fork");
		if (pid == 0) {
			pthread_t t;
			void *v[100];
			int k;

			for (k = 0; k < 100; k++)
				v[k] = blk_new(16 + k * 37);
			if (pthread_create(&t, NULL, child_thread, NULL))
				_exit(3);
			pthread_join(t, NULL);
			for (k = 0; k < 100; k++)
				blk_check_free(v[k]);
			free(blk_new(5 << 20));
			_exit(0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			FAIL("child %d: status %#x", pid, st);
	}
	return NULL;
}

static void *churner(void *arg)
{
	uint64_t s = (uintptr_t)arg + 99;

	while (!atomic_load(&stop))
		slot_swap(&s, 2000);
	return NULL;
}

static int case_fork(void)
{
	pthread_t f[4], c[2];

	start_threads(2, churner, c);
	start_threads(4, forker, f);
	join_threads(4, f);
	stop_threads(1, 2, c);
	slots_free();
	printf("100 forks from 4 threads beside 2 allocating threads\n");
	return 0;
}

/* ---- signals ---------------------------------------------------------- */

static atomic_long handled;

/* Every kmalloc class in turn, so that handlers meet classes not yet made. */
static void on_usr1(int sig)
{
	long n = atomic_fetch_add(&handled, 1);
	size_t sz = ((size_t)8 << (n % 11)) + (size_t)(sig & 7);
	void *p = malloc(sz);

	if (p) {
		memset(p, 0, sz);
		free(p);
	}
}

static void *sig_worker(void *arg)
{
	uint64_t s = (uintptr_t)arg + 3;
	void *local[64] = { 0 };
	size_t n;

	while (!atomic_load(&stop)) {
		n = xorshift64(&s) % 64;
		free(local[n]);
		local[n] = malloc(8 + xorshift64(&s) % 300);
	}
	for (n = 0; n < 64; n++)
		free(local[n]);
	return NULL;
}

/*
 * For `seconds`: @n threads run @worker while rounds of @sig (one to each,
 * handled by @handler) interrupt them, with a pause of @pause_us after
 * every @pause_every signals; then the threads stop. Return: signals sent.
 */
static long signal_storm(int sig, void (*handler)(int), void *(*worker)(void *),
			 int n, long pause_every, useconds_t pause_us)
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
	pthread_t t[4];
	double end = now() + seconds;
	long sent = 0;
	int i;

	if (n > 4)
		FAIL("signal_storm: %d threads, at most 4", n);
	sigaction(sig, &sa, NULL);
	start_threads(n, worker, t);
	while (now() < end) {
		for (i = 0; i < n; i++)
			pthread_kill(t[i], sig);
		sent += n;
		if (sent % pause_every == 0)
			usleep(pause_us);
	}
	stop_threads(1, n, t);
	return sent;
}

static int case_signals(void)
{
	long sent = signal_storm(SIGUSR1, on_usr1, sig_worker, 4, 64, 100);

	printf("%ld signals sent, %ld handled\n", sent, atomic_load(&handled));
	return 0;
}

/*
 * signals-large: every size a handler uses reaches the page allocator
 * one way or another: kmalloc classes above 8 KiB (slab refills), blocks
 * above the classes (buddy blocks), above the largest order (own
 * mappings). The threads it interrupts live in the page allocator.
 */
static const size_t large_sizes[] = {
	16 << 10, 128 << 10, 300 << 10, 1 << 20, 3 << 20, 6 << 20,
};

static void on_usr2(int sig)
{
	long n = atomic_fetch_add(&handled, 1);
	size_t sz = large_sizes[(size_t)n % (sizeof(large_sizes) / sizeof(large_sizes[0]))];
	unsigned char *p = malloc(sz);

	(void)sig;
	if (p) {
		p[0] = 1;
		p[sz - 1] = 2;
		free(p);
	}
}

static void *large_worker(void *arg)
{
	uint64_t s = (uintptr_t)arg + 7;
	unsigned char *local[8] = { 0 };
	size_t n, sz[8] = { 0 };
	unsigned long i = 0;

	while (!atomic_load(&stop)) {
		n = rnd(&s) % 8;
		if (local[n] && (local[n][0] != (unsigned char)n ||
				 local[n][sz[n] - 1] != (unsigned char)n))
			FAIL("large block %zu overwritten", n);
		free(local[n]);
		sz[n] = (300 << 10) + rnd(&s) % (6 << 20);
		local[n] = malloc(sz[n]);
		if (local[n]) {
			local[n][0] = (unsigned char)n;
			local[n][sz[n] - 1] = (unsigned char)n;
		}
		if (++i % 32 == 0)
			malloc_trim(0);	/* gives pages back under the zone lock */
	}
	for (n = 0; n < 8; n++)
		free(local[n]);
	return NULL;
}

static int case_signals_large(void)
{
	long sent = signal_storm(SIGUSR2, on_usr2, large_worker, 2, 2, 50);

	printf("%ld signals sent, %ld handled with blocks of 16 KiB .. 6 MiB\n",
	       sent, atomic_load(&handled));
	return 0;
}

/* ---- signals-threads --------------------------------------------------- */

#define ST_MAX_THREADS	300
#define ST_SLOTS	1024
static _Atomic(uintptr_t) st_slot[ST_SLOTS];
static atomic_long st_runs, st_refused;
static pid_t st_tid[ST_MAX_THREADS + 2];
static int st_nr;
static __thread uint64_t st_seed;

/* A handler's block: mostly small, one in eight up to 40 KiB. */
static void *st_alloc(void)
{
	size_t n = 16 + (rnd(&st_seed) % 8 ? rnd(&st_seed) % 1500 :
			 rnd(&st_seed) % 40000);
	unsigned char *p;

	if (rnd(&st_seed) % 4 == 0) {
		p = calloc(1, n);
		if (p)
			for (size_t i = 0; i < n; i += 97)
				if (p[i])
					FAIL("calloc(%zu) in a handler: not zeroed", n);
	} else {
		p = malloc(n);
	}
	if (!p) {
		atomic_fetch_add(&st_refused, 1);
		return NULL;
	}
	memset(p, (int)(((uintptr_t)p >> 4) & 0xff), n);
	*(size_t *)p = n;
	return p;
}

static void on_timer(int sig)
{
	int e = errno;
	void *a, *b;

	(void)sig;
	atomic_fetch_add(&st_runs, 1);
	a = st_alloc();
	b = st_alloc();
	if (a) {
		size_t n = *(size_t *)a, m = 16 + rnd(&st_seed) % 3000;
		unsigned char c = (unsigned char)(((uintptr_t)a >> 4) & 0xff);
		unsigned char *r = realloc(a, m);

		if (!r) {
			atomic_fetch_add(&st_refused, 1);
			blk_check_free(a);
		} else {
			for (size_t i = sizeof(size_t); i < n && i < m; i += 31)
				if (r[i] != c)
					FAIL("realloc in a handler lost the contents at %zu", i);
			memset(r, (int)(((uintptr_t)r >> 4) & 0xff), m);
			*(size_t *)r = m;
			blk_check_free(r);
		}
	}
	if (b && rnd(&st_seed) % 4 == 0) {
		uintptr_t old = atomic_exchange(&st_slot[rnd(&st_seed) % ST_SLOTS],
						(uintptr_t)b);

		if (old)
			blk_check_free((void *)old);
	} else if (b) {
		blk_check_free(b);
	}
	errno = e;
}

/* This thread's 20 kHz timer (SIGRTMIN, handled by on_timer). */
static timer_t st_arm_timer(long id)
{
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID,
			       .sigev_signo = SIGRTMIN };
	struct itimerspec it = { { 0, 50000 }, { 0, 50000 } };
	timer_t timer;

	st_seed = (uint64_t)id * 7919 + 0x5555;
	st_tid[id] = gettid();
	ev._sigev_un._tid = st_tid[id];
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer) ||
	    timer_settime(timer, 0, &it, NULL))
		FAIL("timer_create: %s", strerror(errno));
	return timer;
}

static void *st_worker(void *arg)
{
	long id = (long)arg;
	uint64_t s = (uint64_t)id * 7919 + 3;
	void *local[16] = { 0 };
	timer_t timer = st_arm_timer(id);

	while (!atomic_load(&stop)) {
		unsigned int k = (unsigned int)(rnd(&s) % 16);

		if (local[k])
			blk_check_free(local[k]);
		local[k] = blk_new(16 + rnd(&s) % 2000);
		if (rnd(&s) % 5 == 0) {
			uintptr_t old = atomic_exchange(&st_slot[rnd(&s) % ST_SLOTS],
							(uintptr_t)blk_new(16 + rnd(&s) % 500));

			if (old)
				blk_check_free((void *)old);
		}
	}
	timer_delete(timer);
	for (int k = 0; k < 16; k++)
		if (local[k])
			blk_check_free(local[k]);
	return NULL;
}

/*
 * signals-fork: the last two threads fork ST_FORKS times each while every
 * thread's handler allocates; the child (one thread, the others' state as
 * it was, handlers' blocks among the shared ones) frees 64 of the shared
 * blocks after checking them, allocates in two threads and exits 0.
 */
#define ST_FORKS	15
static int st_forkers;

static void *st_child_thread(void *arg)
{
	for (int i = 0; i < 200; i++)
		blk_check_free(blk_new(16 + (size_t)i * 41));
	return arg;
}

static void st_child(uint64_t *s)
{
	void *v[64];
	pthread_t t;

	for (int k = 0; k < 64; k++) {
		uintptr_t p = atomic_exchange(&st_slot[rnd(s) % ST_SLOTS], 0);

		if (p)
			blk_check_free((void *)p);
		v[k] = blk_new(16 + rnd(s) % 3000);
	}
	if (pthread_create(&t, NULL, st_child_thread, NULL))
		_exit(3);
	st_child_thread(NULL);
	pthread_join(t, NULL);
	for (int k = 0; k < 64; k++)
		blk_check_free(v[k]);
	_exit(0);
}

static void *st_forker(void *arg)
{
	long id = (long)arg;
	uint64_t s = (uint64_t)id * 31 + 5;
	timer_t timer = st_arm_timer(id);

	for (int i = 0; i < ST_FORKS; i++) {
		pid_t pid;
		int st;

		for (int k = 0; k < 200; k++)
			blk_check_free(blk_new(16 + rnd(&s) % 2000));
		pid = fork();
		if (pid < 0)
			FAIL("fork: %s", strerror(errno));
		if (pid == 0)
			st_child(&s);
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR)
				FAIL("waitpid: %s", strerror(errno));
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			FAIL("child %d: status %#x", pid, st);
	}
	timer_delete(timer);
	return NULL;
}

static void *st_start(void *arg)
{
	return (long)arg >= st_nr - st_forkers ? st_forker(arg) : st_worker(arg);
}

static int st_run(int n, int forkers)
{
	struct sigaction sa = { .sa_handler = on_timer, .sa_flags = SA_RESTART };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), moves = 0;
	pthread_t *t;
	double end;
	uint64_t s = 11;

	if (n < 1 || n > ST_MAX_THREADS)
		FAIL("ROBUST_THREADS=%d: 1 .. %d", n, ST_MAX_THREADS);
	st_nr = n + forkers;
	st_forkers = forkers;
	t = calloc((size_t)st_nr, sizeof(*t));
	if (!t)
		FAIL("calloc");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN, &sa, NULL);
	start_threads(st_nr, st_start, t);
	end = now() + seconds;
	while (now() < end) {
		for (int i = 0; i < st_nr && ncpu > 1; i++) {
			pid_t tid = __atomic_load_n(&st_tid[i], __ATOMIC_RELAXED);
			cpu_set_t set;

			if (!tid)
				continue;
			CPU_ZERO(&set);
			CPU_SET((int)(rnd(&s) % (uint64_t)ncpu), &set);
			if (!sched_setaffinity(tid, sizeof(set), &set))
				moves++;
		}
		usleep(500);
	}
	stop_threads(1, st_nr, t);
	for (int i = 0; i < ST_SLOTS; i++) {
		uintptr_t p = atomic_exchange(&st_slot[i], 0);

		if (p)
			blk_check_free((void *)p);
	}
	free(t);
	printf("%d threads%s: %ld handler runs, %ld handler allocations refused, %ld moves\n",
	       n, forkers ? " and 2 forking" : "", atomic_load(&st_runs),
	       atomic_load(&st_refused), moves);
	if (atomic_load(&st_runs) < n)
		FAIL("only %ld handler runs for %d threads", atomic_load(&st_runs), n);
	if (atomic_load(&st_refused))
		FAIL("%ld handler allocations refused (ENOMEM) of %ld handler runs",
		     atomic_load(&st_refused), atomic_load(&st_runs));
	return 0;
}

static int st_threads_env(void)
{
	const char *env = getenv("ROBUST_THREADS");

	return env ? atoi(env) : 64;
}

static int case_signals_threads(void)
{
	return st_run(st_threads_env(), 0);
}

static int case_signals_fork(void)
{
	return st_run(st_threads_env(), 2);
}

/* ---- migrate ---------------------------------------------------------- */

static void *migrator(void *arg)
{
	uint64_t s = (uintptr_t)arg + 5;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), i = 0;
	cpu_set_t set;

	while (!atomic_load(&stop)) {
		if (i++ % 16 == 0) {
			CPU_ZERO(&set);
			CPU_SET((int)(xorshift64(&s) % (uint64_t)ncpu), &set);
			/* refused inside a restricted cpuset: keep going */
			sched_setaffinity(0, sizeof(set), &set);
		}
		slot_swap(&s, i % 32 ? 256 : 9000);
	}
	return NULL;
}

static int case_migrate(void)
{
	pthread_t t[6];

	start_threads(6, migrator, t);
	usleep((useconds_t)(seconds * 1e6));
	stop_threads(1, 6, t);
	slots_free();
	printf("6 threads migrating\n");
	return 0;
}

/* ---- larson ----------------------------------------------------------- */

static atomic_long larson_ops;

static void *larson_worker(void *arg)
{
	uint64_t s = (uintptr_t)arg * 77 + 1;
	long ops = 0;

	while (!atomic_load(&stop)) {
		slot_swap(&s, 1000);
		ops++;
	}
	atomic_fetch_add(&larson_ops, ops);
	return NULL;
}

static int case_larson(void)
{
	pthread_t t[8];
	long rss0, rss1;

	start_threads(8, larson_worker, t);
	usleep((useconds_t)(seconds * 5e5));
	rss0 = (long)(test_rss_bytes() / 1024);
	usleep((useconds_t)(seconds * 5e5));
	stop_threads(1, 8, t);
	rss1 = (long)(test_rss_bytes() / 1024);
	slots_free();
	printf("larson: %ld ops, RSS %ld -> %ld KiB\n",
	       atomic_load(&larson_ops), rss0, rss1);
	/* the live set is fixed (SLOTS blocks): memory must not run away */
	if (rss1 > 4 * rss0 + 65536)
		FAIL("RSS grew from %ld to %ld KiB at a fixed live set", rss0, rss1);
	return 0;
}

/* ---- xmalloc ---------------------------------------------------------- */

#define RING 1024
struct ring {
	_Atomic(void *) b[RING];
};
static struct ring rings[4];
static atomic_long xm_freed;

static void *xm_producer(void *arg)
{
	struct ring *r = &rings[(uintptr_t)arg];
	uint64_t s = (uintptr_t)arg + 11;
	size_t i = 0;

	while (!atomic_load(&stop)) {
		void *p = blk_new(16 + xorshift64(&s) % 120), *expect = NULL;

		while (!atomic_compare_exchange_weak(&r->b[i % RING], &expect, p)) {
			expect = NULL;
			if (atomic_load(&stop)) {
				free(p);
				return NULL;
			}
			sched_yield();
		}
		i++;
	}
	return NULL;
}

static void *xm_consumer(void *arg)
{
	struct ring *r = &rings[(uintptr_t)arg];
	size_t i = 0;
	long n = 0;

	for (;;) {
		void *p = atomic_exchange(&r->b[i % RING], NULL);

		if (p) {
			blk_check_free(p);
			n++;
			i++;
		} else if (atomic_load(&stop) == 2) {
			break;
		} else {
			sched_yield();
		}
	}
	atomic_fetch_add(&xm_freed, n);
	return NULL;
}

static int case_xmalloc(void)
{
	pthread_t p[4], c[4];
	int i, k;

	start_threads(4, xm_producer, p);
	start_threads(4, xm_consumer, c);
	usleep((useconds_t)(seconds * 1e6));
	stop_threads(1, 4, p);
	stop_threads(2, 4, c);
	for (i = 0; i < 4; i++)
		for (k = 0; k < RING; k++)
			free(atomic_exchange(&rings[i].b[k], NULL));
	printf("xmalloc: %ld blocks freed across threads\n",
	       atomic_load(&xm_freed));
	return 0;
}

/* ---- align ------------------------------------------------------------ */

static int case_align(void)
{
	size_t a, sz;
	void *p, *q;

	for (a = 8; a <= ((size_t)8 << 20); a <<= 1)
		for (sz = 1; sz < ((size_t)1 << 23); sz = sz * 7 + 3) {
			if (posix_memalign(&p, a, sz))
				FAIL("posix_memalign(%zu, %zu)", a, sz);
			if ((uintptr_t)p % a || malloc_usable_size(p) < sz)
				FAIL("posix_memalign(%zu, %zu) = %p", a, sz, p);
			memset(p, 3, sz);
			q = memalign(a, sz);
			if (!q || (uintptr_t)q % a)
				FAIL("memalign(%zu, %zu)", a, sz);
			free(q);
			p = realloc(p, sz + 100);
			if (!p || ((unsigned char *)p)[sz - 1] != 3)
				FAIL("realloc of an aligned block lost data");
			free(p);
		}
	p = malloc(100);
	errno = 0;
	if (realloc(p, 0) != NULL)
		FAIL("realloc(p, 0) is not NULL");
	if (malloc_usable_size(NULL) != 0)
		FAIL("malloc_usable_size(NULL)");
	p = aligned_alloc(64, 640);
	if (!p || (uintptr_t)p % 64)
		FAIL("aligned_alloc");
	free(p);
	p = valloc(10);
	q = pvalloc(10);
	if (!p || !q || (uintptr_t)p % 4096 || (uintptr_t)q % 4096 ||
	    malloc_usable_size(q) < 4096)
		FAIL("valloc/pvalloc");
	free(p);
	free(q);
	printf("alignments 8 .. 8 MiB\n");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} cases[] = {
		{ "enomem", case_enomem }, { "threads", case_threads },
		{ "fork", case_fork }, { "signals", case_signals },
		{ "signals-large", case_signals_large },
		{ "signals-threads", case_signals_threads },
		{ "signals-fork", case_signals_fork },
		{ "migrate", case_migrate }, { "larson", case_larson },
		{ "xmalloc", case_xmalloc }, { "align", case_align },
	};
	size_t i;

	if (argc < 2)
		FAIL("usage: robust CASE [SECONDS]");
	if (argc > 2)
		seconds = atof(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[1], cases[i].name))
			return cases[i].fn();
	FAIL("unknown case %s", argv[1]);
}
