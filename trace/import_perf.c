// SPDX-License-Identifier: MIT
/*
 * `perf script` text of the kernel's kmem tracepoints, as printed by
 *
 *   perf record -e kmem:kmalloc -e kmem:kfree -e kmem:kmem_cache_alloc \
 *               -e kmem:kmem_cache_free -a [-g] -- sleep 10
 *   perf script
 *
 * An event line is "COMM PID[/TID] [CPU] SECONDS.FRACTION: SYSTEM:EVENT: key=value...";
 * COMM may hold spaces, PID and [CPU] may be missing (perf script -F), and
 * with -g each event is followed by indented call-chain lines. Events:
 *
 *   kmem:kmalloc, kmem:kmalloc_node          ptr= bytes_req= -> kmalloc
 *   kmem:kmem_cache_alloc, ..._alloc_node    ptr= bytes_req= -> kmem_cache_alloc
 *   kmem:kfree                               ptr=            -> kfree
 *   kmem:kmem_cache_free                     ptr=            -> kmem_cache_free
 *
 * Other events are counted and skipped. Task ids become dense thread ids in
 * order of appearance; time is relative to the first event.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/internal.h"

#define LINE_MAX_LEN	16384
#define MAX_TOKENS	64

struct pf {
	struct importer im;	/* first: import_run()'s @state */
	struct idmap *tids;
	uint64_t t0, last;
	bool have_t0;
};

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Decimal with overflow check; the whole of [s, s + n). */
static bool parse_dec(const char *s, size_t n, uint64_t *v)
{
	uint64_t r = 0;

	if (!all_digits(s, n))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (r > (UINT64_MAX - 9) / 10)
			return false;
		r = r * 10 + (uint64_t)(s[i] - '0');
	}
	*v = r;
	return true;
}

/* "12345.678901:" -> ns. Up to 9 fraction digits. */
static bool parse_time(const char *s, size_t n, uint64_t *ns)
{
	const char *dot;
	uint64_t sec, frac = 0;
	size_t fl;

	if (n < 3 || s[n - 1] != ':')
		return false;
	n--;
	dot = memchr(s, '.', n);
	if (!dot)
		return false;
	fl = n - (size_t)(dot + 1 - s);
	if (fl == 0 || fl > 9 || !parse_dec(s, (size_t)(dot - s), &sec) ||
	    !parse_dec(dot + 1, fl, &frac) || sec > UINT64_MAX / 1000000000u - 1)
		return false;
	for (; fl < 9; fl++)
		frac *= 10;
	*ns = sec * 1000000000u + frac;
	return true;
}

/* ptr=0xffff..., ptr=ffff..., ptr=(nil), ptr=0 */
static bool parse_ptr(const char *s, uint64_t *v)
{
	if (!strcmp(s, "(nil)") || !strcmp(s, "0")) {
		*v = 0;
		return true;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	s = import_hex(s, v);
	return s && !*s;
}

static const char *field(char **tok, int ntok, int from, const char *key)
{
	size_t kl = strlen(key);

	for (int i = from; i < ntok; i++)
		if (!strncmp(tok[i], key, kl) && tok[i][kl] == '=')
			return tok[i] + kl + 1;
	return NULL;
}

static int emit_ev(struct pf *p, uint8_t op, uint64_t t, uint32_t tid,
		   uint32_t cpu, uint64_t id, uint64_t size)
{
	struct trace_event ev = {
		.time_ns = t, .id = id, .size = size, .tid = tid, .cpu = cpu,
		.op = op,
	};

	return import_emit(&p->im, &ev);
}

/* The kmem events imported, as the trace op each becomes. */
static const struct {
	const char *name;
	uint8_t op;
} pf_events[] = {
	{ "kmem:kmalloc:", TRACE_OP_KMALLOC },
	{ "kmem:kmalloc_node:", TRACE_OP_KMALLOC },
	{ "kmem:kmem_cache_alloc:", TRACE_OP_CACHE_ALLOC },
	{ "kmem:kmem_cache_alloc_node:", TRACE_OP_CACHE_ALLOC },
	{ "kmem:kfree:", TRACE_OP_KFREE },
	{ "kmem:kmem_cache_free:", TRACE_OP_CACHE_FREE },
};

/*
 * The columns perf prints before the time when asked: "[CPU]" right before
 * it and "PID" or "PID/TID" before that; @ti is the time's token.
 */
static int parse_cpu_task(struct pf *p, char **tok, int ti, uint32_t *cpu,
			  uint64_t *task, uint64_t line)
{
	if (ti >= 1 && tok[ti - 1][0] == '[') {
		size_t n = strlen(tok[ti - 1]);
		uint64_t c;

		if (n < 3 || tok[ti - 1][n - 1] != ']' || !parse_dec(tok[ti - 1] + 1, n - 2, &c))
			return import_err(p->im.res, p->im.name, line, "expected [CPU] before the time, found \"%.20s\"", tok[ti - 1]);
		if (c >= TRACE_MAX_CPUS)
			return import_err(p->im.res, p->im.name, line, "expected a CPU number below %u (Linux's largest "
				      "NR_CPUS), found %" PRIu64, TRACE_MAX_CPUS, c);
		*cpu = (uint32_t)c;
		ti--;
	}
	if (ti >= 1) {
		const char *pt = tok[ti - 1], *slash = strchr(pt, '/');

		if (slash && parse_dec(slash + 1, strlen(slash + 1), task))
			;
		else if (!parse_dec(pt, strlen(pt), task))
			*task = 0;	/* no pid column: a comm only */
		if (!p->im.res->pid && *task)
			p->im.res->pid = (uint32_t)*task;
	}
	return 0;
}

/* Time since the first event, never going back (perf sorts by time;
 * stragglers are clamped). */
static uint64_t pf_time(struct pf *p, uint64_t t)
{
	if (!p->have_t0) {
		p->t0 = t;
		p->have_t0 = true;
	}
	t = t >= p->t0 ? t - p->t0 : 0;
	if (t < p->last)
		t = p->last;
	p->last = t;
	return t;
}

/* Dense thread numbers from 0, in order of first appearance. */
static int pf_tid(struct pf *p, uint64_t task, uint32_t *tid, uint64_t line)
{
	uint64_t tid64;
	int rc;

	if (idmap_lookup(p->tids, task, &tid64)) {
		rc = idmap_insert(p->tids, task, &tid64);
		if (rc)
			return rc == -EINVAL ? import_err(p->im.res, p->im.name, line, "bad task id") : rc;
	}
	if (tid64 > UINT32_MAX - 1)
		return import_err(p->im.res, p->im.name, line, "too many tasks");
	*tid = (uint32_t)(tid64 - 1);
	return 0;
}

static int parse_event(struct pf *p, char **tok, int ntok, int ti, uint64_t line)
{
	const char *ev = tok[ti + 1], *s;
	uint64_t t, addr, size = 0, id = 0, task = 0;
	uint32_t cpu = TRACE_CPU_UNKNOWN, tid = 0;
	uint8_t op = TRACE_OP_NR;
	bool alloc;
	int rc;

	for (size_t i = 0; i < ARRAY_SIZE(pf_events); i++)
		if (!strcmp(ev, pf_events[i].name))
			op = pf_events[i].op;
	if (op == TRACE_OP_NR) {	/* not an allocator event: counted by name */
		struct import_result *r = p->im.res;
		size_t n = strlen(ev) - 1;	/* without the ':' */
		uint32_t k;

		r->skipped++;
		for (k = 0; k < r->nskipped_kinds; k++)
			if (strlen(r->skipped_kinds[k].name) == min_t(size_t, n, 47) &&
			    !strncmp(r->skipped_kinds[k].name, ev, min_t(size_t, n, 47)))
				break;
		if (k == r->nskipped_kinds && k < IMPORT_SKIP_KINDS) {
			snprintf(r->skipped_kinds[k].name, sizeof(r->skipped_kinds[k].name),
				 "%.*s", (int)min_t(size_t, n, 47), ev);
			r->nskipped_kinds++;
		}
		if (k < r->nskipped_kinds)
			r->skipped_kinds[k].n++;
		else
			r->skipped_kinds_more++;
		return 0;
	}
	alloc = op == TRACE_OP_KMALLOC || op == TRACE_OP_CACHE_ALLOC;
	parse_time(tok[ti], strlen(tok[ti]), &t);
	rc = parse_cpu_task(p, tok, ti, &cpu, &task, line);
	if (rc)
		return rc;
	s = field(tok, ntok, ti + 2, "ptr");
	if (!s)
		s = field(tok, ntok, 0, "ptr");
	if (!s || !parse_ptr(s, &addr))
		return import_err(p->im.res, p->im.name, line, "expected ptr=0xADDRESS in a %s event", ev);
	if (alloc) {
		s = field(tok, ntok, 0, "bytes_req");
		if (!s || !parse_dec(s, strlen(s), &size))
			return import_err(p->im.res, p->im.name, line, "expected bytes_req=N in a %s event", ev);
	}
	t = pf_time(p, t);
	rc = pf_tid(p, task, &tid, line);
	if (rc)
		return rc;
	/* addresses up to 16: NULL (a failed allocation) and kmalloc(0)'s
	 * ZERO_SIZE_PTR carry no object */
	if (alloc && addr > 16) {
		struct trace_event lost = { .time_ns = t, .tid = tid, .cpu = cpu,
					    .op = TRACE_OP_KFREE };

		rc = import_new_object(&p->im, addr, &id, &lost);
		if (rc)
			return rc == -EINVAL ? import_err(p->im.res, p->im.name, line, "bad ptr") : rc;
	} else if (!alloc && addr > 16 && idmap_remove(p->im.ids, addr, &id)) {
		p->im.res->skipped++;	/* allocated before the trace began */
		p->im.res->skipped_early++;
		return 0;
	}
	return emit_ev(p, op, t, tid, cpu, id, size);
}

/* A -g call-chain line: indented "HEXADDR SYMBOL (DSO)". */
static bool is_callchain(const char *s, char **tok, int ntok)
{
	uint64_t v;

	return (s[0] == ' ' || s[0] == '\t') && ntok >= 2 && parse_ptr(tok[0], &v) &&
	       tok[ntok - 1][0] == '(';
}

/* import_lines()'s callback, @state the struct pf. */
static int parse_line(void *state, char *s, uint64_t line)
{
	struct pf *p = state;
	char *tok[MAX_TOKENS], *save = NULL, *t, *orig = s;
	int ntok = 0;
	uint64_t ns;

	for (t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (ntok == MAX_TOKENS)
			break;
		tok[ntok++] = t;
	}
	if (!ntok)
		return 0;
	if (tok[0][0] == '#')
		return 0;		/* perf script -I header lines */
	for (int i = 0; i + 1 < ntok; i++) {
		size_t n = strlen(tok[i + 1]);

		if (parse_time(tok[i], strlen(tok[i]), &ns) && n > 1 &&
		    tok[i + 1][n - 1] == ':' && memchr(tok[i + 1], ':', n - 1))
			return parse_event(p, tok, ntok, i, line);
	}
	if (is_callchain(orig, tok, ntok))
		return 0;
	return import_err(p->im.res, p->im.name, line, "expected a perf script event line \"COMM PID [CPU] TIME: kmem:EVENT: ptr=...\" or a call-chain line, found \"%.40s\"",
		      tok[0]);
}

/* An importer is its format table for import_lines() and its entry (import_mtrace.c too). */
static const struct import_format perf_format = {
	.cap = LINE_MAX_LEN,
	.too_long = "line too long for perf script output",
	.not_text = "NUL byte: not perf script text (a perf.data file? run 'perf script' on it)",
	.parse = parse_line,
};

int import_perf(FILE *in, const char *name, trace_emit_fn emit, void *ctx,
		struct import_result *res)
{
	struct pf p = { .im = { .name = name, .res = res, .emit = emit, .ctx = ctx } };
	uint64_t line;
	int rc = -ENOMEM;

	p.tids = idmap_new();
	if (p.tids)
		rc = import_run(&p.im, in, &perf_format, &line);
	idmap_free(p.tids);
	if (rc)
		return rc;
	if (!res->events)
		return import_err(res, name, line + 1, "no kmem events (expected kmem:kmalloc, "
				  "kmem:kfree, kmem:kmem_cache_alloc, kmem:kmem_cache_free)");
	res->lines = line;
	return 0;
}
