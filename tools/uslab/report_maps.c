// SPDX-License-Identifier: MIT
/*
 * What the call-stack reports share (report --sort callsite, --folded,
 * --flamegraph, --callsite N, --timeline): the mapping of a frame, found by
 * binary search over the object table sorted by (process, start); the
 * allocation wrappers whose frames are charged to their caller
 * (--wrappers); a frame's names. Memory: 4 bytes and 1 byte an object
 * beside the table; time: a search per lookup, never a scan of the table.
 * The stacks themselves are read one at a time (trace_reader_stack()) by
 * each report, which keeps state only for the stacks its events name.
 * No locks: one report, one thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/uslab/builtin.h"

/* ---- allocation wrappers: --wrappers ----------------------------------- */

#define WRAPPERS_DEFAULT	"libc.so,ld-linux,ld64.so,ld.so,libstdc++.so"

static char wrapper_list[1024] = WRAPPERS_DEFAULT;

const char *report_opt_wrappers(const struct cli_opt *opt, const char *arg)
{
	(void)opt;
	if (strlen(arg) >= sizeof(wrapper_list) || strchr(arg, ';'))
		return "a comma-separated list of file-name prefixes, or none";
	snprintf(wrapper_list, sizeof(wrapper_list), "%s", strcmp(arg, "none") ? arg : "");
	return NULL;
}

/* Does the file name of @path start with one of the list's prefixes? */
static bool is_wrapper_path(const char *path)
{
	const char *base = strrchr(path, '/'), *p = wrapper_list;

	base = base ? base + 1 : path;
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n && !strncmp(base, p, n))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/* ---- the object table, sorted ------------------------------------------ */

static int cmp_obj(const void *a, const void *b, void *arg)
{
	const struct trace_object *o = arg, *x = &o[*(const uint32_t *)a],
		*y = &o[*(const uint32_t *)b];

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

int report_maps_init(struct report_maps *rm, struct trace_reader *r)
{
	int rc;

	memset(rm, 0, sizeof(*rm));
	rc = trace_reader_load_objects(r);
	if (rc)
		return rc;
	rm->m = trace_reader_meta(r);
	rm->by_start = malloc((rm->m->nobjects ? rm->m->nobjects : 1) * sizeof(*rm->by_start));
	rm->wrapper = malloc(rm->m->nobjects ? rm->m->nobjects : 1);
	if (!rm->by_start || !rm->wrapper) {
		report_maps_free(rm);
		return -ENOMEM;
	}
	memset(rm->wrapper, -1, rm->m->nobjects);
	for (uint32_t i = 0; i < rm->m->nobjects; i++)
		rm->by_start[i] = i;
	qsort_r(rm->by_start, rm->m->nobjects, sizeof(*rm->by_start), cmp_obj,
		(void *)rm->m->objects);
	return 0;
}

void report_maps_free(struct report_maps *rm)
{
	free(rm->by_start);
	free(rm->wrapper);
	rm->by_start = NULL;
	rm->wrapper = NULL;
}

/* The mapping of process @proc holding @addr: of its mappings that start
 * at or below it, the one that starts last (the earliest entry on a tie).
 * Return: its index in m->objects, or -1. */
static int64_t object_index(const struct report_maps *rm, uint32_t proc, uint64_t addr)
{
	const struct trace_object *o = rm->m->objects;
	uint32_t lo = 0, hi = rm->m->nobjects;
	uint64_t start;

	while (lo < hi) {	/* the first entry past (proc, addr) */
		uint32_t mid = lo + (hi - lo) / 2;
		const struct trace_object *x = &o[rm->by_start[mid]];

		if (x->proc < proc || (x->proc == proc && x->start <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || o[rm->by_start[lo - 1]].proc != proc)
		return -1;
	/* ties on start: the earliest entry, the first of them (a second
	 * search, not a walk: a table may hold a million equal starts) */
	start = o[rm->by_start[lo - 1]].start;
	hi = lo - 1;
	lo = 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct trace_object *x = &o[rm->by_start[mid]];

		if (x->proc < proc || (x->proc == proc && x->start < start))
			lo = mid + 1;
		else
			hi = mid;
	}
	return addr < o[rm->by_start[lo]].end ? (int64_t)rm->by_start[lo] : -1;
}

const struct trace_object *report_object_of(const struct report_maps *rm, uint32_t proc,
					    uint64_t addr)
{
	int64_t i = object_index(rm, proc, addr);

	return i < 0 ? NULL : &rm->m->objects[i];
}

static bool frame_is_wrapper(struct report_maps *rm, uint32_t proc, uint64_t addr)
{
	int64_t o = object_index(rm, proc, addr);

	if (o < 0)
		return false;
	if (rm->wrapper[o] < 0)
		rm->wrapper[o] = is_wrapper_path(rm->m->objects[o].path);
	return rm->wrapper[o];
}

uint32_t report_wrapper_frames(struct report_maps *rm, const struct trace_stack *t)
{
	uint32_t k = 0;

	while (k < t->nframes && frame_is_wrapper(rm, t->proc, t->frames[k]))
		k++;
	/* all of it inside the wrappers (the loader at start): keep it all */
	return k < t->nframes ? k : 0;
}

/* ---- a frame's names ----------------------------------------------------- */

void report_frame_names(const struct report_maps *rm, struct symbolizer *sym, uint32_t proc,
			uint64_t addr, char *func, size_t flen, char *full, size_t len)
{
	const struct trace_object *o = report_object_of(rm, proc, addr);
	struct sym_info si;

	if (!o) {
		snprintf(func, flen, "?? [0x%" PRIx64 "]", addr);
		snprintf(full, len, "%s", func);
		return;
	}
	/* a return address: the call is the byte before it */
	if (symbolize(sym, o->path, addr - 1 - o->start + o->offset, &si) || !si.func[0]) {
		const char *b = strrchr(o->path, '/');

		snprintf(func, flen, "%s+0x%" PRIx64, b ? b + 1 : o->path,
			 addr - o->start + o->offset);
		snprintf(full, len, "%s", func);
		return;
	}
	snprintf(func, flen, "%s", si.func);
	if (si.file[0])
		snprintf(full, len, "%s (%s:%d)", si.func, si.file, si.line);
	else
		snprintf(full, len, "%s", si.func);
}

int report_stacks_walk(struct trace_reader *r, const char *path, struct report_maps *rm,
		       struct symbolizer **sym, struct hmap **byproc, uint32_t *nprocs,
		       int (*end)(void *ctx, const struct trace_event *ev, uint64_t id),
		       int (*make)(void *ctx, const struct trace_event *ev), void *ctx)
{
	const struct trace_meta *m = trace_reader_meta(r);
	int rc;

	if (!m->nstacks) {
		fprintf(stderr, "uslab report: %s: no call stacks in this trace (record it with 'uslab record -g')\n",
			path);
		return 1;
	}
	/* the tables are checked at open; the mappings are loaded, the
	 * stacks read one at a time as the events name them (trace.h) */
	rc = report_maps_init(rm, r);
	if (rc)
		return rc;
	*sym = symbolizer_new();
	*nprocs = m->nprocs ? m->nprocs : 1;
	*byproc = calloc(*nprocs, sizeof(**byproc));	/* each made at first use */
	if (!*sym || !*byproc)
		return -ENOMEM;
	return report_walk(r, end, make, ctx);
}
