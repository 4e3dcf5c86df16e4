// SPDX-License-Identifier: MIT
/*
 * `uslab report --sort callsite[,size] [--children] TRACE`: heaptrack's core
 * view from a `record -g` trace. Each allocation is charged to its call
 * site (the return address in the allocator's caller, symbolized to
 * function, file and line with libdw), or with --children to every function
 * on its call stack once (callers fold in what their callees allocate). Per
 * row: allocations, bytes, peak live bytes (the row's own peak over time),
 * bytes leaked (still live at the end), and temporary allocations
 * (heaptrack's definition: freed by the same thread before it allocated
 * anything else). One streaming pass; memory follows the live objects and
 * the distinct stacks. No locks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/uslab/builtin.h"

#define MAX_IDS		((uint64_t)1 << 30)

struct row {
	char *name;			/* "func (file:line)" or "object+0xoff" */
	uint64_t size;			/* --sort callsite,size: the size */
	uint64_t allocs, bytes, live, peak, temporary;
};

struct stack_rows {
	bool done;
	uint32_t n;			/* rows it charges */
	uint32_t *rows;
};

struct cs {
	const struct trace_meta *m;
	struct symbolizer *sym;
	bool by_size, children;
	struct row *rows;
	uint32_t nrows, cap;
	/* name (+ size) -> row, open addressing */
	uint32_t *slots;
	uint32_t mask;
	struct stack_rows *st;		/* per stack */
	struct { uint64_t size; uint32_t stack; bool used; } *live;
	uint64_t nlive;
	uint64_t *last_alloc;		/* per thread: id of its last allocation */
	uint32_t nthreads;
	uint64_t with_stack, without;
};

static uint64_t str_hash(const char *s, uint64_t size)
{
	uint64_t h = 1469598103934665603ull ^ size;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

static int row_of(struct cs *c, const char *name, uint64_t size, uint32_t *out)
{
	uint64_t h = str_hash(name, size);
	uint32_t i;

	if ((c->nrows + 1) * 2 > c->mask) {
		uint32_t cap = c->mask ? (c->mask + 1) * 2 : 1024, *s = calloc(cap, sizeof(*s));

		if (!s)
			return -ENOMEM;
		for (uint32_t k = 0; k < c->nrows; k++) {
			for (i = (uint32_t)str_hash(c->rows[k].name, c->rows[k].size) & (cap - 1);
			     s[i]; i = (i + 1) & (cap - 1))
				;
			s[i] = k + 1;
		}
		free(c->slots);
		c->slots = s;
		c->mask = cap - 1;
	}
	for (i = (uint32_t)h & c->mask; c->slots[i]; i = (i + 1) & c->mask) {
		struct row *r = &c->rows[c->slots[i] - 1];

		if (r->size == size && !strcmp(r->name, name)) {
			*out = c->slots[i] - 1;
			return 0;
		}
	}
	if (c->nrows == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 256;
		struct row *r = realloc(c->rows, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		c->rows = r;
		c->cap = cap;
	}
	memset(&c->rows[c->nrows], 0, sizeof(struct row));
	c->rows[c->nrows].name = strdup(name);
	c->rows[c->nrows].size = size;
	if (!c->rows[c->nrows].name)
		return -ENOMEM;
	c->slots[i] = ++c->nrows;
	*out = c->nrows - 1;
	return 0;
}

/* "func (file:line)" for one frame of process @proc. */
static void frame_name(struct cs *c, uint32_t proc, uint64_t addr, bool func_only,
		       char *buf, size_t len)
{
	const struct trace_object *o = NULL;
	struct sym_info si;

	for (uint32_t i = 0; i < c->m->nobjects; i++)
		if (c->m->objects[i].proc == proc && addr >= c->m->objects[i].start &&
		    addr < c->m->objects[i].end) {
			o = &c->m->objects[i];
			break;
		}
	if (!o) {
		snprintf(buf, len, "?? [0x%" PRIx64 "]", addr);
		return;
	}
	/* a return address: the call is the byte before it */
	if (symbolize(c->sym, o->path, addr - 1 - o->start + o->offset, &si) || !si.func[0]) {
		const char *b = strrchr(o->path, '/');

		snprintf(buf, len, "%s+0x%" PRIx64, b ? b + 1 : o->path,
			 addr - o->start + o->offset);
		return;
	}
	if (func_only || !si.file[0])
		snprintf(buf, len, "%s", si.func);
	else
		snprintf(buf, len, "%s (%s:%d)", si.func, si.file, si.line);
}

/* The rows a stack charges: its call site, or each function once. */
static int stack_rows(struct cs *c, uint32_t sid, uint64_t size, struct stack_rows **out)
{
	struct stack_rows *sr = &c->st[sid - 1];
	const struct trace_stack *t = &c->m->stacks[sid - 1];
	char name[1024];
	uint32_t row, k0;
	int rc;

	if (sr->done && !c->by_size) {
		*out = sr;
		return 0;
	}
	/* frames inside the allocation wrappers: charged to their caller */
	k0 = report_wrapper_frames(c->m, t);
	if (c->by_size) {	/* keyed by size too: one row, looked up each time */
		if (!sr->rows) {
			sr->rows = malloc(sizeof(*sr->rows));
			if (!sr->rows)
				return -ENOMEM;
		}
		if (t->nframes)
			frame_name(c, t->proc, t->frames[k0], false, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "(empty stack)");
		rc = row_of(c, name, size, &row);
		if (rc)
			return rc;
		sr->rows[0] = row;
		sr->n = 1;
		*out = sr;
		return 0;
	}
	sr->rows = malloc((t->nframes ? t->nframes : 1) * sizeof(*sr->rows));
	if (!sr->rows)
		return -ENOMEM;
	for (uint32_t k = k0; k < (c->children ? t->nframes : min_t(uint32_t, t->nframes, k0 + 1)); k++) {
		bool dup = false;

		frame_name(c, t->proc, t->frames[k], c->children, name, sizeof(name));
		rc = row_of(c, name, 0, &row);
		if (rc)
			return rc;
		for (uint32_t j = 0; j < sr->n && !dup; j++)	/* recursion: once */
			dup = sr->rows[j] == row;
		if (!dup)
			sr->rows[sr->n++] = row;
	}
	if (!sr->n) {
		rc = row_of(c, "(empty stack)", 0, &row);
		if (rc)
			return rc;
		sr->rows[sr->n++] = row;
	}
	sr->done = true;
	*out = sr;
	return 0;
}

static int on_alloc(struct cs *c, const struct trace_event *ev)
{
	struct stack_rows *sr;
	int rc;

	if (!ev->stack) {
		c->without++;
		return 0;
	}
	c->with_stack++;
	rc = stack_rows(c, ev->stack, ev->size, &sr);
	if (rc)
		return rc;
	for (uint32_t k = 0; k < sr->n; k++) {
		struct row *r = &c->rows[sr->rows[k]];

		r->allocs++;
		r->bytes += ev->size;
		if (ev->id) {
			r->live += ev->size;
			if (r->live > r->peak)
				r->peak = r->live;
		}
	}
	if (!ev->id)
		return 0;
	rc = grow_array((void **)&c->live, &c->nlive, ev->id + 1, sizeof(*c->live), MAX_IDS);
	if (rc)
		return rc;
	c->live[ev->id].size = ev->size;
	c->live[ev->id].stack = ev->stack;
	c->live[ev->id].used = true;
	c->last_alloc[ev->tid] = ev->id;
	return 0;
}

static int on_free(struct cs *c, const struct trace_event *ev, uint64_t id)
{
	struct stack_rows *sr;
	bool temporary;
	int rc;

	if (!id || id >= c->nlive || !c->live[id].used)
		return 0;
	temporary = c->last_alloc[ev->tid] == id;
	c->live[id].used = false;
	rc = stack_rows(c, c->live[id].stack, c->live[id].size, &sr);
	if (rc)
		return rc;
	for (uint32_t k = 0; k < sr->n; k++) {
		struct row *r = &c->rows[sr->rows[k]];

		r->live -= c->live[id].size;
		r->temporary += temporary;
	}
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->allocs != y->allocs)
		return x->allocs > y->allocs ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

int report_callsites(struct trace_reader *r, const char *path, bool by_size,
		     bool children, unsigned int nrows_max)
{
	struct cs c = { .m = trace_reader_meta(r), .by_size = by_size, .children = children };
	struct trace_event ev;
	uint64_t tids;
	int rc;

	if (!c.m->nstacks) {
		fprintf(stderr, "uslab report: %s: no call stacks in this trace (record it with 'uslab record -g')\n",
			path);
		return 1;
	}
	c.sym = symbolizer_new();
	c.st = calloc(c.m->nstacks, sizeof(*c.st));
	tids = c.m->nthreads ? c.m->nthreads : 1;
	c.last_alloc = calloc(tids, sizeof(*c.last_alloc));
	c.nthreads = (uint32_t)tids;
	if (!c.sym || !c.st || !c.last_alloc) {
		rc = -ENOMEM;
		goto out;
	}
	while ((rc = trace_reader_next(r, &ev)) > 0) {
		if (ev.tid >= c.nthreads) {
			uint64_t n = c.nthreads;

			rc = grow_array((void **)&c.last_alloc, &n, (uint64_t)ev.tid + 1,
				  sizeof(*c.last_alloc), 1u << 20);
			if (rc)
				goto out;
			c.nthreads = (uint32_t)n;
		}
		if (trace_op_is_free(ev.op)) {
			rc = on_free(&c, &ev, ev.id);
		} else if (ev.op == TRACE_OP_REALLOC) {
			rc = 0;
			if (ev.old_id && (ev.id || !ev.size))
				rc = on_free(&c, &ev, ev.old_id);
			if (!rc && (ev.id || ev.size))
				rc = on_alloc(&c, &ev);
		} else {
			rc = on_alloc(&c, &ev);
		}
		if (rc)
			goto out;
	}
	if (rc < 0 && (rc = cmd_read_error(r, rc)))	/* truncated: what came before */
		goto out_free;
	qsort(c.rows, c.nrows, sizeof(*c.rows), cmp_rows);
	printf("# %s, %" PRIu64 " allocations with a call stack%s\n",
	       children ? "functions, each charged once for every allocation below it (--children)" :
	       by_size ? "call sites by size" : "call sites (the allocator's callers)",
	       c.with_stack, c.without ? " (some without one)" : "");
	printf("# %12s %14s %14s %14s %12s  %s%s\n", "allocations", "bytes", "peak live",
	       "leaked", "temporary", by_size ? "size  " : "", children ? "function" : "call site");
	for (uint32_t i = 0; i < c.nrows && i < nrows_max; i++) {
		const struct row *w = &c.rows[i];

		printf("  %12" PRIu64 " %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %12" PRIu64 "  ",
		       w->allocs, w->bytes, w->peak, w->live, w->temporary);
		if (by_size)
			printf("%-6" PRIu64 " ", w->size);
		printf("%s\n", w->name);
	}
	if (c.nrows > nrows_max)
		printf("  ... %u more rows (--rows N)\n", c.nrows - nrows_max);
	rc = 0;
out:
	if (rc == -ENOMEM || rc == -E2BIG) {
		fprintf(stderr, "uslab report: %s: %s\n", path,
			rc == -E2BIG ? "object id too large" : strerror(-rc));
		rc = 1;
	}
out_free:
	for (uint32_t i = 0; i < c.nrows; i++)
		free(c.rows[i].name);
	free(c.rows);
	free(c.slots);
	for (uint32_t i = 0; c.st && i < c.m->nstacks; i++)
		free(c.st[i].rows);
	free(c.st);
	free(c.live);
	free(c.last_alloc);
	symbolizer_free(c.sym);
	return rc;
}
