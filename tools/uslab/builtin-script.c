// SPDX-License-Identifier: MIT
/*
 * `uslab script TRACE`: every event as one line of text, like perf script.
 *
 *   TIME(s.ns) TID [CPU] OP id=N [old=N] [size=N] [align=N]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/uslab/builtin.h"

static void print_event(FILE *out, const struct trace_event *ev)
{
	char cpu[16];

	if (ev->cpu == TRACE_CPU_UNKNOWN)
		strcpy(cpu, "[?]");
	else
		snprintf(cpu, sizeof(cpu), "[%03u]", ev->cpu);
	fprintf(out, "%6" PRIu64 ".%09" PRIu64 " %5u %5s %-14s id=%" PRIu64,
		ev->time_ns / 1000000000u, ev->time_ns % 1000000000u, ev->tid,
		cpu, trace_op_name(ev->op), ev->id);
	if (ev->op == TRACE_OP_REALLOC)
		fprintf(out, " old=%" PRIu64, ev->old_id);
	if (trace_op_has_size(ev->op))
		fprintf(out, " size=%" PRIu64, ev->size);
	if (trace_op_has_align(ev->op))
		fprintf(out, " align=%" PRIu64, ev->align);
	fputc('\n', out);
}

int cmd_script(int argc, char **argv)
{
	static const char usage[] =
		"uslab script [--header] [-n COUNT] TRACE\n"
		"  prints one line per event: TIME TID [CPU] OP id= [old=] [size=] [align=]\n"
		"  --header   print the trace header first (as '# key: value' lines)\n"
		"  -n COUNT   stop after COUNT events";
	static const struct option lopts[] = {
		{ "header", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t limit = UINT64_MAX;
	bool header = false;
	struct trace_reader *r;
	struct trace_event ev;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+n:Hh", lopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			limit = strtoull(optarg, NULL, 0);
			break;
		case 'H':
			header = true;
			break;
		default:
			return cmd_usage(usage);
		}
	}
	if (optind != argc - 1)
		return cmd_usage(usage);
	r = cmd_open_trace(argv[optind]);
	if (!r)
		return 1;
	if (header) {
		const struct trace_meta *m = trace_reader_meta(r);

		printf("# format: %u.%u\n# tool: %s\n# cmdline: %s\n# pid: %u\n"
		       "# cpus: %u\n# clock: %u\n# start_ns: %" PRIu64 "\n",
		       m->version_major, m->version_minor, m->tool, m->cmdline,
		       m->pid, m->cpus, m->clock_id, m->start_ns);
		if (m->has_summary)
			printf("# events: %" PRIu64 "\n# threads: %u\n# id_space: %" PRIu64 "\n",
			       m->nevents, m->nthreads, m->id_space);
	}
	for (;;) {
		if (!limit--) {
			rc = 0;
			break;
		}
		rc = trace_reader_next(r, &ev);
		if (rc <= 0)
			break;
		print_event(stdout, &ev);
	}
	rc = cmd_read_error(r, rc);
	trace_reader_close(r);
	if (fflush(stdout) == EOF)
		rc = 1;
	return rc;
}
