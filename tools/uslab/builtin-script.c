// SPDX-License-Identifier: MIT
/*
 * `uslab script TRACE`: every event as one line of text, like perf script.
 *
 *   TIME(s.ns) TID [CPU] OP id=N [old=N] [size=N] [align=N] [cache=NAME]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/uslab/builtin.h"

static void print_event(FILE *out, const struct trace_event *ev, bool no_clock,
			const struct trace_meta *m)
{
	char cpu[16];

	if (ev->cpu == TRACE_CPU_UNKNOWN)
		strcpy(cpu, "[?]");
	else
		snprintf(cpu, sizeof(cpu), "[%03u]", ev->cpu);
	/* without a clock the time is the event's index, printed as such */
	if (no_clock)
		fprintf(out, "%16" PRIu64, ev->time_ns);
	else
		fprintf(out, "%6" PRIu64 ".%09" PRIu64, ev->time_ns / 1000000000u,
			ev->time_ns % 1000000000u);
	/* id 0 is NULL: free(NULL), realloc(NULL, n), a failed allocation */
	fprintf(out, " %5u %5s %-14s ", ev->tid, cpu, trace_op_name(ev->op));
	if (ev->id)
		fprintf(out, "id=%" PRIu64, ev->id);
	else
		fputs("id=NULL", out);
	if (ev->op == TRACE_OP_REALLOC) {
		if (ev->old_id)
			fprintf(out, " old=%" PRIu64, ev->old_id);
		else
			fputs(" old=NULL", out);
	}
	if (trace_op_has_size(ev->op))
		fprintf(out, " size=%" PRIu64, ev->size);
	if (trace_op_has_align(ev->op))
		fprintf(out, " align=%" PRIu64, ev->align);
	if (ev->cache && ev->cache <= m->ncaches) {	/* format 1.2: a named cache */
		fputs(" cache=", out);
		trace_fput_printable(out, m->caches[ev->cache - 1].name);
	}
	fputc('\n', out);
}

static const char script_usage[] =
	"uslab script [--header] [-n COUNT] [--pid PID | --comm NAME] TRACE\n"
	"  prints one line per event: TIME TID [CPU] OP id= [old=] [size=] [align=] [cache=]\n"
	"  (id=NULL: free(NULL), a failed allocation; old=NULL: realloc(NULL, n))\n"
	"  (TIME is seconds, or the event index when the trace has no clock)";

int cmd_script(int argc, char **argv)
{
	uint64_t limit = UINT64_MAX;
	bool header = false, no_clock;
	const struct cli_opt opts[] = {
		OPT_BOOLEAN('H', "header", &header,
			    "print the trace header first (as '# key: value' lines)"),
		OPT_U64('n', NULL, &limit, "COUNT", "stop after COUNT events", 0, UINT64_MAX),
		OPT_PROC_SELECT(),
		OPT_END(),
	};
	struct trace_reader *r;
	struct trace_event ev;
	int first, rc;

	/* a trace reader's opening: its options, then its one TRACE */
	first = parse_options(argc, argv, opts, script_usage, PARSE_OPT_ONE_TRACE);
	if (first <= 0)
		return -first;
	r = cmd_open_trace_as("uslab script", argv[first]);
	if (!r)
		return 1;
	if (header) {
		const struct trace_meta *m = trace_reader_meta(r);

		printf("# format: %u.%u\n# tool: %s\n# cmdline: ",
		       m->version_major, m->version_minor, m->tool);
		trace_fput_printable(stdout, m->cmdline);
		printf("\n# pid: %u\n# cpus: %u\n# clock: %u\n# start_ns: %" PRIu64 "\n",
		       m->pid, m->cpus, m->clock_id, m->start_ns);
		if (m->flags & TRACE_HDR_ONE_HEAP)
			printf("# one heap: the processes share it\n");
		if (m->has_summary)
			printf("# events: %" PRIu64 "\n# threads: %u\n# id_space: %" PRIu64 "\n",
			       m->nevents, m->nthreads, m->id_space);
		for (uint32_t i = 0; i < m->nprocs; i++) {
			char comm[4 * 16 + 1];

			printf("# process: %c pid %u ppid %u events %" PRIu64 " allocs %" PRIu64
			       " threads %u comm %s cmdline ",
			       (int32_t)i == m->selected ? '*' : '-', m->procs[i].pid,
			       m->procs[i].ppid, m->procs[i].events, m->procs[i].allocs,
			       m->procs[i].nthreads,
			       trace_printable(m->procs[i].comm, comm, sizeof(comm)));
			trace_fput_printable(stdout, m->procs[i].cmdline);
			putchar('\n');
		}
	}
	no_clock = trace_reader_meta(r)->clock_id == TRACE_CLOCK_NONE;
	for (;;) {
		if (!limit--) {
			rc = 0;
			break;
		}
		rc = trace_reader_next(r, &ev);
		if (rc <= 0)
			break;
		print_event(stdout, &ev, no_clock, trace_reader_meta(r));
		/* a full disk or a closed pipe stops the decoding at once */
		if (unlikely(ferror(stdout))) {
			rc = 0;
			break;
		}
	}
	rc = cmd_read_error(r, rc);
	trace_reader_close(r);
	if (cmd_check_stdout("uslab script"))
		rc = 1;
	return rc;
}
