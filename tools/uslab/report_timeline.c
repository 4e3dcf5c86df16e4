// SPDX-License-Identifier: MIT
/*
 * `uslab report --timeline FILE.svg|FILE.png TRACE`: live bytes over time,
 * the total and the five call sites (a `record -g` trace) or kmalloc
 * classes (any other) with the highest peaks, with the trace's peak
 * marked; heaptrack_gui's consumed
 * memory chart, drawn by timeline_draw() (timeline_draw.c).
 *
 * Two passes over the file (the trace is opened twice): the first finds
 * the duration, the peak and each call site's own peak; the second samples
 * the total (its maximum in each of TL_BUCKETS time buckets, so no peak is
 * lost between samples) and the chosen sites (their value at each bucket's
 * end). Memory: the live objects, the distinct stacks, the buckets.
 * No locks: one thread.
 */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "uslab/slab.h"
#include "tools/uslab/builtin.h"

#define TL_BUCKETS	800
#define TL_SITES	5

struct tl_obj {
	uint64_t size;
	uint32_t site;			/* index + 1 in sites, 0 none */
};

struct tl {
	struct trace_reader *r;
	const struct trace_meta *m;
	struct report_maps maps;	/* the mappings, sorted (report_maps.c) */
	struct trace_stack st;		/* the one read last (trace_reader_stack) */
	uint64_t frames_buf[TRACE_STACK_MAX];
	struct hmap ids;		/* live id -> index in obj[] */
	struct tl_obj *obj;
	uint64_t nobj, obj_cap, *free_obj, nfree, free_cap;
	/* per stack met: stack id -> site index + 1 (0: none), a table the
	 * size of the stacks the events name, not of the stack table */
	struct hmap site_of_stack;
	struct hmap site_by_addr;	/* call-site address (proc << 48 ^) -> index */
	uint64_t site_unkeyed;		/* the key no map holds (UINT64_MAX): index + 1 */
	struct tl_site {
		uint64_t live, peak;	/* bytes */
		uint64_t addr;		/* the call site */
		uint32_t proc, stack;	/* its process, the first stack met */
	} *site;
	uint64_t nsites, site_cap;
	uint64_t live, peak, peak_time, last_time;
	int chosen[TL_SITES];		/* pass 2: sites drawn, -1 none */
	uint32_t nchosen;
	uint64_t duration;
	uint64_t total_max[TL_BUCKETS];
	uint64_t site_at[TL_SITES][TL_BUCKETS];
	bool seen[TL_BUCKETS];
	bool pass2;
	bool by_class;			/* no call stacks: series per kmalloc class */
};

/* Without stacks: the series are uslab's kmalloc classes (and one for
 * what is larger), site index = class index. */
static int class_sites(struct tl *t)
{
	uint64_t n = 0;
	int rc;

	t->nsites = NR_KMALLOC_CLASSES + 1;
	rc = grow_array((void **)&t->site, &n, t->nsites, sizeof(*t->site), UINT32_MAX);
	t->site_cap = n;
	t->by_class = true;
	return rc;
}

static uint32_t class_site(uint64_t size)
{
	if (size > KMALLOC_MAX_CACHE_SIZE)
		return NR_KMALLOC_CLASSES + 1;
	return kmalloc_index(size ? size : 1) + 1;
}

static int site_of(struct tl *t, uint32_t sid, uint32_t *out)
{
	const struct trace_stack *st = &t->st;
	uint64_t key, unkeyed, *v = hmap_find(&t->site_of_stack, sid);
	uint32_t k0;
	int rc;

	if (v) {
		*out = (uint32_t)*v;
		return 0;
	}
	rc = trace_reader_stack(t->r, sid, &t->st, t->frames_buf);
	if (rc)
		return rc;
	if (!st->nframes) {
		*out = 0;
		return hmap_insert(&t->site_of_stack, sid, 0);
	}
	k0 = report_wrapper_frames(&t->maps, st);
	key = st->frames[k0] ^ ((uint64_t)st->proc << 48);
	if (key == UINT64_MAX) {	/* a frame as any other in a trace */
		unkeyed = t->site_unkeyed - 1;
		v = t->site_unkeyed ? &unkeyed : NULL;
	} else {
		v = hmap_find(&t->site_by_addr, key);
	}
	if (!v) {
		rc = grow_array((void **)&t->site, &t->site_cap, t->nsites + 1, sizeof(*t->site),
				UINT32_MAX);
		if (rc)
			return rc;
		t->site[t->nsites].addr = st->frames[k0];
		t->site[t->nsites].proc = st->proc;
		t->site[t->nsites].stack = sid;
		if (key == UINT64_MAX) {
			t->site_unkeyed = t->nsites + 1;
		} else {
			rc = hmap_insert(&t->site_by_addr, key, t->nsites);
			if (rc)
				return rc;
		}
		*out = (uint32_t)t->nsites + 1;
		t->nsites++;
	} else {
		*out = (uint32_t)*v + 1;
	}
	return hmap_insert(&t->site_of_stack, sid, *out);
}

static void sample(struct tl *t, uint64_t time)
{
	uint64_t b;

	if (!t->pass2)
		return;
	/* in double: a hostile time near 2^64 must not wrap the product */
	b = t->duration ? (uint64_t)((double)time / (double)t->duration * (TL_BUCKETS - 1)) : 0;
	if (b >= TL_BUCKETS)
		b = TL_BUCKETS - 1;
	t->seen[b] = true;
	if (t->live > t->total_max[b])
		t->total_max[b] = t->live;
	for (uint32_t k = 0; k < t->nchosen; k++)
		t->site_at[k][b] = t->site[t->chosen[k]].live;
}

static int tl_alloc(struct tl *t, const struct trace_event *ev)
{
	uint32_t site = 0;
	uint64_t i;
	int rc;

	if (!ev->id || hmap_find(&t->ids, ev->id))
		return 0;
	if (t->by_class) {
		site = class_site(ev->size);
	} else if (ev->stack) {
		rc = site_of(t, ev->stack, &site);
		if (rc)
			return rc;
	}
	rc = obj_slot_take((void **)&t->obj, &t->nobj, &t->obj_cap, sizeof(*t->obj),
			   t->free_obj, &t->nfree, &t->ids, ev->id, &i);
	if (rc)
		return rc;
	t->obj[i] = (struct tl_obj){ .size = ev->size, .site = site };
	t->live += ev->size;
	if (site) {
		t->site[site - 1].live += ev->size;
		if (t->site[site - 1].live > t->site[site - 1].peak)
			t->site[site - 1].peak = t->site[site - 1].live;
	}
	if (t->live > t->peak) {
		t->peak = t->live;
		t->peak_time = ev->time_ns;
	}
	return 0;
}

static int tl_free(struct tl *t, uint64_t id)
{
	uint64_t i;

	if (!id || hmap_remove(&t->ids, id, &i))
		return 0;
	t->live -= t->obj[i].size;
	if (t->obj[i].site)
		t->site[t->obj[i].site - 1].live -= t->obj[i].size;
	return obj_slot_put(&t->free_obj, &t->nfree, &t->free_cap, i);
}

static void tl_reset(struct tl *t)
{
	hmap_destroy(&t->ids);
	t->nobj = t->nfree = 0;
	t->live = 0;
	for (uint64_t s = 0; s < t->nsites; s++)
		t->site[s].live = 0;
}

static int tl_pass(struct tl *t, struct trace_reader *r)
{
	struct trace_event ev;
	int rc;

	hmap_init(&t->ids);
	while ((rc = trace_reader_next(r, &ev)) > 0) {
		uint64_t ends;
		unsigned int what = trace_event_objects(&ev, &ends);

		rc = what & TRACE_OBJ_ENDS ? tl_free(t, ends) : 0;
		if (!rc && what & TRACE_OBJ_MAKES)
			rc = tl_alloc(t, &ev);
		if (rc)
			return rc;
		t->last_time = ev.time_ns;
		sample(t, ev.time_ns);
	}
	return rc < 0 ? cmd_read_error(r, rc) : 0;
}

/* An error of tl_pass's callees: memory, or the reader's (a stack). */
static int tl_error(struct tl *t, int rc)
{
	if (rc == -ENOMEM || rc == -E2BIG) {
		fprintf(stderr, "uslab report: out of memory\n");
		return 1;
	}
	return rc < 0 ? cmd_read_error(t->r, rc) : rc;
}

static void site_name(struct tl *t, struct symbolizer *sym, uint32_t s, char *buf, size_t len)
{
	const struct trace_object *o;
	uint64_t a;
	struct sym_info si;

	if (t->by_class) {
		if (s < NR_KMALLOC_CLASSES)
			snprintf(buf, len, "kmalloc-%u class", kmalloc_info[s].size);
		else
			snprintf(buf, len, "above kmalloc-%u", (unsigned int)KMALLOC_MAX_CACHE_SIZE);
		return;
	}
	a = t->site[s].addr;
	o = report_object_of(&t->maps, t->site[s].proc, a);
	if (o) {
		if (!symbolize(sym, o->path, a - 1 - o->start + o->offset, &si) && si.func[0]) {
			if (si.file[0]) {
				const char *b = strrchr(si.file, '/');

				snprintf(buf, len, "%.200s (%.200s:%d)", si.func, b ? b + 1 : si.file, si.line);
			} else {
				snprintf(buf, len, "%.400s", si.func);
			}
		} else {
			const char *b = strrchr(o->path, '/');

			snprintf(buf, len, "%s+0x%" PRIx64, b ? b + 1 : o->path, a - o->start + o->offset);
		}
		trace_printable(buf, buf, len);
		return;
	}
	snprintf(buf, len, "?? [0x%" PRIx64 "]", a);
}

/* report's series: the buckets, each value carried over empty ones. */
static int report_draw(struct tl *t, const char *out, const char *trace, char names[][512])
{
	uint64_t *ys[TL_SITES + 1];
	const char *nm[TL_SITES + 1];
	double *x = calloc(TL_BUCKETS, sizeof(double));
	uint64_t *y = calloc((size_t)TL_BUCKETS * (TL_SITES + 1), sizeof(uint64_t));
	char title[1024];
	struct timeline_plot p = {
		.who = "uslab report", .title = title, .xlabel = "time (s)", .xunit = "s",
		.ylabel = "live", .npts = TL_BUCKETS, .x = x, .nseries = t->nchosen + 1,
		.names = nm, .y = ys, .peak_x = (double)t->peak_time / 1e9, .peak_y = t->peak,
	};
	int rc;

	if (!x || !y) {
		free(x);
		free(y);
		return -ENOMEM;
	}
	snprintf(title, sizeof(title), "Live bytes over time: %s%s", trace,
		 cmd_truncated ? " (truncated: its complete chunks only)" : "");
	for (uint32_t k = 0; k <= t->nchosen; k++) {
		ys[k] = y + (size_t)k * TL_BUCKETS;
		nm[k] = k ? names[k - 1] : "total";
	}
	for (uint32_t b = 0; b < TL_BUCKETS; b++) {
		x[b] = (double)b / (TL_BUCKETS - 1) * (double)t->duration / 1e9;
		for (uint32_t k = 0; k <= t->nchosen; k++)
			ys[k][b] = !t->seen[b] ? (b ? ys[k][b - 1] : 0) :
				   k ? t->site_at[k - 1][b] : t->total_max[b];
	}
	rc = timeline_draw(&p, out);
	free(x);
	free(y);
	return rc;
}

int report_timeline(const char *trace, const char *out)
{
	struct tl *t = calloc(1, sizeof(*t));
	struct symbolizer *sym = NULL;
	struct trace_reader *r;
	char (*names)[512] = NULL;
	int rc = 1;

	if (!t)
		return 1;
	if (!strcmp(trace, "-")) {
		fprintf(stderr, "uslab report: --timeline reads the trace twice: a file, not standard input\n");
		free(t);
		return 2;
	}
	r = cmd_open_trace_as("uslab report", trace);
	if (!r)
		goto out;
	t->r = r;
	t->m = trace_reader_meta(r);
	/* the mappings loaded, the stacks read as the events name them */
	rc = report_maps_init(&t->maps, r);
	if (rc) {
		rc = cmd_read_error(r, rc);
		goto close;
	}
	rc = 1;
	hmap_init(&t->site_of_stack);
	hmap_init(&t->site_by_addr);
	if (!t->m->nstacks && class_sites(t))
		goto nomem;
	rc = tl_pass(t, r);
	if (rc) {
		rc = tl_error(t, rc);
		goto close;
	}
	t->duration = t->last_time;
	/* the sites with the highest own peaks */
	for (t->nchosen = 0; t->nchosen < TL_SITES; t->nchosen++) {
		int best = -1;

		for (uint64_t s = 0; s < t->nsites; s++) {
			bool taken = false;

			for (uint32_t k = 0; k < t->nchosen; k++)
				taken |= t->chosen[k] == (int)s;
			if (!taken && t->site[s].peak && (best < 0 || t->site[s].peak > t->site[best].peak))
				best = (int)s;
		}
		if (best < 0)
			break;
		t->chosen[t->nchosen] = best;
	}
	names = calloc(TL_SITES, sizeof(*names));
	sym = symbolizer_new();
	if (!names || !sym)
		goto nomem;
	for (uint32_t k = 0; k < t->nchosen; k++)
		site_name(t, sym, (uint32_t)t->chosen[k], names[k], sizeof(names[k]));
	/* pass 2: the samples (the file again: the process table already said
	 * which process this is) */
	trace_reader_close(r);
	r = cmd_open_trace_as("uslab report", trace);
	if (!r)
		goto out;
	t->r = r;
	t->m = trace_reader_meta(r);
	report_maps_free(&t->maps);
	rc = report_maps_init(&t->maps, r);
	if (rc) {
		rc = cmd_read_error(r, rc);
		goto close;
	}
	tl_reset(t);
	t->pass2 = true;
	rc = tl_pass(t, r);
	if (rc) {
		rc = tl_error(t, rc);
		goto close;
	}
	rc = report_draw(t, out, trace, names);
	if (rc < 0) {
		fprintf(stderr, "uslab report: %s: %s\n", out, strerror(-rc));
		rc = 1;
	}
	goto close;
nomem:
	fprintf(stderr, "uslab report: out of memory\n");
	rc = 1;
close:
	trace_reader_close(r);
out:
	hmap_destroy(&t->ids);
	hmap_destroy(&t->site_by_addr);
	free(t->obj);
	free(t->free_obj);
	hmap_destroy(&t->site_of_stack);
	report_maps_free(&t->maps);
	free(t->site);
	free(names);
	symbolizer_free(sym);
	free(t);
	return rc;
}
