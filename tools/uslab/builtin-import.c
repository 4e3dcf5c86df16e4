// SPDX-License-Identifier: MIT
/*
 * `uslab import FORMAT INPUT -o TRACE`: text logs of other tools to a trace.
 * The trace is written to TRACE.tmp and renamed only when the whole input
 * parsed; on any error nothing is left behind. No locks.
 */
#include <errno.h>
#include <getopt.h>
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

int cmd_import(int argc, char **argv)
{
	static const char usage[] =
		"uslab import FORMAT INPUT -o TRACE   (TRACE - : standard output)\n"
		"  FORMAT  mtrace: glibc mtrace log (MALLOC_TRACE=FILE with libc_malloc_debug.so)\n"
		"          perf:   'perf script' text of kmem:kmalloc, kmem:kfree,\n"
		"                  kmem:kmem_cache_alloc, kmem:kmem_cache_free\n"
		"  INPUT   a file, or - for standard input";
	struct trace_meta meta = { .cpus = 0, .clock_id = 0 };
	struct import_result res;
	struct trace_writer *w;
	const char *out = NULL, *in_name;
	char cmdline[1024];
	FILE *in;
	int c, rc, fmt = -1;
	bool quiet = false;

	static const struct option lopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	while ((c = getopt_long(argc, argv, "o:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			return cmd_help(usage);
		default:
			return cmd_opt_error("uslab import", usage, "o:qh", argv);
		}
	}
	if (optind + 2 != argc || !out) {
		fprintf(stderr, "uslab import: %s\n", !out ? "no -o TRACE given" :
			"expected FORMAT and INPUT");
		return cmd_usage(usage);
	}
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (!strcmp(argv[optind], formats[i].name))
			fmt = (int)i;
	if (fmt < 0) {
		fprintf(stderr, "uslab import: unknown format '%s' (mtrace, perf)\n", argv[optind]);
		return cmd_usage(usage);
	}
	in_name = argv[optind + 1];
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
	if (!quiet)
		fprintf(stderr, "uslab import: %s: %" PRIu64 " lines, %" PRIu64
			" events, %" PRIu64 " lines skipped -> %s\n", in_name,
			res.lines, res.events, res.skipped, out);
	return 0;
}
