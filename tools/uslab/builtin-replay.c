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
 * CLOCK_MONOTONIC over the run. Memory: by default the first cache line
 * of each allocation and one byte of every further page it spans are
 * written, as a program writes what it asked for (--touch=all|first|none).
 * The replayer's own structures (decoded events, slots, latency samples,
 * the thread table) come from mmap, never from the allocator under test,
 * so the resident memory above the start is the allocator's alone and
 * compares across allocators. The main thread samples the resident set
 * every 2 ms while the workers run (mean RSS); the peak is the kernel's
 * high-water mark, reset just before the run.
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
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
	int64_t *live;			/* --timeline: live bytes this thread's
					 * events 0..i changed, summed (by record) */
	_Atomic size_t pos;		/* --timeline: records done (every 8th) */
	uint64_t failed;		/* allocations the recording made that
					 * failed here; the first one's record: */
	const struct rp_ev *first_failed;
};

enum rp_touch { RP_TOUCH_NONE, RP_TOUCH_FIRST, RP_TOUCH_ALL };

/*
 * The replayer's own memory: anonymous mappings, never the allocator under
 * test (whose resident set the run measures). rp_map() zeroed, rp_remap()
 * grows keeping the contents, rp_unmap() gives back. NULL on failure.
 */
/*
 * Live bytes of a trace, whose sizes are input: no block is larger than
 * RP_SIZE_MAX (a forged size counts as that), and the sums saturate
 * rather than wrap (make check's fuzzer: a signed overflow).
 */
#define RP_SIZE_MAX	(1ULL << 62)

static int64_t rp_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static uint64_t rp_live_add(uint64_t live, int64_t d)
{
	if (d < 0)
		return (uint64_t)-d > live ? 0 : live - (uint64_t)-d;
	return live > UINT64_MAX - (uint64_t)d ? UINT64_MAX : live + (uint64_t)d;
}

static size_t rp_pagelen(size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (len + pg - 1) / pg * pg;
}

static void *rp_map(size_t len)
{
	void *p = mmap(NULL, rp_pagelen(len ? len : 1), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void *rp_remap(void *old, size_t old_len, size_t len)
{
	void *p;

	if (!old)
		return rp_map(len);
	p = mremap(old, rp_pagelen(old_len ? old_len : 1), rp_pagelen(len), MREMAP_MAYMOVE);
	return p == MAP_FAILED ? NULL : p;
}

static void rp_unmap(void *p, size_t len)
{
	if (p)
		munmap(p, rp_pagelen(len ? len : 1));
}

struct replay {
	struct rp_thread *t;
	unsigned int nthreads;
	uint64_t nslots;			/* object lifetimes: slots 1..nslots */
	_Atomic uint32_t *done;
	void *_Atomic *ptr;
	pthread_barrier_t start;
	int touch;			/* enum rp_touch */
	_Atomic unsigned int finished;	/* threads done: the sampler stops */
	uint64_t ops[TRACE_OP_NR];
	uint64_t events;
	uint64_t records;		/* struct rp_ev held, all threads */
	uint32_t ncaches;		/* the trace's named caches (format 1.2) */
	bool timeline;			/* --timeline: live bytes kept by record */
	uint64_t peak_live;		/* live bytes at most, in the trace's order */
	uint64_t peak_event;		/* the event that reached it */
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
		size_t cap = t->cap ? 2 * t->cap : 128;
		struct rp_ev *n = rp_remap(t->ev, t->cap * sizeof(*n), cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->ev = n;
		if (rp->timeline) {
			int64_t *l = rp_remap(t->live, t->cap * sizeof(*l), cap * sizeof(*l));

			if (!l)
				return -ENOMEM;
			t->live = l;
		}
		t->cap = cap;
	}
	if (rp->timeline)	/* the thread's running sum; the delta is added below */
		t->live[t->n] = t->n ? t->live[t->n - 1] : 0;
	t->ev[t->n++] = *e;
	rp->records++;
	return 0;
}

/* Thread of @tid: dense in the order threads first appear, at most
 * RP_MAX_THREADS. Return: 0, -E2BIG (reported on @r), -ENOMEM. */
static int rp_thread_of(struct replay *rp, struct hmap *tids,
			struct trace_reader *r, uint32_t tid, unsigned int *idx)
{
	const uint64_t *v = hmap_find(tids, tid);

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
	/* rp->t has RP_MAX_THREADS entries, mapped (zeroed) by rp_load() */
	if (hmap_insert(tids, tid, rp->nthreads))
		return -ENOMEM;
	*idx = rp->nthreads++;
	return 0;
}

/* Room in the per-slot sequence counters for slots up to @nslots. */
static int rp_seq_room(uint32_t **seq, uint64_t *cap, uint64_t nslots)
{
	uint64_t new_cap;
	uint32_t *n;

	if (nslots < *cap)
		return 0;
	new_cap = *cap ? 2 * *cap : 4096;
	n = rp_remap(*seq, *cap * sizeof(*n), new_cap * sizeof(*n));	/* zero-filled */
	if (!n)
		return -ENOMEM;
	*seq = n;
	*cap = new_cap;
	return 0;
}

/*
 * Decode the trace into per-thread arrays with their sequence numbers.
 * The events come from the shared decoder (trace/decode.c), one slot per
 * object lifetime; memory follows what the file holds, never what its
 * trailer declares: threads are the ones met (at most RP_MAX_THREADS), and
 * the records held stay under trace_event_budget().
 */
static int rp_load(struct replay *rp, const char *path, unsigned int fold)
{
	struct trace_reader *r = NULL;
	struct trace_decoder dec = { 0 };	/* trace id -> slot */
	struct trace_dense_ev ev;
	struct hmap tids = { 0 };		/* tid -> thread */
	uint32_t *seq = NULL;			/* by slot */
	uint64_t *ssize = NULL, ssize_cap = 0;	/* --timeline: bytes by slot */
	uint64_t seq_cap = 0, budget = trace_event_budget(sizeof(struct rp_ev));
	uint64_t live = 0;
	int rc;

	r = cmd_open_trace_as("uslab replay", path);
	if (!r) {
		rc = -EINVAL;
		goto out;
	}
	hmap_init(&tids);
	trace_decoder_init(&dec, r, TRACE_DENSE_BY_LIFETIME, 1);
	rp->t = rp_map(RP_MAX_THREADS * sizeof(*rp->t));	/* touched as used */
	if (!rp->t)
		goto out_nomem;
	if (fold)
		rp->nthreads = fold;
	while ((rc = trace_decode_next(&dec, &ev)) == 1) {
		struct rp_ev e = { 0 };
		unsigned int tid;

		if (rp->records == budget) {
			rc = trace_decoder_over_budget(&dec, budget, "replay");
			goto out_reject;
		}
		rp->nslots = dec.id_space - 1;
		if (rp_seq_room(&seq, &seq_cap, rp->nslots))
			goto out_nomem;
		e.id = ev.id;
		if (ev.op == TRACE_OP_REALLOC)	/* a cache alloc's union is its cache */
			e.old_id = ev.old_id;
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
		e.align_shift = ev.align_shift;
		/* Ids 0 (NULL) need no ordering; the old side of realloc first. */
		if (e.old_id && e.old_id != e.id)
			e.seq_old = seq[e.old_id]++;
		if (e.id)
			e.seq_id = seq[e.id]++;
		if (rp_push(rp, &rp->t[tid], &e))
			goto out_nomem;
		{
			/* live bytes in the trace's own order: a free takes back
			 * what its slot holds, wherever it was allocated (the
			 * peak for rp_fits(), each record's change for
			 * --timeline) */
			struct rp_thread *t = &rp->t[tid];
			int64_t d = 0;

			while (rp->nslots >= ssize_cap) {
				uint64_t nc = ssize_cap ? 2 * ssize_cap : 4096;
				uint64_t *n = rp_remap(ssize, ssize_cap * sizeof(*n), nc * sizeof(*n));

				if (!n)
					goto out_nomem;
				ssize = n;
				ssize_cap = nc;
			}
			if (trace_op_is_free(ev.op)) {
				d = -(int64_t)ssize[e.id];
				ssize[e.id] = 0;
			} else {
				if (ev.op == TRACE_OP_REALLOC && e.old_id) {
					d -= (int64_t)ssize[e.old_id];
					ssize[e.old_id] = 0;
				}
				if (e.id) {
					/* no block above 2^62 bytes exists: a
					 * size past it (a forged trace) counts
					 * as that, so d stays in range */
					ssize[e.id] = min_t(uint64_t, ev.size, RP_SIZE_MAX);
					d += (int64_t)ssize[e.id];
				}
			}
			live = rp_live_add(live, d);
			if (live > rp->peak_live) {
				rp->peak_live = live;
				rp->peak_event = rp->events;
			}
			if (rp->timeline)
				t->live[t->n - 1] = rp_sat_add(t->live[t->n - 1], d);
		}
		if (ev.op < TRACE_OP_NR)
			rp->ops[ev.op]++;
		rp->events++;
	}
	if (rc == -ENOMEM)
		goto out_nomem;
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
	rp_unmap(seq, seq_cap * sizeof(*seq));
	rp_unmap(ssize, ssize_cap * sizeof(*ssize));
	trace_decoder_destroy(&dec);
	hmap_destroy(&tids);
	if (r) {
		rp->ncaches = trace_reader_meta(r)->ncaches;
		trace_reader_close(r);
	}
	return rc;
}

/* Everything rp_load() and rp_prepare() mapped, given back. */
static void rp_free(struct replay *rp)
{
	if (rp->t)
		for (unsigned int i = 0; i < rp->nthreads; i++) {
			rp_unmap(rp->t[i].ev, rp->t[i].cap * sizeof(*rp->t[i].ev));
			rp_unmap(rp->t[i].live, rp->t[i].cap * sizeof(*rp->t[i].live));
			if (rp->t[i].lat)
				rp_unmap(rp->t[i].lat, ((rp->t[i].n >> RP_SAMPLE_SHIFT) + 1) *
					 sizeof(*rp->t[i].lat));
		}
	rp_unmap(rp->t, RP_MAX_THREADS * sizeof(*rp->t));
	if (rp->done)
		rp_unmap((void *)rp->done, (rp->nslots + 1) * sizeof(*rp->done));
	if (rp->ptr)
		rp_unmap((void *)rp->ptr, (rp->nslots + 1) * sizeof(*rp->ptr));
	rp->t = NULL;
	rp->done = NULL;
	rp->ptr = NULL;
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

/*
 * What the program does with a block it is handed (--touch): first (the
 * default), its first cache line and one byte of each further page it
 * spans, as a program initialises a header and writes where it uses;
 * all, every byte; none.
 */
static __always_inline void rp_touch(struct replay *rp, void *p, uint64_t size)
{
	char *c = p;
	uint64_t off;

	if (!p || !size)
		return;
	switch (rp->touch) {
	case RP_TOUCH_FIRST:
		memset(c, 1, size < 64 ? size : 64);
		off = ((uintptr_t)c | 4095) + 1 - (uintptr_t)c;	/* next page */
		for (; off < size; off += 4096)
			((volatile char *)c)[off] = 1;
		return;
	case RP_TOUCH_ALL:
		memset(c, 1, size);
		return;
	}
}

/*
 * The process's malloc family: the preloaded allocator's own calls. A call
 * the allocator does not define would resolve to the C library's, whose
 * blocks the allocator's free() then takes (jemalloc 5.3 has no pvalloc:
 * replay -a jemalloc died of SIGSEGV); rp_own_family() puts in its place
 * the same request made of the allocator's own aligned call (rp_aligned).
 */
static struct malloc_family rp_calls = {
	malloc, calloc, memalign, posix_memalign, aligned_alloc, valloc, pvalloc,
};
static int (*rp_aligned)(void **p, size_t align, size_t size);
static size_t rp_page;

static int rp_pm_memalign(void **p, size_t align, size_t size)
{
	void *q = memalign(align, size);

	if (!q)
		return ENOMEM;
	*p = q;
	return 0;
}

static int rp_pm_aligned_alloc(void **p, size_t align, size_t size)
{
	size_t n = size + align - 1;
	void *q = n < size ? NULL : aligned_alloc(align, n & ~(align - 1));

	if (!q)
		return ENOMEM;
	*p = q;
	return 0;
}

static void *rp_own_aligned(size_t align, size_t size)
{
	void *p;

	if (align < sizeof(void *))
		align = sizeof(void *);
	return rp_aligned(&p, align, size) ? NULL : p;
}

static int rp_posix_memalign(void **p, size_t align, size_t size)
{
	return rp_aligned(p, align, size);
}

static void *rp_calloc(size_t n, size_t size)
{
	void *p = n && size > SIZE_MAX / n ? NULL : malloc(n * size);

	if (p)
		memset(p, 0, n * size);
	return p;
}

static void *rp_valloc(size_t size)
{
	return rp_own_aligned(rp_page, size);
}

static void *rp_pvalloc(size_t size)
{
	size_t n = size ? size + rp_page - 1 : rp_page;

	return n < size ? NULL : rp_own_aligned(rp_page, n & ~(rp_page - 1));
}

static const void *rp_object(const void *fn, const char **name)
{
	Dl_info d;

	if (!dladdr(fn, &d) || !d.dli_fname)
		return NULL;
	*name = d.dli_fname;
	return d.dli_fbase;
}

/*
 * In the re-executed child, after rp_check_preload(): each call of the
 * family that is not the preloaded allocator's own (not from malloc's
 * object) is replayed on the allocator's posix_memalign, memalign or
 * aligned_alloc (calloc on its malloc), and stderr says which.
 * Return: 0, or 1 after saying why when a call has nothing to stand on.
 */
static int rp_own_family(const char *alloc)
{
	const char *lib = NULL, *other = NULL, *n;
	const void *mine = rp_object((const void *)(uintptr_t)malloc, &lib);
	struct {
		const char *name;
		const void *fn;
		void *emu;
		void **slot;
	} c[] = {
		{ "calloc", (const void *)(uintptr_t)calloc, (void *)(uintptr_t)rp_calloc,
		  (void **)&rp_calls.calloc },
		{ "posix_memalign", (const void *)(uintptr_t)posix_memalign,
		  (void *)(uintptr_t)rp_posix_memalign, (void **)&rp_calls.posix_memalign },
		{ "memalign", (const void *)(uintptr_t)memalign, (void *)(uintptr_t)rp_own_aligned,
		  (void **)&rp_calls.memalign },
		{ "aligned_alloc", (const void *)(uintptr_t)aligned_alloc,
		  (void *)(uintptr_t)rp_own_aligned, (void **)&rp_calls.aligned_alloc },
		{ "valloc", (const void *)(uintptr_t)valloc, (void *)(uintptr_t)rp_valloc,
		  (void **)&rp_calls.valloc },
		{ "pvalloc", (const void *)(uintptr_t)pvalloc, (void *)(uintptr_t)rp_pvalloc,
		  (void **)&rp_calls.pvalloc },
	};
	const char *on = NULL;

	if (!mine)
		return 0;	/* cannot be told: as before */
	rp_page = (size_t)sysconf(_SC_PAGESIZE);
	if (rp_object(c[1].fn, &n) == mine) {
		rp_aligned = posix_memalign;
		on = "posix_memalign";
	} else if (rp_object(c[2].fn, &n) == mine) {
		rp_aligned = rp_pm_memalign;
		on = "memalign";
	} else if (rp_object(c[3].fn, &n) == mine) {
		rp_aligned = rp_pm_aligned_alloc;
		on = "aligned_alloc";
	}
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		other = NULL;
		if (rp_object(c[i].fn, &other) == mine)
			continue;
		if (i && !rp_aligned) {
			fprintf(stderr, "uslab replay: -a %s: %s is not %s's own (it comes from %s) "
				"and %s has no aligned allocation of its own to replay it on: "
				"nothing replayed\n", alloc, c[i].name, lib, other ? other : "?", lib);
			return 1;
		}
		*c[i].slot = c[i].emu;
		fprintf(stderr, "uslab replay: -a %s: %s is not %s's own (it comes from %s, "
			"whose blocks its free would take): replayed on its %s\n", alloc,
			c[i].name, lib, other ? other : "?", i ? on : "malloc");
	}
	return 0;
}

static __always_inline void *rp_alloc(const struct rp_ev *e)
{
	return trace_op_alloc(&rp_calls, e->op, e->size, e->align_shift);
}

/* One event; the object now live under e->id, if any.
 * Return: true when an allocation the recording made (of a size above 0)
 * failed here (NULL), so that the run is not taken for the recording's. */
static __always_inline bool rp_do(struct replay *rp, const struct rp_ev *e)
{
	void *p;

	switch (e->op) {
	case TRACE_OP_FREE:
	case TRACE_OP_FREE_SIZED:
	case TRACE_OP_FREE_ALIGNED_SIZED:
	case TRACE_OP_KFREE:
	case TRACE_OP_CACHE_FREE:
		if (!e->id)
			return false;
		p = atomic_load_explicit(&rp->ptr[e->id], memory_order_relaxed);
		free(p);
		atomic_store_explicit(&rp->ptr[e->id], NULL, memory_order_relaxed);
		return false;
	case TRACE_OP_REALLOC: {
		void *old = e->old_id ?
			atomic_load_explicit(&rp->ptr[e->old_id], memory_order_relaxed) : NULL;

		if (!e->id && (e->size || !e->old_id))
			return false;	/* failed in the recording: nothing changed */
		p = realloc(old, e->size);
		if (e->old_id && e->old_id != e->id)
			atomic_store_explicit(&rp->ptr[e->old_id], NULL, memory_order_relaxed);
		if (e->id) {
			rp_touch(rp, p, e->size);
			atomic_store_explicit(&rp->ptr[e->id], p, memory_order_relaxed);
			return unlikely(!p && e->size);
		}
		free(p);	/* realloc(p, 0) may return a new block */
		return false;
	}
	default:
		if (!e->id)
			return false;	/* the recorded call failed */
		p = rp_alloc(e);
		rp_touch(rp, p, e->size);
		atomic_store_explicit(&rp->ptr[e->id], p, memory_order_relaxed);
		return unlikely(!p && e->size);
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
		bool fail;

		if (e->old_id && e->old_id != e->id)
			rp_wait(rp, t, e->old_id, e->seq_old);
		if (e->id)
			rp_wait(rp, t, e->id, e->seq_id);
		if (unlikely(!(i & ((1u << RP_SAMPLE_SHIFT) - 1)))) {
			uint64_t t0, d;

			/* records done, for --timeline's sampler (a store to
			 * this thread's own line, as nlat's below) */
			atomic_store_explicit(&t->pos, i, memory_order_relaxed);
			t0 = rdtsc();

			fail = rp_do(rp, e);
			d = rdtsc() - t0;
			t->lat[t->nlat++] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
		} else {
			fail = rp_do(rp, e);
		}
		if (unlikely(fail) && !t->failed++)
			t->first_failed = e;
		for (uint32_t k = e->repeat; unlikely(k); k--)
			rp_do(rp, e);	/* no object: nothing to order */
		if (e->old_id && e->old_id != e->id)
			atomic_store_explicit(&rp->done[e->old_id], e->seq_old + 1,
					      memory_order_release);
		if (e->id)
			atomic_store_explicit(&rp->done[e->id], e->seq_id + 1,
					      memory_order_release);
	}
	atomic_store_explicit(&t->pos, t->n, memory_order_relaxed);
	atomic_fetch_add_explicit(&rp->finished, 1, memory_order_release);
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
	if (lib && strchr(name, '/'))
		lib = name;	/* -a PATH: any malloc shared library */
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

/*
 * In the re-executed child: does the preloaded library serve malloc? ld.so
 * only warns about a file it cannot preload (not an ELF object, another
 * architecture) and goes on, and a library without malloc (-a libz.so)
 * loads fine: either way the C library served the replay that was
 * reported under @alloc's name, with exit 0. A library whose malloc lives
 * in a library it needs (a shim) passes: only the C library's is refused.
 * Return: 0 when malloc is not the C library's (or this cannot be told),
 * else 1 after saying so.
 */
static int rp_check_preload(const char *alloc, const char *lib)
{
	void *(*volatile m)(size_t) = malloc;
	pid_t (*volatile libc_fn)(void) = getpid;
	struct stat sm, sc;
	Dl_info dm, dc;

	if (!dladdr((void *)m, &dm) || !dm.dli_fname || !dladdr((void *)libc_fn, &dc) ||
	    !dc.dli_fname || stat(dm.dli_fname, &sm) || stat(dc.dli_fname, &sc) ||
	    sm.st_dev != sc.st_dev || sm.st_ino != sc.st_ino)
		return 0;
	fprintf(stderr, "uslab replay: -a %s: malloc comes from the C library (%s), not from "
		"%s (not a shared object ld.so could preload, or one without malloc): nothing "
		"replayed\n", alloc, dm.dli_fname, lib ? lib : "the preload");
	return 1;
}

static const char rp_usage[] =
	"uslab replay TRACE [-a uslab|glibc|jemalloc|tcmalloc|mimalloc|PATH.so]\n"
	"                   [--threads-as-recorded | --threads N] [--touch=first|all|none]\n"
	"                   [--runs N]\n"
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

/* What the timed run measured. */
struct rp_measure {
	struct rusage ru0, ru1;
	long rss0;			/* KiB before the run */
	long hwm;			/* KiB: the high-water mark over the run, -1 unknown */
	double rss_sum;			/* KiB above rss0, summed over samples */
	uint64_t rss_samples;
	double wall;			/* s */
	double cyc_per_ns;		/* the latency samples' clock */
	uint64_t waits;			/* cross-thread waits, all threads */
	uint64_t nlat;
	uint32_t *lat;			/* every thread's samples, sorted */
	uint64_t t0;			/* ns: the run's start */
	struct rp_point {		/* --timeline: one per RSS sample */
		double s;
		uint64_t rss, live;	/* bytes: RSS above the start, live */
	} *pts;
	size_t npts, cap_pts;
};

/* --timeline: the live bytes of the records the threads have done. */
static uint64_t rp_live_now(const struct replay *rp)
{
	int64_t sum = 0;

	for (unsigned int i = 0; i < rp->nthreads; i++) {
		const struct rp_thread *t = &rp->t[i];
		size_t pos = atomic_load_explicit(&((struct rp_thread *)t)->pos, memory_order_relaxed);

		if (pos)
			sum = rp_sat_add(sum, t->live[pos - 1]);
	}
	return sum > 0 ? (uint64_t)sum : 0;
}

/* One RSS sample (KiB, @r) kept with the live bytes; the replayer's own
 * mapping (never the allocator under test). */
static void rp_keep_point(const struct replay *rp, struct rp_measure *me, long r)
{
	if (!rp->timeline)
		return;
	if (me->npts == me->cap_pts) {
		size_t cap = me->cap_pts ? 2 * me->cap_pts : 1024;
		struct rp_point *n = rp_remap(me->pts, me->cap_pts * sizeof(*n), cap * sizeof(*n));

		if (!n)
			return;		/* the chart ends here; the run goes on */
		me->pts = n;
		me->cap_pts = cap;
	}
	me->pts[me->npts++] = (struct rp_point){
		.s = (double)(mono_ns() - me->t0) / 1e9,
		.rss = (uint64_t)(r > me->rss0 ? r - me->rss0 : 0) * 1024,
		.live = rp_live_now(rp),
	};
}

/* Bookkeeping allocated and touched, threads started (waiting on the
 * barrier), all before the clock starts. Return: 0, or -ENOMEM. */
static int rp_prepare(struct replay *rp)
{
	unsigned int i;

	rp->done = rp_map((rp->nslots + 1) * sizeof(*rp->done));
	rp->ptr = rp_map((rp->nslots + 1) * sizeof(*rp->ptr));
	if (!rp->done || !rp->ptr)
		return -ENOMEM;
	memset((void *)rp->done, 0, (rp->nslots + 1) * sizeof(*rp->done));
	memset((void *)rp->ptr, 0, (rp->nslots + 1) * sizeof(*rp->ptr));
	for (i = 0; i < rp->nthreads; i++) {
		struct rp_thread *t = &rp->t[i];
		size_t n = (t->n >> RP_SAMPLE_SHIFT) + 1;

		t->rp = rp;
		t->lat = rp_map(n * sizeof(*t->lat));
		if (!t->lat)
			return -ENOMEM;
		memset(t->lat, 0, n * sizeof(*t->lat));
	}
	if (pthread_barrier_init(&rp->start, NULL, rp->nthreads + 1))
		return -ENOMEM;
	for (i = 0; i < rp->nthreads; i++) {
		if (pthread_create(&rp->t[i].th, NULL, rp_thread_fn, &rp->t[i])) {
			fprintf(stderr, "uslab replay: cannot start thread %u of %u\n", i, rp->nthreads);
			exit(1);	/* threads wait on the barrier: no clean way back */
		}
	}
	return 0;
}

/* Resident KiB now, from a /proc/self/statm kept open (@fd), or -1. */
static long rp_rss_kib(int fd)
{
	char buf[128], *sp;
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	sp = strchr(buf, ' ');
	return sp ? (long)(strtoull(sp + 1, NULL, 10) * ((uint64_t)sysconf(_SC_PAGESIZE) / 1024)) : -1;
}

/*
 * While the workers run, the main thread samples the resident set every
 * 2 ms (the mean RSS over the run; one sample at the end as well), then
 * joins them.
 */
static void rp_sample_until_done(struct replay *rp, struct rp_measure *me)
{
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	struct timespec nap = { 0, 2000000 };
	long r;

	rp_keep_point(rp, me, me->rss0);	/* the start: nothing above it */
	while (atomic_load_explicit(&rp->finished, memory_order_acquire) < rp->nthreads) {
		nanosleep(&nap, NULL);
		r = rp_rss_kib(fd);
		if (r >= 0) {
			me->rss_sum += (double)(r > me->rss0 ? r - me->rss0 : 0);
			me->rss_samples++;
			rp_keep_point(rp, me, r);
		}
	}
	r = rp_rss_kib(fd);
	if (r >= 0) {
		me->rss_sum += (double)(r > me->rss0 ? r - me->rss0 : 0);
		me->rss_samples++;
		rp_keep_point(rp, me, r);
	}
	if (fd >= 0)
		close(fd);
}

/* The run: every thread released at once, measured from the barrier to
 * the last join; then the latency samples gathered. Return: 0, -ENOMEM. */
static int rp_run(struct replay *rp, struct rp_measure *me)
{
	uint64_t t0, t1, c0, c1;
	unsigned int i;
	size_t k;
	bool hwm;

	/* What the set-up freed goes back before the run (every allocator has
	 * malloc_trim through glibc's name): the run's page faults and caches
	 * are its own, as a program's are from its start. */
	malloc_trim(0);
	me->rss0 = (long)(proc_rss_bytes() / 1024);
	hwm = proc_reset_hwm();
	getrusage(RUSAGE_SELF, &me->ru0);
	rp_stats_begin();	/* uslab with stats: counters before the run */
	t0 = mono_ns();
	me->t0 = t0;
	c0 = rdtsc();
	pthread_barrier_wait(&rp->start);
	rp_sample_until_done(rp, me);
	for (i = 0; i < rp->nthreads; i++)
		pthread_join(rp->t[i].th, NULL);
	rp_stats_snapshot();	/* before the replayer allocates again */
	c1 = rdtsc();
	t1 = mono_ns();
	getrusage(RUSAGE_SELF, &me->ru1);
	me->hwm = hwm ? proc_hwm_bytes() : -1;
	if (me->hwm > 0)
		me->hwm /= 1024;
	me->wall = (double)(t1 - t0) / 1e9;
	me->cyc_per_ns = t1 > t0 ? (double)(c1 - c0) / (double)(t1 - t0) : 1.0;

	for (i = 0; i < rp->nthreads; i++) {
		me->nlat += rp->t[i].nlat;
		me->waits += rp->t[i].waits;
	}
	me->lat = rp_map((me->nlat ? me->nlat : 1) * sizeof(*me->lat));
	if (!me->lat)
		return -ENOMEM;
	for (i = 0, k = 0; i < rp->nthreads; i++) {
		memcpy(me->lat + k, rp->t[i].lat, rp->t[i].nlat * sizeof(*me->lat));
		k += rp->t[i].nlat;
	}
	qsort(me->lat, me->nlat, sizeof(*me->lat), cmp_u32);
	return 0;
}

/*
 * Allocations the recording made that failed here (the allocator under
 * test out of memory, an address-space limit): the run freed nothing it
 * did not get and measured another program than the recording's, so it is
 * said and the exit status is 1 (`--runs` and tune then refuse the run).
 * Return: true when any failed.
 */
static bool rp_failed(const struct replay *rp)
{
	const struct rp_ev *first = NULL;
	unsigned int i, thread = 0;
	uint64_t n = 0;

	for (i = 0; i < rp->nthreads; i++) {
		if (rp->t[i].failed && !first) {
			first = rp->t[i].first_failed;
			thread = i;
		}
		n += rp->t[i].failed;
	}
	if (!n)
		return false;
	fflush(stdout);
	fprintf(stderr, "uslab replay: %" PRIu64 " allocation%s the recording made failed here "
		"(NULL; the first: %s of %" PRIu64 " bytes, replay thread %u): the figures above "
		"are not of the recorded run\n", n, n == 1 ? "" : "s", trace_op_name(first->op),
		first->size, thread);
	return true;
}

static const char *const rp_touch_name[] = { "none", "first", "all" };

/*
 * A trace that holds more live bytes at once than this machine has memory
 * (recorded on a bigger one, or a hostile file: one 16 GiB malloc event)
 * is not replayed with its pages written: --touch=first writes one byte of
 * each page, so the run would take the machine's memory and end in the
 * OOM killer. --touch=none replays it without writing. Return: true when
 * the run may go on.
 */
static bool rp_fits(const struct replay *rp, const char *path)
{
	long pages = sysconf(_SC_PHYS_PAGES), pg = sysconf(_SC_PAGESIZE);
	uint64_t mem = pages > 0 && pg > 0 ? (uint64_t)pages * (uint64_t)pg : 0;

	if (rp->touch == RP_TOUCH_NONE || !mem || rp->peak_live <= mem)
		return true;
	fprintf(stderr, "uslab replay: %s: the recording holds %" PRIu64 " MiB live at once "
		"(at event %" PRIu64 "), more than this machine's %" PRIu64 " MiB of memory: "
		"not replayed with --touch=%s (--touch=none replays it without writing "
		"its pages)\n", path, rp->peak_live >> 20, rp->peak_event, mem >> 20,
		rp_touch_name[rp->touch]);
	return false;
}

static void rp_print(const struct replay *rp, const struct rp_measure *me,
		     const char *path, const char *alloc, unsigned long fold)
{
	const char *uo = getenv("USLAB_OPTIONS");
	long peak = me->hwm >= 0 ? me->hwm : me->ru1.ru_maxrss;
	const uint64_t *ops = rp->ops;
	const uint32_t *lat = me->lat;
	uint64_t nlat = me->nlat;
	double wall = me->wall, cpn = me->cyc_per_ns;
	/* Say which object really serves malloc: proof the preload took. */
	void *(*volatile m)(size_t) = malloc;
	Dl_info di;

	printf("uslab replay: %s on %s\n", path, alloc);
	printf("options: -a %s, ", alloc);
	if (fold)
		printf("--threads %lu", fold);
	else
		printf("threads as recorded");
	printf(", --touch=%s, USLAB_OPTIONS=%s%s%s\n", rp_touch_name[rp->touch],
	       uo ? "'" : "(unset)", uo ? uo : "", uo ? "'" : "");
	if (dladdr((void *)m, &di) && di.dli_fname)
		printf("malloc from: %s\n", di.dli_fname);
	printf("events: %" PRIu64 " (malloc %" PRIu64 ", free %" PRIu64 ", calloc %" PRIu64
	       ", realloc %" PRIu64 ", aligned %" PRIu64 ")\n",
	       rp->events, ops[TRACE_OP_MALLOC] + ops[TRACE_OP_KMALLOC] + ops[TRACE_OP_CACHE_ALLOC],
	       ops[TRACE_OP_FREE] + ops[TRACE_OP_FREE_SIZED] + ops[TRACE_OP_FREE_ALIGNED_SIZED] +
	       ops[TRACE_OP_KFREE] + ops[TRACE_OP_CACHE_FREE],
	       ops[TRACE_OP_CALLOC], ops[TRACE_OP_REALLOC],
	       ops[TRACE_OP_MEMALIGN] + ops[TRACE_OP_POSIX_MEMALIGN] +
	       ops[TRACE_OP_ALIGNED_ALLOC] + ops[TRACE_OP_VALLOC] + ops[TRACE_OP_PVALLOC]);
	if (rp->ncaches)	/* format 1.2: import perf's name= */
		printf("named caches: %u in the trace; their kmem_cache_alloc calls replayed as "
		       "malloc of the object size (a malloc has no named caches; uslab sim runs "
		       "them in caches of their own)\n", rp->ncaches);
	printf("threads: %u, cross-thread waits: %" PRIu64 "\n", rp->nthreads, me->waits);
	printf("wall time: %.6f s\n", wall);
	printf("throughput: %.1f ns per operation (wall / events), %.2f million events/s\n",
	       rp->events ? wall * 1e9 / (double)rp->events : 0.0,
	       wall > 0 ? (double)rp->events / wall / 1e6 : 0.0);
	if (nlat)
		printf("latency (1 call in %u timed, %" PRIu64 " samples): p50 %.0f ns, p99 %.0f ns, "
		       "p99.9 %.0f ns, max %.0f ns\n", 1u << RP_SAMPLE_SHIFT, nlat,
		       lat[nlat / 2] / cpn, lat[nlat * 99 / 100] / cpn,
		       lat[nlat * 999 / 1000] / cpn, lat[nlat - 1] / cpn);
	printf("peak RSS: %ld KiB (%ld KiB above the replayer's own %ld KiB at the start)\n",
	       peak, peak > me->rss0 ? peak - me->rss0 : 0, me->rss0);
	printf("mean RSS: %.0f KiB above the start (%" PRIu64 " samples, one every 2 ms and "
	       "one at the end)\n", me->rss_samples ? me->rss_sum / (double)me->rss_samples : 0.0,
	       me->rss_samples);
	printf("page faults: %ld minor, %ld major\n",
	       me->ru1.ru_minflt - me->ru0.ru_minflt, me->ru1.ru_majflt - me->ru0.ru_majflt);
	printf("CPU time: %.6f s user, %.6f s system (all threads, the run only)\n",
	       timeval_s(&me->ru1.ru_utime) - timeval_s(&me->ru0.ru_utime),
	       timeval_s(&me->ru1.ru_stime) - timeval_s(&me->ru0.ru_stime));
	rp_stats_end(stdout);
}

/* --touch=first|all|none (opt->value: the int of struct replay). */
static const char *rp_touch_opt(const struct cli_opt *opt, const char *arg)
{
	for (int i = 0; i < (int)ARRAY_SIZE(rp_touch_name); i++)
		if (!strcmp(arg, rp_touch_name[i])) {
			*(int *)opt->value = i;
			return NULL;
		}
	return "first, all or none";
}

/* --no-touch: --touch=none, kept for old command lines. */
static const char *rp_no_touch(const struct cli_opt *opt, const char *arg)
{
	*(int *)opt->value = RP_TOUCH_NONE;
	return NULL;
}

/*
 * --runs N: the replay N times, each in a fresh process (an allocator
 * warmed by the previous run would not be measured as a program meets
 * it), then the medians with bootstrap 95% intervals.
 */
static int rp_runs(int argc, char **argv, unsigned long runs)
{
	struct replay_fig f;
	double *v[4];
	char **args = calloc((size_t)argc + 3, sizeof(*args)), opt_line[512] = "";
	static const char *const what[4] = {
		"CPU time (user + system)", "wall time", "peak RSS above the start",
		"mean RSS above the start",
	};
	static const char *const unit[4] = { "s", "s", "KiB", "KiB" };
	int rc = 1;

	for (int k = 0; k < 4; k++)
		v[k] = calloc(runs, sizeof(double));
	if (!args || !v[0] || !v[1] || !v[2] || !v[3])
		goto out;
	for (int i = 1; i < argc; i++)
		args[i - 1] = argv[i];
	args[argc - 1] = "--runs";
	args[argc] = "1";		/* the last --runs is the one taken */
	for (unsigned long r = 0; r < runs; r++) {
		if (replay_run_once(args, NULL, -1, &f, opt_line, sizeof(opt_line), false,
				    "uslab replay"))
			goto out;
		v[0][r] = f.cpu;
		v[1][r] = f.wall;
		v[2][r] = f.rss_peak;
		v[3][r] = f.rss_mean;
		printf("run %lu: CPU %.4f s, wall %.4f s, peak RSS +%.0f KiB, mean RSS +%.0f KiB\n",
		       r + 1, f.cpu, f.wall, f.rss_peak, f.rss_mean);
	}
	printf("options: %s, --runs %lu (each a fresh process)\n", opt_line, runs);
	printf("medians of %lu runs [bootstrap 95%% confidence interval]:\n", runs);
	for (int k = 0; k < 4; k++) {
		struct stat_est e;

		if (stat_ci(v[k], (unsigned int)runs, NULL, 0, &e))
			goto out;
		printf("  %-26s ", what[k]);
		stat_print(stdout, &e, 1, k < 2 ? 4 : 0, unit[k]);
		putchar('\n');
	}
	rc = 0;
out:
	for (int k = 0; k < 4; k++)
		free(v[k]);
	free(args);
	return rc;
}

/* --timeline: RSS above the start and live bytes over the run, with
 * report --timeline's chart; the RSS peak of the samples marked.
 * Return: 0, or 1 after saying why. */
static int rp_draw(const struct rp_measure *me, const char *out, const char *path,
		   const char *alloc)
{
	size_t n = me->npts ? me->npts : 1;
	double *x = calloc(n, sizeof(double));
	uint64_t *y = calloc(2 * n, sizeof(uint64_t)), *ys[2];
	const char *names[2] = { "RSS above the start", "live (requested)" };
	char title[1024];
	struct timeline_plot p = {
		.who = "uslab replay", .title = title, .xlabel = "time (s)", .xunit = "s",
		.ylabel = "memory", .npts = (uint32_t)me->npts, .x = x, .nseries = 2,
		.names = names, .y = ys,
	};
	int rc;

	if (!x || !y) {
		fprintf(stderr, "uslab replay: %s: out of memory\n", out);
		free(x);
		free(y);
		return 1;
	}
	snprintf(title, sizeof(title), "Memory over the replay on %s: %s", alloc, path);
	ys[0] = y;
	ys[1] = y + n;
	for (size_t i = 0; i < me->npts; i++) {
		x[i] = me->pts[i].s;
		ys[0][i] = me->pts[i].rss;
		ys[1][i] = me->pts[i].live;
		if (!i || me->pts[i].rss > p.peak_y) {
			p.peak_y = me->pts[i].rss;
			p.peak_x = x[i];
		}
	}
	rc = timeline_draw(&p, out);
	free(x);
	free(y);
	return rc;
}

int cmd_replay(int argc, char **argv)
{
	struct replay rp = { .touch = RP_TOUCH_FIRST };
	struct rp_measure me = { .lat = NULL };
	const char *alloc = "glibc", *child = getenv(RP_ENV_CHILD), *timeline = NULL;
	unsigned long fold = 0, runs = 1;
	const struct cli_opt opts[] = {
		OPT_STRING('a', "allocator", &alloc, "NAME|PATH",
			   "uslab, glibc (default), jemalloc, tcmalloc, mimalloc,\n"
			   "or the path of any malloc shared library (preloaded)"),
		OPT_CALLBACK(0, "threads-as-recorded", &fold, NULL,
			     "one thread per recorded thread (the default)", rp_as_recorded,
			     .flags = OPT_NOARG),
		OPT_ULONG('t', "threads", &fold, "N", "fold the recorded threads onto N threads",
			  1, RP_MAX_THREADS),
		OPT_CALLBACK(0, "touch", &rp.touch, "WHAT",
			     "what the program writes of each block: first (default:\n"
			     "its first 64 bytes and one byte of each further page),\n"
			     "all (every byte) or none", rp_touch_opt),
		OPT_CALLBACK(0, "no-touch", &rp.touch, NULL, "--touch=none", rp_no_touch,
			     .flags = OPT_NOARG),
		OPT_ULONG(0, "runs", &runs, "N",
			  "replay N times, each in a fresh process: medians with\n"
			  "bootstrap 95% confidence intervals", 1, 1000),
		OPT_STRING(0, "timeline", &timeline, "FILE",
			   "draw RSS and live bytes over the run: FILE.svg or\n"
			   "FILE.png (python3-matplotlib)", .flags = OPT_OUTPUT,
			   .formats = "svg,png"),
		OPT_PROC_SELECT(),
		OPT_END(),
	};
	unsigned int i;
	int first, err = 1;

	first = parse_options(argc, argv, opts, rp_usage, PARSE_OPT_ONE_TRACE);
	if (first <= 0)
		return -first;
	for (i = 0; i < ARRAY_SIZE(rp_allocators); i++)
		if (!strcmp(alloc, rp_allocators[i][0]))
			break;
	if (i == ARRAY_SIZE(rp_allocators) && strchr(alloc, '/'))
		i = ARRAY_SIZE(rp_allocators) - 1;	/* a path: preloaded as named */
	else if (i == ARRAY_SIZE(rp_allocators))
		return usage_error(opts, rp_usage, "-a: unknown allocator '%s' (a library is "
				   "named by its path, with a '/')", alloc);
	if (timeline && runs > 1)
		return usage_error(opts, rp_usage, "--timeline draws one run: not with --runs");
	if (runs > 1 && !child)
		return rp_runs(argc, argv, runs);
	if (!child || strcmp(child, alloc))
		return rp_reexec(alloc, rp_allocators[i][1], argv);
	unsetenv(RP_ENV_CHILD);
	if (rp_allocators[i][1] && (rp_check_preload(alloc, getenv("LD_PRELOAD")) ||
				    rp_own_family(alloc)))
		goto out;
	unsetenv("LD_PRELOAD");		/* not for anything we might start */

	rp.timeline = timeline;
	if (rp_load(&rp, argv[first], (unsigned int)fold) || !rp_fits(&rp, argv[first]))
		goto out;
	if (rp_prepare(&rp) || rp_run(&rp, &me)) {
		fprintf(stderr, "uslab replay: out of memory for the bookkeeping\n");
		goto out;
	}
	rp_print(&rp, &me, argv[first], alloc, fold);
	err = timeline ? rp_draw(&me, timeline, argv[first], alloc) : 0;
	if (rp_failed(&rp))
		err = 1;
out:
	rp_unmap(me.pts, me.cap_pts * sizeof(*me.pts));
	if (me.lat)
		rp_unmap(me.lat, (me.nlat ? me.nlat : 1) * sizeof(*me.lat));
	rp_free(&rp);
	return err;
}
