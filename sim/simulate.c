// SPDX-License-Identifier: MIT
/*
 * The simulation engine: run a trace through the library's own page_alloc,
 * slab and percpu code, on one thread, naming the virtual CPU and the
 * virtual clock before every call. Nothing is modelled: the counts are what
 * the library did. `uslab sim` (tools/uslab/builtin-sim.c) prints them;
 * the tuner (sim/tune.c) runs it once per configuration.
 *
 * The malloc family goes through the library's own malloc policy
 * (uslab_malloc(), uslab_realloc(), ... from malloc/policy.c, linked into
 * libuslab-core-vcpu.a), called as `uslab replay` calls the real one, so a
 * one-CPU simulation and a one-thread real replay count the same.
 *
 * The counts are a function of the trace and the configuration only, so
 * two runs compare equal.
 *
 * No locks: one thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "uslab/malloc.h"
#include "uslab/page_alloc.h"
#include "uslab/slab.h"
#include "uslab/trace.h"
#include "sim/internal.h"

struct sim_state {
	const struct sim_config *cfg;
	struct sim_result *res;
	void **ptr;		/* by object id */
	uint64_t *size;		/* requested bytes by object id */
	uint8_t *cls;		/* class index by object id, SIM_CLASS_NONE above */
	uint64_t cap;		/* ids the arrays cover */
	uint64_t live;
	/* by class; named cache k at SIM_MAX_CLASSES + k */
	uint64_t cls_live[SIM_MAX_CLASSES + SIM_MAX_NAMED];
	const struct sim_trace *t;	/* its named caches */
	uint64_t next_sample, every;
	uint64_t last_time;
	/* resident memory: see struct sim_result */
	int statm_fd;			/* /proc/self/statm, -1 unknown */
	long page;
	bool started;			/* first segment seen */
	int64_t anon_base;		/* bytes at the first segment's start */
	int64_t own;			/* growth between segments: the simulator's */
	int64_t anon_end;		/* at the last segment's end */
	uint64_t flt0;			/* minor faults at the segment's start */
	uint64_t next_res;		/* event count of the next resident check */
	uint64_t res_hint;		/* events the trace holds (claim), for room */
};

#define SIM_RES_EVERY	4096	/* events between resident checks */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * sim_classes_init - the kmalloc classes, smallest first: slab's one table
 * (kmalloc_info[]), in its order, so class c here is kmalloc class c.
 * Named, not created: the caches come into being on first use, as in the
 * library (their creation is part of the run; with --held, of its start:
 * sim_layers_hold).
 */
static int sim_classes_init(struct sim_result *res)
{
	unsigned int n = 0, i;

	for_each_kmalloc_class(i) {
		/* named, not created: kmalloc_info[] is slab's one table */
		res->cls[n].cache = NULL;
		res->cls[n].objsize = kmalloc_info[i].size;
		snprintf(res->cls[n].name, sizeof(res->cls[n].name), "%s",
			 kmalloc_info[i].name);
		n++;
	}
	res->nr_cls = n;
	return 0;
}

/* The class kmalloc() uses for @sz (the same lookup), or SIM_CLASS_NONE. */
static inline unsigned int sim_class_of(uint64_t sz)
{
	return sz && sz <= KMALLOC_MAX_CACHE_SIZE ?
		kmalloc_index((size_t)sz) : SIM_CLASS_NONE;
}

/* Anonymous and total resident bytes of this process (statm: resident -
 * shared = anonymous). Return: false when unknown. */
static bool sim_statm(const struct sim_state *st, int64_t *anon, int64_t *total)
{
	char buf[160], *p;
	unsigned long long v[3];
	ssize_t n = st->statm_fd >= 0 ? pread(st->statm_fd, buf, sizeof(buf) - 1, 0) : -1;

	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = buf;
	for (int i = 0; i < 3; i++)
		v[i] = strtoull(p, &p, 10);
	*total = (int64_t)v[1] * st->page;
	*anon = (int64_t)(v[1] - v[2]) * st->page;
	return true;
}

/* The heap's resident bytes now (never negative). */
static uint64_t sim_resident_now(struct sim_state *st)
{
	int64_t anon, total, r;

	if (!st->started || !sim_statm(st, &anon, &total))
		return 0;
	r = anon - st->anon_base - st->own;
	r = r > 0 ? r : 0;
	if ((uint64_t)r > st->res->res_peak)
		st->res->res_peak = (uint64_t)r;
	return (uint64_t)r;
}

static uint64_t sim_minflt(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : (uint64_t)ru.ru_minflt;
}

/* Stack the run may use below here (sampling formats slabinfo text), made
 * resident before the first segment: where the stack starts within its page
 * varies from run to run, and so would the faults it takes. */
static noinline void sim_prefault_stack(void)
{
	volatile char buf[64 * 1024];

	for (size_t i = 0; i < sizeof(buf); i += 256)
		buf[i] = 0;
}

/* A timed segment starts: what grew since the last one was the simulator's. */
static void sim_segment_begin(struct sim_state *st)
{
	int64_t anon, total;

	if (!st->started) {
		sim_prefault_stack();
		/* the vDSO's data page, which the segments read the clock from:
		 * its first read faults, in a forked child (tune) and not always
		 * in a process that read the clock before */
		now_ns(CLOCK_MONOTONIC);
		/* the samples' array grows outside the library: room now */
		if (!st->res->cap_samples && st->every != UINT64_MAX) {
			struct sim_result *res = st->res;
			uint64_t want = st->cfg->sample_every && st->res_hint ?
				st->res_hint / st->every + 2 : 0;
			size_t cap = (size_t)min_t(uint64_t, want, 1u << 16);

			res->samples = cap ? calloc(cap, sizeof(*res->samples)) : NULL;
			res->cap_samples = res->samples ? cap : 0;
			if (res->samples)
				memset(res->samples, 0, cap * sizeof(*res->samples));
		}
	}
	if (!sim_statm(st, &anon, &total))
		return;
	if (!st->started) {
		st->started = true;
		st->res->res_known = true;
		st->anon_base = anon;
	} else {
		st->own += anon - st->anon_end;
	}
	st->flt0 = sim_minflt();
}

static void sim_segment_end(struct sim_state *st)
{
	int64_t total;

	if (!st->started)
		return;
	st->res->faults += sim_minflt() - st->flt0;
	sim_resident_now(st);
	sim_statm(st, &st->anon_end, &total);
}

/* Per-class overhead: bytes of the class's slabs less its live bytes. */
static void sim_sample_classes(struct sim_state *st)
{
	struct sim_result *res = st->res;
	uint64_t slab_bytes[SIM_MAX_CLASSES];
	unsigned int c;

	sim_slab_bytes(res, slab_bytes);
	for (c = 0; c < res->nr_cls; c++) {
		int64_t ovh = (int64_t)slab_bytes[c] - (int64_t)st->cls_live[c];

		res->cls[c].ovh_sum += ovh;
		if (ovh > res->cls[c].ovh_peak)
			res->cls[c].ovh_peak = ovh;
		if (slab_bytes[c] > res->cls[c].slab_bytes_peak)
			res->cls[c].slab_bytes_peak = slab_bytes[c];
	}
}

static noinline void sim_sample(struct sim_state *st, uint64_t time_ns)
{
	struct sim_result *res = st->res;
	struct page_alloc_stats ps;
	struct sim_sample *smp;

	page_alloc_get_stats(&ps);
	if (res->nr_samples == res->cap_samples) {
		size_t cap = res->cap_samples ? 2 * res->cap_samples : 256;
		struct sim_sample *n = realloc(res->samples, cap * sizeof(*n));

		if (!n)
			return;		/* the summary stays exact; the timeline thins */
		res->samples = n;
		res->cap_samples = cap;
	}
	smp = &res->samples[res->nr_samples++];
	smp->time_ns = time_ns;
	smp->events = res->events;
	smp->held = ps.bytes_allocated;
	smp->resident_free = ps.bytes_free_resident;
	smp->live = st->live;
	smp->resident = sim_resident_now(st);
	res->adaptive = sim_layers_mag_sizes(res, smp->mag);
	res->res_sum += smp->resident;
	if (smp->held > res->held_peak)
		res->held_peak = smp->held;
	if (smp->live > res->live_peak)
		res->live_peak = smp->live;
	if ((int64_t)(smp->held - smp->live) > res->ovh_peak)
		res->ovh_peak = (int64_t)(smp->held - smp->live);
	res->held_sum += smp->held;
	res->live_sum += smp->live;
	/* slabinfo is text: per-class figures on every 4th sample only */
	if (st->cfg->per_class && !((res->nr_samples - 1) & 3)) {
		sim_sample_classes(st);
		res->nr_cls_samples++;
	}
}

/*
 * What the program does with a block it is handed, as `uslab replay
 * --touch=first` does: its first 64 bytes and one byte of each further
 * page written, so the pages the run makes resident are the replay's.
 */
static inline void sim_touch(void *p, uint64_t size)
{
	char *c = p;
	uint64_t off;

	memset(c, 1, size < 64 ? size : 64);
	off = ((uintptr_t)c | 4095) + 1 - (uintptr_t)c;
	for (; off < size; off += 4096)
		((volatile char *)c)[off] = 1;
}

static_assert(SIM_MAX_CLASSES + SIM_MAX_NAMED < SIM_CLASS_NONE, "a class index is a byte");

static inline void sim_track_alloc(struct sim_state *st, uint32_t id, void *p,
				   uint64_t size, unsigned int c)
{
	if (size)
		sim_touch(p, size);
	st->ptr[id] = p;
	st->size[id] = size;
	st->cls[id] = (uint8_t)c;
	st->live += size;
	if (c != SIM_CLASS_NONE)
		st->cls_live[c] += size;
}

static inline void sim_track_free(struct sim_state *st, uint32_t id)
{
	unsigned int c = st->cls[id];

	st->live -= st->size[id];
	if (c != SIM_CLASS_NONE)
		st->cls_live[c] -= st->size[id];
	st->ptr[id] = NULL;
}

/*
 * The library's malloc for one allocating event (malloc/policy.c: the same
 * rules as the exported malloc, not a copy), called as `uslab replay`
 * calls the real one: kernel-side allocations (kmalloc, kmem_cache_alloc
 * from perf imports) are malloc calls there too.
 */
static const struct malloc_family sim_calls = {
	uslab_malloc, uslab_calloc, uslab_memalign, uslab_posix_memalign,
	uslab_aligned_alloc, uslab_valloc, uslab_pvalloc,
};

static inline void *sim_alloc(const struct trace_dense_ev *e)
{
	return trace_op_alloc(&sim_calls, e->op, e->size, e->align_shift);
}

/*
 * A named cache's allocation (trace format 1.2): from its own cache, made
 * at its first allocation with the trace's object size, as the kernel's
 * kmem_cache_create() made it. Return: the object, NULL (counted as the
 * library's ENOMEM).
 */
static noinline void *sim_named_alloc(struct sim_state *st, const struct trace_dense_ev *e)
{
	struct sim_class_result *cr = &st->res->named[e->cache - 1];
	const struct sim_named_cache *nc = &st->t->named[e->cache - 1];

	if (!cr->cache) {
		snprintf(cr->name, sizeof(cr->name), "%s", nc->name);
		cr->objsize = (unsigned int)min_t(uint64_t, nc->size, UINT_MAX);
		cr->cache = kmem_cache_create(cr->name, (unsigned int)nc->size, 0, 0, NULL);
		if (!cr->cache)
			return NULL;
		if (e->cache > st->res->nr_named)
			st->res->nr_named = e->cache;
	}
	/* a recorded size above the cache's: the kernel's caches never do */
	if (e->size > nc->size)
		return NULL;
	return kmem_cache_alloc(cr->cache, GFP_KERNEL);
}

/*
 * sim_event - replay one event. Costs the library call plus three array
 * stores; nothing else on the way.
 */
static __always_inline int sim_event(struct sim_state *st, const struct trace_dense_ev *e)
{
	struct sim_result *res = st->res;
	void *p;

	sim_layers_set_cpu(e->cpu, e->time_ns);
	switch (e->op) {
	case TRACE_OP_MALLOC:
	case TRACE_OP_CALLOC:
	case TRACE_OP_KMALLOC:
	case TRACE_OP_CACHE_ALLOC:
	case TRACE_OP_MEMALIGN:
	case TRACE_OP_POSIX_MEMALIGN:
	case TRACE_OP_ALIGNED_ALLOC:
	case TRACE_OP_VALLOC:
	case TRACE_OP_PVALLOC:
		if (unlikely(!e->id))
			goto failed;
		if (unlikely(st->ptr[e->id]))
			goto bad;
		if (unlikely(e->op == TRACE_OP_CACHE_ALLOC && e->cache && res->named)) {
			p = sim_named_alloc(st, e);
			if (unlikely(!p))
				goto enomem;
			sim_track_alloc(st, e->id, p, e->size, SIM_MAX_CLASSES + e->cache - 1);
			res->allocs++;
			break;
		}
		p = sim_alloc(e);
		if (unlikely(!p))
			goto enomem;
		sim_track_alloc(st, e->id, p, e->size, sim_class_of(e->size));
		res->allocs++;
		break;
	case TRACE_OP_FREE:
	case TRACE_OP_FREE_SIZED:
	case TRACE_OP_FREE_ALIGNED_SIZED:
	case TRACE_OP_KFREE:
	case TRACE_OP_CACHE_FREE:
		if (unlikely(!e->id))
			break;		/* free(NULL) */
		if (unlikely(!st->ptr[e->id]))
			goto bad;
		if (unlikely(st->cls[e->id] >= SIM_MAX_CLASSES &&
			     st->cls[e->id] != SIM_CLASS_NONE))	/* a named cache's */
			kmem_cache_free(res->named[st->cls[e->id] - SIM_MAX_CLASSES].cache,
					st->ptr[e->id]);
		else
			uslab_free(st->ptr[e->id]);
		sim_track_free(st, e->id);
		res->frees++;
		break;
	case TRACE_OP_REALLOC:
		res->reallocs++;
		if (!e->id && (e->size || !e->old_id))
			goto failed;	/* failed in the recording: nothing changed */
		if (e->old_id && unlikely(!st->ptr[e->old_id]))
			goto bad;
		if (e->id && unlikely(e->id != e->old_id && st->ptr[e->id]))
			goto bad;
		p = uslab_realloc(e->old_id ? st->ptr[e->old_id] : NULL, e->size);
		if (!e->id) {		/* realloc(p, 0) frees */
			uslab_free(p);
			sim_track_free(st, e->old_id);
			break;
		}
		if (unlikely(!p)) {
			/* realloc(p, 0) frees here (glibc's answer), where the
			 * recording's allocator handed back a block: the id
			 * ends, a later use of it is the trace's error */
			if (!e->size && e->old_id) {
				sim_track_free(st, e->old_id);
				break;
			}
			goto enomem;	/* the old block (if any) stays */
		}
		if (e->old_id)
			sim_track_free(st, e->old_id);
		sim_track_alloc(st, e->id, p, e->size, sim_class_of(e->size));
		break;
	default:
		goto bad;
	}
	return 0;
failed:
	res->failed++;		/* recorded as failed: nothing to do */
	return 0;
enomem:
	res->enomem++;
	return 0;
bad:
	return -EINVAL;
}

/* Grow the per-id arrays to cover ids below @ids; untimed. */
static int sim_state_grow(struct sim_state *st, uint64_t ids)
{
	void **p;
	uint64_t *sz;
	uint8_t *cl;
	uint64_t cap = st->cap ? st->cap : 4096;

	if (ids <= st->cap)
		return 0;
	if (ids > UINT32_MAX)		/* dense ids (simulate_load.c) never are */
		return -E2BIG;
	while (cap < ids)
		cap *= 2;
	p = realloc(st->ptr, cap * sizeof(*p));
	if (p)
		st->ptr = p;
	sz = realloc(st->size, cap * sizeof(*sz));
	if (sz)
		st->size = sz;
	cl = realloc(st->cls, cap * sizeof(*cl));
	if (cl)
		st->cls = cl;
	if (!p || !sz || !cl)
		return -ENOMEM;
	/* Fault the bookkeeping in now, not inside the timed loop. */
	memset(st->ptr + st->cap, 0, (cap - st->cap) * sizeof(*p));
	memset(st->size + st->cap, 0, (cap - st->cap) * sizeof(*sz));
	memset(st->cls + st->cap, 0, (cap - st->cap) * sizeof(*cl));
	st->cap = cap;
	return 0;
}

/* The timed loop over @n decoded events. */
static int sim_run_events(struct sim_state *st, const struct trace_dense_ev *ev, size_t n)
{
	struct sim_result *res = st->res;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct trace_dense_ev *e = &ev[i];

		if (unlikely(sim_event(st, e))) {
			res->bad_event = res->events;
			res->bad_op = e->op;
			res->bad_id = e->op == TRACE_OP_REALLOC && e->old_id ? e->old_id : e->id;
			/* for the tuner's children; uslab sim says it with the path */
			snprintf(res->err, sizeof(res->err), "event %" PRIu64 ": object state "
				 "does not match the operation (%s of id %" PRIu64 ")",
				 res->bad_event, trace_op_name(res->bad_op),
				 sim_trace_id(st->t, res->bad_id));
			return -EINVAL;
		}
		res->events++;
		if (unlikely(res->events == st->next_res)) {
			sim_resident_now(st);
			st->next_res += SIM_RES_EVERY;
		}
		if (unlikely(res->events == st->next_sample)) {
			sim_sample(st, e->time_ns);
			st->next_sample += st->every;
		}
	}
	if (n)
		st->last_time = ev[n - 1].time_ns;
	return 0;
}

#define SIM_CHUNK	65536	/* events decoded at a time from a stream */

/* The simulated CPUs, the settings and the kmalloc classes, in the order
 * they must be made. */
static int sim_setup(const struct sim_config *cfg, struct sim_result *res)
{
	int err;

	/* The CPU count must be set before the first cache exists. */
	err = sim_layers_init(cfg->cpus, cfg->no_reaper);
	/* Settings first: each cache takes them when it is created. */
	if (!err)
		err = sim_layers_settings(cfg, res);
	if (!err)
		err = sim_classes_init(res);
	if (!err)
		err = sim_layers_apply(cfg, res);
	return err;
}

/* @n events through the engine, their wall and thread CPU time added to
 * @times[0] and @times[1] (ns). */
static int sim_run_timed(struct sim_state *st, const struct trace_dense_ev *ev, size_t n,
			 uint64_t times[2])
{
	uint64_t t0, c0;
	int err;

	sim_segment_begin(st);
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	err = sim_run_events(st, ev, n);
	times[0] += now_ns(CLOCK_MONOTONIC) - t0;
	times[1] += now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	sim_segment_end(st);
	return err;
}

/* A streamed trace: decode a chunk (untimed), make room, run it (timed). */
static int sim_run_stream(struct sim_state *st, struct sim_trace *t, uint64_t times[2])
{
	struct trace_dense_ev *buf = malloc(SIM_CHUNK * sizeof(*buf));
	long n;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (!err && (n = sim_trace_read(t, buf, SIM_CHUNK)) > 0) {
		err = sim_state_grow(st, t->dec.id_space);
		if (!err)
			err = sim_run_timed(st, buf, (size_t)n, times);
	}
	if (!err && n < 0) {
		err = (int)n;
		if (err == -ENOMEM)
			snprintf(st->res->err, sizeof(st->res->err), "%s: out of memory", t->path);
		else
			snprintf(st->res->err, sizeof(st->res->err), "%s",
				 trace_reader_error(t->r));
	}
	free(buf);
	return err;
}

int sim_run(struct sim_trace *t, const struct sim_config *cfg,
	    struct sim_result *res)
{
	struct sim_state st = { .cfg = cfg, .res = res, .t = t };
	uint64_t times[2] = { 0, 0 };	/* wall, CPU */
	int err;

	memset(res, 0, sizeof(*res));
	/* named caches: a stream learns them as it goes, room for all now */
	if (t->nr_named || t->r) {
		res->named = calloc(SIM_MAX_NAMED, sizeof(*res->named));
		if (!res->named)
			return -ENOMEM;
	}
	res->bad_event = UINT64_MAX;
	st.statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	st.page = sysconf(_SC_PAGESIZE);
	st.next_res = SIM_RES_EVERY;
	st.res_hint = t->n;
	st.every = cfg->sample_every ? cfg->sample_every : UINT64_MAX;
	err = sim_setup(cfg, res);
	if (err)
		return err;
	/* --held's start (every class made, the objects) is in a replay's RSS
	 * above its start: a timed segment of its own */
	sim_segment_begin(&st);
	err = sim_layers_hold(cfg, res);
	sim_segment_end(&st);
	if (err)
		return err;
	sim_layers_mark_start(res);
	err = sim_state_grow(&st, t->dec.id_space ? t->dec.id_space : 1);
	if (err)
		goto out_free;
	st.next_sample = st.every;
	if (!t->r)
		err = sim_run_timed(&st, t->ev, t->n, times);
	else
		err = sim_run_stream(&st, t, times);
	if (err)
		goto out_free;
	res->seconds = (double)times[0] / 1e9;
	res->cpu_seconds = (double)times[1] / 1e9;
	/* One last sample at the end, so short traces have one too. */
	if (!res->nr_samples || res->samples[res->nr_samples - 1].events != res->events)
		sim_sample(&st, st.last_time);
	/* The peak is the sampled anonymous figure in memory too, as a stream
	 * has it: the kernel's high-water mark (VmHWM) counts the whole process
	 * (the code pages a forked tune child faults in, the simulator's own
	 * tables), so tune's figures moved with the address layout and were
	 * above `uslab sim`'s for the same setting. */
	sim_layers_collect(res);
	res->live_end = st.live;
out_free:
	if (st.statm_fd >= 0)
		close(st.statm_fd);
	free(st.ptr);
	free(st.size);
	free(st.cls);
	return err;
}

void sim_result_free(struct sim_result *res)
{
	free(res->samples);
	res->samples = NULL;
	free(res->named);
	res->named = NULL;
}

/*
 * sim_fixed_layout - run this process again with address-space
 * randomisation off (personality ADDR_NO_RANDOMIZE, as `setarch -R`), once:
 * the page faults the simulation measures depend by a page or two on where
 * the stack, the heap and the mappings happen to start, and `uslab sim`
 * promises the same bytes for the same trace and options. Returns only
 * when the layout is already fixed or cannot be (then the faults may vary
 * by one or two between runs).
 */
void sim_fixed_layout(char **argv)
{
	int pers = personality(0xffffffff);
	char self[4096];
	ssize_t n;

	if (pers < 0 || (pers & ADDR_NO_RANDOMIZE))
		return;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || personality((unsigned long)pers | ADDR_NO_RANDOMIZE) < 0)
		return;
	self[n] = '\0';
	fflush(NULL);
	execv(self, argv);
	personality((unsigned long)pers);	/* exec failed: carry on as we were */
}

/* ---- The configuration (uslab sim and the tuner parse into it). */

/*
 * sim_parse_mag_size - "N" for every class, "CLASS=N" for one, where CLASS
 * is a cache name (kmalloc-64) or a byte size (64), checked here
 * (sim_class_named); N is read by mag_size's row of <uslab/tunables.h>.
 * Return: 0, -ENOENT for a CLASS that is no kmalloc class, -EINVAL for
 * anything else.
 */
int sim_parse_mag_size(struct sim_config *cfg, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t nlen = eq ? (size_t)(eq - arg) : 0;
	long v;

	if (uslab_tunable_parse(&uslab_tunables[USLAB_OPT_MAG_SIZE], eq ? eq + 1 : arg, &v))
		return -EINVAL;
	if (!eq) {
		cfg->mag_size = (int)v;
		return 0;
	}
	if (cfg->nr_class_mag == SIM_MAX_CLASSES || !nlen ||
	    nlen >= sizeof(cfg->class_mag[0].name))
		return -EINVAL;
	memcpy(cfg->class_mag[cfg->nr_class_mag].name, arg, nlen);
	cfg->class_mag[cfg->nr_class_mag].name[nlen] = '\0';
	if (!sim_class_named(cfg->class_mag[cfg->nr_class_mag].name))
		return -ENOENT;		/* refused with the options, not at run time */
	cfg->class_mag[cfg->nr_class_mag].mag = (int)v;
	cfg->nr_class_mag++;
	return 0;
}

/* --held CACHE=N: CACHE a kmalloc cache name, as `uslab replay` prints them. */
static int sim_parse_held(struct sim_config *cfg, const char *arg)
{
	const char *eq = strchr(arg, '=');
	unsigned int i;
	long v;

	if (!eq || kmem_cache_parse_long(eq + 1, 0, 1L << 20, &v) ||
	    cfg->nr_held == SIM_MAX_CLASSES)
		return -EINVAL;
	for_each_kmalloc_class(i) {
		if (strlen(kmalloc_info[i].name) == (size_t)(eq - arg) &&
		    !strncmp(arg, kmalloc_info[i].name, (size_t)(eq - arg))) {
			cfg->held[cfg->nr_held].cls = i;
			cfg->held[cfg->nr_held].n = v;
			cfg->nr_held++;
			return 0;
		}
	}
	return -ENOENT;
}

void sim_config_init(struct sim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mag_size = -1;
	cfg->batch = -1;
	cfg->depot_limit = SIM_DEFAULT;
	cfg->per_class = true;
	cfg->adapt = -1;
}

double sim_mean_overhead(const struct sim_result *res)
{
	if (!res->nr_samples)
		return 0;
	return ((double)res->held_sum - (double)res->live_sum) / (double)res->nr_samples;
}

double sim_mean_resident(const struct sim_result *res)
{
	return res->nr_samples ? (double)res->res_sum / (double)res->nr_samples : 0;
}

const struct uslab_tunable *sim_tunable_row(int opt)
{
	switch (opt) {
	case 'm': return &uslab_tunables[USLAB_OPT_MAG_SIZE];
	case 'b': return &uslab_tunables[USLAB_OPT_BATCH];
	case 'd': return &uslab_tunables[USLAB_OPT_DEPOT_LIMIT];
	case 'a': return &uslab_tunables[USLAB_OPT_ADAPT];
	case 'n': return &uslab_tunables[USLAB_OPT_ADAPT_MIN];
	case 'x': return &uslab_tunables[USLAB_OPT_ADAPT_MAX];
	case 'B': return &uslab_tunables[USLAB_OPT_ADAPT_BUDGET_KB];
	}
	return NULL;
}

int sim_parse_tunable(struct sim_config *cfg, int opt, const char *arg)
{
	const struct uslab_tunable *t = sim_tunable_row(opt);
	long v;

	if (opt == 'm')
		return sim_parse_mag_size(cfg, arg);
	if (opt == 'h')
		return sim_parse_held(cfg, arg);
	if (strchr(arg, '='))
		return -EINVAL;		/* one value for every kmalloc cache */
	if (!t || uslab_tunable_parse(t, arg, &v))
		return -EINVAL;
	switch (opt) {
	case 'b': cfg->batch = (int)v; break;
	case 'd': cfg->depot_limit = v; break;
	case 'a': cfg->adapt = (int)v; break;		/* the library's adapt, */
	case 'n': cfg->adapt_min = v; break;		/* adapt_min, adapt_max */
	case 'x': cfg->adapt_max = v; break;		/* (bytes) and */
	case 'B': cfg->adapt_budget_kb = v; break;	/* adapt_budget_kb */
	}
	return 0;
}
