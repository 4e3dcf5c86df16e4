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
 * kmem_cache_alloc's name= (filp, names_cache, ...) names the cache (a
 * trace's cache table, format 1.2) unless it is a kmalloc cache, whose
 * events stand for their size's class anyway. Other events are counted
 * and skipped, by name, with the line of the first. Task ids become dense
 * thread ids in order of appearance, each handed to the sink with its pid
 * (the PID of "PID/TID"; 0 when perf printed one number, a TID) and comm;
 * time is relative to the first event.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow.h"
#include "trace/internal.h"

#define LINE_MAX_LEN	16384
#define MAX_TOKENS	64

struct pf {
	struct importer im;	/* first: import_run()'s @state */
	struct idmap *tids;
	uint64_t t0, last;
	bool have_t0;
	/* named caches met so far: (name, size) -> index in @caches */
	struct hmap cache_ix;
	struct pf_cache { char *name; uint64_t size; uint32_t id; } *caches;
	uint32_t ncaches;
	uint64_t caches_cap;
	/* live kmem_cache_alloc objects without name=, by id: the event
	 * that allocated it and its size, until a free names the cache */
	struct hmap anon_ev, anon_size;
};

/* Object @id is gone: it can no longer be named. */
static void pf_forget(struct pf *p, uint64_t id)
{
	uint64_t v;

	hmap_remove(&p->anon_ev, id, &v);
	hmap_remove(&p->anon_size, id, &v);
}

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
		   uint32_t cpu, uint64_t id, uint64_t size, uint32_t cache)
{
	struct trace_event ev = {
		.time_ns = t, .id = id, .size = size, .tid = tid, .cpu = cpu,
		.op = op, .cache = cache,
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
			  uint64_t *task, uint64_t *pid, int *comm_end, uint64_t line)
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

		*comm_end = ti - 1;
		if (slash && parse_dec(slash + 1, strlen(slash + 1), task) &&
		    parse_dec(pt, (size_t)(slash - pt), pid))
			;
		else if (!parse_dec(pt, strlen(pt), task))
			*task = 0, *comm_end = ti;	/* no pid column: a comm only */
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
static int pf_tid(struct pf *p, uint64_t task, uint64_t pid, const char *comm,
		  uint32_t *tid, uint64_t line)
{
	const struct import_sink *k = p->im.sink;
	uint64_t tid64;
	int rc;

	if (!idmap_lookup(p->tids, task, &tid64)) {
		*tid = (uint32_t)(tid64 - 1);
		return 0;
	}
	rc = idmap_insert(p->tids, task, &tid64);
	if (rc)
		return rc == -EINVAL ? import_err(p->im.res, p->im.name, line, "bad task id") : rc;
	if (tid64 > TRACE_THREADS_MAX)
		return import_err(p->im.res, p->im.name, line, "more than %u tasks", TRACE_THREADS_MAX);
	*tid = (uint32_t)(tid64 - 1);
	if (k->task) {
		rc = k->task(k->ctx, *tid, pid, task, comm);
		if (rc)
			return rc;
	}
	return 0;
}

/* The COMM column: tokens [0, @end) as perf printed them (one space
 * between), at most 16 bytes as the kernel keeps it. */
static void pf_comm(char **tok, int end, char *comm, size_t len)
{
	size_t n = 0;

	comm[0] = 0;
	for (int i = 0; i < end && n + 1 < len; i++)
		n += (size_t)snprintf(comm + n, len - n, "%s%s", i ? " " : "", tok[i]);
}

static uint64_t pf_cache_key(const char *name, uint64_t size)
{
	uint64_t h = 0xcbf29ce484222325ull ^ size;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 0x100000001b3ull;
	return h == UINT64_MAX ? 0 : h;
}

/*
 * The cache id of kmem_cache_alloc's name= @name with object size @size:
 * 0 for none (no name, no sink for caches, a kmalloc cache: its events
 * stand for their size's class), else the sink's id, asked once per
 * (name, size).
 */
static int pf_cache(struct pf *p, const char *name, uint64_t size, uint32_t *id,
		    uint64_t line)
{
	const struct import_sink *k = p->im.sink;
	uint64_t key, *v;
	uint32_t i;
	int rc;

	*id = 0;
	if (!name || !*name || !k->cache || !size || !strncmp(name, "kmalloc-", 8))
		return 0;
	if (strlen(name) > TRACE_CACHE_NAME_MAX)
		return import_err(p->im.res, p->im.name, line, "expected a cache name of at most %u bytes, found %zu",
				  TRACE_CACHE_NAME_MAX, strlen(name));
	key = pf_cache_key(name, size);
	v = hmap_find(&p->cache_ix, key);
	if (v && p->caches[*v].size == size && !strcmp(p->caches[*v].name, name)) {
		*id = p->caches[*v].id;
		return 0;
	}
	for (i = 0; v && i < p->ncaches; i++)	/* a key collision: rare */
		if (p->caches[i].size == size && !strcmp(p->caches[i].name, name)) {
			*id = p->caches[i].id;
			return 0;
		}
	if (p->ncaches == TRACE_CACHES_MAX)
		return import_err(p->im.res, p->im.name, line, "more than %u named caches",
				  TRACE_CACHES_MAX);
	if (grow_array((void **)&p->caches, &p->caches_cap, p->ncaches + 1, sizeof(*p->caches),
		       TRACE_CACHES_MAX))
		return -ENOMEM;
	p->caches[p->ncaches].name = strdup(name);
	if (!p->caches[p->ncaches].name)
		return -ENOMEM;
	p->caches[p->ncaches].size = size;
	rc = k->cache(k->ctx, name, size, &p->caches[p->ncaches].id);
	if (!rc && !v)
		rc = hmap_insert(&p->cache_ix, key, p->ncaches);
	if (rc) {
		free(p->caches[p->ncaches].name);
		return rc == -EINVAL ? import_err(p->im.res, p->im.name, line, "cache '%s' refused", name) : rc;
	}
	*id = p->caches[p->ncaches++].id;
	return 0;
}

static int parse_event(struct pf *p, char **tok, int ntok, int ti, uint64_t line)
{
	const char *ev = tok[ti + 1], *s;
	uint64_t t, addr, size = 0, id = 0, task = 0, pid = 0;
	uint32_t cpu = TRACE_CPU_UNKNOWN, tid = 0, cache = 0;
	uint8_t op = TRACE_OP_NR;
	char comm[17];
	int comm_end = 0;
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
			r->skipped_kinds[k].first_line = line;
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
	rc = parse_cpu_task(p, tok, ti, &cpu, &task, &pid, &comm_end, line);
	if (rc)
		return rc;
	pf_comm(tok, comm_end, comm, sizeof(comm));
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
	if (op == TRACE_OP_CACHE_ALLOC && addr > 16) {
		rc = pf_cache(p, field(tok, ntok, ti + 2, "name"), size, &cache, line);
		if (rc)
			return rc;
	}
	if (op == TRACE_OP_CACHE_FREE && addr > 16 && p->im.sink->cache_of &&
	    !idmap_lookup(p->im.ids, addr, &id)) {
		uint64_t *e = hmap_find(&p->anon_ev, id), *sz = hmap_find(&p->anon_size, id);

		/* the free names the cache its object came from */
		if (e && sz) {
			rc = pf_cache(p, field(tok, ntok, ti + 2, "name"), *sz, &cache, line);
			if (!rc && cache)
				rc = p->im.sink->cache_of(p->im.sink->ctx, *e, cache);
			if (rc)
				return rc;
			cache = 0;
		}
	}
	t = pf_time(p, t);
	rc = pf_tid(p, task, pid, comm, &tid, line);
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
		pf_forget(p, id);	/* an id reused after a lost free */
		if (op == TRACE_OP_CACHE_ALLOC && !cache && size &&
		    (hmap_insert(&p->anon_ev, id, p->im.res->events) ||
		     hmap_insert(&p->anon_size, id, size)))
			return -ENOMEM;
	} else if (!alloc && addr > 16 && idmap_remove(p->im.ids, addr, &id)) {
		p->im.res->skipped++;	/* allocated before the trace began */
		if (!p->im.res->skipped_early++)
			p->im.res->first_early = line;
		return 0;
	}
	if (!alloc && id)
		pf_forget(p, id);
	return emit_ev(p, op, t, tid, cpu, id, size, cache);
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

int import_perf(FILE *in, const char *name, const struct import_sink *sink,
		struct import_result *res)
{
	struct pf p = { .im = { .name = name, .res = res, .emit = sink->emit,
				.ctx = sink->ctx, .sink = sink } };
	uint64_t line;
	int rc = -ENOMEM;

	p.tids = idmap_new();
	hmap_init(&p.cache_ix);
	hmap_init(&p.anon_ev);
	hmap_init(&p.anon_size);
	if (p.tids)
		rc = import_run(&p.im, in, &perf_format, &line);
	idmap_free(p.tids);
	hmap_destroy(&p.cache_ix);
	hmap_destroy(&p.anon_ev);
	hmap_destroy(&p.anon_size);
	for (uint32_t i = 0; i < p.ncaches; i++)
		free(p.caches[i].name);
	free(p.caches);
	if (rc)
		return rc;
	if (!res->events)
		return import_err(res, name, line + 1, "no kmem events (expected kmem:kmalloc, "
				  "kmem:kfree, kmem:kmem_cache_alloc, kmem:kmem_cache_free)");
	res->lines = line;
	return 0;
}
