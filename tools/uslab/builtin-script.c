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

static void print_event(FILE *out, const struct trace_event *ev, bool no_clock)
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
	fprintf(out, " %5u %5s %-14s id=%" PRIu64, ev->tid, cpu, trace_op_name(ev->op), ev->id);
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
		"uslab script [--header] [-n COUNT] [--pid PID | --comm NAME] TRACE\n"
		"  prints one line per event: TIME TID [CPU] OP id= [old=] [size=] [align=]\n"
		"  (TIME is seconds, or the event index when the trace has no clock)\n"
		"  --header   print the trace header first (as '# key: value' lines)\n"
		"  -n COUNT   stop after COUNT events\n"
		"  --pid PID    the process with this pid (default: the program the\n"
		"               command ran as: uslab record -h)\n"
		"  --comm NAME  the process with this name";
	static const struct option lopts[] = {
		{ "header", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		CMD_SELECT_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	uint64_t limit = UINT64_MAX;
	bool header = false, no_clock;
	struct trace_reader *r;
	struct trace_event ev;
	int c, rc;

	while ((c = getopt_long(argc, argv, "n:Hh", lopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (cmd_parse_u64("uslab script", "-n", optarg, 0, UINT64_MAX, &limit))
				return cmd_usage(usage);
			break;
		case 'h':
			return cmd_help(usage);
		case 'H':
			header = true;
			break;
		case CMD_OPT_PID:
		case CMD_OPT_COMM:
			if (cmd_parse_select("uslab script", c, optarg))
				return cmd_usage(usage);
			break;
		default:
			return cmd_opt_error("uslab script", usage, "n:Hh", argv);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "uslab script: %s\n", optind < argc ? "one TRACE only" : "no TRACE given");
		return cmd_usage(usage);
	}
	r = cmd_open_trace_as("uslab script", argv[optind]);
	if (!r)
		return 1;
	if (header) {
		const struct trace_meta *m = trace_reader_meta(r);

		printf("# format: %u.%u\n# tool: %s\n# cmdline: ",
		       m->version_major, m->version_minor, m->tool);
		cmd_fput_printable(stdout, m->cmdline);
		printf("\n# pid: %u\n# cpus: %u\n# clock: %u\n# start_ns: %" PRIu64 "\n",
		       m->pid, m->cpus, m->clock_id, m->start_ns);
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
			       cmd_printable(m->procs[i].comm, comm, sizeof(comm)));
			cmd_fput_printable(stdout, m->procs[i].cmdline);
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
		print_event(stdout, &ev, no_clock);
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
