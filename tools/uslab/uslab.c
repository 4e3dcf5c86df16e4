// SPDX-License-Identifier: MIT
/*
 * uslab: the trace and simulator CLI, perf-style subcommands.
 *
 * To add a subcommand: write `int cmd_xxx(int argc, char **argv)` in
 * tools/uslab/builtin-xxx.c (its options one table for parse_options(),
 * tools/lib/parse-options.h), declare it in tools/uslab/builtin.h, add one
 * line to the table below, and a manual page docs/man/uslab-xxx.1.scd.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tools/uslab/builtin.h"

#ifndef USLAB_VERSION
#define USLAB_VERSION "unknown"
#endif

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct subcommand cmds[] = {
	{ "record",	cmd_record,	"run a command and record the allocations of every process it runs" },
	{ "script",	cmd_script,	"print the events of a trace as text" },
	{ "report",	cmd_report,	"summarize a trace: processes, ops, sizes, lifetimes, threads, peak" },
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
	fprintf(out, "usage: uslab COMMAND [ARGS]\n"
		"       uslab --version | --help | help [COMMAND]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(out, "  %-10s %s\n", cmds[i].name, cmds[i].help);
	fprintf(out, "\n'uslab COMMAND --help' describes one command, "
		"'uslab help COMMAND' shows its manual page.\n");
	if (out == stdout)
		return cmd_check_stdout("uslab");
	return 2;
}

int cmd_exe_dir(char *dir, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", dir, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	dir[n] = 0;
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

/* The page beside the binary (build tree: man/) or installed (../share). */
static int find_page(const char *page, char *buf, size_t len)
{
	static const char *const where[] = { "/man/", "/../share/man/man1/" };
	char exe[PATH_MAX];

	if (cmd_exe_dir(exe, sizeof(exe)))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(where); i++)
		if ((size_t)snprintf(buf, len, "%s%s%s", exe, where[i], page) < len &&
		    !access(buf, R_OK))
			return 0;
	return -1;
}

/* `uslab help [CMD]`: its manual page through man(1); without man, or
 * without the page, the command's --help. */
static int help(const char *name)
{
	const struct subcommand *c = NULL;
	char page[64], path[PATH_MAX + 64];

	if (name) {
		for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
			if (!strcmp(name, cmds[i].name))
				c = &cmds[i];
		if (!c) {
			fprintf(stderr, "uslab help: unknown command '%s'\n", name);
			return usage(stderr);
		}
		snprintf(page, sizeof(page), "uslab-%s.1", name);
	} else {
		snprintf(page, sizeof(page), "uslab.1");
	}
	if (!find_page(page, path, sizeof(path))) {
		fflush(NULL);
		execlp("man", "man", "-l", path, (char *)NULL);
		fprintf(stderr, "uslab help: man: %s; the usage instead:\n", strerror(errno));
	} else {
		fprintf(stderr, "uslab help: manual page %s not found; the usage instead:\n", page);
	}
	if (!c)
		return usage(stdout);
	{
		char *argv[] = { (char *)c->name, (char *)"--help", NULL };

		return c->fn(2, argv);
	}
}

int main(int argc, char **argv)
{
	/*
	 * A reader that stops early (uslab script T | head) is normal use: the
	 * command ends at its next write, silently, killed by SIGPIPE as cat
	 * is (status 141 in the shell), with no work after it. Every other
	 * write error (a full disk) is said and exits 1 (cmd_check_stdout).
	 * record alone ignores SIGPIPE: it must outlive its command to finish
	 * the trace, and gives the command the default back.
	 */
	signal(SIGPIPE, argc > 1 && !strcmp(argv[1], "record") ? SIG_IGN : SIG_DFL);
	if (argc < 2) {
		fprintf(stderr, "uslab: no command given\n");
		return usage(stderr);
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("uslab %s (trace format %d.%d)\n", USLAB_VERSION,
		       TRACE_FORMAT_MAJOR, TRACE_FORMAT_MINOR);
		return cmd_check_stdout("uslab");
	}
	if (!strcmp(argv[1], "help")) {
		if (argc > 3) {
			fprintf(stderr, "uslab help: one COMMAND at most\n");
			return usage(stderr);
		}
		return help(argc == 3 ? argv[2] : NULL);
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			static char who[64];
			int rc;

			snprintf(who, sizeof(who), "uslab %s", cmds[i].name);
			cmd_who = who;
			trace_writer_who = who;
			rc = cmds[i].fn(argc - 1, argv + 1);
			/* whatever a command printed last, a write error is
			 * said, not left to exit()'s silent flush (replay's
			 * report, tune --model-only's verdict) */
			if (!rc && cmd_check_stdout(who))
				rc = 1;

			/* a truncated trace read as far as it goes: said, and
			 * told apart from a complete one (uslab(1)) */
			return !rc && cmd_truncated ? CMD_EXIT_TRUNCATED : rc;
		}
	fprintf(stderr, "uslab: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
