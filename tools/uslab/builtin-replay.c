// SPDX-License-Identifier: MIT
/*
 * uslab replay: run a trace for real, one thread per recorded thread, at
 * full speed, through whatever malloc the process has: glibc, or another
 * allocator preloaded by re-executing ourselves with LD_PRELOAD.
 *
 * Before the clock starts, the whole trace is decoded into one array of
 * 32-byte events per thread. Each object lifetime gets its own slot (the
 * trace reuses ids after a free; a reused id is a new object and must not
 * wait for the old one), and every event gets the sequence number it must
 * find on its slot: the k-th operation on a slot waits until done[slot] ==
 * k, then stores k + 1. Operations by the thread that allocated the object
 * pass straight through (one load, one compare, one store); an object freed
 * by another thread waits for its allocation. Every wait is for an event
 * earlier in the trace, so the earliest unfinished event can always run:
 * no deadlock.
 *
 * Latency: every 8th call of each thread is timed with rdtsc (about 25
 * cycles each side), converted with the TSC rate measured against
 * CLOCK_MONOTONIC over the run. Memory: one byte of every page of each
 * allocation is written, as a program would touch what it asked for
 * (--no-touch turns that off).
 *
 * Locks: none. done[] and ptr[] slots are handed between threads with
 * release stores and acquire loads; the start barrier is a pthread barrier.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "uslab/trace.h"
#include "lib/procfs.h"
#include "tools/uslab/builtin.h"

#define RP_SAMPLE_SHIFT	3		/* time one call in 8 */
#define RP_MAX_THREADS	4096u		/* as --threads allows */
#define RP_ENV_CHILD	"USLAB_REPLAY_CHILD"

struct rp_ev {
	uint64_t size;
	uint32_t id, old_id;
	uint32_t seq_id, seq_old;	/* done[] value each must find */
	uint8_t op;
	uint8_t align_shift;
	uint32_t repeat;		/* without ids: times more it runs */
};
static_assert(sizeof(struct rp_ev) == 32, "32 bytes an event");

struct rp_thread {
	pthread_t th;
	struct rp_ev *ev;
	size_t n, cap;
	uint32_t *lat;			/* sampled cycles */
	size_t nlat;
	uint64_t waits;			/* cross-thread waits that spun */
	struct replay *rp;
};

struct replay {
	struct rp_thread *t;
	unsigned int nthreads;
	uint64_t nslots;			/* object lifetimes: slots 1..nslots */
	_Atomic uint32_t *done;
	void *_Atomic *ptr;
	pthread_barrier_t start;
	bool touch;
	uint64_t ops[TRACE_OP_NR];
	uint64_t events;
	uint64_t records;		/* struct rp_ev held, all threads */
};

static inline uint64_t rdtsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Decoded events replay may hold: a quarter of physical memory or of the
 * address-space limit, at 32 bytes each. A few kilobytes of compressed
 * events can decode to hundreds of millions; past this the load stops with
 * the event's offset rather than the machine swapping. (Runs of events
 * without an object, free(NULL) or failed calls, take one record per run.)
 */
static uint64_t rp_event_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t mem = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 1ull << 31;
	struct rlimit rl;

	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < mem)
		mem = rl.rlim_cur;
	return mem / 4 / sizeof(struct rp_ev);
}

/* Append @e to its thread; a run of id-less events is one record. */
static int rp_push(struct replay *rp, struct rp_thread *t, const struct rp_ev *e)
{
	if (!e->id && !e->old_id && t->n) {
		struct rp_ev *last = &t->ev[t->n - 1];

		if (!last->id && !last->old_id && last->op == e->op && last->size == e->size &&
		    last->align_shift == e->align_shift && last->repeat < UINT32_MAX) {
			last->repeat++;
			return 0;
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct rp_ev *n = realloc(t->ev, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->ev = n;
		t->cap = cap;
	}
	t->ev[t->n++] = *e;
	rp->records++;
	return 0;
}

/* Slot of a trace id's current object; 0 (NULL) for an id never allocated. */
static uint32_t rp_slot(const struct hmap *map, uint64_t id)
{
	const uint64_t *v = hmap_find(map, id);

	return v ? (uint32_t)*v : 0;
}

/* Thread of @tid: dense in the order threads first appear, at most
 * RP_MAX_THREADS. Return: 0, -E2BIG (reported on @r), -ENOMEM. */
static int rp_thread_of(struct replay *rp, struct hmap *tids,
			struct trace_reader *r, uint32_t tid, unsigned int *idx)
{
	const uint64_t *v = hmap_find(tids, tid);
	struct rp_thread *n;

	if (likely(v)) {
		*idx = (unsigned int)*v;
		return 0;
	}
	if (rp->nthreads == RP_MAX_THREADS) {
		trace_reader_reject(r, TRACE_FIELD_TID, "thread %u is the %u-th: replay "
				    "runs one thread per recorded thread, at most %u; fold "
				    "them with --threads N", tid, RP_MAX_THREADS + 1,
				    RP_MAX_THREADS);
		return -E2BIG;
	}
	n = realloc(rp->t, (rp->nthreads + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	rp->t = n;
	memset(&n[rp->nthreads], 0, sizeof(*n));
	if (hmap_insert(tids, tid, rp->nthreads))
		return -ENOMEM;
	*idx = rp->nthreads++;
	return 0;
}

/*
 * Decode the trace into per-thread arrays with their sequence numbers.
 * Memory follows what the file holds, never what its trailer declares:
 * ids map to slots through a keyed table of the ids met, threads are the
 * ones met (at most RP_MAX_THREADS), and the decoded events stay under
 * rp_event_budget().
 */
static int rp_load(struct replay *rp, const char *path, unsigned int fold)
{
	struct trace_reader *r = NULL;
	struct trace_event ev;
	struct hmap map = { 0 }, tids = { 0 };	/* trace id -> slot; tid -> thread */
	uint32_t *seq = NULL;			/* by slot */
	uint64_t seq_cap = 0, budget = rp_event_budget();
	int rc;

	r = cmd_open_trace_as("uslab replay", path);
	if (!r) {
		rc = -EINVAL;
		goto out;
	}
	if (hmap_init(&map) || hmap_init(&tids))
		goto out_nomem;
	if (fold) {
		rp->nthreads = fold;
		rp->t = calloc(rp->nthreads, sizeof(*rp->t));
		if (!rp->t)
			goto out_nomem;
	}
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		struct rp_ev e = { 0 };
		unsigned int tid;
		bool in_place = ev.op == TRACE_OP_REALLOC && ev.id == ev.old_id;

		if (rp->records == budget) {
			rc = trace_reader_reject(r, TRACE_FIELD_OP, "more than %" PRIu64
						 " events to hold: replay decodes the whole trace "
						 "into memory first (32 bytes an event), and "
						 "that is a quarter of the memory it may use", budget);
			goto out_reject;
		}
		/* A slot per object lifetime; an id reused later gets a new one. */
		if (ev.op == TRACE_OP_REALLOC || trace_op_is_free(ev.op))
			e.old_id = ev.old_id || trace_op_is_free(ev.op) ?
				rp_slot(&map, trace_op_is_free(ev.op) ? ev.id : ev.old_id) : 0;
		if (ev.id && !trace_op_is_free(ev.op)) {
			if (in_place) {
				e.id = e.old_id;
			} else {
				uint64_t *v;

				if (rp->nslots + 1 >= UINT32_MAX) {
					rc = trace_reader_reject(r, TRACE_FIELD_ID,
								 "more than 2^32 objects");
					goto out_reject;
				}
				e.id = (uint32_t)++rp->nslots;
				v = hmap_find(&map, ev.id);
				if (v)
					*v = e.id;
				else if (hmap_insert(&map, ev.id, e.id))
					goto out_nomem;
			}
		}
		if (trace_op_is_free(ev.op)) {
			e.id = e.old_id;	/* frees name their object in id */
			e.old_id = 0;
		}
		if (rp->nslots >= seq_cap) {
			uint64_t cap = seq_cap ? 2 * seq_cap : 4096;
			uint32_t *n = realloc(seq, cap * sizeof(*n));

			if (!n)
				goto out_nomem;
			memset(n + seq_cap, 0, (cap - seq_cap) * sizeof(*n));
			seq = n;
			seq_cap = cap;
		}
		if (fold) {
			tid = ev.tid % fold;
		} else {
			rc = rp_thread_of(rp, &tids, r, ev.tid, &tid);
			if (rc == -E2BIG)
				goto out_reject;
			if (rc)
				goto out_nomem;
		}
		e.op = ev.op;
		e.size = ev.size;
		/* log2 of the alignment, rounded up as glibc rounds memalign's */
		if (ev.align > 1)
			e.align_shift = (uint8_t)(64 - __builtin_clzll(ev.align - 1));
		if (e.align_shift > 63)		/* above 2^63: fails, as it did */
			e.align_shift = 63;
		/* Ids 0 (NULL) need no ordering; the old side of realloc first. */
		if (e.old_id && e.old_id != e.id)
			e.seq_old = seq[e.old_id]++;
		if (e.id)
			e.seq_id = seq[e.id]++;
		if (rp_push(rp, &rp->t[tid], &e))
			goto out_nomem;
		if (ev.op < TRACE_OP_NR)
			rp->ops[ev.op]++;
		rp->events++;
	}
	if (rc < 0) {
out_reject:
		fprintf(stderr, "uslab replay: %s\n", trace_reader_error(r));
		rc = rc < 0 ? rc : -EPROTO;
		goto out;
	}
	rc = 0;
	goto out;
out_nomem:
	fprintf(stderr, "uslab replay: %s: out of memory decoding the trace\n", path);
	rc = -ENOMEM;
out:
	free(seq);
	hmap_destroy(&map);
	hmap_destroy(&tids);
	if (r)
		trace_reader_close(r);
	return rc;
}

static __always_inline void rp_wait(struct replay *rp, struct rp_thread *t,
				    uint32_t id, uint32_t want)
{
	unsigned int spins = 0;

	if (likely(atomic_load_explicit(&rp->done[id], memory_order_acquire) == want))
		return;
	t->waits++;
	while (atomic_load_explicit(&rp->done[id], memory_order_acquire) != want) {
		if (++spins < 256)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
}

static __always_inline void rp_touch(struct replay *rp, void *p, uint64_t size)
{
	char *c = p;
	uint64_t off;

	if (!rp->touch || !p)
		return;
	for (off = 0; off < size; off += 4096)
		((volatile char *)c)[off] = 1;
}

/* The process's malloc family (the preloaded allocator's). */
static const struct malloc_family rp_calls = {
	malloc, calloc, memalign, posix_memalign, aligned_alloc, valloc, pvalloc,
};

static __always_inline void *rp_alloc(const struct rp_ev *e)
{
	return trace_op_alloc(&rp_calls, e->op, e->size, e->align_shift);
}

/* One event. Return: the object now live under e->id, if any. */
static __always_inline void rp_do(struct replay *rp, const struct rp_ev *e)
{
	void *p;

	switch (e->op) {
	case TRACE_OP_FREE:
	case TRACE_OP_FREE_SIZED:
	case TRACE_OP_FREE_ALIGNED_SIZED:
	case TRACE_OP_KFREE:
	case TRACE_OP_CACHE_FREE:
		if (!e->id)
			return;
		p = atomic_load_explicit(&rp->ptr[e->id], memory_order_relaxed);
		free(p);
		atomic_store_explicit(&rp->ptr[e->id], NULL, memory_order_relaxed);
		return;
	case TRACE_OP_REALLOC: {
		void *old = e->old_id ?
			atomic_load_explicit(&rp->ptr[e->old_id], memory_order_relaxed) : NULL;

		if (!e->id && (e->size || !e->old_id))
			return;		/* failed in the recording: nothing changed */
		p = realloc(old, e->size);
		if (e->old_id && e->old_id != e->id)
			atomic_store_explicit(&rp->ptr[e->old_id], NULL, memory_order_relaxed);
		if (e->id) {
			rp_touch(rp, p, e->size);
			atomic_store_explicit(&rp->ptr[e->id], p, memory_order_relaxed);
		} else {
			free(p);	/* realloc(p, 0) may return a new block */
		}
		return;
	}
	default:
		if (!e->id)
			return;		/* the recorded call failed */
		p = rp_alloc(e);
		rp_touch(rp, p, e->size);
		atomic_store_explicit(&rp->ptr[e->id], p, memory_order_relaxed);
		return;
	}
}

static void *rp_thread_fn(void *arg)
{
	struct rp_thread *t = arg;
	struct replay *rp = t->rp;
	size_t i;

	pthread_barrier_wait(&rp->start);
	for (i = 0; i < t->n; i++) {
		const struct rp_ev *e = &t->ev[i];

		if (e->old_id && e->old_id != e->id)
			rp_wait(rp, t, e->old_id, e->seq_old);
		if (e->id)
			rp_wait(rp, t, e->id, e->seq_id);
		if (unlikely(!(i & ((1u << RP_SAMPLE_SHIFT) - 1)))) {
			uint64_t t0 = rdtsc(), d;

			rp_do(rp, e);
			d = rdtsc() - t0;
			t->lat[t->nlat++] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
		} else {
			rp_do(rp, e);
		}
		for (uint32_t k = e->repeat; unlikely(k); k--)
			rp_do(rp, e);	/* no object: nothing to order */
		if (e->old_id && e->old_id != e->id)
			atomic_store_explicit(&rp->done[e->old_id], e->seq_old + 1,
					      memory_order_release);
		if (e->id)
			atomic_store_explicit(&rp->done[e->id], e->seq_id + 1,
					      memory_order_release);
	}
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static const char *const rp_allocators[][2] = {
	{ "glibc", NULL },
	{ "jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2" },
	{ "tcmalloc", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4" },
	{ "mimalloc", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2" },
	{ "uslab", "libuslab.so" },	/* see rp_find_lib() */
};

/*
 * A library named without a path: next to the uslab binary (the build
 * tree: build/uslab, build/libuslab.so), else in ../lib beside its bin/
 * (an install: PREFIX/bin/uslab, PREFIX/lib/libuslab.so). Return: the path
 * in @buf (the installed one when neither exists, for the error message).
 */
static const char *rp_find_lib(const char *self, const char *lib, char *buf, size_t len)
{
	const char *slash = strrchr(self, '/');
	int dir = (int)(slash - self);

	snprintf(buf, len, "%.*s/%s", dir, self, lib);
	if (!access(buf, R_OK))
		return buf;
	snprintf(buf, len, "%.*s/../lib/%s", dir, self, lib);
	return buf;
}

/*
 * Re-execute ourselves with the allocator preloaded. The child sees
 * RP_ENV_CHILD and replays in place.
 */
static int rp_reexec(const char *name, const char *lib, char **argv)
{
	char self[4096], path[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		fprintf(stderr, "uslab replay: cannot find my own binary: %s\n", strerror(errno));
		return 1;
	}
	self[n] = '\0';
	if (lib && lib[0] != '/')
		lib = rp_find_lib(self, lib, path, sizeof(path));
	if (lib && access(lib, R_OK)) {
		fprintf(stderr, "uslab replay: allocator %s: %s: %s\n", name, lib, strerror(errno));
		return 1;
	}
	setenv(RP_ENV_CHILD, name, 1);
	if (lib)
		setenv("LD_PRELOAD", lib, 1);
	else
		unsetenv("LD_PRELOAD");
	execv(self, argv - 1);	/* argv[-1] is "uslab" */
	fprintf(stderr, "uslab replay: exec %s: %s\n", self, strerror(errno));
	return 1;
}

static const char rp_usage[] =
	"uslab replay TRACE [--allocator uslab|glibc|jemalloc|tcmalloc|mimalloc]\n"
	"                          [--threads-as-recorded | --threads N] [--no-touch]\n"
	"  Replays the trace for real, one thread per recorded thread, keeping\n"
	"  every object's alloc-before-free order across threads.";

static double timeval_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* --threads-as-recorded: no folding (opt->value: the fold count). */
static const char *rp_as_recorded(const struct cli_opt *opt, const char *arg)
{
	*(unsigned long *)opt->value = 0;
	return NULL;
}

int cmd_replay(int argc, char **argv)
{
	struct replay rp = { .touch = true };
	const char *alloc = "glibc", *child = getenv(RP_ENV_CHILD);
	unsigned long fold = 0;
	const struct cli_opt opts[] = {
		OPT_STRING('a', "allocator", &alloc, "NAME",
			   "uslab, glibc (default), jemalloc, tcmalloc or mimalloc"),
		OPT_CALLBACK(0, "threads-as-recorded", &fold, NULL,
			     "one thread per recorded thread (the default)", rp_as_recorded,
			     .flags = OPT_NOARG),
		OPT_ULONG('t', "threads", &fold, "N", "fold the recorded threads onto N threads",
			  1, RP_MAX_THREADS),
		OPT_BOOLEAN_OFF(0, "no-touch", &rp.touch,
				"do not write a byte of each page of every allocation"),
		OPT_PROC_SELECT(),
		OPT_END(),
	};
	struct rusage ru0, ru1;
	uint64_t t0, t1, c0, c1, waits = 0, nlat = 0;
	uint32_t *lat = NULL;
	double cyc_per_ns, wall;
	long rss0;
	unsigned int i;
	size_t k;
	int first, err = 1;

	first = parse_options(argc, argv, opts, rp_usage, PARSE_OPT_ONE_TRACE);
	if (first <= 0)
		return -first;
	for (i = 0; i < ARRAY_SIZE(rp_allocators); i++)
		if (!strcmp(alloc, rp_allocators[i][0]))
			break;
	if (i == ARRAY_SIZE(rp_allocators))
		return usage_error(opts, rp_usage, "unknown allocator '%s'", alloc);
	if (!child || strcmp(child, alloc))
		return rp_reexec(alloc, rp_allocators[i][1], argv);
	unsetenv(RP_ENV_CHILD);
	unsetenv("LD_PRELOAD");		/* not for anything we might start */

	if (rp_load(&rp, argv[first], (unsigned int)fold))
		goto out;
	/* Bookkeeping allocated and touched before the clock starts. */
	rp.done = calloc(rp.nslots + 1, sizeof(*rp.done));
	rp.ptr = calloc(rp.nslots + 1, sizeof(*rp.ptr));
	if (!rp.done || !rp.ptr)
		goto out_nomem;
	memset((void *)rp.done, 0, (rp.nslots + 1) * sizeof(*rp.done));
	memset((void *)rp.ptr, 0, (rp.nslots + 1) * sizeof(*rp.ptr));
	for (i = 0; i < rp.nthreads; i++) {
		struct rp_thread *t = &rp.t[i];

		t->rp = &rp;
		t->lat = malloc(((t->n >> RP_SAMPLE_SHIFT) + 1) * sizeof(*t->lat));
		if (!t->lat)
			goto out_nomem;
		memset(t->lat, 0, ((t->n >> RP_SAMPLE_SHIFT) + 1) * sizeof(*t->lat));
	}
	if (pthread_barrier_init(&rp.start, NULL, rp.nthreads + 1))
		goto out_nomem;
	for (i = 0; i < rp.nthreads; i++) {
		if (pthread_create(&rp.t[i].th, NULL, rp_thread_fn, &rp.t[i])) {
			fprintf(stderr, "uslab replay: cannot start thread %u of %u\n", i, rp.nthreads);
			exit(1);	/* threads wait on the barrier: no clean way back */
		}
	}
	/* What the set-up freed goes back before the run (every allocator has
	 * malloc_trim through glibc's name): the run's page faults and caches
	 * are its own, as a program's are from its start. */
	malloc_trim(0);
	rss0 = (long)(proc_rss_bytes() / 1024);
	getrusage(RUSAGE_SELF, &ru0);
	rp_stats_begin();	/* uslab with stats: counters before the run */
	t0 = mono_ns();
	c0 = rdtsc();
	pthread_barrier_wait(&rp.start);
	for (i = 0; i < rp.nthreads; i++)
		pthread_join(rp.t[i].th, NULL);
	rp_stats_snapshot();	/* before the replayer allocates again */
	c1 = rdtsc();
	t1 = mono_ns();
	getrusage(RUSAGE_SELF, &ru1);
	wall = (double)(t1 - t0) / 1e9;
	cyc_per_ns = t1 > t0 ? (double)(c1 - c0) / (double)(t1 - t0) : 1.0;

	for (i = 0; i < rp.nthreads; i++) {
		nlat += rp.t[i].nlat;
		waits += rp.t[i].waits;
	}
	lat = malloc((nlat ? nlat : 1) * sizeof(*lat));
	if (!lat)
		goto out_nomem;
	for (i = 0, k = 0; i < rp.nthreads; i++) {
		memcpy(lat + k, rp.t[i].lat, rp.t[i].nlat * sizeof(*lat));
		k += rp.t[i].nlat;
	}
	qsort(lat, nlat, sizeof(*lat), cmp_u32);

	printf("uslab replay: %s on %s\n", argv[first], alloc);
	{
		/* Say which object really serves malloc: proof the preload took. */
		Dl_info di;
		void *(*volatile m)(size_t) = malloc;

		if (dladdr((void *)m, &di) && di.dli_fname)
			printf("malloc from: %s\n", di.dli_fname);
	}
	printf("events: %" PRIu64 " (malloc %" PRIu64 ", free %" PRIu64 ", calloc %" PRIu64
	       ", realloc %" PRIu64 ", aligned %" PRIu64 ")\n",
	       rp.events, rp.ops[TRACE_OP_MALLOC] + rp.ops[TRACE_OP_KMALLOC] + rp.ops[TRACE_OP_CACHE_ALLOC],
	       rp.ops[TRACE_OP_FREE] + rp.ops[TRACE_OP_FREE_SIZED] + rp.ops[TRACE_OP_FREE_ALIGNED_SIZED] +
	       rp.ops[TRACE_OP_KFREE] + rp.ops[TRACE_OP_CACHE_FREE],
	       rp.ops[TRACE_OP_CALLOC], rp.ops[TRACE_OP_REALLOC],
	       rp.ops[TRACE_OP_MEMALIGN] + rp.ops[TRACE_OP_POSIX_MEMALIGN] +
	       rp.ops[TRACE_OP_ALIGNED_ALLOC] + rp.ops[TRACE_OP_VALLOC] + rp.ops[TRACE_OP_PVALLOC]);
	printf("threads: %u, cross-thread waits: %" PRIu64 "\n", rp.nthreads, waits);
	printf("wall time: %.6f s\n", wall);
	printf("throughput: %.1f ns per operation (wall / events), %.2f million events/s\n",
	       rp.events ? wall * 1e9 / (double)rp.events : 0.0,
	       wall > 0 ? (double)rp.events / wall / 1e6 : 0.0);
	if (nlat)
		printf("latency (1 call in %u timed, %" PRIu64 " samples): p50 %.0f ns, p99 %.0f ns, "
		       "p99.9 %.0f ns, max %.0f ns\n", 1u << RP_SAMPLE_SHIFT, nlat,
		       lat[nlat / 2] / cyc_per_ns, lat[nlat * 99 / 100] / cyc_per_ns,
		       lat[nlat * 999 / 1000] / cyc_per_ns, lat[nlat - 1] / cyc_per_ns);
	printf("peak RSS: %ld KiB (%ld KiB above the replayer's own %ld KiB at the start)\n",
	       ru1.ru_maxrss, ru1.ru_maxrss > rss0 ? ru1.ru_maxrss - rss0 : 0, rss0);
	printf("page faults: %ld minor, %ld major\n",
	       ru1.ru_minflt - ru0.ru_minflt, ru1.ru_majflt - ru0.ru_majflt);
	printf("CPU time: %.6f s user, %.6f s system (all threads, the run only)\n",
	       timeval_s(&ru1.ru_utime) - timeval_s(&ru0.ru_utime),
	       timeval_s(&ru1.ru_stime) - timeval_s(&ru0.ru_stime));
	rp_stats_end(stdout);
	err = 0;
	goto out;
out_nomem:
	fprintf(stderr, "uslab replay: out of memory for the bookkeeping\n");
out:
	free(lat);
	if (rp.t)
		for (i = 0; i < rp.nthreads; i++) {
			free(rp.t[i].ev);
			free(rp.t[i].lat);
		}
	free(rp.t);
	free((void *)rp.done);
	free((void *)rp.ptr);
	return err;
}
