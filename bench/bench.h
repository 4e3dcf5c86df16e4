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

/* bench/workloads.c */
int wl_study(int argc, char **argv);
int wl_mt(int argc, char **argv);
int wl_gmalloc(int argc, char **argv);
int wl_larson(int argc, char **argv);
int wl_rptest(int argc, char **argv);
int wl_xmalloc(int argc, char **argv);
int wl_alloc_test(int argc, char **argv);
int wl_glibc_thread(int argc, char **argv);
int wl_malloc_large(int argc, char **argv);
int wl_manythreads(int argc, char **argv);
int wl_rss_decay(int argc, char **argv);
int wl_small_rss(int argc, char **argv);

/* bench/shapes.c */
int wl_sh6bench(int argc, char **argv);
int wl_sh8bench(int argc, char **argv);
int wl_mleak(int argc, char **argv);
int wl_gmfill(int argc, char **argv);
int wl_rss_tax(int argc, char **argv);

/* bench/programs.c */
int wl_cfrac(int argc, char **argv);
int wl_espresso(int argc, char **argv);

#endif /* USLAB_BENCH_H */
