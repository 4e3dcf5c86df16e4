// SPDX-License-Identifier: MIT
/*
 * What the uslab commands share around a trace: standard output checked at
 * the end, the process a reader works on (--pid, --comm), a trace opened
 * with that process selected, a reader's error said (a truncated trace a
 * warning). The trace library (trace/) prints nothing of this; the commands
 * of tools/uslab/ call it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "trace/trace.h"
#include "tools/lib/cmd.h"

int cmd_check_stdout(const char *who)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	fprintf(stderr, "%s: standard output: %s\n", who,
		errno ? strerror(errno) : "write error");
	return 1;
}

struct cmd_select cmd_select;

struct trace_reader *cmd_open_trace_as(const char *who, const char *path)
{
	struct trace_reader *r = NULL;
	const struct trace_meta *m;
	char why[512];
	int rc, p;

	if (!strcmp(path, "-"))
		rc = trace_reader_open_file(&r, stdin, "(standard input)");
	else
		rc = trace_reader_open(&r, path);
	if (rc) {
		fprintf(stderr, "%s: %s\n", who, r ? trace_reader_error(r) : strerror(-rc));
		trace_reader_close(r);
		return NULL;
	}
	m = trace_reader_meta(r);
	p = trace_pick_proc(m, cmd_select.pid, cmd_select.comm, why, sizeof(why));
	if (p == -ENOENT) {
		fprintf(stderr, "%s: %s: %s\n", who, path, why);
		trace_reader_close(r);
		return NULL;
	}
	if (p >= 0) {
		rc = trace_reader_select(r, p);
		if (rc) {
			fprintf(stderr, "%s: %s: %s\n", who, path, strerror(-rc));
			trace_reader_close(r);
			return NULL;
		}
		if (!cmd_select.quiet && m->nprocs > 1)
			fprintf(stderr, "%s: %s\n", who, why);
		cmd_select.quiet = true;	/* once per run (tune opens often) */
	} else if (why[0] && !cmd_select.quiet) {
		fprintf(stderr, "%s: %s\n", who, why);
		cmd_select.quiet = true;
	}
	return r;
}

struct trace_reader *cmd_open_trace(const char *path)
{
	return cmd_open_trace_as("uslab", path);
}

bool cmd_truncated;
const char *cmd_who = "uslab";

int cmd_read_error(struct trace_reader *r, int rc)
{
	if (rc >= 0)
		return 0;
	if (trace_reader_truncated(r)) {
		/* once: a command that reads the file twice (report --timeline)
		 * meets the same end twice */
		static char said[512];
		const char *why = trace_reader_error(r);

		if (strncmp(said, why, sizeof(said) - 1)) {
			fprintf(stderr, "%s: warning: %s; what the complete chunks before it "
				"hold follows (exit status %d)\n", cmd_who, why,
				CMD_EXIT_TRUNCATED);
			snprintf(said, sizeof(said), "%s", why);
		}
		cmd_truncated = true;
		return 0;
	}
	fprintf(stderr, "%s: %s\n", cmd_who, trace_reader_error(r));
	return 1;
}

int cmd_out_fopen(struct out_file *o, const char *path, FILE **f, char *err, size_t len)
{
	int rc = out_open(o, path, err, len);

	if (rc)
		return rc;
	*f = fdopen(dup(o->fd), "w");
	if (!*f) {
		rc = -errno;
		snprintf(err, len, "%s: %s", path, strerror(-rc));
		out_abort(o);
	}
	return rc;
}

int cmd_out_fclose(struct out_file *o, FILE *f, char *err, size_t len)
{
	int rc = fflush(f) || ferror(f) ? -(errno ? errno : EIO) : 0;

	if (fclose(f) && !rc)
		rc = -errno;
	if (rc) {
		snprintf(err, len, "%s: %s", o->name, strerror(-rc));
		out_abort(o);
		return rc;
	}
	return out_commit(o, err, len);
}
