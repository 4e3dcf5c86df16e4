// SPDX-License-Identifier: MIT
/*
 * uslab: the trace and simulator CLI, perf-style subcommands.
 *
 * To add a subcommand: write `int cmd_xxx(int argc, char **argv)` in
 * tools/uslab/builtin-xxx.c, declare it in tools/uslab/builtin.h, add one
 * line to the table below.
 */
#include <stdio.h>
#include <string.h>
#include "tools/uslab/builtin.h"
#include "sim/internal.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct subcommand cmds[] = {
	{ "record",	cmd_record,	"run a command and record its allocations" },
	{ "script",	cmd_script,	"print the events of a trace as text" },
	{ "report",	cmd_report,	"summarize a trace: ops, sizes, lifetimes, threads, peak" },
	{ "import",	cmd_import,	"convert an mtrace log or perf kmem output to a trace" },
	/* replay, simulation, tuning, generators (sim/ owner B) */
	{ "replay",	cmd_replay,	"replay a trace for real on uslab, glibc, jemalloc, ..." },
	{ "gen",	cmd_gen,	"write a synthetic workload (rpmalloc, mtmalloc, prodcons)" },
	{ "sim",	cmd_sim,	"simulate a trace through uslab on virtual CPUs, deterministically" },
	{ "tune",	cmd_tune,	"sweep magazine sizes and depot limits; frontier and recommendation" },
	/* live view of a running process (USLAB_OPTIONS=stats_shm) */
	{ "slabinfo",	cmd_slabinfo,	"slabinfo of a running process on uslab (-p PID; -w writes tunables)" },
	{ "top",	cmd_top,	"slabtop for a running process on uslab (-p PID)" },
	{ "calibrate",	cmd_calibrate,	"time each allocator path here; write the tuner's cost model" },
};

static int usage(FILE *out)
{
	fprintf(out, "usage: uslab COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(out, "  %-10s %s\n", cmds[i].name, cmds[i].help);
	fprintf(out, "\n'uslab COMMAND --help' describes one command.\n");
	return out == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help"))
		return usage(stdout);
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "uslab: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
