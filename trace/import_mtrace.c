// SPDX-License-Identifier: MIT
/*
 * glibc mtrace logs (MALLOC_TRACE=FILE, libc_malloc_debug.so preloaded, a
 * program calling mtrace()). The lines glibc writes (malloc/mtrace-impl.c):
 *
 *   = Start | = End
 *   [@ CALLER ]+ 0xADDR 0xSIZE     malloc, calloc, memalign..., realloc(NULL)
 *   [@ CALLER ]- 0xADDR            free, realloc(p, 0)
 *   [@ CALLER ]< 0xOLD             realloc, then on the next line:
 *   [@ CALLER ]> 0xNEW 0xSIZE
 *   [@ CALLER ]! 0xOLD 0xSIZE      realloc that failed (OLD still lives)
 *
 * where CALLER is "PROG:(SYM+0xOFF)[0xADDR]" or "[0xADDR]". mtrace has no
 * clock and no threads: time_ns is the event number, tid 0, CPU unknown.
 * A "+" reports no kind, so every allocation is a malloc.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/internal.h"

#define LINE_MAX_LEN	8192

struct mt {
	struct importer im;	/* first: import_run()'s @state */
	uint64_t old_id;	/* pending "<" */
	uint64_t old_line;
	bool have_old;
};

/* "0x..." (or "(nil)" when @nil_ok) into *@v. Return: the byte after it, or NULL. */
static const char *parse_hex(const char *s, uint64_t *v, bool nil_ok)
{
	if (nil_ok && !strncmp(s, "(nil)", 5)) {
		*v = 0;
		return s + 5;
	}
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return NULL;
	return import_hex(s + 2, v);
}

static const char *skip_spaces(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static int emit_ev(struct mt *m, uint8_t op, uint64_t id, uint64_t old,
		   uint64_t size)
{
	struct trace_event ev = {
		.time_ns = m->im.res->events, .id = id, .old_id = old,
		.size = size, .tid = 0, .cpu = TRACE_CPU_UNKNOWN, .op = op,
	};

	return import_emit(&m->im, &ev);
}

/* A new object at @addr; an address still live lost its free: add it. */
static int new_object(struct mt *m, uint64_t addr, uint64_t *id)
{
	struct trace_event lost = {
		.time_ns = m->im.res->events, .cpu = TRACE_CPU_UNKNOWN, .op = TRACE_OP_FREE,
	};

	if (!addr) {
		*id = 0;
		return 0;
	}
	return import_new_object(&m->im, addr, id, &lost);
}

/* import_lines()'s callback, @state the struct mt. */
static int parse_line(void *state, char *line_text, uint64_t line)
{
	struct mt *m = state;
	const char *s = line_text;
	uint64_t addr, size = 0, id, old;
	const char *e;
	char op;
	int rc;

	if (s[0] == '=' && s[1] == ' ')
		return 0;			/* = Start, = End */
	if (s[0] == '@' && s[1] == ' ') {
		/* Caller: up to the "]" that ends "[0xADDR]". */
		e = strstr(s, "] ");
		if (!e)
			return import_err(m->im.res, m->im.name, line, "expected \"@ CALLER[0xADDR] \" before the operation");
		s = e + 2;
	}
	op = *s;
	if (!op || !strchr("+-<>!", op) || s[1] != ' ')
		return import_err(m->im.res, m->im.name, line, "expected an mtrace operation (+ - < > !), found \"%.20s\"", s);
	if (m->have_old && op != '>')
		return import_err(m->im.res, m->im.name, line, "expected \"> 0xADDR 0xSIZE\" after the \"<\" of line %" PRIu64,
			      m->old_line);
	e = parse_hex(skip_spaces(s + 2), &addr, true);
	if (!e)
		return import_err(m->im.res, m->im.name, line, "expected an address (0x...) after '%c'", op);
	if (op == '+' || op == '>' || op == '!') {
		e = parse_hex(skip_spaces(e), &size, false);
		if (!e)
			return import_err(m->im.res, m->im.name, line, "expected a size (0x...) after the address");
	}
	e = skip_spaces(e);
	if (*e)
		return import_err(m->im.res, m->im.name, line, "unexpected text after the operation: \"%.20s\"", e);

	switch (op) {
	case '+':
		rc = new_object(m, addr, &id);
		return rc ? rc : emit_ev(m, TRACE_OP_MALLOC, id, 0, size);
	case '-':
		if (!addr)
			return emit_ev(m, TRACE_OP_FREE, 0, 0, 0);
		if (idmap_remove(m->im.ids, addr, &id)) {
			m->im.res->skipped++;	/* allocated before mtrace() */
			if (!m->im.res->skipped_early++)
				m->im.res->first_early = line;
			return 0;
		}
		return emit_ev(m, TRACE_OP_FREE, id, 0, 0);
	case '<':
		m->have_old = true;
		m->old_line = line;
		m->old_id = 0;
		if (addr && idmap_detach(m->im.ids, addr, &m->old_id))
			m->old_id = 0;
		return 0;
	case '>':
		if (!m->have_old)
			return import_err(m->im.res, m->im.name, line, "expected \"<\" on the line before \">\"");
		m->have_old = false;
		if (!addr)	/* glibc writes "!" for a failed realloc */
			return import_err(m->im.res, m->im.name, line, "expected a non-NULL address after '>'");
		rc = new_object(m, addr, &id);
		if (!rc)
			rc = emit_ev(m, TRACE_OP_REALLOC, id, m->old_id, size);
		if (!rc && m->old_id)
			rc = idmap_release_id(m->im.ids, m->old_id);
		return rc;
	case '!':
		/* Failed realloc: the old object stays live under its id. */
		if (!size)	/* glibc writes realloc(p, 0) as "-" */
			return import_err(m->im.res, m->im.name, line, "expected a size > 0 after '!'");
		old = 0;
		if (addr && idmap_lookup(m->im.ids, addr, &id) == 0)
			old = id;
		return emit_ev(m, TRACE_OP_REALLOC, 0, old, size);
	}
	return 0;
}

/* Each importer opens alike on purpose (mirrored by import_perf.c): one
 * format table for import_lines(), one entry with the CLI's signature. */
static const struct import_format mtrace_format = {
	.cap = LINE_MAX_LEN,
	.too_long = "line too long for an mtrace log",
	.not_text = "NUL byte: not a text mtrace log",
	.parse = parse_line,
};

int import_mtrace(FILE *in, const char *name, const struct import_sink *sink,
		  struct import_result *res)
{
	struct mt m = { .im = { .name = name, .res = res, .emit = sink->emit,
				.ctx = sink->ctx, .sink = sink } };
	uint64_t line;
	int rc = import_run(&m.im, in, &mtrace_format, &line);

	if (rc)
		return rc;
	if (m.have_old)
		return import_err(res, name, line + 1, "log ends after the \"<\" of line %" PRIu64
				  " (expected \">\")", m.old_line);
	if (!line)
		return import_err(res, name, 1, "empty file: expected an mtrace log (\"= Start\")");
	res->lines = line;
	return 0;
}
