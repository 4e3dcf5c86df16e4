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
 * anything else). One streaming pass; memory follows the live objects (a
 * keyed table from id to a pool, never an array indexed by id) and the
 * distinct stacks. Each distinct frame of a process is symbolized once
 * (a table per process from address to name), each stack's rows found once
 * (--sort callsite,size: its call site's name, then the row of the size),
 * and a frame's mapping is found by binary search: time follows the events
 * and the distinct frames, not their product with the mappings. Names are
 * printed escaped (a path or a symbol is the file's text). No locks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/uslab/builtin.h"

struct row {
	char *name;			/* "func (file:line)" or "object+0xoff" */
	uint64_t size;			/* --sort callsite,size: the size */
	uint64_t allocs, bytes, live, peak, temporary;
};

struct stack_rows {
	bool done;
	uint32_t n;			/* rows it charges */
	uint32_t *rows;
	/* --sort callsite,size: the names it charges (its call site, or with
	 * --children each function once), a row of each by the size met */
	const char **sites;
	uint32_t nsites;
};

struct live {
	uint64_t size;
	uint32_t stack;
	uint32_t next_free;		/* index + 1 of the next free slot */
};

struct cs {
	struct trace_reader *r;
	const struct trace_meta *m;
	struct symbolizer *sym;
	bool by_size, children;
	struct row *rows;
	uint32_t nrows, cap;
	/* name (+ size) -> row, open addressing */
	uint32_t *slots;
	uint32_t mask;
	/* per stack met: stack id -> index in st[] (a table the size of the
	 * stacks the events name, not of the stack table) */
	struct hmap st_ids;
	struct stack_rows *st;
	uint64_t nst, st_cap;
	uint64_t frames_buf[TRACE_STACK_MAX];	/* trace_reader_stack()'s */
	struct hmap ids;		/* live id -> slot in live[] */
	struct live *live;
	uint64_t live_cap, nlive, free_slot;	/* free_slot: index + 1 */
	struct hmap last_alloc;		/* thread -> id + 1 of its last allocation */
	/* frame names: per process, address -> index in names[] */
	struct hmap *frames;
	uint32_t nframe_maps;
	char **names;
	uint64_t nnames, names_cap;
	struct report_maps maps;	/* the mappings, sorted (report_maps.c) */
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

/* The name of one frame of process @proc, symbolized once per address
 * (one kind of name a run: c->children's). Return: it, or NULL (memory). */
static const char *frame_name(struct cs *c, uint32_t proc, uint64_t addr)
{
	struct hmap *h = proc < c->nframe_maps ? &c->frames[proc] : NULL;
	uint64_t *v = h && h->slots && addr != UINT64_MAX ? hmap_find(h, addr) : NULL;
	char func[1024], full[1024 + 600], *name;

	if (v)
		return c->names[*v];
	report_frame_names(&c->maps, c->sym, proc, addr, func, sizeof(func), full, sizeof(full));
	if (grow_array((void **)&c->names, &c->names_cap, c->nnames + 1, sizeof(*c->names),
		       UINT32_MAX))
		return NULL;
	name = strdup(c->children ? func : full);
	if (!name)
		return NULL;
	if (h && addr != UINT64_MAX) {
		if (!h->slots)
			hmap_init(h);
		if (hmap_insert(h, addr, c->nnames)) {
			free(name);
			return NULL;
		}
	}
	c->names[c->nnames++] = name;
	return name;
}

/* --sort callsite,size: the names stack @t charges from frame @k0 on, into
 * @sr->sites once (and room for their rows). Return: 0, -ENOMEM. */
static int stack_sites(struct cs *c, const struct trace_stack *t, uint32_t k0,
		       struct stack_rows *sr)
{
	uint32_t end = c->children ? t->nframes : min_t(uint32_t, t->nframes, k0 + 1);
	uint32_t cap = end > k0 ? end - k0 : 1;

	sr->sites = malloc(cap * sizeof(*sr->sites));
	sr->rows = malloc(cap * sizeof(*sr->rows));
	if (!sr->sites || !sr->rows)
		return -ENOMEM;
	for (uint32_t k = k0; k < end; k++) {
		const char *name = frame_name(c, t->proc, t->frames[k]);
		bool dup = false;

		if (!name)
			return -ENOMEM;
		for (uint32_t j = 0; j < sr->nsites && !dup; j++)	/* recursion: once */
			dup = !strcmp(sr->sites[j], name);
		if (!dup)
			sr->sites[sr->nsites++] = name;
	}
	if (!sr->nsites)
		sr->sites[sr->nsites++] = "(empty stack)";
	return 0;
}

/* The rows a stack charges: its call site, or each function once; with
 * --sort callsite,size those names' rows of @size. */
static int stack_rows(struct cs *c, uint32_t sid, uint64_t size, struct stack_rows **out)
{
	uint64_t *slot = hmap_find(&c->st_ids, sid);
	struct stack_rows *sr;
	struct trace_stack stack, *t = &stack;
	const char *name;
	uint32_t row, k0 = 0;
	int rc;

	if (!slot) {
		rc = grow_array((void **)&c->st, &c->st_cap, c->nst + 1, sizeof(*c->st),
				UINT32_MAX);
		if (!rc)
			rc = hmap_insert(&c->st_ids, sid, c->nst);
		if (rc)
			return rc;
		sr = &c->st[c->nst++];
	} else {
		sr = &c->st[*slot];
	}
	if (sr->done && !c->by_size) {
		*out = sr;
		return 0;
	}
	if (!(c->by_size && sr->sites)) {
		rc = trace_reader_stack(c->r, sid, t, c->frames_buf);
		if (rc)
			return rc;
		/* frames inside the allocation wrappers: charged to their caller */
		k0 = report_wrapper_frames(&c->maps, t);
	}
	if (c->by_size) {	/* keyed by size too: the names once, the rows each time */
		if (!sr->sites) {
			rc = stack_sites(c, t, k0, sr);
			if (rc)
				return rc;
		}
		for (uint32_t j = 0; j < sr->nsites; j++) {
			rc = row_of(c, sr->sites[j], size, &sr->rows[j]);
			if (rc)
				return rc;
		}
		sr->n = sr->nsites;
		*out = sr;
		return 0;
	}
	sr->rows = malloc((t->nframes ? t->nframes : 1) * sizeof(*sr->rows));
	if (!sr->rows)
		return -ENOMEM;
	for (uint32_t k = k0; k < (c->children ? t->nframes : min_t(uint32_t, t->nframes, k0 + 1)); k++) {
		bool dup = false;

		name = frame_name(c, t->proc, t->frames[k]);
		if (!name)
			return -ENOMEM;
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

/* Object @ev->id is live, charged to @ev->stack: a slot of the pool
 * (reused once freed), found by id in c->ids; the thread's last. */
static int live_add(struct cs *c, const struct trace_event *ev)
{
	uint64_t slot, *last;
	int rc;

	/* allocated again while live (a damaged trace): the later one counts,
	 * the earlier one's bytes stay live */
	if (!hmap_remove(&c->ids, ev->id, &slot)) {
		c->live[slot].next_free = (uint32_t)c->free_slot;
		c->free_slot = slot + 1;
	}
	if (c->free_slot) {
		slot = c->free_slot - 1;
		c->free_slot = c->live[slot].next_free;
	} else {
		rc = grow_array((void **)&c->live, &c->live_cap, c->nlive + 1, sizeof(*c->live),
				UINT32_MAX);
		if (rc)
			return rc;
		slot = c->nlive++;
	}
	c->live[slot] = (struct live){ .size = ev->size, .stack = ev->stack };
	rc = hmap_insert(&c->ids, ev->id, slot);
	if (rc)
		return rc;
	last = hmap_find(&c->last_alloc, ev->tid);
	if (last)
		*last = ev->id + 1;
	else
		rc = hmap_insert(&c->last_alloc, ev->tid, ev->id + 1);
	return rc;
}

static int on_alloc(void *ctx, const struct trace_event *ev)
{
	struct cs *c = ctx;
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
	return live_add(c, ev);
}

static int on_free(void *ctx, const struct trace_event *ev, uint64_t id)
{
	struct cs *c = ctx;
	struct stack_rows *sr;
	uint64_t slot, *last;
	struct live *l;
	bool temporary;
	int rc;

	if (!id || hmap_remove(&c->ids, id, &slot))
		return 0;
	l = &c->live[slot];
	last = hmap_find(&c->last_alloc, ev->tid);
	temporary = last && *last == id + 1;
	rc = stack_rows(c, l->stack, l->size, &sr);
	if (rc)
		return rc;
	for (uint32_t k = 0; k < sr->n; k++) {
		struct row *r = &c->rows[sr->rows[k]];

		r->live -= l->size;
		r->temporary += temporary;
	}
	l->next_free = (uint32_t)c->free_slot;
	c->free_slot = slot + 1;
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
	int rc;

	c.r = r;
	hmap_init(&c.ids);
	hmap_init(&c.last_alloc);
	hmap_init(&c.st_ids);
	rc = report_stacks_walk(r, path, &c.maps, &c.sym, &c.frames, &c.nframe_maps,
					on_free, on_alloc, &c);
	if (rc)
		goto out;
	if (c.nrows)
		qsort(c.rows, c.nrows, sizeof(*c.rows), cmp_rows);
	printf("# %s, %" PRIu64 " allocations with a call stack%s\n",
	       children ? (by_size ? "functions by size, each charged once for every allocation below it (--children)" :
			   "functions, each charged once for every allocation below it (--children)") :
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
		trace_fput_printable(stdout, w->name);
		putchar('\n');
	}
	if (c.nrows > nrows_max)
		printf("  ... %u more rows (--rows N)\n", c.nrows - nrows_max);
	rc = 0;
out:
	rc = report_view_error(r, path, rc, "object id too large");
	for (uint32_t i = 0; i < c.nrows; i++)
		free(c.rows[i].name);
	free(c.rows);
	free(c.slots);
	for (uint64_t i = 0; i < c.nst; i++) {
		free(c.st[i].rows);
		free(c.st[i].sites);
	}
	free(c.st);
	if (c.st_ids.slots)
		hmap_destroy(&c.st_ids);
	free(c.live);
	if (c.ids.slots)
		hmap_destroy(&c.ids);
	if (c.last_alloc.slots)
		hmap_destroy(&c.last_alloc);
	for (uint32_t i = 0; c.frames && i < c.nframe_maps; i++)
		if (c.frames[i].slots)
			hmap_destroy(&c.frames[i]);
	free(c.frames);
	for (uint64_t i = 0; i < c.nnames; i++)
		free(c.names[i]);
	free(c.names);
	report_maps_free(&c.maps);
	symbolizer_free(c.sym);
	return rc;
}
