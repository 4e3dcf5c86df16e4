// SPDX-License-Identifier: MIT
/*
 * `uslab report TRACE`: one streaming pass over a trace. Memory follows
 * what the file holds: the live objects (a keyed table from id to a pool of
 * records, so an id of 2^40 costs what an id of 40 does), the threads met
 * (at most MAX_THREADS), the CPU table and fixed-size histograms; never the
 * trace length, nor a number the file declares.
 * No locks: single-threaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "uslab/slab.h"
#include "tools/uslab/builtin.h"

#define MAX_THREADS	(1u << 20)	/* distinct threads met */
#define MAX_CPUS	4096u
/* Log-linear histogram: 8 sub-buckets per power of two, < 9% error. */
#define HIST_SUB	8
#define HIST_BUCKETS	(64 * HIST_SUB)

/* uslab's kmalloc classes (slab's one table, kmalloc_info[]), and one
 * for what is larger than the largest kmalloc cache. */
#define NR_CLASSES	(NR_KMALLOC_CLASSES + 1)

struct live {
	uint64_t time;
	uint64_t index;		/* event number of the allocation */
	uint64_t size;
	uint32_t tid;
	uint32_t cache;		/* its named cache (format 1.2), 0 none */
	bool used;
};

/* One named cache of the trace (format 1.2: import perf's name=). */
struct cache_stats {
	uint64_t allocs, bytes;
	uint64_t live_objs, live_bytes, peak_bytes;
};

struct thread_stats {
	uint64_t events, allocs, frees, bytes, remote_frees;
	uint32_t tid;
};

struct hist {
	uint64_t n;
	uint64_t max;
	uint64_t b[HIST_BUCKETS];
};

struct report {
	struct trace_reader *r;
	struct hmap ids;		/* live id -> index in live[] */
	struct live *live;
	uint64_t nlive_slots;		/* live[] entries in use or free */
	uint64_t live_cap;
	uint64_t *free_slots;		/* indices of live[] to reuse */
	uint64_t nfree, free_cap;
	struct hmap tids;		/* tid -> index in threads[] */
	struct thread_stats *threads;
	uint64_t threads_cap;
	uint32_t nthreads;
	uint64_t *cpu_events;
	uint32_t ncpus;
	uint64_t unknown_cpu;
	uint64_t ops[TRACE_OP_NR];
	uint64_t class_allocs[NR_CLASSES], class_bytes[NR_CLASSES];
	uint64_t class_waste[NR_CLASSES];
	uint64_t live_bytes, live_objs, peak_bytes, peak_objs;
	uint64_t peak_time, peak_index;
	uint64_t total_bytes, allocs, frees, failed, free_null;
	uint64_t unknown_frees;
	struct cache_stats *caches;	/* by cache id - 1 */
	uint64_t caches_cap;
	struct hist life_ns, life_ev;
	uint64_t events, last_time;
};

static unsigned int hist_bucket(uint64_t v)
{
	unsigned int lg, sub;

	if (v < HIST_SUB)
		return (unsigned int)v;
	lg = 63u - (unsigned int)__builtin_clzll(v);
	sub = (unsigned int)(v >> (lg - 3)) & (HIST_SUB - 1);
	return (lg - 2) * HIST_SUB + sub;
}

/* Upper end of a bucket, the value a percentile reports. */
static uint64_t hist_value(unsigned int b)
{
	unsigned int lg, sub;

	if (b < HIST_SUB)
		return b;
	lg = b / HIST_SUB + 2;
	sub = b % HIST_SUB;
	return ((uint64_t)(HIST_SUB + sub) << (lg - 3)) + ((uint64_t)1 << (lg - 3)) - 1;
}

static void hist_add(struct hist *h, uint64_t v)
{
	h->b[hist_bucket(v)]++;
	h->n++;
	if (v > h->max)
		h->max = v;
}

static uint64_t hist_pct(const struct hist *h, double pct)
{
	uint64_t want = (uint64_t)((double)h->n * pct / 100.0), seen = 0;

	if (want >= h->n)
		want = h->n - 1;
	for (unsigned int b = 0; b < HIST_BUCKETS; b++) {
		seen += h->b[b];
		if (seen > want)
			return min_t(uint64_t, hist_value(b), h->max);
	}
	return h->max;
}

static unsigned int size_class(uint64_t size)
{
	if (size > KMALLOC_MAX_CACHE_SIZE)
		return NR_KMALLOC_CLASSES;
	return kmalloc_index(size ? size : 1);
}

int obj_slot_take(void **obj, uint64_t *nobj, uint64_t *cap, size_t elem,
		  const uint64_t *free_obj, uint64_t *nfree, struct hmap *ids, uint64_t id,
		  uint64_t *slot)
{
	int rc;

	if (*nfree) {
		*slot = free_obj[--*nfree];
	} else {
		rc = grow_array(obj, cap, *nobj + 1, elem, UINT64_MAX / elem);
		if (rc)
			return rc;
		*slot = (*nobj)++;
	}
	return hmap_insert(ids, id, *slot);
}

int report_walk(struct trace_reader *r,
		int (*end)(void *ctx, const struct trace_event *ev, uint64_t id),
		int (*make)(void *ctx, const struct trace_event *ev), void *ctx)
{
	struct trace_event ev;
	unsigned int what;
	uint64_t ends;
	int rc;

	while ((rc = trace_reader_next(r, &ev)) > 0) {
		what = trace_event_objects(&ev, &ends);
		rc = what & TRACE_OBJ_ENDS ? end(ctx, &ev, ends) : 0;
		if (!rc && what & TRACE_OBJ_MAKES)
			rc = make(ctx, &ev);
		if (rc)
			return rc;
	}
	return rc < 0 ? cmd_read_error(r, rc) : 0;
}

int report_view_error(struct trace_reader *r, const char *path, int rc, const char *too_big)
{
	if (rc == -ENOMEM || rc == -E2BIG) {
		fprintf(stderr, "uslab report: %s: %s\n", path,
			rc == -E2BIG ? too_big : strerror(-rc));
		return 1;
	}
	return rc < 0 ? cmd_read_error(r, rc) : rc;	/* the reader's, while a stack was read */
}

int obj_slot_put(uint64_t **free_obj, uint64_t *nfree, uint64_t *free_cap, uint64_t slot)
{
	if (grow_array((void **)free_obj, free_cap, *nfree + 1, sizeof(uint64_t),
		       UINT64_MAX / sizeof(uint64_t)))
		return -ENOMEM;
	(*free_obj)[(*nfree)++] = slot;
	return 0;
}

/* A record for live object @id: its own if it is live, else a new one. */
static int live_get(struct report *rp, uint64_t id, struct live **lp)
{
	uint64_t *v = hmap_find(&rp->ids, id), i;
	int rc;

	if (v) {
		*lp = &rp->live[*v];
		return 0;
	}
	if (rp->nfree) {
		i = rp->free_slots[--rp->nfree];
	} else {
		rc = grow_array((void **)&rp->live, &rp->live_cap, rp->nlive_slots + 1,
				sizeof(*rp->live), UINT64_MAX / sizeof(*rp->live));
		if (rc)
			return rc;
		i = rp->nlive_slots++;
	}
	rc = hmap_insert(&rp->ids, id, i);
	if (rc)
		return rc;
	rp->live[i].used = false;
	*lp = &rp->live[i];
	return 0;
}

static int live_put(struct report *rp, uint64_t id)
{
	uint64_t i;
	int rc;

	if (hmap_remove(&rp->ids, id, &i))
		return 0;
	rp->live[i].used = false;
	rc = grow_array((void **)&rp->free_slots, &rp->free_cap, rp->nfree + 1,
			sizeof(*rp->free_slots), UINT64_MAX / sizeof(uint64_t));
	if (rc)
		return rc;
	rp->free_slots[rp->nfree++] = i;
	return 0;
}

static int on_alloc(struct report *rp, const struct trace_event *ev, struct thread_stats *ts)
{
	unsigned int c = size_class(ev->size);
	struct live *l;
	int rc;

	rp->allocs++;
	rp->total_bytes += ev->size;
	rp->class_allocs[c]++;
	rp->class_bytes[c] += ev->size;
	if (c < NR_KMALLOC_CLASSES)
		rp->class_waste[c] += kmalloc_info[c].size - ev->size;
	ts->allocs++;
	ts->bytes += ev->size;
	if (!ev->id) {
		rp->failed++;
		return 0;
	}
	rc = live_get(rp, ev->id, &l);
	if (rc)
		return rc;
	if (l->used) {		/* never freed: the trace breaks its promise */
		rp->live_bytes -= l->size;
		rp->live_objs--;
		if (l->cache) {
			rp->caches[l->cache - 1].live_objs--;
			rp->caches[l->cache - 1].live_bytes -= l->size;
		}
	}
	l->used = true;
	l->cache = ev->op == TRACE_OP_CACHE_ALLOC ? ev->cache : 0;
	if (l->cache) {
		struct cache_stats *cs;

		/* the reader bounds ids by the table it has met */
		rc = grow_array((void **)&rp->caches, &rp->caches_cap, l->cache,
				sizeof(*rp->caches), TRACE_CACHES_MAX);
		if (rc)
			return rc;
		cs = &rp->caches[l->cache - 1];
		cs->allocs++;
		cs->bytes += ev->size;
		cs->live_objs++;
		cs->live_bytes += ev->size;
		if (cs->live_bytes > cs->peak_bytes)
			cs->peak_bytes = cs->live_bytes;
	}
	l->time = ev->time_ns;
	l->index = rp->events;
	l->size = ev->size;
	l->tid = (uint32_t)(ts - rp->threads);
	rp->live_bytes += ev->size;
	rp->live_objs++;
	if (rp->live_bytes > rp->peak_bytes) {
		rp->peak_bytes = rp->live_bytes;
		rp->peak_time = ev->time_ns;
		rp->peak_index = rp->events;
	}
	if (rp->live_objs > rp->peak_objs)
		rp->peak_objs = rp->live_objs;
	return 0;
}

static int on_free(struct report *rp, const struct trace_event *ev,
		   struct thread_stats *ts, uint64_t id)
{
	uint64_t *v;
	struct live *l;

	rp->frees++;
	ts->frees++;
	if (!id) {
		rp->free_null++;
		return 0;
	}
	v = hmap_find(&rp->ids, id);
	if (!v || !rp->live[*v].used) {
		rp->unknown_frees++;
		return 0;
	}
	l = &rp->live[*v];
	hist_add(&rp->life_ns, ev->time_ns - l->time);
	hist_add(&rp->life_ev, rp->events - l->index);
	if (l->tid != (uint32_t)(ts - rp->threads))
		ts->remote_frees++;
	rp->live_bytes -= l->size;
	rp->live_objs--;
	if (l->cache) {
		rp->caches[l->cache - 1].live_objs--;
		rp->caches[l->cache - 1].live_bytes -= l->size;
	}
	return live_put(rp, id);
}

/* Stats of thread @tid, made at first sight; at most MAX_THREADS. */
static int thread_get(struct report *rp, uint32_t tid, struct thread_stats **tsp)
{
	uint64_t *v = hmap_find(&rp->tids, tid), n;
	int rc;

	if (likely(v)) {
		*tsp = &rp->threads[*v];
		return 0;
	}
	if (rp->nthreads == MAX_THREADS)
		return trace_reader_reject(rp->r, TRACE_FIELD_TID, "thread %u is past the %u "
					   "threads report counts", tid, MAX_THREADS);
	n = rp->threads_cap;
	rc = grow_array((void **)&rp->threads, &n, (uint64_t)rp->nthreads + 1,
			sizeof(*rp->threads), MAX_THREADS);
	if (rc)
		return rc;
	rp->threads_cap = n;
	rc = hmap_insert(&rp->tids, tid, rp->nthreads);
	if (rc)
		return rc;
	*tsp = &rp->threads[rp->nthreads++];
	(*tsp)->tid = tid;
	return 0;
}

static int account(struct report *rp, const struct trace_event *ev)
{
	struct thread_stats *ts = NULL;
	uint64_t n, ends;
	unsigned int what;
	int rc;

	rc = thread_get(rp, ev->tid, &ts);
	if (rc)
		return rc;
	if (ev->cpu >= MAX_CPUS) {
		rp->unknown_cpu++;
	} else {
		n = rp->ncpus;
		rc = grow_array((void **)&rp->cpu_events, &n, (uint64_t)ev->cpu + 1,
				sizeof(*rp->cpu_events), MAX_CPUS);
		if (rc)
			return rc;
		rp->ncpus = (uint32_t)n;
		rp->cpu_events[ev->cpu]++;
	}
	rp->ops[ev->op]++;
	ts->events++;
	what = trace_event_objects(ev, &ends);
	if (what & TRACE_OBJ_ENDS)
		rc = on_free(rp, ev, ts, ends);
	if (!rc && what & TRACE_OBJ_MAKES)
		rc = on_alloc(rp, ev, ts);
	rp->events++;
	rp->last_time = ev->time_ns;
	return rc;
}

static void print_bytes(FILE *f, uint64_t b)
{
	if (b >= (10ull << 30))
		fprintf(f, "%.1f GiB", (double)b / (1 << 30));
	else if (b >= (10ull << 20))
		fprintf(f, "%.1f MiB", (double)b / (1 << 20));
	else if (b >= (10ull << 10))
		fprintf(f, "%.1f KiB", (double)b / (1 << 10));
	else
		fprintf(f, "%" PRIu64 " B", b);
}

/* A duration with its unit: 812 ns, 12.5 us, 3.4 ms, 3.47 s. */
static const char *fmt_ns(uint64_t v, char *buf, size_t len)
{
	if (v < 1000)
		snprintf(buf, len, "%" PRIu64 " ns", v);
	else if (v < 1000000)
		snprintf(buf, len, "%.1f us", (double)v / 1e3);
	else if (v < 1000000000)
		snprintf(buf, len, "%.1f ms", (double)v / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)v / 1e9);
	return buf;
}

/* @ns: the values are nanoseconds (printed with units), else counts. */
static void print_hist(FILE *f, const char *what, const struct hist *h, bool ns)
{
	static const double p[] = { 50, 90, 99, 99.9 };
	char v[32];

	fprintf(f, "  %-10s", what);
	if (!h->n) {
		fprintf(f, " (no object freed)\n");
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(p); i++) {
		if (ns)
			fprintf(f, "  p%-4g %-12s", p[i], fmt_ns(hist_pct(h, p[i]), v, sizeof(v)));
		else
			fprintf(f, "  p%-4g %-12" PRIu64, p[i], hist_pct(h, p[i]));
	}
	if (ns)
		fprintf(f, "  max %s\n", fmt_ns(h->max, v, sizeof(v)));
	else
		fprintf(f, "  max %" PRIu64 "\n", h->max);
}

/* Like perf report --sort comm: every process image of the recording. */
static void print_procs(FILE *f, const struct trace_meta *m)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < m->nprocs; i++)
		total += m->procs[i].events;
	if (m->selected < 0 && (m->flags & TRACE_HDR_ONE_HEAP))
		fprintf(f, "# processes: %u sharing one heap (this report: all of them; --pid or "
			"--comm for one)\n", m->nprocs);
	else
		fprintf(f, "# processes: %u (* = this report; --pid or --comm for another)\n",
			m->nprocs);
	fprintf(f, "#   %7s %7s %7s %12s %6s %12s  %-16s %s\n", "pid", "ppid", "events",
		"allocs", "share", "threads", "comm", "command");
	for (uint32_t i = 0; i < m->nprocs; i++) {
		const struct trace_proc *t = &m->procs[i];
		char rel[48] = "";

		if (t->exec_from >= 0)
			snprintf(rel, sizeof(rel), " [exec'd by #%d]", t->exec_from);
		char comm[4 * 16 + 1];

		fprintf(f, "# %c %7u %7u %7" PRIu64 " %12" PRIu64 " %5.1f%% %12u  %-16s ",
			(int32_t)i == m->selected ? '*' : ' ', t->pid, t->ppid, t->events,
			t->allocs, total ? 100.0 * (double)t->events / (double)total : 0.0,
			t->nthreads, trace_printable(t->comm, comm, sizeof(comm)));
		trace_fput_printable(f, t->cmdline);
		fprintf(f, "%s%s%s\n", rel,
			t->flags & TRACE_PROC_UNRECORDED ? " (not recorded: static, or LD_PRELOAD cleared)" : "",
			t->flags & TRACE_PROC_RUNNING ? " (still running at the end)" : "");
	}
	fputc('\n', f);
}


static int cmp_tid(const void *a, const void *b)
{
	uint32_t x = ((const struct thread_stats *)a)->tid;
	uint32_t y = ((const struct thread_stats *)b)->tid;

	return x < y ? -1 : x > y;
}

/* Sorts the thread table by tid: the last use of it. */
/* The trace's header: its processes, tool, command, events and span. */
static void print_head(FILE *f, const struct trace_meta *m, const struct report *rp,
		       bool no_clock)
{
	if (m->nprocs)
		print_procs(f, m);

	fprintf(f, "# trace: %s (format %u.%u), pid %u, %u CPUs\n",
		m->tool, m->version_major, m->version_minor, m->pid, m->cpus);
	fprintf(f, "# command: ");
	trace_fput_printable(f, m->cmdline);
	fputc('\n', f);
	if (no_clock)
		fprintf(f, "# %" PRIu64 " events (the trace has no clock: times are event indices)\n\n",
			rp->events);
	else
		fprintf(f, "# %" PRIu64 " events over %.6f s\n\n", rp->events,
			(double)rp->last_time / 1e9);
}

/* Operations, and rounding waste by uslab's kmalloc classes. */
static void print_ops(FILE *f, const struct report *rp)
{
	fprintf(f, "operations:\n");
	for (unsigned int op = 0; op < TRACE_OP_NR; op++)
		if (rp->ops[op])
			fprintf(f, "  %-20s %12" PRIu64 "  %5.1f%%\n", trace_op_name(op),
				rp->ops[op], 100.0 * (double)rp->ops[op] / (double)rp->events);
	fprintf(f, "  allocations %" PRIu64 " (failed %" PRIu64 "), frees %" PRIu64
		" (of NULL %" PRIu64 ", of unknown ids %" PRIu64 ")\n\n",
		rp->allocs, rp->failed, rp->frees, rp->free_null, rp->unknown_frees);

	fprintf(f, "sizes by kmalloc class:\n");
	fprintf(f, "  %-8s %12s %7s %14s %8s\n", "class", "allocs", "share", "bytes", "waste");
	for (unsigned int c = 0; c < NR_CLASSES; c++) {
		char name[16];

		if (!rp->class_allocs[c])
			continue;
		if (c < NR_KMALLOC_CLASSES)
			snprintf(name, sizeof(name), "%u", kmalloc_info[c].size);
		else
			snprintf(name, sizeof(name), ">%u", (unsigned int)KMALLOC_MAX_CACHE_SIZE);
		fprintf(f, "  %-8s %12" PRIu64 " %6.1f%% %14" PRIu64, name,
			rp->class_allocs[c],
			100.0 * (double)rp->class_allocs[c] / (double)rp->allocs,
			rp->class_bytes[c]);
		if (c < NR_KMALLOC_CLASSES)
			fprintf(f, " %7.1f%%\n", 100.0 * (double)rp->class_waste[c] /
				(double)(rp->class_bytes[c] + rp->class_waste[c]));
		else
			fprintf(f, " %8s\n", "-");
	}
}

/* The named caches (format 1.2), busiest first; the rest counted. */
static const struct cache_stats *cmp_caches_base;

static int cmp_cache(const void *a, const void *b)
{
	const struct cache_stats *x = &cmp_caches_base[*(const uint32_t *)a];
	const struct cache_stats *y = &cmp_caches_base[*(const uint32_t *)b];

	if (x->allocs != y->allocs)
		return x->allocs < y->allocs ? 1 : -1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

#define REPORT_CACHE_ROWS	20

static void print_named(FILE *f, const struct trace_meta *m, const struct report *rp)
{
	uint32_t n = 0, *idx;
	uint64_t named = 0;

	for (uint64_t i = 0; i < rp->caches_cap && i < m->ncaches; i++)
		n += rp->caches[i].allocs != 0;
	if (!n)
		return;
	idx = malloc(n * sizeof(*idx));
	if (!idx)
		return;
	n = 0;
	for (uint32_t i = 0; i < rp->caches_cap && i < m->ncaches; i++)
		if (rp->caches[i].allocs) {
			idx[n++] = i;
			named += rp->caches[i].allocs;
		}
	cmp_caches_base = rp->caches;
	qsort(idx, n, sizeof(*idx), cmp_cache);
	fprintf(f, "\nnamed caches (kmem_cache_alloc's name=: %" PRIu64 " of the %" PRIu64
		" allocations above):\n", named, rp->allocs);
	fprintf(f, "  %-24s %8s %12s %7s %14s %12s %12s\n", "cache", "object", "allocs",
		"share", "bytes", "peak live", "live at end");
	for (uint32_t k = 0; k < n; k++) {
		const struct cache_stats *cs = &rp->caches[idx[k]];
		char name[4 * 24 + 1];

		if (k == REPORT_CACHE_ROWS) {
			fprintf(f, "  ... %u more caches\n", n - k);
			break;
		}
		fprintf(f, "  %-24s %8" PRIu64 " %12" PRIu64 " %6.1f%% %14" PRIu64 " %12" PRIu64
			" %12" PRIu64 "\n", trace_printable(m->caches[idx[k]].name, name, sizeof(name)),
			m->caches[idx[k]].size, cs->allocs,
			100.0 * (double)cs->allocs / (double)rp->allocs, cs->bytes,
			cs->peak_bytes, cs->live_bytes);
	}
	free(idx);
}

/* Lifetimes and memory over time. */
static void print_memory(FILE *f, const struct report *rp, bool no_clock)
{
	fprintf(f, "\nlifetimes (allocation to free):\n");
	if (!no_clock)
		print_hist(f, "time", &rp->life_ns, true);
	print_hist(f, "events", &rp->life_ev, false);

	fprintf(f, "\nmemory:\n  peak live  ");
	print_bytes(f, rp->peak_bytes);
	if (no_clock)
		fprintf(f, " at event %" PRIu64 "; peak objects %" PRIu64 "\n",
			rp->peak_index, rp->peak_objs);
	else
		fprintf(f, " at %.6f s (event %" PRIu64 "); peak objects %" PRIu64 "\n",
			(double)rp->peak_time / 1e9, rp->peak_index, rp->peak_objs);
	fprintf(f, "  allocated  ");
	print_bytes(f, rp->total_bytes);
	fprintf(f, " in total; churn (allocated / peak live) %.1f\n",
		rp->peak_bytes ? (double)rp->total_bytes / (double)rp->peak_bytes : 0.0);
	fprintf(f, "  at exit    %" PRIu64 " objects, ", rp->live_objs);
	print_bytes(f, rp->live_bytes);
	fprintf(f, " still live\n");
}

/* Events by thread (the busiest @max_threads) and by CPU. */
static void print_threads(FILE *f, struct report *rp, unsigned int max_threads)
{
	uint32_t active = 0;

	if (rp->nthreads)
		qsort(rp->threads, rp->nthreads, sizeof(*rp->threads), cmp_tid);
	for (uint32_t t = 0; t < rp->nthreads; t++)
		active += rp->threads[t].events != 0;
	fprintf(f, "\nthreads: %u\n", active);
	fprintf(f, "  %-6s %12s %12s %12s %14s %12s\n", "tid", "events", "allocs",
		"frees", "bytes", "remote frees");
	for (uint32_t t = 0, shown = 0; t < rp->nthreads; t++) {
		const struct thread_stats *ts = &rp->threads[t];

		if (!ts->events)
			continue;
		if (shown++ == max_threads) {
			fprintf(f, "  ... %u more (use --threads N)\n", active - max_threads);
			break;
		}
		fprintf(f, "  %-6u %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %14" PRIu64
			" %12" PRIu64 "\n", ts->tid, ts->events, ts->allocs, ts->frees,
			ts->bytes, ts->remote_frees);
	}
	fprintf(f, "\ncpus:");
	for (uint32_t c = 0; c < rp->ncpus; c++)
		if (rp->cpu_events[c])
			fprintf(f, " %u:%.1f%%", c,
				100.0 * (double)rp->cpu_events[c] / (double)rp->events);
	if (rp->unknown_cpu)
		fprintf(f, " unknown/other:%.1f%%", 100.0 * (double)rp->unknown_cpu / (double)rp->events);
	fputc('\n', f);
}

static void print_report(FILE *f, const struct trace_meta *m,
			 struct report *rp, unsigned int max_threads)
{
	bool no_clock = m->clock_id == TRACE_CLOCK_NONE;

	print_head(f, m, rp, no_clock);
	print_ops(f, rp);
	print_named(f, m, rp);
	print_memory(f, rp, no_clock);
	print_threads(f, rp, max_threads);
}

/* --sort: 1 callsite, 2 callsite,size (opt->value: the int). */
static const char *report_sort(const struct cli_opt *opt, const char *arg)
{
	int *sort = opt->value;

	if (!strcmp(arg, "callsite"))
		*sort = 1;
	else if (!strcmp(arg, "callsite,size"))
		*sort = 2;
	else
		return "callsite or callsite,size";
	return NULL;
}

/* --weight (opt->value: the int, enum report_weight) */
static const char *report_weight(const struct cli_opt *opt, const char *arg)
{
	static const char *const names[] = { "allocations", "bytes", "peak", "leaked" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(arg, names[i])) {
			*(int *)opt->value = (int)i;
			return NULL;
		}
	return "allocations, bytes, peak or leaked";
}

static const char report_usage[] =
	"uslab report [--threads N] [--sort callsite[,size] [--children] [--rows N]]\n"
	"             [--pid PID | --comm NAME] TRACE\n"
	"       uslab report {--folded | --flamegraph FILE} [--weight W] [--children] TRACE\n"
	"       uslab report --callsite N [--children] TRACE\n"
	"       uslab report --timeline FILE.svg|FILE.png TRACE\n"
	"  the process table, then operations, sizes per kmalloc class, lifetimes,\n"
	"  threads, peak live bytes and churn of one process, in one streaming pass";

int cmd_report(int argc, char **argv)
{
	unsigned int max_threads = 32, rows = 40;
	struct report_stacks_opts so = { 0 };
	bool children = false, weight_set = false;
	const char *timeline = NULL;
	int sort = 0;
	const struct cli_opt opts[] = {
		OPT_UINT('t', "threads", &max_threads, "N", "list at most N threads (default 32)",
			 0, MAX_THREADS),
		OPT_PROC_SELECT(),
		OPT_CALLBACK(0, "sort", &sort, "callsite[,size]",
			     "callsite: allocations, bytes, peak live, leaked and\n"
			     "temporary per call site, with function, file and line\n"
			     "(a trace from 'uslab record -g'); callsite,size: the\n"
			     "same per call site and size", report_sort),
		OPT_BOOLEAN(0, "children", &children,
			    "charge every function on the call stack (callers\n"
			    "fold in their callees)"),
		OPT_UINT(0, "rows", &rows, "N", "call-site rows shown (default 40)", 1, UINT32_MAX),
		OPT_BOOLEAN(0, "folded", &so.folded,
			    "one 'outer;...;call site WEIGHT' line per call stack\n"
			    "(flamegraph.pl, speedscope, inferno read it)"),
		OPT_STRING(0, "flamegraph", &so.flamegraph, "FILE",
			   "the call stacks as an interactive flame graph (SVG:\n"
			   "hover names a frame and its share, click zooms)",
			   .flags = OPT_OUTPUT, .formats = "svg,-"),
		OPT_CALLBACK(0, "weight", &so.weight, "W",
			     "what --folded and --flamegraph weigh: allocations\n"
			     "(default), bytes, peak (each stack's live bytes at the\n"
			     "trace's peak) or leaked (live at the end)", report_weight,
			     .set = &weight_set),
		OPT_UINT(0, "callsite", &so.callsite, "N",
			 "the full call stacks behind row N of --sort callsite", 1, UINT32_MAX),
		OPT_STRING(0, "timeline", &timeline, "FILE",
			   "live bytes over time, the total and the five call\n"
			   "sites with the highest peaks, the peak marked: FILE.svg\n"
			   "or FILE.png (python3-matplotlib)", .flags = OPT_OUTPUT,
			   .formats = "svg,png"),
		OPT_CALLBACK(0, "wrappers", NULL, "LIST",
			     "frames in files whose names start so are charged to\n"
			     "their caller (default libc.so,ld-linux,ld64.so,ld.so,\n"
			     "libstdc++.so: strdup, getline, operator new...; none)",
			     report_opt_wrappers),
		OPT_END(),
	};
	struct report *rp;
	struct trace_reader *r;
	struct trace_event ev;
	int first, rc;

	/* a trace reader's opening: its options, then its one TRACE */
	first = parse_options(argc, argv, opts, report_usage, PARSE_OPT_ONE_TRACE);
	if (first <= 0)
		return -first;
	if ((so.folded || so.flamegraph || so.callsite) && sort == 2)
		return usage_error(opts, report_usage, "--sort callsite,size goes alone");
	if (timeline) {
		if (sort || so.folded || so.flamegraph || so.callsite || children)
			return usage_error(opts, report_usage, "--timeline goes alone");
		rc = report_timeline(argv[first], timeline);
		return rc;
	}
	if (weight_set && !so.folded && !so.flamegraph)
		return usage_error(opts, report_usage, "--weight goes with --folded or --flamegraph");
	if (so.callsite && (so.folded || so.flamegraph))
		return usage_error(opts, report_usage, "--callsite goes without --folded and --flamegraph");
	if (children && !sort && !so.folded && !so.flamegraph && !so.callsite)
		return usage_error(opts, report_usage, "--children goes with --sort callsite[,size], --folded, --flamegraph or --callsite");
	r = cmd_open_trace_as("uslab report", argv[first]);
	if (!r)
		return 1;
	if (so.folded || so.flamegraph || so.callsite) {
		so.children = children;
		rc = report_stacks(r, argv[first], &so);
		trace_reader_close(r);
		if (cmd_check_stdout("uslab report"))
			rc = 1;
		return rc;
	}
	if (sort) {
		if (trace_reader_meta(r)->nprocs)
			print_procs(stdout, trace_reader_meta(r));
		rc = report_callsites(r, argv[first], sort == 2, children, rows);
		trace_reader_close(r);
		if (cmd_check_stdout("uslab report"))
			rc = 1;
		return rc;
	}
	rp = calloc(1, sizeof(*rp));
	if (!rp) {
		fprintf(stderr, "uslab report: out of memory\n");
		rc = 1;
		goto out;
	}
	hmap_init(&rp->ids);
	hmap_init(&rp->tids);
	rp->r = r;
	while ((rc = trace_reader_next(r, &ev)) > 0) {
		rc = account(rp, &ev);
		if (rc == -EPROTO) {
			fprintf(stderr, "uslab report: %s\n", trace_reader_error(r));
			rc = 1;
			goto out;
		}
		if (rc) {
			fprintf(stderr, "uslab report: %s: event %" PRIu64 ": %s\n",
				argv[first], rp->events, strerror(-rc));
			rc = 1;
			goto out;
		}
	}
	rc = cmd_read_error(r, rc);
	if (!rc)
		print_report(stdout, trace_reader_meta(r), rp, max_threads);
out:
	trace_reader_close(r);
	if (rp) {
		hmap_destroy(&rp->ids);
		hmap_destroy(&rp->tids);
		free(rp->live);
		free(rp->free_slots);
		free(rp->threads);
		free(rp->cpu_events);
		free(rp->caches);
		free(rp);
	}
	if (cmd_check_stdout("uslab report"))
		rc = 1;
	return rc;
}
