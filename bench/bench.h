/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the benchmark workloads (the .c files of bench/). Every workload is
 * a function `int wl_NAME(int argc, char **argv)` that prints one line of
 * key=value results; alloc_bench's main dispatches on the first argument.
 * The programs only call malloc and friends, so the allocator under test
 * is whichever one is preloaded.
 */
#ifndef USLAB_BENCH_H
#define USLAB_BENCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

double bench_now(void);		/* CLOCK_MONOTONIC seconds */
double bench_cpu_s(void);	/* user + system CPU seconds of the process */
long bench_peak_rss_kb(void);	/* getrusage ru_maxrss */
long bench_rss_kb(void);	/* /proc/self/statm resident */

/* xorshift64: deterministic per seed, never 0 */
static inline uint64_t bench_rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* uniform in [lo, hi] */
static inline size_t bench_uniform(uint64_t *s, size_t lo, size_t hi)
{
	return lo + (size_t)(bench_rng(s) % (hi - lo + 1));
}

/* [lo, hi] with a density falling linearly to 0 at hi (rpmalloc's study) */
size_t bench_linear_falloff(uint64_t *s, size_t lo, size_t hi);

/* Keep the compiler from seeing through a pointer. */
static inline void bench_escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* argv[i] as a number, or @def when absent */
long bench_arg(int argc, char **argv, int i, long def);

/* bench/workloads.c: the threaded workloads' helpers (every workload file) */
void *thread_args(int n, size_t size);
pthread_t *spawn(int n, void *(*fn)(void *), void *args, size_t argsz);
void join(pthread_t *t, int n);
double timed_threads(int n, void *(*fn)(void *), void *args, size_t argsz);
double stopped_threads(int n, void *(*fn)(void *), void *args, size_t argsz,
		       long secs, atomic_int *stop);
long sum_args(const void *args, int n, size_t argsz, size_t off);

/* The sum of long @field over the @n thread arguments at @args. */
#define SUM_ARGS(args, n, field)					\
	sum_args(args, n, sizeof(*(args)), offsetof(__typeof__(*(args)), field))

/*
 * The workloads alloc_bench runs by name, X(name, function), in the order
 * its usage lists them: bench/workloads.c's, then bench/programs.c's and
 * bench/shapes.c's.
 */
#define BENCH_WORKLOADS(X)						\
	X(study, wl_study) X(mt, wl_mt) X(gmalloc, wl_gmalloc)		\
	X(larson, wl_larson) X(larson_sized, wl_larson)			\
	X(rptest, wl_rptest) X(xmalloc, wl_xmalloc)			\
	X(alloc_test, wl_alloc_test) X(glibc_thread, wl_glibc_thread)	\
	X(malloc_large, wl_malloc_large) X(manythreads, wl_manythreads)	\
	X(rss_decay, wl_rss_decay) X(small_rss, wl_small_rss)		\
	X(cfrac, wl_cfrac) X(espresso, wl_espresso)			\
	X(sh6bench, wl_sh6bench) X(sh8bench, wl_sh8bench)		\
	X(mleak, wl_mleak) X(gmfill, wl_gmfill) X(rss_tax, wl_rss_tax)	\
	X(scratch, wl_scratch)

#define BENCH_WORKLOAD_DECLARE(name, fn) int fn(int argc, char **argv);
BENCH_WORKLOADS(BENCH_WORKLOAD_DECLARE)
#undef BENCH_WORKLOAD_DECLARE

#endif /* USLAB_BENCH_H */
