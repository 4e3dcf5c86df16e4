/* SPDX-License-Identifier: MIT */
/*
 * trace/ private declarations: what the importers share beyond
 * trace/trace.h (their state, line loop, errors). Included by trace/ only
 * (and the white-box tests and fuzzers; docs/layout.md).
 */
#ifndef USLAB_TRACE_INTERNAL_H
#define USLAB_TRACE_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include "lib/compiler.h"
#include "trace/trace.h"

/*
 * What every importer holds (the first member of its state): where events
 * go, what it reports, and the live objects' ids.
 */
struct importer {
	const char *name;		/* the input's name, for errors */
	struct import_result *res;
	trace_emit_fn emit;
	void *ctx;
	const struct import_sink *sink;
	struct idmap *ids;		/* address -> id of the live object */
};

/*
 * A new object at @addr into *@id; an address still live lost its free
 * (not traced): @lost, with the old object's id, is emitted first.
 */
int import_new_object(struct importer *im, uint64_t addr, uint64_t *id,
		      struct trace_event *lost);
/* Counts @ev (and its CPU) in the result and hands it on. */
int import_emit(struct importer *im, const struct trace_event *ev);
/*
 * Up to 16 hex digits at @s, no prefix. Return: the byte after them, or
 * NULL when there are none or more than 16.
 */
const char *import_hex(const char *s, uint64_t *v);

/* trace/import_common.c: the loop both importers run. */
struct import_format {
	size_t cap;			/* the longest line accepted, + 1 */
	const char *too_long;		/* said for a longer line */
	const char *not_text;		/* said for a NUL byte */
	/* one line (NUL-terminated, without its newline); 0, -EPROTO after
	 * import_err(), or -errno (said with strerror) */
	int (*parse)(void *state, char *s, uint64_t line);	/* a line not blank */
};
/* Clears @res, then every line of @in (@name in messages), bounded by
 * @fmt->cap, through @fmt->parse(@state); @nlines: lines read. Return: 0
 * at the end of @in, -ENOMEM, or -EPROTO with @res->err set. */
int import_lines(FILE *in, const char *name, struct import_result *res,
		 const struct import_format *fmt, void *state, uint64_t *nlines);
/*
 * import_lines() over @im's input with its id map made before and freed
 * after; @state begins with @im.
 */
int import_run(struct importer *im, FILE *in, const struct import_format *fmt,
	       uint64_t *nlines);
/* Says "NAME:LINE: " and @fmt in @res->err. Return: -EPROTO. */
int import_err(struct import_result *res, const char *name, uint64_t line,
	       const char *fmt, ...) __printf(4, 5);

#endif /* USLAB_TRACE_INTERNAL_H */
