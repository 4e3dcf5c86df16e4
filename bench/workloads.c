// SPDX-License-Identifier: MIT
/*
 * Benchmark workloads of the shapes the seeds' studies and mimalloc-bench
 * use, written for uslab (no code of those projects is here). Each mirrors
 * one named benchmark and keeps its parameters as defaults; bench/run.sh
 * passes smaller counts in quick mode. docs/benchmarks.md lists which
 * workload mirrors what.
 *
 * The threaded workloads open alike: thread count from argv[2], their own
 * counts after it, one argument slot per thread (thread_args),
 * timed_threads or stopped_threads around the run; those whose threads
 * only take a count and a size bound share count_threads. What differs,
 * each one's parameters and loop, is the benchmark it mirrors.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

/* Zeroed room for @n threads' arguments (or handles), @size bytes each;
 * exit 1 without it: there is nothing to measure. (bench/shapes.c's
 * arrays use it too.) */
void *thread_args(int n, size_t size)
{
	void *a = calloc((size_t)n, size);

	if (!a)
		exit(1);
	return a;
}

pthread_t *spawn(int n, void *(*fn)(void *), void *args, size_t argsz)
{
	pthread_t *t = thread_args(n, sizeof(*t));

	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, (char *)args + (size_t)i * argsz)) {
			perror("pthread_create");
			exit(1);
		}
	return t;
}

void join(pthread_t *t, int n)
{
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
}

/* Wall seconds from starting @n threads of @fn (each given its @argsz
 * slice of @args) to joining the last. */
double timed_threads(int n, void *(*fn)(void *), void *args, size_t argsz)
{
	double t0 = bench_now();

	join(spawn(n, fn, args, argsz), n);
	return bench_now() - t0;
}

/* As timed_threads(), the threads told to stop (*@stop = 1) after @secs
 * seconds (a run of a benchmark that counts what it did in a time). */
double stopped_threads(int n, void *(*fn)(void *), void *args, size_t argsz,
		       long secs, atomic_int *stop)
{
	struct timespec ts = { (time_t)secs, 0 };
	double t0 = bench_now();
	pthread_t *th = spawn(n, fn, args, argsz);

	nanosleep(&ts, NULL);
	atomic_store(stop, 1);
	join(th, n);
	return bench_now() - t0;
}

/*
 * The arguments of the workloads whose threads each make a count of
 * operations on blocks of a bounded size (mt, alloc_test, manythreads).
 */
struct count_arg {
	long iters;		/* this thread's operations */
	long slots;		/* alloc_test: the blocks it keeps */
	size_t max;		/* largest block */
	int id;
};

/* Wall seconds of @t threads of @fn, each given @iters, @slots, @max and
 * its index. */
static double count_threads(int t, void *(*fn)(void *), long iters, long slots,
			    size_t max)
{
	struct count_arg *a = thread_args(t, sizeof(*a));
	double wall;

	for (int i = 0; i < t; i++)
		a[i] = (struct count_arg){ .iters = iters, .slots = slots, .max = max, .id = i };
	wall = timed_threads(t, fn, a, sizeof(*a));
	free(a);
	return wall;
}

/* The sum of the long at offset @off of the @n thread arguments at @args,
 * @argsz bytes each (SUM_ARGS). */
long sum_args(const void *args, int n, size_t argsz, size_t off)
{
	long sum = 0;

	for (int i = 0; i < n; i++)
		sum += *(const long *)((const char *)args + (size_t)i * argsz + off);
	return sum;
}

/*
 * rpmalloc's benchmark's own arguments, which study and rptest both take at
 * argv[3..7]: LOOPS BLOCKS OPS MIN MAX (each thread's BLOCKS blocks of
 * MIN..MAX bytes with a linear falloff, and OPS of them replaced LOOPS
 * times); @def where one is absent.
 */
struct rpm_args {
	long loops, blocks, ops;
	size_t min, max;
};

static struct rpm_args rpm_args(int argc, char **argv, struct rpm_args def)
{
	return (struct rpm_args){
		.loops = bench_arg(argc, argv, 3, def.loops),
		.blocks = bench_arg(argc, argv, 4, def.blocks),
		.ops = bench_arg(argc, argv, 5, def.ops),
		.min = (size_t)bench_arg(argc, argv, 6, (long)def.min),
		.max = (size_t)bench_arg(argc, argv, 7, (long)def.max),
	};
}

/* ------------------------------------------------------------------ */
/*
 * study T LOOPS [BLOCKS OPS MIN MAX]: seed 000's thread-cache study
 * (rpmalloc's `benchmark n 0 0 0 1000 150000 75000 16 16000`): every
 * thread allocates BLOCKS blocks of [MIN, MAX] bytes with a linear
 * falloff, then LOOPS times frees OPS of them in a scattered pattern and
 * allocates OPS again; no cross-thread frees. The study runs 1000 loops;
 * `make bench` fewer (the rate settles within a few).
 */
struct study_arg {
	struct rpm_args rpm;
	int id;
	size_t peak_req;
	long nops;
	size_t live;			/* requested bytes live now */
	struct study_sync *sync;	/* NULL: no samples (rss_decay) */
};

/*
 * The study's memory overhead is RSS against the bytes live at the same
 * moment: after the fill and after every loop's allocations, all threads
 * stop at a barrier, one of them adds up what every thread has live and
 * reads the RSS, and they go on. The sample with the highest RSS gives
 * the overhead: (RSS - RSS before the threads started - live) / live.
 */
struct study_sync {
	pthread_barrier_t stop, go;
	struct study_arg *args;
	int nthreads;
	long base_kb, rss_kb;
	size_t live;
};

static void study_sample(struct study_arg *a)
{
	struct study_sync *y = a->sync;

	if (!y)
		return;
	pthread_barrier_wait(&y->stop);
	if (a->id == 0) {
		long rss = bench_rss_kb();
		size_t live = 0;

		for (int i = 0; i < y->nthreads; i++)
			live += y->args[i].live;
		if (rss > y->rss_kb) {
			y->rss_kb = rss;
			y->live = live;
		}
	}
	pthread_barrier_wait(&y->go);
}

static void *study_thread(void *p)
{
	struct study_arg *a = p;
	uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(a->id + 1);
	void **blk = malloc((size_t)a->rpm.blocks * sizeof(void *));
	size_t *sz = malloc((size_t)a->rpm.blocks * sizeof(size_t));
	size_t live = 0, peak = 0;
	long nops = 0, stride = 7919;

	if (!blk || !sz)
		exit(1);
	for (long i = 0; i < a->rpm.blocks; i++) {
		sz[i] = bench_linear_falloff(&s, a->rpm.min, a->rpm.max);
		blk[i] = malloc(sz[i]);
		memset(blk[i], (int)i, sz[i]);	/* every byte: RSS means memory */
		live += sz[i];
	}
	nops += a->rpm.blocks;
	peak = live;
	a->live = live;
	study_sample(a);
	for (long l = 0; l < a->rpm.loops; l++) {
		long start = (long)(bench_rng(&s) % (uint64_t)a->rpm.blocks);

		/* scattered: a stride prime to the block count, from a random start */
		for (long k = 0; k < a->rpm.ops; k++) {
			long i = (start + k * stride) % a->rpm.blocks;

			free(blk[i]);
			live -= sz[i];
		}
		for (long k = 0; k < a->rpm.ops; k++) {
			long i = (start + k * stride) % a->rpm.blocks;

			sz[i] = bench_linear_falloff(&s, a->rpm.min, a->rpm.max);
			blk[i] = malloc(sz[i]);
			memset(blk[i], (int)l, sz[i]);
			live += sz[i];
		}
		if (live > peak)
			peak = live;
		a->live = live;
		study_sample(a);
		nops += 2 * a->rpm.ops;
	}
	for (long i = 0; i < a->rpm.blocks; i++)
		free(blk[i]);
	nops += a->rpm.blocks;
	free(blk);
	free(sz);
	a->peak_req = peak;
	a->nops = nops;
	return NULL;
}

int wl_study(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 1);
	struct study_arg *a = thread_args(t, sizeof(*a));
	struct study_sync y = { .args = a, .nthreads = t };
	size_t req = 0;
	long nops = 0;
	double c0, wall, cpu;
	struct rpm_args rpm = rpm_args(argc, argv, (struct rpm_args){ 1000, 150000, 75000, 16, 16000 });

	pthread_barrier_init(&y.stop, NULL, (unsigned int)t);
	pthread_barrier_init(&y.go, NULL, (unsigned int)t);
	for (int i = 0; i < t; i++) {
		a[i].rpm = rpm;
		a[i].id = i;
		a[i].sync = &y;
	}
	y.base_kb = bench_rss_kb();
	c0 = bench_cpu_s();
	wall = timed_threads(t, study_thread, a, sizeof(*a));
	cpu = bench_cpu_s() - c0;
	for (int i = 0; i < t; i++) {
		req += a[i].peak_req;
		nops += a[i].nops;
	}
	/* overhead_pct: at the sampled moment of highest RSS (see study_sync);
	 * req_kb, the sum of each thread's own peak, is kept for reference */
	printf("study_mops_cpu=%.3f study_mops=%.3f study_s=%.4f peak_rss_kb=%ld "
	       "req_kb=%zu live_kb=%zu rss_at_live_kb=%ld base_rss_kb=%ld overhead_pct=%.1f threads=%d\n",
	       (double)nops / cpu / 1e6, (double)nops / wall / 1e6, wall,
	       bench_peak_rss_kb(), req >> 10, y.live >> 10, y.rss_kb, y.base_kb,
	       100.0 * ((double)(y.rss_kb - y.base_kb) * 1024 - (double)y.live) / (double)y.live, t);
	pthread_barrier_destroy(&y.stop);
	pthread_barrier_destroy(&y.go);
	free(a);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * mt T ITERS MAXBYTES: seed 001's mtmalloc table (1,000,000 iterations,
 * sizes 0 .. 32K/64K/128K/256K, 2..32 threads): every thread frees the
 * oldest of its last 32 blocks and allocates a new one of a uniform size
 * in [0, MAXBYTES], touching its first byte; ITERS iterations split across
 * the threads. Reported: ns per iteration per thread.
 */
static void *mt_thread(void *p)
{
	struct count_arg *a = p;
	uint64_t s = 1234567ULL * (uint64_t)(a->id + 1);
	void *ring[32] = { 0 };

	for (long i = 0; i < a->iters; i++) {
		size_t sz = bench_uniform(&s, 0, a->max);
		char *q;

		free(ring[i & 31]);
		q = malloc(sz);
		if (sz)
			q[0] = (char)i;
		ring[i & 31] = q;
	}
	for (int i = 0; i < 32; i++)
		free(ring[i]);
	return NULL;
}

int wl_mt(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 2);
	long iters = bench_arg(argc, argv, 3, 1000000);
	size_t max = (size_t)bench_arg(argc, argv, 4, 32768);
	double wall = count_threads(t, mt_thread, iters / t, 0, max);

	printf("mt_ns=%.2f peak_rss_kb=%ld threads=%d\n",
	       wall * 1e9 / (double)(iters / t), bench_peak_rss_kb(), t);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * gmalloc seq|mt|mix TOTAL_MB [T]: seed 002's three runs. seq: one thread
 * allocates TOTAL_MB (3 GB in the seed) in blocks of 16..4096 bytes,
 * writing each, then frees them. mt: T threads (4) share TOTAL_MB, each
 * keeping at most half its share live (oldest freed first). mix: one
 * thread allocates TOTAL_MB in all with at most a quarter live, freeing
 * random victims ("something similar to a real application").
 */
struct gm_arg {
	size_t total, cap;
	int id, random_victims;
};

static void *gm_thread(void *p)
{
	struct gm_arg *a = p;
	uint64_t s = 777ULL * (uint64_t)(a->id + 1);
	size_t n = a->total / 16 + 1, cap = a->cap, done = 0, live = 0;
	size_t head = 0, tail = 0, cnt = 0;
	void **blk = malloc(n * sizeof(void *));
	unsigned short *bsz = malloc(n * sizeof(unsigned short));

	if (!blk || !bsz)
		exit(1);
	while (done < a->total) {
		size_t sz = bench_uniform(&s, 16, 4096);
		void *q = malloc(sz);

		memset(q, 0x5a, sz);
		while (cap && live + sz > cap && cnt) {
			size_t v;

			if (a->random_victims) {
				/* swap a random live block to the front, free it */
				size_t j = head + (size_t)(bench_rng(&s) % cnt);
				void *tp = blk[j % n];
				unsigned short ts = bsz[j % n];

				blk[j % n] = blk[head % n];
				bsz[j % n] = bsz[head % n];
				blk[head % n] = tp;
				bsz[head % n] = ts;
			}
			v = head++ % n;
			live -= bsz[v];
			free(blk[v]);
			cnt--;
		}
		blk[tail % n] = q;
		bsz[tail % n] = (unsigned short)sz;
		tail++;
		cnt++;
		live += sz;
		done += sz;
	}
	while (cnt--)
		free(blk[head++ % n]);
	free(blk);
	free(bsz);
	return NULL;
}

int wl_gmalloc(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "seq";
	size_t total = (size_t)bench_arg(argc, argv, 3, 3072) << 20;
	int t = 1;
	struct gm_arg *a;
	double wall;

	if (!strcmp(mode, "mt"))
		t = (int)bench_arg(argc, argv, 4, 4);
	a = thread_args(t, sizeof(*a));
	for (int i = 0; i < t; i++) {
		a[i].id = i;
		a[i].total = total / (size_t)t;
		if (!strcmp(mode, "mt"))
			a[i].cap = a[i].total / 2;
		else if (!strcmp(mode, "mix")) {
			a[i].cap = total / 4;
			a[i].random_victims = 1;
		}
	}
	wall = timed_threads(t, gm_thread, a, sizeof(*a));
	printf("gm_%s_s=%.4f peak_rss_kb=%ld\n", mode, wall, bench_peak_rss_kb());
	free(a);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * larson T SECONDS [MIN MAX CHUNKS ROUNDS]: mimalloc-bench's larson
 * (`larson 5 8 1000 5000 100 4141 T`: 5 s, 8..1000 bytes, 5000 chunks per
 * thread, 100 rounds): a thread replaces random chunks of its array with
 * new blocks; after ROUNDS x CHUNKS replacements it hands its array to a
 * new thread and exits, so blocks are freed by threads that did not
 * allocate them (a server's worker threads coming and going).
 *
 * larson_sized, same arguments: mimalloc-bench's larson-sized (the same
 * program built with sized delete): every free passes the block's size,
 * through the allocator's own sized free when it exports one (free_sized,
 * sdallocx, tc_free_sized, mi_free_size; glibc has none: free).
 */
typedef void (*sized_free_fn)(void *p, size_t size);

static sized_free_fn sized_free;

static void sdallocx_free(void *p, size_t size)
{
	static void (*fn)(void *, size_t, int);

	if (!fn)
		*(void **)&fn = dlsym(RTLD_DEFAULT, "sdallocx");
	fn(p, size, 0);
}

static void plain_free(void *p, size_t size)
{
	(void)size;
	free(p);
}

/* The preloaded allocator's sized free, its name in *@name. */
static sized_free_fn find_sized_free(const char **name)
{
	static const char *const names[] = { "free_sized", "tc_free_sized", "mi_free_size" };
	void *fn;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		fn = dlsym(RTLD_DEFAULT, names[i]);
		if (fn) {
			*name = names[i];
			return *(sized_free_fn *)&fn;
		}
	}
	if (dlsym(RTLD_DEFAULT, "sdallocx")) {
		*name = "sdallocx";
		return sdallocx_free;
	}
	*name = "free";
	return plain_free;
}

struct larson_slot {
	void **blk;
	size_t *size;		/* each block's size: larson_sized only */
	long chunks, rounds;
	size_t min, max;
	uint64_t seed;
	atomic_long *ops;
	atomic_int *stop;
};

static void *larson_thread(void *p)
{
	struct larson_slot *sl = p;
	uint64_t s = sl->seed;
	long n = 0;

	for (long r = 0; r < sl->rounds && !atomic_load_explicit(sl->stop, memory_order_relaxed); r++) {
		for (long c = 0; c < sl->chunks; c++) {
			long v = (long)(bench_rng(&s) % (uint64_t)sl->chunks);
			size_t sz = bench_uniform(&s, sl->min, sl->max);

			if (sl->size) {
				sized_free(sl->blk[v], sl->size[v]);
				sl->size[v] = sz;
			} else {
				free(sl->blk[v]);
			}
			sl->blk[v] = malloc(sz);
			*(char *)sl->blk[v] = 1;
		}
		n += sl->chunks;
	}
	atomic_fetch_add(sl->ops, n);
	sl->seed = s;
	return NULL;
}

/* One slot: a worker at a time; each successor takes over the array. */
static void *larson_slot_runner(void *p)
{
	struct larson_slot *sl = p;
	pthread_t w;

	while (!atomic_load(sl->stop)) {
		if (pthread_create(&w, NULL, larson_thread, sl))
			break;
		pthread_join(w, NULL);
	}
	return NULL;
}

int wl_larson(int argc, char **argv)
{
	int sized = !strcmp(argv[1], "larson_sized");
	const char *how = "free";
	int t = (int)bench_arg(argc, argv, 2, 2);
	long secs = bench_arg(argc, argv, 3, 5);
	long chunks = bench_arg(argc, argv, 6, 5000);
	struct larson_slot *sl = thread_args(t, sizeof(*sl));
	atomic_long ops = 0;
	atomic_int stop = 0;
	double wall, c0;

	if (sized)
		sized_free = find_sized_free(&how);
	for (int i = 0; i < t; i++) {
		uint64_t s = 4141ULL + (uint64_t)i;

		sl[i].chunks = chunks;
		sl[i].rounds = bench_arg(argc, argv, 7, 100);
		sl[i].min = (size_t)bench_arg(argc, argv, 4, 8);
		sl[i].max = (size_t)bench_arg(argc, argv, 5, 1000);
		sl[i].ops = &ops;
		sl[i].stop = &stop;
		sl[i].blk = malloc((size_t)chunks * sizeof(void *));
		sl[i].size = sized ? malloc((size_t)chunks * sizeof(size_t)) : NULL;
		for (long c = 0; c < chunks; c++) {
			size_t sz = bench_uniform(&s, sl[i].min, sl[i].max);

			sl[i].blk[c] = malloc(sz);
			if (sized)
				sl[i].size[c] = sz;
		}
		sl[i].seed = s;
	}
	c0 = bench_cpu_s();
	wall = stopped_threads(t, larson_slot_runner, sl, sizeof(*sl), secs, &stop);
	c0 = bench_cpu_s() - c0;
	for (int i = 0; i < t; i++) {
		for (long c = 0; c < chunks; c++)
			free(sl[i].blk[c]);
		free(sl[i].blk);
		free(sl[i].size);
	}
	printf("larson_mops=%.3f larson_mops_cpu=%.3f sized_free=%s peak_rss_kb=%ld threads=%d\n",
	       (double)atomic_load(&ops) / wall / 1e6, (double)atomic_load(&ops) / c0 / 1e6,
	       sized ? how : "-", bench_peak_rss_kb(), t);
	free(sl);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * rptest T [LOOPS BLOCKS OPS MIN MAX CROSS]: mimalloc-bench's rptest
 * (rpmalloc's benchmark, `rptest T 0 1 2 500 1000 100 8 16000`): every
 * thread holds BLOCKS blocks of [MIN, MAX] bytes (linear falloff), and
 * each of LOOPS loops replaces OPS of them; every CROSS loops it hands OPS
 * blocks to the next thread, which frees them (cross-thread frees).
 * The threads start their loops together (a barrier after their first
 * blocks). A box fills while its thread is off the CPU, to its cap (6400
 * blocks, ~40 MiB) under load: the peak RSS follows how full the boxes
 * got, which box_peak prints (the most blocks a box held).
 */
struct rp_box {
	pthread_mutex_t lock;
	void **items;
	long n, cap, peak;	/* peak: the most blocks it held at once */
};

struct rp_arg {
	struct rpm_args rpm;
	long cross;
	int id, nthreads;
	struct rp_box *boxes;
	pthread_barrier_t *start;
	long nops;
};

static void *rp_thread(void *p)
{
	struct rp_arg *a = p;
	uint64_t s = 99ULL * (uint64_t)(a->id + 1);
	void **blk = malloc((size_t)a->rpm.blocks * sizeof(void *));
	struct rp_box *mine = &a->boxes[a->id];
	struct rp_box *next = &a->boxes[(a->id + 1) % a->nthreads];
	long nops = 0;

	for (long i = 0; i < a->rpm.blocks; i++)
		blk[i] = malloc(bench_linear_falloff(&s, a->rpm.min, a->rpm.max));
	pthread_barrier_wait(a->start);
	for (long l = 0; l < a->rpm.loops; l++) {
		for (long k = 0; k < a->rpm.ops; k++) {
			long i = (long)(bench_rng(&s) % (uint64_t)a->rpm.blocks);

			free(blk[i]);
			blk[i] = malloc(bench_linear_falloff(&s, a->rpm.min, a->rpm.max));
			*(char *)blk[i] = 1;
		}
		nops += 2 * a->rpm.ops;
		/* free what others handed us */
		pthread_mutex_lock(&mine->lock);
		for (long k = 0; k < mine->n; k++)
			free(mine->items[k]);
		nops += mine->n;
		mine->n = 0;
		pthread_mutex_unlock(&mine->lock);
		if (a->cross && l % a->cross == 0 && a->nthreads > 1) {
			pthread_mutex_lock(&next->lock);
			for (long k = 0; k < a->rpm.ops && next->n < next->cap; k++) {
				long i = (long)(bench_rng(&s) % (uint64_t)a->rpm.blocks);

				next->items[next->n++] = blk[i];
				blk[i] = malloc(bench_linear_falloff(&s, a->rpm.min, a->rpm.max));
				nops++;
			}
			if (next->n > next->peak)
				next->peak = next->n;
			pthread_mutex_unlock(&next->lock);
		}
	}
	for (long i = 0; i < a->rpm.blocks; i++)
		free(blk[i]);
	free(blk);
	a->nops = nops;
	return NULL;
}

int wl_rptest(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 2);
	struct rp_arg *a = thread_args(t, sizeof(*a));
	struct rp_box *boxes = thread_args(t, sizeof(*boxes));
	long nops = 0, box_peak = 0;
	double wall;
	struct rpm_args rpm = rpm_args(argc, argv, (struct rpm_args){ 500, 1000, 100, 8, 16000 });
	pthread_barrier_t start;

	pthread_barrier_init(&start, NULL, (unsigned int)t);
	for (int i = 0; i < t; i++) {
		a[i].rpm = rpm;
		a[i].start = &start;
		a[i].cross = bench_arg(argc, argv, 8, 2);
		a[i].id = i;
		a[i].nthreads = t;
		a[i].boxes = boxes;
		pthread_mutex_init(&boxes[i].lock, NULL);
		boxes[i].cap = 64 * rpm.ops;
		boxes[i].items = malloc((size_t)boxes[i].cap * sizeof(void *));
	}
	wall = timed_threads(t, rp_thread, a, sizeof(*a));
	for (int i = 0; i < t; i++) {
		for (long k = 0; k < boxes[i].n; k++)
			free(boxes[i].items[k]);
		free(boxes[i].items);
		nops += a[i].nops;
		box_peak = boxes[i].peak > box_peak ? boxes[i].peak : box_peak;
	}
	printf("rptest_mops=%.3f peak_rss_kb=%ld threads=%d box_peak=%ld\n",
	       (double)nops / wall / 1e6, bench_peak_rss_kb(), t, box_peak);
	pthread_barrier_destroy(&start);
	free(a);
	free(boxes);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * xmalloc T SECONDS [MAXSIZE]: mimalloc-bench's xmalloc-test
 * (`xmalloc-test -w T -t 5 -s 64`): T producer threads allocate blocks of
 * 1..MAXSIZE bytes in batches of 256 and pass each batch to one of T
 * consumer threads, which free them; the rate of frees is reported.
 */
#define XM_BATCH 256
struct xm_batch {
	struct xm_batch *next;
	void *p[XM_BATCH];
};

struct xm_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct xm_batch *head;
	long depth;
};

struct xm_arg {
	struct xm_queue *q;
	size_t max;
	atomic_int *stop;
	long frees;
	int id;
};

static void *xm_producer(void *p)
{
	struct xm_arg *a = p;
	uint64_t s = 31ULL * (uint64_t)(a->id + 1);

	while (!atomic_load_explicit(a->stop, memory_order_relaxed)) {
		struct xm_batch *b = malloc(sizeof(*b));

		for (int i = 0; i < XM_BATCH; i++) {
			b->p[i] = malloc(bench_uniform(&s, 1, a->max));
			*(char *)b->p[i] = 1;
		}
		pthread_mutex_lock(&a->q->lock);
		/* bounded queue: wait while the consumer is far behind */
		while (a->q->depth > 64 && !atomic_load(a->stop))
			pthread_cond_wait(&a->q->cond, &a->q->lock);
		b->next = a->q->head;
		a->q->head = b;
		a->q->depth++;
		pthread_cond_broadcast(&a->q->cond);
		pthread_mutex_unlock(&a->q->lock);
	}
	return NULL;
}

static void *xm_consumer(void *p)
{
	struct xm_arg *a = p;
	long n = 0;

	for (;;) {
		struct xm_batch *b;

		pthread_mutex_lock(&a->q->lock);
		while (!a->q->head && !atomic_load(a->stop))
			pthread_cond_wait(&a->q->cond, &a->q->lock);
		b = a->q->head;
		if (b) {
			a->q->head = b->next;
			a->q->depth--;
			pthread_cond_broadcast(&a->q->cond);
		}
		pthread_mutex_unlock(&a->q->lock);
		if (!b)
			break;
		for (int i = 0; i < XM_BATCH; i++)
			free(b->p[i]);
		free(b);
		n += XM_BATCH;
	}
	a->frees = n;
	return NULL;
}

int wl_xmalloc(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 2);
	long secs = bench_arg(argc, argv, 3, 5);
	size_t max = (size_t)bench_arg(argc, argv, 4, 64);
	struct xm_queue *q = thread_args(t, sizeof(*q));
	struct xm_arg *pa = thread_args(t, sizeof(*pa));
	struct xm_arg *ca = thread_args(t, sizeof(*ca));
	struct timespec ts = { (time_t)secs, 0 };
	atomic_int stop = 0;
	pthread_t *pt, *ct;
	long frees;
	double t0, wall, c0 = bench_cpu_s();

	for (int i = 0; i < t; i++) {
		pthread_mutex_init(&q[i].lock, NULL);
		pthread_cond_init(&q[i].cond, NULL);
		pa[i] = (struct xm_arg){ .q = &q[i], .max = max, .stop = &stop, .id = i };
		ca[i] = pa[i];
	}
	t0 = bench_now();
	ct = spawn(t, xm_consumer, ca, sizeof(*ca));
	pt = spawn(t, xm_producer, pa, sizeof(*pa));
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < t; i++) {
		pthread_mutex_lock(&q[i].lock);
		pthread_cond_broadcast(&q[i].cond);
		pthread_mutex_unlock(&q[i].lock);
	}
	join(pt, t);
	for (int i = 0; i < t; i++) {
		pthread_mutex_lock(&q[i].lock);
		pthread_cond_broadcast(&q[i].cond);
		pthread_mutex_unlock(&q[i].lock);
	}
	join(ct, t);
	wall = bench_now() - t0;
	frees = SUM_ARGS(ca, t, frees);
	printf("xmalloc_mops=%.3f xmalloc_mops_cpu=%.3f peak_rss_kb=%ld threads=%d\n",
	       (double)frees / wall / 1e6, (double)frees / (bench_cpu_s() - c0) / 1e6,
	       bench_peak_rss_kb(), t);
	free(q);
	free(pa);
	free(ca);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * alloc_test T [ITERS SLOTS MAXSIZE]: mimalloc-bench's alloc-test
 * (alloc-test1 / alloc-testN): every thread keeps SLOTS (8192) random
 * slots and replaces a random one ITERS times with a block whose size is
 * log-uniform in [8, MAXSIZE] (most small, some up to 64 KiB), writing
 * its first bytes.
 */
static size_t log_uniform(uint64_t *s, size_t lo, size_t hi)
{
	unsigned int lb = 63 - (unsigned int)__builtin_clzl(lo);
	unsigned int hb = 63 - (unsigned int)__builtin_clzl(hi);
	unsigned int b = lb + (unsigned int)(bench_rng(s) % (hb - lb + 1));
	size_t base = (size_t)1 << b;
	size_t v = base + (size_t)(bench_rng(s) % base);

	return v > hi ? hi : v;
}

static void *at_thread(void *p)
{
	struct count_arg *a = p;
	uint64_t s = 555ULL * (uint64_t)(a->id + 1);
	void **slot = calloc((size_t)a->slots, sizeof(void *));

	for (long i = 0; i < a->iters; i++) {
		long k = (long)(bench_rng(&s) % (uint64_t)a->slots);
		size_t sz = log_uniform(&s, 8, a->max);

		free(slot[k]);
		slot[k] = malloc(sz);
		memset(slot[k], 1, sz < 16 ? sz : 16);
	}
	for (long k = 0; k < a->slots; k++)
		free(slot[k]);
	free(slot);
	return NULL;
}

int wl_alloc_test(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 1);
	long iters = bench_arg(argc, argv, 3, 10000000);
	long slots = bench_arg(argc, argv, 4, 8192);
	size_t max = (size_t)bench_arg(argc, argv, 5, 65536);
	double wall = count_threads(t, at_thread, iters / t, slots, max);

	printf("alloc_test_mops=%.3f peak_rss_kb=%ld threads=%d\n",
	       (double)(iters / t * t) / wall / 1e6, bench_peak_rss_kb(), t);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * glibc_thread T SECONDS: glibc's benchtests/bench-malloc-thread: every
 * thread frees and reallocates a random entry of a working set of 1024
 * blocks of 4..32768 bytes (log-uniform, so most are small) for SECONDS;
 * reported: iterations per second over all threads.
 */
struct gt_arg {
	atomic_int *stop;
	long iters;
	int id;
};

static void *gt_thread(void *p)
{
	struct gt_arg *a = p;
	uint64_t s = 1009ULL * (uint64_t)(a->id + 1);
	void *ws[1024] = { 0 };
	long n = 0;

	while (!atomic_load_explicit(a->stop, memory_order_relaxed)) {
		for (int k = 0; k < 1024; k++) {
			unsigned int i = (unsigned int)(bench_rng(&s) & 1023);

			free(ws[i]);
			ws[i] = malloc(log_uniform(&s, 4, 32768));
		}
		n += 1024;
	}
	for (int i = 0; i < 1024; i++)
		free(ws[i]);
	a->iters = n;
	return NULL;
}

int wl_glibc_thread(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 1);
	long secs = bench_arg(argc, argv, 3, 2);
	struct gt_arg *a = thread_args(t, sizeof(*a));
	atomic_int stop = 0;
	long iters;
	double wall, c0 = bench_cpu_s();

	for (int i = 0; i < t; i++)
		a[i] = (struct gt_arg){ .stop = &stop, .id = i };
	wall = stopped_threads(t, gt_thread, a, sizeof(*a), secs, &stop);
	iters = SUM_ARGS(a, t, iters);
	printf("glibc_thread_mops=%.3f glibc_thread_mops_cpu=%.3f peak_rss_kb=%ld threads=%d\n",
	       (double)iters / wall / 1e6, (double)iters / (bench_cpu_s() - c0) / 1e6,
	       bench_peak_rss_kb(), t);
	free(a);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * malloc_large ITERS: mimalloc-bench's malloc-large: 20 buffers; ITERS
 * times (2000) a random one is replaced by a new buffer of 5..25 MiB,
 * value-initialised (zeroed by the program, as make_unique<char[]> does).
 */
int wl_malloc_large(int argc, char **argv)
{
	long iters = bench_arg(argc, argv, 2, 2000);
	void *buf[20] = { 0 };
	uint64_t s = 42;
	double t0, wall;

	t0 = bench_now();
	for (long i = 0; i < iters; i++) {
		unsigned int k = (unsigned int)(bench_rng(&s) % 20);
		size_t sz = bench_uniform(&s, 5UL << 20, 25UL << 20);
		char *p = malloc(sz);

		memset(p, 0, sz);
		free(buf[k]);
		buf[k] = p;
	}
	for (int k = 0; k < 20; k++)
		free(buf[k]);
	wall = bench_now() - t0;
	printf("malloc_large_s=%.4f peak_rss_kb=%ld\n", wall, bench_peak_rss_kb());
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * manythreads T N: issue 13's oversubscription row: T threads (64) on the
 * machine's 2 CPUs, each allocating and freeing N blocks of 16..512 bytes
 * in batches of 64; reported: wall seconds.
 */
static void *many_thread(void *p)
{
	struct count_arg *a = p;
	uint64_t s = 4242ULL * (uint64_t)(a->id + 1);
	void *b[64];

	for (long i = 0; i < a->iters; i += 64) {
		for (int k = 0; k < 64; k++) {
			b[k] = malloc(bench_uniform(&s, 16, 512));
			*(char *)b[k] = 1;
		}
		for (int k = 0; k < 64; k++)
			free(b[k]);
	}
	return NULL;
}

int wl_manythreads(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 64);
	long n = bench_arg(argc, argv, 3, 200000);
	double wall = count_threads(t, many_thread, n, 0, 0);

	printf("many_s=%.4f peak_rss_kb=%ld threads=%d\n", wall, bench_peak_rss_kb(), t);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * rss_decay THREADS SECONDS: RSS over time after a burst (issue 13 item
 * 5): THREADS threads build the study's live set (150000 blocks of
 * 16..16000 bytes each) and free all of it; then the program idles and
 * samples its RSS every 250 ms for SECONDS. Reported: RSS at the peak,
 * right after the frees, and at each sample (rss_t<ms>_kb).
 */
static void *decay_thread(void *p)
{
	struct study_arg *a = p;

	a->rpm.loops = 0;
	return study_thread(a);
}

int wl_rss_decay(int argc, char **argv)
{
	int t = (int)bench_arg(argc, argv, 2, 1);
	long secs = bench_arg(argc, argv, 3, 5);
	struct study_arg *a = thread_args(t, sizeof(*a));
	struct timespec ts = { 0, 250000000L };

	for (int i = 0; i < t; i++)
		a[i] = (struct study_arg){
			.rpm = { .blocks = 150000, .min = 16, .max = 16000 }, .id = i,
		};
	join(spawn(t, decay_thread, a, sizeof(*a)), t);
	printf("peak_rss_kb=%ld rss_t0_kb=%ld", bench_peak_rss_kb(), bench_rss_kb());
	for (long ms = 250; ms <= secs * 1000; ms += 250) {
		nanosleep(&ts, NULL);
		printf(" rss_t%ld_kb=%ld", ms, bench_rss_kb());
	}
	printf("\n");
	free(a);
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * small_rss BYTES SIZE: issue 18, item 5: a small program's fixed cost.
 * Allocates BYTES (1 MiB) in blocks of SIZE (64), writes every byte, and
 * reports its peak RSS: the allocator's fixed cost (its code, static data,
 * metadata, first slabs) over the same live data on every allocator.
 */
int wl_small_rss(int argc, char **argv)
{
	long bytes = bench_arg(argc, argv, 2, 1 << 20);
	long size = bench_arg(argc, argv, 3, 64);
	long n = size > 0 ? bytes / size : 0;
	char **v = malloc((size_t)(n > 0 ? n : 1) * sizeof(*v));

	for (long i = 0; i < n; i++) {
		v[i] = malloc((size_t)size);
		memset(v[i], 1, (size_t)size);
	}
	printf("small_rss_kb=%ld peak_rss_kb=%ld\n", bench_peak_rss_kb(),
	       bench_peak_rss_kb());
	for (long i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return 0;
}
