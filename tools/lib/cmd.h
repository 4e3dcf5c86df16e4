/* SPDX-License-Identifier: MIT */
/*
 * tools/lib/cmd.c: what the uslab commands (tools/uslab/) share around a
 * trace; their options are tools/lib/parse-options.c's.
 */
#ifndef USLAB_TOOLS_LIB_CMD_H
#define USLAB_TOOLS_LIB_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "trace/trace.h"
#include "tools/lib/parse-options.h"

struct trace_reader;

/* Flush stdout; on a write error (full disk, closed pipe) say so. Return 0/1. */
int cmd_check_stdout(const char *who);
/* The process a reader works on (--pid, --comm), one setting per run. */
struct cmd_select {
	uint32_t pid;
	const char *comm;
	bool quiet;		/* do not say which process was chosen */
};
extern struct cmd_select cmd_select;
/*
 * Opens @path ("-": standard input) for reading, and selects the process of
 * cmd_select (by default as trace_pick_proc() says), saying which
 * on stderr when the trace has several. Prints any error; NULL on failure.
 */
struct trace_reader *cmd_open_trace(const char *path);
struct trace_reader *cmd_open_trace_as(const char *who, const char *path);
/* After the last trace_reader_next(): 0 at the end; on an error prints it
 * and returns 1, except for a file that ends early (a truncated trace):
 * then a warning naming the offset (once for the same end of the same
 * file), cmd_truncated set and 0, so the
 * command prints what the complete chunks before it held, and uslab exits
 * with status 3 (CMD_EXIT_TRUNCATED) when the command otherwise succeeds. */
int cmd_read_error(struct trace_reader *r, int rc);
#define CMD_EXIT_TRUNCATED	3
extern bool cmd_truncated;
/* The name cmd_read_error() says its words under: "uslab COMMAND", set by
 * uslab's main before the command runs ("uslab" before that). */
extern const char *cmd_who;
/*
 * An output file that never clobbers (trace/outfile.c's out_open: a
 * temporary renamed at the end) as a stdio stream @f: opened, then closed
 * and committed, or abandoned with the temporary unlinked. Return: 0, or
 * -errno with @err "PATH: what".
 */
int cmd_out_fopen(struct out_file *o, const char *path, FILE **f, char *err, size_t len);
int cmd_out_fclose(struct out_file *o, FILE *f, char *err, size_t len);

/* parse-options.c: --pid and --comm, the process of a multi-process trace
 * every reader of traces takes (cmd_select). */
const char *opt_select_pid(const struct cli_opt *opt, const char *arg);
const char *opt_select_comm(const struct cli_opt *opt, const char *arg);
#define OPT_PROC_SELECT()							\
	OPT_CALLBACK(0, "pid", NULL, "PID", "the process with this pid (default: the\n"	\
		     "program the command ran as: uslab record -h)", opt_select_pid),	\
	OPT_CALLBACK(0, "comm", NULL, "NAME", "the process with this name", opt_select_comm)

#endif /* USLAB_TOOLS_LIB_CMD_H */
