// SPDX-License-Identifier: MIT
/*
 * Whole call stacks of a `record -g` trace, for `uslab report`:
 *   --folded            one "outer;...;call site WEIGHT" line per stack (the
 *                       folded format of flamegraph.pl, speedscope, inferno)
 *   --flamegraph FILE   the same drawn as an interactive SVG of our own
 *   --callsite N        the full backtraces behind row N of --sort callsite
 * and the rule the call-site table shares with them: leading frames inside
 * the allocation wrappers of libc, the loader and libstdc++ (strdup,
 * getline, operator new, dlopen...) are charged to their caller
 * (--wrappers; report_maps.c, shared with them). Weights: allocations, bytes, the bytes each stack held at
 * the moment of the trace's peak (they add up to the peak), the bytes still
 * live at the end. One streaming pass; memory follows the distinct stacks
 * and the live objects. No locks: one report, one thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tools/uslab/builtin.h"

/* ---- frame names, cached by process and address --------------------------
 * Two process images may map different files at one address, so each
 * has its own table (as report_callsite.c's frame_name()). */

struct fname {
	uint32_t proc;
	char *func;			/* "func", or "object+0xoff", "?? [0x...]" */
	char *full;			/* "func (file:line)" as --sort callsite */
};

struct names {
	struct report_maps *maps;
	struct symbolizer *sym;
	struct hmap *byaddr;		/* by process: address -> index in v[] */
	uint32_t nmaps;			/* processes (1 without a table) */
	struct fname *v;
	uint64_t n, cap;
};

/* Names a terminal and a folded line can take: no control characters, no
 * ';' (the folded separator). */
static char *clean_dup(const char *s)
{
	char *d = strdup(s);

	for (char *p = d; p && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ';')
			*p = '?';
	return d;
}

/* The names report_callsite.c's frame_name() gives, cleaned. */
static int name_frame(struct names *nm, uint32_t proc, uint64_t addr, struct fname *out)
{
	char func[1024], full[1024 + 600];

	report_frame_names(nm->maps, nm->sym, proc, addr, func, sizeof(func), full, sizeof(full));
	out->proc = proc;
	out->func = clean_dup(func);
	out->full = clean_dup(full);
	if (!out->func || !out->full) {
		free(out->func);
		free(out->full);
		return -ENOMEM;
	}
	return 0;
}

/* The names of frame @addr of process @proc; NULL: no memory. Each
 * process image has its map; the address no map can key (UINT64_MAX, a
 * frame as any other in a trace) is named again each time, valid until
 * the next such frame. */
static const struct fname *frame(struct names *nm, uint32_t proc, uint64_t addr)
{
	static struct fname unkeyed;
	struct hmap *h;
	uint64_t *v;

	if (proc >= nm->nmaps)		/* the reader bounds it by the table */
		return NULL;
	if (addr == UINT64_MAX) {
		free(unkeyed.func);
		free(unkeyed.full);
		unkeyed.func = unkeyed.full = NULL;
		return name_frame(nm, proc, addr, &unkeyed) ? NULL : &unkeyed;
	}
	h = &nm->byaddr[proc];
	if (!h->slots)
		hmap_init(h);
	v = hmap_find(h, addr);
	if (v)
		return &nm->v[*v];
	if (grow_array((void **)&nm->v, &nm->cap, nm->n + 1, sizeof(*nm->v), UINT32_MAX) ||
	    name_frame(nm, proc, addr, &nm->v[nm->n]))
		return NULL;
	if (hmap_insert(h, addr, nm->n)) {
		free(nm->v[nm->n].func);
		free(nm->v[nm->n].full);
		return NULL;
	}
	return &nm->v[nm->n++];
}

/* ---- strings -> dense indices ------------------------------------------ */

struct strtab {
	char **s;
	uint32_t n;
	uint64_t cap;
	uint32_t *slots;		/* index + 1, open addressing */
	uint32_t mask;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

/* The index of @s, added when new (*@added). 0 or -ENOMEM. */
static int strtab_get(struct strtab *t, const char *s, uint32_t *idx, bool *added)
{
	uint32_t i;

	if ((uint64_t)(t->n + 1) * 2 > t->mask) {
		uint32_t cap = t->mask ? (t->mask + 1) * 2 : 1024, *sl = calloc(cap, sizeof(*sl));

		if (!sl)
			return -ENOMEM;
		for (uint32_t k = 0; k < t->n; k++) {
			for (i = (uint32_t)hash_str(t->s[k]) & (cap - 1); sl[i]; i = (i + 1) & (cap - 1))
				;
			sl[i] = k + 1;
		}
		free(t->slots);
		t->slots = sl;
		t->mask = cap - 1;
	}
	for (i = (uint32_t)hash_str(s) & t->mask; t->slots[i]; i = (i + 1) & t->mask)
		if (!strcmp(t->s[t->slots[i] - 1], s)) {
			*idx = t->slots[i] - 1;
			if (added)
				*added = false;
			return 0;
		}
	if (grow_array((void **)&t->s, &t->cap, (uint64_t)t->n + 1, sizeof(*t->s), UINT32_MAX - 1))
		return -ENOMEM;
	t->s[t->n] = strdup(s);
	if (!t->s[t->n])
		return -ENOMEM;
	t->slots[i] = ++t->n;
	*idx = t->n - 1;
	if (added)
		*added = true;
	return 0;
}

static void strtab_free(struct strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->slots);
}

/* ---- the pass ----------------------------------------------------------- */

struct stk {
	uint32_t sid;			/* its id in the stack table */
	uint64_t allocs, bytes, live;
	uint64_t at_peak, epoch;	/* live at the last peak, when epoch is old */
	uint32_t *groups, ngroups;	/* --callsite: rows it charges */
	bool grouped;
};

struct grp {				/* --callsite: a row of --sort callsite */
	uint64_t allocs, bytes, live, peak;
};

struct stacks {
	struct trace_reader *r;
	const struct trace_meta *m;
	const struct report_stacks_opts *o;
	struct report_maps maps;	/* the mappings, sorted (report_maps.c) */
	struct names nm;
	/* per stack met: stack id -> index in st[] (a table the size of the
	 * stacks the events name, not of the stack table) */
	struct hmap st_ids;
	struct stk *st;
	uint64_t nst, st_cap;
	struct trace_stack t;		/* the one read last (trace_reader_stack) */
	uint64_t frames_buf[TRACE_STACK_MAX];
	struct hmap ids;		/* live id -> index in obj[] */
	struct { uint64_t size; uint32_t stack; } *obj;	/* stack: index in st[] */
	uint64_t nobj, obj_cap;
	uint64_t *free_obj, nfree, free_cap;
	uint64_t live, peak, epoch;	/* epoch: peaks seen */
	uint64_t with_stack, without;
	struct strtab gnames;
	struct grp *g;
	uint64_t gcap;
};

/* Stack st[@i] read into s->t. */
static int read_stack(struct stacks *s, uint64_t i)
{
	return trace_reader_stack(s->r, s->st[i].sid, &s->t, s->frames_buf);
}

/* The index in st[] of stack @sid, added when new. */
static int stack_index(struct stacks *s, uint32_t sid, uint64_t *out)
{
	uint64_t *v = hmap_find(&s->st_ids, sid);
	int rc;

	if (v) {
		*out = *v;
		return 0;
	}
	rc = grow_array((void **)&s->st, &s->st_cap, s->nst + 1, sizeof(*s->st), UINT32_MAX);
	if (!rc)
		rc = hmap_insert(&s->st_ids, sid, s->nst);
	if (rc)
		return rc;
	memset(&s->st[s->nst], 0, sizeof(*s->st));
	s->st[s->nst].sid = sid;
	*out = s->nst++;
	return 0;
}

/* --callsite: the rows of stack st[@i] as report_callsite.c makes them. */
static int group_stack(struct stacks *s, uint64_t i)
{
	struct stk *k = &s->st[i];
	const struct trace_stack *t = &s->t;
	uint32_t k0, idx;
	bool added;
	int rc;

	rc = read_stack(s, i);
	if (rc)
		return rc;
	k0 = report_wrapper_frames(&s->maps, t);

	k->grouped = true;
	k->groups = malloc((t->nframes ? t->nframes : 1) * sizeof(*k->groups));
	if (!k->groups)
		return -ENOMEM;
	for (uint32_t f = k0; f < (s->o->children ? t->nframes : min_t(uint32_t, t->nframes, k0 + 1)); f++) {
		const struct fname *fn = frame(&s->nm, t->proc, t->frames[f]);
		bool dup = false;

		if (!fn)
			return -ENOMEM;
		rc = strtab_get(&s->gnames, s->o->children ? fn->func : fn->full, &idx, &added);
		if (rc)
			return rc;
		for (uint32_t j = 0; j < k->ngroups && !dup; j++)
			dup = k->groups[j] == idx;
		if (!dup)
			k->groups[k->ngroups++] = idx;
	}
	if (!k->ngroups) {
		rc = strtab_get(&s->gnames, "(empty stack)", &idx, &added);
		if (rc)
			return rc;
		k->groups[k->ngroups++] = idx;
	}
	return grow_array((void **)&s->g, &s->gcap, s->gnames.n, sizeof(*s->g), UINT32_MAX);
}

/* Stack st[@i]'s live bytes change by @delta (after a peak: first kept). */
static void stack_live(struct stacks *s, uint64_t i, int64_t delta)
{
	struct stk *k = &s->st[i];

	if (k->epoch != s->epoch) {
		k->at_peak = k->live;
		k->epoch = s->epoch;
	}
	k->live += (uint64_t)delta;
	for (uint32_t j = 0; j < k->ngroups; j++) {
		struct grp *g = &s->g[k->groups[j]];

		g->live += (uint64_t)delta;
		if (g->live > g->peak)
			g->peak = g->live;
	}
}

static int on_alloc(void *ctx, const struct trace_event *ev)
{
	struct stacks *s = ctx;
	struct stk *k;
	uint64_t i, si;
	int rc;

	if (!ev->stack) {
		s->without++;
		return 0;
	}
	s->with_stack++;
	rc = stack_index(s, ev->stack, &si);
	if (rc)
		return rc;
	k = &s->st[si];
	if (s->o->callsite && !k->grouped) {
		rc = group_stack(s, si);
		if (rc)
			return rc;
	}
	k->allocs++;
	k->bytes += ev->size;
	for (uint32_t j = 0; j < k->ngroups; j++) {
		s->g[k->groups[j]].allocs++;
		s->g[k->groups[j]].bytes += ev->size;
	}
	if (!ev->id)
		return 0;
	if (hmap_find(&s->ids, ev->id))		/* never freed: as report does */
		return 0;
	rc = obj_slot_take((void **)&s->obj, &s->nobj, &s->obj_cap, sizeof(*s->obj),
			   s->free_obj, &s->nfree, &s->ids, ev->id, &i);
	if (rc)
		return rc;
	s->obj[i].size = ev->size;
	s->obj[i].stack = (uint32_t)si;
	stack_live(s, si, (int64_t)ev->size);
	s->live += ev->size;
	if (s->live > s->peak) {	/* every stack's value now is its at-peak */
		s->peak = s->live;
		s->epoch++;
	}
	return 0;
}

static int on_free(void *ctx, const struct trace_event *ev, uint64_t id)
{
	struct stacks *s = ctx;
	uint64_t i;

	if (!id || hmap_remove(&s->ids, id, &i))
		return 0;
	stack_live(s, s->obj[i].stack, -(int64_t)s->obj[i].size);
	s->live -= s->obj[i].size;
	return obj_slot_put(&s->free_obj, &s->nfree, &s->free_cap, i);
}

static uint64_t weight_of(const struct stacks *s, const struct stk *k)
{
	switch (s->o->weight) {
	case REPORT_WEIGHT_BYTES:	return k->bytes;
	case REPORT_WEIGHT_PEAK:	return k->epoch == s->epoch ? k->at_peak : k->live;
	case REPORT_WEIGHT_LEAKED:	return k->live;
	default:			return k->allocs;
	}
}

/* ---- folded stacks ------------------------------------------------------ */

struct folded {
	char *line;			/* frames joined by ';' */
	uint64_t w;
};

static int append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);

	if (*len + n + 2 > *cap) {
		size_t c = (*cap ? *cap * 2 : 1024) + n;
		char *b = realloc(*buf, c);

		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = c;
	}
	if (*len)
		(*buf)[(*len)++] = ';';
	memcpy(*buf + *len, s, n + 1);
	*len += n;
	return 0;
}

/* Stack st[@i] as one folded line into @buf: outermost first, or with
 * --children from the call site outwards. */
static int fold_stack(struct stacks *s, uint64_t i0, char **buf, size_t *cap)
{
	const struct trace_stack *t = &s->t;
	uint32_t k0, n;
	char cut[48];
	size_t len = 0;
	int rc = read_stack(s, i0);

	if (rc)
		return rc;
	k0 = report_wrapper_frames(&s->maps, t);
	n = t->nframes;

	snprintf(cut, sizeof(cut), "[cut at %u frames]", n);
	if (t->cut && !s->o->children)
		rc = append(buf, &len, cap, cut);
	for (uint32_t i = 0; !rc && i < n - k0; i++) {
		uint32_t f = s->o->children ? k0 + i : n - 1 - i;
		const struct fname *fn = frame(&s->nm, t->proc, t->frames[f]);

		if (!fn)
			return -ENOMEM;
		rc = append(buf, &len, cap, fn->func);
	}
	if (!rc && t->cut && s->o->children)
		rc = append(buf, &len, cap, cut);
	if (!rc && !len)
		rc = append(buf, &len, cap, "(empty stack)");
	return rc;
}

/* Frame by frame: a stack sorts before its own callees' (';' and the end
 * below every character), so a frame's lines are contiguous. */
static int cmp_folded(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)((const struct folded *)a)->line;
	const unsigned char *y = (const unsigned char *)((const struct folded *)b)->line;

	for (;; x++, y++) {
		unsigned int cx = *x == ';' ? 1 : *x ? *x + 1u : 0;
		unsigned int cy = *y == ';' ? 1 : *y ? *y + 1u : 0;

		if (cx != cy)
			return cx < cy ? -1 : 1;
		if (!cx)
			return 0;
	}
}

/* The distinct folded lines of the weighted stacks, sorted. */
static int fold_all(struct stacks *s, struct folded **out, uint32_t *nout, uint64_t *total)
{
	struct strtab lines = { 0 };
	uint64_t *w = NULL, wcap = 0;
	struct folded *f = NULL;
	size_t cap = 0;
	char *buf = NULL;
	uint32_t idx;
	int rc = 0;

	*total = 0;
	for (uint64_t i = 0; i < s->nst && !rc; i++) {
		uint64_t v = weight_of(s, &s->st[i]);

		if (!v)
			continue;
		rc = fold_stack(s, i, &buf, &cap);
		if (!rc)
			rc = strtab_get(&lines, buf, &idx, NULL);
		if (!rc)
			rc = grow_array((void **)&w, &wcap, (uint64_t)idx + 1, sizeof(*w), UINT32_MAX);
		if (!rc) {
			w[idx] += v;
			*total += v;
		}
	}
	free(buf);
	if (!rc && lines.n) {
		f = malloc(lines.n * sizeof(*f));
		if (!f)
			rc = -ENOMEM;
	}
	if (rc) {
		strtab_free(&lines);
		free(w);
		return rc;
	}
	for (uint32_t i = 0; i < lines.n; i++) {
		f[i].line = lines.s[i];		/* moved */
		f[i].w = w[i];
	}
	free(lines.s);
	free(lines.slots);
	free(w);
	if (lines.n)
		qsort(f, lines.n, sizeof(*f), cmp_folded);
	*out = f;
	*nout = lines.n;
	return 0;
}

/* ---- the flame graph ---------------------------------------------------- */

struct fnode {
	const char *name;		/* into a folded line, up to ';' or the end */
	uint32_t len, depth;
	uint64_t x, w;
};

static const char *weight_names[] = {
	[REPORT_WEIGHT_ALLOCS] = "allocations",
	[REPORT_WEIGHT_BYTES] = "bytes allocated",
	[REPORT_WEIGHT_PEAK] = "bytes live at the peak",
	[REPORT_WEIGHT_LEAKED] = "bytes leaked (live at the end)",
};

static void xml_put(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		switch (s[i]) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(s[i], f);
		}
	}
}

/* A warm colour from the name, the same name the same colour; the cut
 * marks and the unsymbolized grey-blue. */
static void node_colour(const struct fnode *n, char *out, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	if (n->name[0] == '[' || (n->len > 2 && !strncmp(n->name, "??", 2))) {
		snprintf(out, len, "rgb(170,180,200)");
		return;
	}
	for (uint32_t i = 0; i < n->len; i++)
		h = (h ^ (uint8_t)n->name[i]) * 1099511628211ull;
	snprintf(out, len, "rgb(%u,%u,%u)", 205 + (unsigned int)(h % 50),
		 80 + (unsigned int)((h >> 8) % 140), 40 + (unsigned int)((h >> 16) % 50));
}

/* The script: hover names the frame and its share, click zooms into it,
 * a click on the root (or "Reset zoom") zooms out, labels fit their box. */
static const char flame_js[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"var W, total, nodes, details, unit;\n"
"function init(evt) {\n"
"  var svg = document.getElementsByTagName('svg')[0];\n"
"  W = +svg.getAttribute('data-width'); total = +svg.getAttribute('data-total');\n"
"  unit = svg.getAttribute('data-unit');\n"
"  details = document.getElementById('details');\n"
"  nodes = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  nodes.forEach(function (g) {\n"
"    g.fx = +g.getAttribute('data-x'); g.fw = +g.getAttribute('data-w');\n"
"    g.fd = +g.getAttribute('data-d'); g.fn = g.querySelector('title').textContent;\n"
"    g.onmouseover = function () { details.textContent = g.fn + ': ' + g.fw + ' ' + unit + ' (' + (100 * g.fw / total).toFixed(2) + '% of all)'; };\n"
"    g.onmouseout = function () { details.textContent = ' '; };\n"
"    g.onclick = function () { zoom(g); };\n"
"  });\n"
"  document.getElementById('reset').onclick = function () { zoom(nodes[0]); };\n"
"  zoom(nodes[0]);\n"
"}\n"
"function zoom(z) {\n"
"  var x0 = z.fx, w0 = z.fw, s = (W - 20) / w0;\n"
"  nodes.forEach(function (g) {\n"
"    var r = g.querySelector('rect'), t = g.querySelector('text');\n"
"    var inside = g.fx >= x0 && g.fx + g.fw <= x0 + w0 && g.fd >= z.fd;\n"
"    var above = g.fd < z.fd && g.fx <= x0 && g.fx + g.fw >= x0 + w0;\n"
"    if (!inside && !above) { g.style.display = 'none'; return; }\n"
"    g.style.display = '';\n"
"    var x = above ? 10 : 10 + (g.fx - x0) * s, w = above ? W - 20 : g.fw * s;\n"
"    r.setAttribute('x', x); r.setAttribute('width', Math.max(w - 0.5, 0.1));\n"
"    r.setAttribute('fill-opacity', above ? 0.5 : 1);\n"
"    t.setAttribute('x', x + 3);\n"
"    var n = Math.floor((w - 6) / 7);\n"
"    t.textContent = n < 3 ? '' : g.fn.length <= n ? g.fn : g.fn.substring(0, n - 2) + '..';\n"
"  });\n"
"  document.getElementById('reset').style.display = z === nodes[0] ? 'none' : '';\n"
"}\n"
"]]></script>\n";

#define FG_WIDTH	1200
#define FG_ROW		16
#define FG_TOP		50
#define FG_MIN_SHARE	1e-5	/* boxes narrower are left out (of 1200 px: 0.012 px) */

static int write_flamegraph(struct stacks *s, const struct folded *fl, uint32_t n,
			    uint64_t total, const char *path, const char *trace)
{
	struct fnode *nd = NULL;
	uint64_t open[TRACE_STACK_MAX + 2];	/* the path, as indices in nd[] */
	uint64_t nn = 0, ncap = 0, x = 0, kept = 0;
	uint32_t maxd = 0, nopen = 0;
	struct out_file o;
	char err[4200], col[32];
	FILE *f;
	int rc;

	/* the root, then one node per frame of each line not shared with the
	 * line before (the lines are in frame order: depth-first) */
	rc = grow_array((void **)&nd, &ncap, 1, sizeof(*nd), UINT32_MAX);
	if (rc)
		return rc;
	nd[nn++] = (struct fnode){ .name = "all", .len = 3, .w = total };
	open[nopen++] = 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *p = fl[i].line;
		uint32_t d = 1;

		while (*p) {
			uint32_t len = (uint32_t)strcspn(p, ";");

			if (d < nopen && nd[open[d]].len == len && !memcmp(nd[open[d]].name, p, len)) {
				nd[open[d]].w += fl[i].w;
			} else {
				nopen = d;
				if (d > TRACE_STACK_MAX)
					break;
				rc = grow_array((void **)&nd, &ncap, nn + 1, sizeof(*nd), UINT32_MAX);
				if (rc)
					goto out;
				nd[nn] = (struct fnode){ .name = p, .len = len, .depth = d, .x = x, .w = fl[i].w };
				open[nopen++] = nn++;
				if (d > maxd)
					maxd = d;
			}
			d++;
			p += len;
			if (*p)
				p++;
		}
		nopen = min_t(uint32_t, nopen, d);
		x += fl[i].w;
	}
	rc = cmd_out_fopen(&o, path, &f, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "uslab report: %s\n", err);
		rc = 1;
		goto out;
	}
	{
		int h = FG_TOP + (int)(maxd + 1) * FG_ROW + 40;
		const char *unit = s->o->weight == REPORT_WEIGHT_ALLOCS ? "allocations" : "bytes";

		fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			"viewBox=\"0 0 %d %d\" onload=\"init(evt)\" data-width=\"%d\" "
			"data-total=\"%" PRIu64 "\" data-unit=\"%s\" "
			"font-family=\"monospace\" font-size=\"11\">\n",
			FG_WIDTH, h, FG_WIDTH, h, FG_WIDTH, total, unit);
		fputs("<style>g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }"
		      " #reset { cursor: pointer; }</style>\n", f);
		fputs(flame_js, f);
		fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fbf7ee\"/>\n"
			"<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-family=\"sans-serif\">",
			FG_WIDTH / 2);
		xml_put(f, s->o->children ? "Call sites and their callers (--children): " :
			"Where memory is allocated: ", SIZE_MAX);
		xml_put(f, weight_names[s->o->weight], SIZE_MAX);
		fprintf(f, ", %" PRIu64 " in all</text>\n<text x=\"%d\" y=\"40\" text-anchor=\"middle\" fill=\"#555\">",
			total, FG_WIDTH / 2);
		xml_put(f, trace, SIZE_MAX);
		if (cmd_truncated)
			xml_put(f, " (truncated: its complete chunks only)", SIZE_MAX);
		fprintf(f, " (uslab report; hover: frame and share, click: zoom)</text>\n"
			"<text id=\"reset\" x=\"10\" y=\"22\" fill=\"#06c\" style=\"display:none\">Reset zoom</text>\n"
			"<text id=\"details\" x=\"10\" y=\"%d\"> </text>\n", h - 12);
		for (uint64_t i = 0; i < nn; i++) {
			const struct fnode *d = &nd[i];
			double px = 10.0 + (double)d->x * (FG_WIDTH - 20) / (double)total;
			double pw = (double)d->w * (FG_WIDTH - 20) / (double)total;
			/* the root at the bottom, callees above their callers */
			int y = FG_TOP + (int)(maxd - d->depth) * FG_ROW;

			if ((double)d->w < FG_MIN_SHARE * (double)total)
				continue;
			kept++;
			node_colour(d, col, sizeof(col));
			fprintf(f, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64
				"\" data-d=\"%u\"><title>", d->x, d->w, d->depth);
			xml_put(f, d->name, d->len);
			fprintf(f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
				"fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%d\"></text></g>\n",
				px, y, pw > 0.6 ? pw - 0.5 : 0.1, FG_ROW - 1, col, px + 3,
				y + FG_ROW - 4);
		}
		fputs("</svg>\n", f);
	}
	rc = cmd_out_fclose(&o, f, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "uslab report: %s\n", err);
		rc = 1;
	} else if (!getenv("USLAB_QUIET")) {
		fprintf(stderr, "uslab report: %s: %" PRIu64 " frames of %" PRIu64
			" stacks drawn\n", path, kept, (uint64_t)n);
	}
out:
	free(nd);
	return rc;
}

/* ---- --callsite N -------------------------------------------------------- */

struct rowref {
	uint32_t g;
	const struct grp *v;
	const char *name;
};

/* report_callsite.c's cmp_rows: allocations, bytes, name. */
static int cmp_groups(const void *a, const void *b)
{
	const struct rowref *x = a, *y = b;

	if (x->v->allocs != y->v->allocs)
		return x->v->allocs > y->v->allocs ? -1 : 1;
	if (x->v->bytes != y->v->bytes)
		return x->v->bytes > y->v->bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const struct stacks *sort_ctx;

static int cmp_stack_allocs(const void *a, const void *b)
{
	const struct stk *x = &sort_ctx->st[*(const uint32_t *)a];
	const struct stk *y = &sort_ctx->st[*(const uint32_t *)b];

	if (x->allocs != y->allocs)
		return x->allocs > y->allocs ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->sid < y->sid ? -1 : 1;
}

static int print_callsite(struct stacks *s, FILE *out)
{
	struct rowref *rows = malloc((s->gnames.n ? s->gnames.n : 1) * sizeof(*rows));
	uint32_t *ids = NULL, nids = 0, want = s->o->callsite, g;
	int rc = 0;

	if (!rows)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->gnames.n; i++)
		rows[i] = (struct rowref){ .g = i, .v = &s->g[i], .name = s->gnames.s[i] };
	qsort(rows, s->gnames.n, sizeof(*rows), cmp_groups);
	if (want > s->gnames.n) {
		fprintf(stderr, "uslab report: --callsite %u: the table has %u rows\n", want,
			s->gnames.n);
		free(rows);
		return 1;
	}
	g = rows[want - 1].g;
	ids = malloc((s->nst ? s->nst : 1) * sizeof(*ids));	/* indexes in st[] */
	if (!ids) {
		free(rows);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < s->nst; i++) {
		const struct stk *k = &s->st[i];

		for (uint32_t j = 0; j < k->ngroups; j++)
			if (k->groups[j] == g) {
				ids[nids++] = (uint32_t)i;
				break;
			}
	}
	sort_ctx = s;
	qsort(ids, nids, sizeof(*ids), cmp_stack_allocs);
	fprintf(out, "# row %u of --sort callsite%s: %s\n", want, s->o->children ? " --children" : "",
		s->gnames.s[g]);
	fprintf(out, "# %" PRIu64 " allocations, %" PRIu64 " bytes, peak live %" PRIu64
		", leaked %" PRIu64 ", from %u distinct call stacks\n",
		s->g[g].allocs, s->g[g].bytes, s->g[g].peak, s->g[g].live, nids);
	for (uint32_t i = 0; i < nids; i++) {
		const struct trace_stack *t = &s->t;
		const struct stk *k = &s->st[ids[i]];
		uint32_t k0;

		rc = read_stack(s, ids[i]);
		if (rc)
			goto out;
		k0 = report_wrapper_frames(&s->maps, t);

		fprintf(out, "\nstack %u of %u: %" PRIu64 " allocations (%.1f%%), %" PRIu64
			" bytes, leaked %" PRIu64 "\n", i + 1, nids, k->allocs,
			s->g[g].allocs ? 100.0 * (double)k->allocs / (double)s->g[g].allocs : 0.0,
			k->bytes, k->live);
		for (uint32_t f = 0; f < t->nframes; f++) {
			const struct fname *fn = frame(&s->nm, t->proc, t->frames[f]);

			if (!fn) {
				rc = -ENOMEM;
				goto out;
			}
			fprintf(out, "  #%-3u %s%s\n", f, fn->full,
				f < k0 ? "  [allocation wrapper: charged to its caller]" :
				f == k0 ? "  <- call site" : "");
		}
		if (t->cut)
			fprintf(out, "  ... cut at %u frames: the outer ones were not recorded "
				"(record -g --max-stack)\n", t->nframes);
	}
out:
	free(ids);
	free(rows);
	return rc;
}

int report_stacks(struct trace_reader *r, const char *path, const struct report_stacks_opts *o)
{
	struct stacks s = { .r = r, .m = trace_reader_meta(r), .o = o };
	struct folded *fl = NULL;
	uint32_t nfl = 0;
	uint64_t total;
	int rc;

	s.nm.maps = &s.maps;
	hmap_init(&s.ids);
	hmap_init(&s.st_ids);
	rc = report_stacks_walk(r, path, &s.maps, &s.nm.sym, &s.nm.byaddr, &s.nm.nmaps,
					on_free, on_alloc, &s);
	if (rc)
		goto out;
	if (o->callsite) {
		rc = print_callsite(&s, stdout);
		goto out;
	}
	rc = fold_all(&s, &fl, &nfl, &total);
	if (rc)
		goto out;
	if (o->folded)
		for (uint32_t i = 0; i < nfl; i++)
			printf("%s %" PRIu64 "\n", fl[i].line, fl[i].w);
	if (o->flamegraph) {
		if (!total) {
			fprintf(stderr, "uslab report: %s: no %s to draw\n", path,
				weight_names[o->weight]);
			rc = 1;
			goto out;
		}
		rc = write_flamegraph(&s, fl, nfl, total, o->flamegraph, path);
	}
out:
	rc = report_view_error(r, path, rc, "too many objects");
	for (uint32_t i = 0; i < nfl; i++)
		free(fl[i].line);
	free(fl);
	for (uint64_t i = 0; i < s.nst; i++)
		free(s.st[i].groups);
	free(s.st);
	hmap_destroy(&s.st_ids);
	report_maps_free(&s.maps);
	for (uint64_t i = 0; i < s.nm.n; i++) {
		free(s.nm.v[i].func);
		free(s.nm.v[i].full);
	}
	free(s.nm.v);
	for (uint32_t i = 0; s.nm.byaddr && i < s.nm.nmaps; i++)
		hmap_destroy(&s.nm.byaddr[i]);
	free(s.nm.byaddr);
	hmap_destroy(&s.ids);
	free(s.obj);
	free(s.free_obj);
	free(s.g);
	strtab_free(&s.gnames);
	symbolizer_free(s.nm.sym);
	return rc;
}
