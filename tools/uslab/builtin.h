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

/* ---- tools/uslab/symbolize.c: a frame's function and source line (elfutils libdw). */
struct symbolizer;
struct sym_info {
	char func[256];
	char file[512];
	int line;		/* 0: unknown */
};
struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);
/* @off: the byte offset in the file @path of the address (for a return
 * address, one byte before it). Return: 0, or -1 when nothing is known. */
int symbolize(struct symbolizer *s, const char *path, uint64_t off, struct sym_info *out);
/* tools/uslab/report_callsite.c: `uslab report --sort callsite[,size] [--children]` */
struct trace_reader;
int report_callsites(struct trace_reader *r, const char *path, bool by_size,
		     bool children, unsigned int rows);

#endif /* USLAB_TOOLS_BUILTIN_H */
