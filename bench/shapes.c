// SPDX-License-Identifier: MIT
/*
 * More benchmark shapes of mimalloc-bench and the seeds, written for uslab
 * (no code of those projects is here; docs/benchmarks.md lists what each
 * mirrors and with which parameters):
 *
 *   sh6bench T [CALLS REPEATS MAXSIZE]   MicroQuill's sh6bench
 *   sh8bench T [ITERS HEAP FOREIGN]      MicroQuill's sh8bench
 *   mleak [ITER]                         mimalloc-bench's mleak
 *   gmfill T MB [MIN MAX]                seed 003's gmalloc run: MB of
 *                                        MIN..MAX-byte blocks, touched, freed
 *   rss_tax [KB]                         RSS of a program holding KB KiB
 *   scratch T [ROUNDS SIZE WRITES]       Hoard's cache-scratch
 *
 * Each prints one line of key=value results, CPU seconds (cpu_s) among
 * them: a loaded machine moves wall time more than CPU time. A workload
 * that finds its own data corrupted says so (bad=N) and exits 1. Threads
 * and zeroed arrays come from workloads.c's helpers (bench.h).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

static void *must_malloc(size_t size)
{
	char *p = malloc(size);

	if (!p) {
		fprintf(stderr, "alloc_bench: malloc(%zu) failed\n", size);
		exit(1);
	}
	/* mimalloc-bench's patch of both shbench programs: first and last byte */
	p[0] = 0;
	p[size - 1] = 0;
	return p;
}

/* ------------------------------------------------------------------ */
/*
 * The slot ring both shbench programs allocate into. Blocks fill the slots
 * in turn; one fifth of the slots (the kept window, which moves on by a
 * fifth each time round) keeps its blocks over the wrap. At the wrap the
 * slots below the window are freed in the order they were filled and those
 * above it in reverse order, so the allocator sees FIFO and LIFO frees of
 * many sizes with a fifth of the blocks living five times as long.
 * (The original skips the window only when it does not start at slot 0 and
 * then overwrites its blocks; here the window is always skipped.)
 */
struct ring {
	void **slot;
	long n, cur, keep_lo, keep_hi;
};

static void ring_init(struct ring *r, long n)
{
	r->slot = thread_args((int)n, sizeof(void *));
	r->n = n;
	r->cur = 0;
	r->keep_lo = r->keep_hi = n;	/* no window before the first wrap */
}

/* Free what the wrap frees and move the window on. */
static void ring_wrap(struct ring *r)
{
	long lo = r->keep_hi >= r->n ? 0 : r->keep_hi;
	long hi = lo + r->n / 5 < r->n ? lo + r->n / 5 : r->n;

	for (long i = 0; i < lo; i++) {
		free(r->slot[i]);
		r->slot[i] = NULL;
	}
	for (long i = r->n - 1; i >= hi; i--) {
		free(r->slot[i]);
		r->slot[i] = NULL;
	}
	r->keep_lo = lo;
	r->keep_hi = hi;
	r->cur = 0;
}

/* The next slot to fill (wrapping first when the ring is full); it is
 * always empty: the wrap emptied it or it was never filled. */
static void **ring_next(struct ring *r)
{
	if (r->cur == r->keep_lo && r->keep_lo < r->keep_hi)
		r->cur = r->keep_hi;
	if (r->cur >= r->n) {
		ring_wrap(r);
		if (r->cur == r->keep_lo && r->keep_lo < r->keep_hi)
			r->cur = r->keep_hi;
	}
	return &r->slot[r->cur++];
}

static void ring_free(struct ring *r)
{
	for (long i = 0; i < r->n; i++)
		free(r->slot[i]);
	free(r->slot);
}

/* ------------------------------------------------------------------ */
/*
 * sh6bench T [CALLS REPEATS MAXSIZE]: mimalloc-bench's sh6bench, run there
 * as `sh6bench 2*CPUs` with its patched call count of 10000 and block
 * sizes up to 1000. The call count is divided among the T threads; each
 * thread has CALLS/T slots and makes REPEATS (CALLS/T) passes. A pass
 * walks base sizes from 1 up (each the last times 3/2 plus 1) below
 * MAXSIZE and, for each base, sizes halving down to 1, allocating smaller
 * sizes more often: 250 blocks of a size below 100 bytes, 50 below 1000,
 * 10 below 10000. No block crosses threads.
 */
struct sh6_arg {
	long calls, repeats;
	int maxsize;
	long nallocs;
};

static void *sh6_thread(void *p)
{
	struct sh6_arg *a = p;
	struct ring r;
	long n = 0;

	ring_init(&r, a->calls);
	for (long rep = 0; rep < a->repeats; rep++)
		for (int base = 1; base < a->maxsize; base = base * 3 / 2 + 1)
			for (int size = base; size > 0; size /= 2) {
				int times = size < 100 ? 250 : size < 1000 ? 50 : size < 10000 ? 10 : 1;

				for (int k = 0; k < times; k++) {
					*ring_next(&r) = must_malloc((size_t)size);
				}
				n += times;
			}
	ring_free(&r);
	a->nallocs = n;
	return NULL;
}

int wl_sh6bench(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 2);
	long calls = bench_arg(argc, argv, 3, 10000) / t;
	struct sh6_arg *a = thread_args(t, sizeof(*a));
	double c0 = bench_cpu_s(), wall;

	for (int i = 0; i < t; i++) {
		a[i].calls = calls < 5 ? 5 : calls;
		a[i].repeats = bench_arg(argc, argv, 4, calls);
		a[i].maxsize = (int)bench_arg(argc, argv, 5, 1000);
	}
	wall = timed_threads(t, sh6_thread, a, sizeof(*a));
	printf("sh6_s=%.4f cpu_s=%.4f mallocs=%ld peak_rss_kb=%ld threads=%d\n",
	       wall, bench_cpu_s() - c0, SUM_ARGS(a, t, nallocs), bench_peak_rss_kb(), t);
	free(a);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * sh8bench T [ITERS HEAP FOREIGN]: mimalloc-bench's sh8bench, run there as
 * `sh8bench 2*CPUs` with 700,000 iterations, a heap of 1,000,000 blocks and
 * 10,000,000 foreign blocks, all divided among the T threads. Every
 * iteration a thread allocates the next entry of a fixed size histogram
 * (1000 blocks of 8 bytes, 5000 of 16, 1000 of 48, 100 of 72, 148 and 200,
 * 10 of 520, 5 of 1056, 3 of 4096, one each of 9162, 34562 and 168524)
 * into its ring of HEAP/T slots. Meanwhile the main thread allocates the
 * FOREIGN blocks, all of 8 bytes, each holding the address of its slot,
 * and publishes them in order; before each iteration a thread frees the
 * published blocks of its share (its chunk of each thread's region:
 * cross-thread frees spread over every allocating position). A thread
 * frees what is left of its share before it exits (the original leaves
 * it). FOREIGN defaults to the original's proportion: ITERS/0.07.
 */
static const struct {
	unsigned int size, count;
} sh8_hist[] = {
	{ 8, 1000 }, { 16, 5000 }, { 48, 1000 }, { 72, 100 }, { 148, 100 },
	{ 200, 100 }, { 520, 10 }, { 1056, 5 }, { 4096, 3 }, { 9162, 1 },
	{ 34562, 1 }, { 168524, 1 },
};
#define SH8_SIZES (sizeof(sh8_hist) / sizeof(sh8_hist[0]))

struct sh8_arg {
	long iters, heap;
	int id, nthreads;
	void *_Atomic *foreign;		/* FOREIGN slots, NULL until published */
	long region, chunk;		/* FOREIGN/T, FOREIGN/T^2 */
	long nallocs, nforeign, bad;
};

/* Free the published blocks of our share from *pos on; false when done. */
static int sh8_free_foreign(struct sh8_arg *a, long *pos, int wait)
{
	long share = a->region;		/* T chunks of FOREIGN/T^2 */

	while (*pos < share) {
		long r = *pos / a->chunk, k = *pos % a->chunk;
		void *_Atomic *slot = &a->foreign[r * a->region + (long)a->id * a->chunk + k];
		void **blk = atomic_load_explicit(slot, memory_order_acquire);

		if (!blk) {
			if (!wait)
				return 1;
			sched_yield();
			continue;
		}
		a->bad += *blk != (void *)slot;
		free(blk);
		a->nforeign++;
		(*pos)++;
	}
	return 0;
}

static void *sh8_thread(void *p)
{
	struct sh8_arg *a = p;
	struct ring r;
	long pos = 0;
	unsigned int size_i = 0;

	ring_init(&r, a->heap);
	for (long it = 0; it < a->iters; it++) {
		if (a->foreign)
			sh8_free_foreign(a, &pos, 0);
		size_i = (size_i + 1) % SH8_SIZES;
		for (unsigned int k = 0; k < sh8_hist[size_i].count; k++) {
			*ring_next(&r) = must_malloc(sh8_hist[size_i].size);
		}
		a->nallocs += sh8_hist[size_i].count;
	}
	if (a->foreign)
		sh8_free_foreign(a, &pos, 1);
	ring_free(&r);
	return NULL;
}

struct sh8_main {
	struct sh8_arg *a;
	int t;
	long foreign;
};

int wl_sh8bench(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 2);
	long iters = bench_arg(argc, argv, 3, 700000);
	long heap = bench_arg(argc, argv, 4, 1000000);
	long foreign = bench_arg(argc, argv, 5, (long)((double)iters / 0.07));
	long tt = (long)t * t;
	struct sh8_arg *a = thread_args(t, sizeof(*a));
	void *_Atomic *slots;
	pthread_t *th;
	long nallocs = 0, nforeign = 0, bad = 0;
	double c0 = bench_cpu_s(), t0;

	foreign = foreign / tt * tt;	/* a multiple of T^2, as the original */
	slots = foreign ? thread_args((int)foreign, sizeof(*slots)) : NULL;
	for (int i = 0; i < t; i++)
		a[i] = (struct sh8_arg){
			.iters = iters / t, .heap = heap / t < 5 ? 5 : heap / t,
			.id = i, .nthreads = t, .foreign = slots,
			.region = foreign / t, .chunk = foreign / tt,
		};
	t0 = bench_now();
	th = spawn(t, sh8_thread, a, sizeof(*a));
	for (long i = 0; i < foreign; i++) {
		void **blk = malloc(8);

		if (!blk)
			exit(1);
		*blk = (void *)&slots[i];
		atomic_store_explicit(&slots[i], (void *)blk, memory_order_release);
	}
	join(th, t);
	t0 = bench_now() - t0;
	for (int i = 0; i < t; i++) {
		nallocs += a[i].nallocs;
		nforeign += a[i].nforeign;
		bad += a[i].bad;
	}
	printf("sh8_s=%.4f cpu_s=%.4f mallocs=%ld foreign_frees=%ld bad=%ld peak_rss_kb=%ld threads=%d\n",
	       t0, bench_cpu_s() - c0, nallocs + foreign, nforeign, bad, bench_peak_rss_kb(), t);
	free((void *)slots);
	free(a);
	return bad || nforeign != foreign;
}

/* ------------------------------------------------------------------ */
/*
 * mleak [ITER]: mimalloc-bench's mleak (`mleak 5` and `mleak 50`): ITER*100
 * rounds; each starts 10 threads that each calloc one block of 16 words,
 * swap it into a random one of 1000 shared slots and free what was there,
 * and exit. Allocators that keep a heap per thread can leak or hold memory
 * here; reported: CPU and wall time, RSS at the end and at the peak.
 */
#define MLEAK_THREADS 10
#define MLEAK_SLOTS (MLEAK_THREADS * 100)

static void *_Atomic mleak_slot[MLEAK_SLOTS];

struct mleak_arg {
	uint64_t seed;
};

static void *mleak_thread(void *p)
{
	struct mleak_arg *a = p;
	uint64_t s = a->seed;
	long *blk = calloc(16, sizeof(void *));
	void *old;

	if (!blk)
		exit(1);
	blk[0] = (long)a->seed;
	old = atomic_exchange(&mleak_slot[bench_rng(&s) % MLEAK_SLOTS], (void *)blk);
	free(old);
	return NULL;
}

int wl_mleak(int argc, char **argv)
{
	long rounds = bench_arg(argc, argv, 2, 10) * 100;
	struct mleak_arg a[MLEAK_THREADS];
	double c0 = bench_cpu_s(), t0 = bench_now(), wall;
	long end_kb, held = 0;

	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < MLEAK_THREADS; i++)
			a[i].seed = 0x1ce4e5b9ULL + (uint64_t)(r * MLEAK_THREADS + i) * 0x9e3779b97f4a7c15ULL;
		timed_threads(MLEAK_THREADS, mleak_thread, a, sizeof(a[0]));
	}
	wall = bench_now() - t0;
	end_kb = bench_rss_kb();
	for (int i = 0; i < MLEAK_SLOTS; i++) {
		void *p = atomic_exchange(&mleak_slot[i], NULL);

		held += p != NULL;
		free(p);
	}
	printf("mleak_s=%.4f cpu_s=%.4f threads_run=%ld held=%ld end_rss_kb=%ld peak_rss_kb=%ld\n",
	       wall, bench_cpu_s() - c0, rounds * MLEAK_THREADS, held, end_kb, bench_peak_rss_kb());
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * gmfill T MB [MIN MAX]: seed 003's gmalloc runs as issue 18 states them:
 * MB MiB (3 GB in the seed) of blocks of MIN..MAX bytes (16..512, uniform)
 * allocated, then every block touched (memset), then every block freed;
 * T threads each do their share. Reported: wall and CPU seconds, peak RSS.
 */
struct gmf_arg {
	size_t bytes, min, max;
	int id;
	long blocks;
};

static void *gmf_thread(void *p)
{
	struct gmf_arg *a = p;
	uint64_t s = 3003ULL * (uint64_t)(a->id + 1);
	/* room for a quarter more blocks than the mean size gives */
	size_t cap = a->bytes / ((a->min + a->max) / 2) / 4 * 5 + 1024, n = 0, done = 0;
	void **blk = malloc(cap * sizeof(void *));
	unsigned short *sz = malloc(cap * sizeof(unsigned short));

	if (!blk || !sz)
		exit(1);
	while (done < a->bytes && n < cap) {
		size_t b = bench_uniform(&s, a->min, a->max);

		blk[n] = malloc(b);
		if (!blk[n])
			exit(1);
		sz[n++] = (unsigned short)b;
		done += b;
	}
	for (size_t i = 0; i < n; i++)
		memset(blk[i], (int)i, sz[i]);
	for (size_t i = 0; i < n; i++)
		free(blk[i]);
	free(blk);
	free(sz);
	a->blocks = (long)n;
	return NULL;
}

int wl_gmfill(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 1);
	size_t total = (size_t)bench_arg(argc, argv, 3, 3072) << 20;
	size_t min = (size_t)bench_arg(argc, argv, 4, 16);
	size_t max = (size_t)bench_arg(argc, argv, 5, 512);
	struct gmf_arg *a = thread_args(t, sizeof(*a));
	double c0 = bench_cpu_s(), wall;

	if (max < min || max > 65535) {
		fprintf(stderr, "alloc_bench gmfill: sizes %zu..%zu: need MIN <= MAX <= 65535\n",
			min, max);
		exit(2);
	}
	for (int i = 0; i < t; i++)
		a[i] = (struct gmf_arg){ .bytes = total / (size_t)t, .min = min, .max = max, .id = i };
	wall = timed_threads(t, gmf_thread, a, sizeof(*a));
	printf("gmfill_s=%.4f cpu_s=%.4f blocks=%ld peak_rss_kb=%ld threads=%d\n",
	       wall, bench_cpu_s() - c0, SUM_ARGS(a, t, blocks), bench_peak_rss_kb(), t);
	free(a);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * rss_tax [KB]: what a small program pays: it allocates KB KiB (1024) in
 * blocks of 16..1024 bytes (cycling by 16), writes every byte, and reports
 * its RSS while they are live. `make bench` subtracts glibc's.
 */
int wl_rss_tax(int argc, char **argv)
{
	size_t want = (size_t)bench_arg(argc, argv, 2, 1024) << 10, done = 0;
	size_t cap = want / 16 + 1, n = 0, size = 16;
	void **blk = thread_args((int)cap, sizeof(void *));
	long before = bench_rss_kb(), live;

	while (done < want && n < cap) {
		blk[n] = malloc(size);
		if (!blk[n])
			exit(1);
		memset(blk[n++], 1, size);
		done += size;
		size = size >= 1024 ? 16 : size + 16;
	}
	live = bench_rss_kb();
	for (size_t i = 0; i < n; i++)
		free(blk[i]);
	free(blk);
	printf("rss_kb=%ld rss_before_kb=%ld requested_kb=%zu blocks=%zu peak_rss_kb=%ld\n",
	       live, before, done >> 10, n, bench_peak_rss_kb());
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * scratch T [ROUNDS SIZE WRITES]: Hoard's cache-scratch, which
 * mimalloc-bench runs with 1 and N threads, 1000 rounds, 1-byte objects
 * and 2,000,000 repetitions: passive false sharing. The main thread allocates one SIZE-byte
 * block per thread (neighbours, likely in one cache line) and hands each
 * to its thread, which frees it; then each thread, ROUNDS times, allocates
 * a SIZE-byte block, writes and reads every byte WRITES/T times, and frees
 * it. An allocator that gives a thread back the block another thread's
 * neighbour shares a line with makes the threads fight over that line.
 */
struct scratch_arg {
	char *given;
	long rounds, writes;
	size_t size;
	long written;	/* bytes written, the work's own count */
};

static void *scratch_thread(void *p)
{
	struct scratch_arg *a = p;

	free(a->given);
	for (long i = 0; i < a->rounds; i++) {
		volatile char *b = must_malloc(a->size);

		for (long w = 0; w < a->writes; w++)
			for (size_t k = 0; k < a->size; k++) {
				b[k] = (char)k;
				(void)b[k];
			}
		a->written += a->writes * (long)a->size;
		free((void *)b);
	}
	return NULL;
}

int wl_scratch(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 2);
	long rounds = bench_arg(argc, argv, 3, 1000);
	size_t size = (size_t)bench_arg(argc, argv, 4, 1);
	long writes = bench_arg(argc, argv, 5, 2000000);
	struct scratch_arg *a = thread_args(t, sizeof(*a));
	double c0 = bench_cpu_s(), wall;

	for (int i = 0; i < t; i++)
		a[i] = (struct scratch_arg){ .given = must_malloc(size ? size : 1),
					     .rounds = rounds, .size = size ? size : 1,
					     .writes = writes / t };
	wall = timed_threads(t, scratch_thread, a, sizeof(*a));
	printf("scratch_s=%.4f cpu_s=%.4f written=%ld peak_rss_kb=%ld threads=%d\n", wall,
	       bench_cpu_s() - c0, SUM_ARGS(a, t, written), bench_peak_rss_kb(), t);
	free(a);
	return 0;
}
