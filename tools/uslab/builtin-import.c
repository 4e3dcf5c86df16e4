// SPDX-License-Identifier: MIT
/*
 * `uslab import FORMAT INPUT -o TRACE`: text logs of other tools to a trace.
 * The trace is written to TRACE.tmp and renamed only when the whole input
 * parsed; on any error nothing is left behind. No locks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tools/uslab/builtin.h"

static const struct {
	const char *name;
	int (*fn)(FILE *in, const char *name, trace_emit_fn emit, void *ctx,
		  struct import_result *res);
	const char *what;
} formats[] = {
	{ "mtrace", import_mtrace, "glibc mtrace log (MALLOC_TRACE)" },
	{ "perf", import_perf, "perf script output of kmem:* tracepoints" },
};

static int emit_to_writer(void *ctx, const struct trace_event *ev)
{
	return trace_writer_add(ctx, ev);
}

static const char import_usage[] =
	"uslab import FORMAT INPUT -o TRACE   (TRACE - : standard output)\n"
	"  FORMAT  mtrace: glibc mtrace log (MALLOC_TRACE=FILE with libc_malloc_debug.so)\n"
	"          perf:   'perf script' text of kmem:kmalloc, kmem:kfree,\n"
	"                  kmem:kmem_cache_alloc, kmem:kmem_cache_free\n"
	"  INPUT   a file, or - for standard input";

int cmd_import(int argc, char **argv)
{
	struct trace_meta meta = { .cpus = 0, .clock_id = 0 };
	struct import_result res;
	struct trace_writer *w;
	const char *out = NULL, *in_name;
	char cmdline[1024];
	FILE *in;
	int first, rc, fmt = -1;
	bool quiet = false;
	const struct cli_opt opts[] = {
		OPT_STRING('o', "output", &out, "TRACE", "the trace to write", .flags = OPT_REQUIRED),
		OPT_BOOLEAN('q', NULL, &quiet, "no summary on stderr"),
		OPT_END(),
	};

	first = parse_options(argc, argv, opts, import_usage, 0);
	if (first <= 0)
		return -first;
	if (first + 2 != argc)
		return usage_error(opts, import_usage, "expected FORMAT and INPUT");
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (!strcmp(argv[first], formats[i].name))
			fmt = (int)i;
	if (fmt < 0)
		return usage_error(opts, import_usage, "unknown format '%s' (mtrace, perf)",
				   argv[first]);
	in_name = argv[first + 1];
	in = strcmp(in_name, "-") ? fopen(in_name, "re") : stdin;
	if (!in) {
		fprintf(stderr, "uslab import: %s: %s\n", in_name, strerror(errno));
		return 1;
	}
	snprintf(meta.tool, sizeof(meta.tool), "import %s", formats[fmt].name);
	meta.clock_id = formats[fmt].fn == import_mtrace ? TRACE_CLOCK_NONE : CLOCK_MONOTONIC;
	snprintf(cmdline, sizeof(cmdline), "%s", in_name);
	meta.cmdline = cmdline;
	rc = trace_writer_open(&w, out, &meta, 0);
	if (rc) {		/* the writer said why */
		if (in != stdin)
			fclose(in);
		return 1;
	}
	rc = formats[fmt].fn(in, in_name, emit_to_writer, w, &res);
	if (in != stdin)
		fclose(in);
	if (rc) {
		fprintf(stderr, "uslab import: %s\n", rc == -EINVAL ? trace_writer_error(w) :
			rc == -EPROTO ? res.err : strerror(-rc));
		trace_writer_abort(w);
		return 1;
	}
	trace_writer_set_cpus_pid(w, res.cpus, res.pid);
	rc = trace_writer_close(w);
	if (rc)
		return 1;
	if (!quiet) {
		fprintf(stderr, "uslab import: %s: %" PRIu64 " lines, %" PRIu64
			" events, %" PRIu64 " lines skipped -> %s\n", in_name,
			res.lines, res.events, res.skipped, out);
		/* which and why (a skipped line is never an error) */
		if (res.skipped_early)
			fprintf(stderr, "uslab import:   %" PRIu64 " frees of objects allocated "
				"before the input began (no allocation to match)\n",
				res.skipped_early);
		for (uint32_t k = 0; k < res.nskipped_kinds; k++)
			fprintf(stderr, "uslab import:   %" PRIu64 " %s events (not an "
				"allocator event)\n", res.skipped_kinds[k].n,
				res.skipped_kinds[k].name);
		if (res.skipped_kinds_more)
			fprintf(stderr, "uslab import:   %" PRIu64 " events of other kinds "
				"(not allocator events)\n", res.skipped_kinds_more);
	}
	return 0;
}
