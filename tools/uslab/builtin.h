/* SPDX-License-Identifier: MIT */
/*
 * tools/uslab/ private declarations: the `uslab` subcommands (uslab.c holds
 * the table) and the plotting helpers. Each command gets argv[0] = its own
 * name and returns the exit status.
 */
#ifndef USLAB_TOOLS_BUILTIN_H
#define USLAB_TOOLS_BUILTIN_H

#include "trace/internal.h"
#include "sim/internal.h"

/* builtin-script.c */
int cmd_script(int argc, char **argv);
/* builtin-report.c */
int cmd_report(int argc, char **argv);
/* builtin-record.c */
int cmd_record(int argc, char **argv);
/* builtin-import.c */
int cmd_import(int argc, char **argv);
/* builtin-tune.c */
int cmd_tune(int argc, char **argv);
/* builtin-replay.c */
int cmd_replay(int argc, char **argv);
/* builtin-gen.c */
int cmd_gen(int argc, char **argv);

/* plot.c */
struct plot_point {
	double x, y;
	int kind;			/* 0 swept, 1 frontier, 2 recommended, 3 defaults */
};
int plot_svg(const char *path, const char *title, const char *xlabel,
	     const char *ylabel, const struct plot_point *pts, size_t n);

#endif /* USLAB_TOOLS_BUILTIN_H */
