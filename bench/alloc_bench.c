// SPDX-License-Identifier: MIT
/*
 * malloc benchmarks for `make bench`, run on uslab and on each peer by
 * preloading (bench/run.sh). Each prints one line of key=value results.
 *
 *   alloc_bench pair [N]       N malloc(64)/free pairs in a tight loop
 *   alloc_bench churn [LOOPS]  rpmalloc-study churn: 150000 live blocks in
 *                              [16, 16000] bytes with linear falloff; each
 *                              loop frees and reallocates half of them
 *   alloc_bench prodcons [N]   one producer thread mallocs, one consumer
 *                              thread frees (SPSC ring), N blocks
 *   alloc_bench threads [T]    T threads (64) each churning small blocks
 *                              through its cache, RSS with all alive
 *   alloc_bench study T [LOOPS]  the seeds' thread-cache study: see
 *                              wl_study in bench/workloads.c
 *
 * and the workloads of bench/workloads.c, bench/shapes.c and
 * bench/programs.c (study, mt, gmalloc, larson, larson_sized, rptest,
 * xmalloc, alloc_test, glibc_thread, malloc_large, manythreads, rss_decay,
 * sh6bench, sh8bench, mleak, gmfill, rss_tax, scratch, cfrac, espresso): see
 * there.
 *
 * Times come from CLOCK_MONOTONIC; peak RSS from /proc/self/status's
 * VmHWM (bench_peak_rss_kb()).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"
#include "lib/procfs.h"

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/*
 * The program's own peak RSS: VmHWM, the high-water mark of this address
 * space (lib/procfs.c, read with open()/read() into the stack: stdio's
 * FILE and buffer would come from the allocator under test at the moment
 * of measuring). Not getrusage()'s ru_maxrss: Linux carries that over
 * execve() from the image the process ran before, and make bench runs
 * every program as `perf stat ... env ...`, whose forked child held perf's
 * pages (about 3.9 MiB): every peak below that read as perf's, glibc's
 * xmalloc_t2 and small_rss among them. ru_maxrss only where /proc is not
 * there to read.
 */
long bench_peak_rss_kb(void)
{
	struct rusage ru;
	int64_t hwm = proc_hwm_bytes();

	if (hwm >= 0)
		return (long)(hwm >> 10);
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

size_t bench_linear_falloff(uint64_t *s, size_t lo, size_t hi)
{
	double u = (double)(bench_rng(s) >> 11) * (1.0 / 9007199254740992.0);

	return lo + (size_t)((double)(hi - lo) * (1.0 - __builtin_sqrt(u)));
}

long bench_arg(int argc, char **argv, int i, long def)
{
	char *end;
	long v;

	if (i >= argc)
		return def;
	v = strtol(argv[i], &end, 10);
	if (*end || v <= 0) {
		fprintf(stderr, "alloc_bench: argument %d: '%s' is not a positive number\n",
			i, argv[i]);
		exit(2);
	}
	return v;
}

#define now bench_now
#define peak_rss_kb bench_peak_rss_kb
#define rss_kb bench_rss_kb

long bench_rss_kb(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Keep the compiler from seeing through a pointer. */
#define escape bench_escape

#define rng bench_rng

static int bench_pair(long n)
{
	double t0, t1;

	/* Warm the class and the CPU's magazine first. */
	for (long i = 0; i < 100000; i++) {
		void *p = malloc(64);

		escape(p);
		free(p);
	}
	t0 = now();
	for (long i = 0; i < n; i++) {
		void *p = malloc(64);

		escape(p);
		free(p);
	}
	t1 = now();
	printf("pair_ns=%.3f n=%ld\n", (t1 - t0) * 1e9 / (double)n, n);
	return 0;
}

/* Linear falloff over [16, 16000]: density falls linearly to 0 at 16000. */
static size_t churn_size(uint64_t *s)
{
	return bench_linear_falloff(s, 16, 16000);
}

static int bench_churn(int loops)
{
	enum { LIVE = 150000 };
	void **blk = calloc(LIVE, sizeof(void *));
	uint64_t s = 42;
	double t0, t1;

	if (!blk)
		return 1;
	t0 = now();
	for (int i = 0; i < LIVE; i++) {
		size_t sz = churn_size(&s);

		blk[i] = malloc(sz);
		memset(blk[i], i, sz < 64 ? sz : 64);
	}
	for (int l = 0; l < loops; l++) {
		for (int i = 0; i < LIVE; i++) {
			if (rng(&s) & 1) {
				size_t sz = churn_size(&s);

				free(blk[i]);
				blk[i] = malloc(sz);
				memset(blk[i], l, sz < 64 ? sz : 64);
			}
		}
	}
	for (int i = 0; i < LIVE; i++)
		free(blk[i]);
	t1 = now();
	free(blk);
	printf("churn_s=%.4f peak_rss_kb=%ld loops=%d\n", t1 - t0, peak_rss_kb(), loops);
	return 0;
}

#define RING 4096
static void *_Atomic ring[RING];
static long prodcons_n;

static void *producer(void *arg)
{
	uint64_t s = 7;

	for (long i = 0; i < prodcons_n; i++) {
		void *p = malloc(16 + rng(&s) % 496);
		void *_Atomic *slot = &ring[i % RING];

		*(long *)p = i;
		while (atomic_load_explicit(slot, memory_order_acquire))
			sched_yield();
		atomic_store_explicit(slot, p, memory_order_release);
	}
	return arg;
}

static void *consumer(void *arg)
{
	long bad = 0;

	for (long i = 0; i < prodcons_n; i++) {
		void *_Atomic *slot = &ring[i % RING];
		void *p;

		while (!(p = atomic_load_explicit(slot, memory_order_acquire)))
			sched_yield();
		atomic_store_explicit(slot, NULL, memory_order_release);
		bad += *(long *)p != i;
		free(p);
	}
	return (void *)bad;
}

static int bench_prodcons(long n)
{
	pthread_t p, c;
	void *bad;
	double t0, t1;

	prodcons_n = n;
	t0 = now();
	pthread_create(&c, NULL, consumer, NULL);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, &bad);
	t1 = now();
	printf("prodcons_ns=%.2f n=%ld bad=%ld peak_rss_kb=%ld\n",
	       (t1 - t0) * 1e9 / (double)n, n, (long)bad, peak_rss_kb());
	return bad ? 1 : 0;
}

static pthread_barrier_t bar_ready, bar_measured;

static void *thread_work(void *arg)
{
	enum { LIVE = 256, BATCH = 512, ROUNDS = 200 };
	uint64_t s = (uintptr_t)arg * 2654435761u + 1;
	void *live[LIVE], *tmp[BATCH];

	for (int i = 0; i < LIVE; i++) {
		size_t sz = 16 + rng(&s) % 1008;

		live[i] = malloc(sz);
		memset(live[i], 1, sz);
	}
	/* Churn: fills whatever thread or CPU cache sits in front. */
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < BATCH; i++) {
			size_t sz = 16 + rng(&s) % 1008;

			tmp[i] = malloc(sz);
			memset(tmp[i], 2, 16);
		}
		for (int i = 0; i < BATCH; i++)
			free(tmp[i]);
	}
	pthread_barrier_wait(&bar_ready);
	pthread_barrier_wait(&bar_measured);
	for (int i = 0; i < LIVE; i++)
		free(live[i]);
	return NULL;
}

static int bench_threads(int nr)
{
	pthread_t *t = calloc((size_t)nr, sizeof(*t));
	long live_kb, after_kb;
	double t0, t1;

	if (!t)
		return 1;
	pthread_barrier_init(&bar_ready, NULL, (unsigned)nr + 1);
	pthread_barrier_init(&bar_measured, NULL, (unsigned)nr + 1);
	t0 = now();
	for (long i = 0; i < nr; i++)
		pthread_create(&t[i], NULL, thread_work, (void *)i);
	pthread_barrier_wait(&bar_ready);
	live_kb = rss_kb();
	pthread_barrier_wait(&bar_measured);
	for (int i = 0; i < nr; i++)
		pthread_join(t[i], NULL);
	t1 = now();
	after_kb = rss_kb();
	printf("threads_rss_kb=%ld after_exit_rss_kb=%ld threads=%d threads_s=%.4f\n",
	       live_kb, after_kb, nr, t1 - t0);
	free(t);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} workloads[] = {
#define BENCH_WORKLOAD_ROW(name, fn) { #name, fn },
	BENCH_WORKLOADS(BENCH_WORKLOAD_ROW)
#undef BENCH_WORKLOAD_ROW
};

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	long arg = argc > 2 ? atol(argv[2]) : 0;

	if (!strcmp(what, "pair"))
		return bench_pair(arg ? arg : 50000000);
	if (!strcmp(what, "churn"))
		return bench_churn(arg ? (int)arg : 20);
	if (!strcmp(what, "prodcons"))
		return bench_prodcons(arg ? arg : 2000000);
	if (!strcmp(what, "threads"))
		return bench_threads(arg ? (int)arg : 64);
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (!strcmp(what, workloads[i].name))
			return workloads[i].fn(argc, argv);
	fprintf(stderr, "usage: alloc_bench pair|churn|prodcons|threads [N]\n"
		"       alloc_bench WORKLOAD ARGS... (WORKLOAD:");
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		fprintf(stderr, " %s", workloads[i].name);
	fprintf(stderr, ")\n");
	return 2;
}
