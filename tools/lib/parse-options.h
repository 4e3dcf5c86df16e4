/* SPDX-License-Identifier: MIT */
/*
 * tools/lib/parse-options.c: the one option parser of the `uslab`
 * subcommands, in the manner of perf's parse-options (our own code).
 *
 * A subcommand writes its options once, as a table:
 *
 *	const struct cli_opt opts[] = {
 *		OPT_STRING('o', "output", &out, "FILE", "the trace to write"),
 *		OPT_U64('n', NULL, &limit, "COUNT", "stop after COUNT events", 0, UINT64_MAX),
 *		OPT_BOOLEAN(0, "header", &header, "print the trace header first"),
 *		OPT_END(),
 *	};
 *	int i = parse_options(argc, argv, opts, usage, 0);
 *
 *	if (i <= 0)
 *		return -i;
 *
 * and the table gives everything else: getopt's short-option string and
 * long options, -h/--help (added to every table), the option lines of the
 * usage, the range check of every number and the message that names the
 * option ("uslab gen: --threads: 0 is out of range 1..4096"). @usage is the
 * synopsis and the notes that are not options, one line each; its first
 * line starts with the command's name ("uslab gen KIND [options]"), which
 * begins every message. No line of it is empty: a usage is one block.
 *
 * The conventions it keeps (docs/sim.md, "Command-line conventions"):
 * -h/--help prints the usage on stdout, exit 0; an unknown option, a
 * missing value, a value an option does not take, a bad or out-of-range
 * number, a missing required option: one line naming the option, then the
 * usage, on stderr, exit 2. Numbers are decimal, or hexadecimal after 0x;
 * no sign, no spaces.
 *
 * Not thread-safe: getopt's state is global (one parse at a time, as in
 * any getopt program).
 */
#ifndef USLAB_TOOLS_PARSE_OPTIONS_H
#define USLAB_TOOLS_PARSE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "lib/compiler.h"

enum cli_opt_type {
	OPTION_END,
	OPTION_BOOLEAN,		/* bool: set to !!data, no value */
	OPTION_STRING,		/* const char *: the value as given */
	OPTION_INTEGER,		/* int, in [min, max] */
	OPTION_UINT,		/* unsigned int, in [min, max] */
	OPTION_ULONG,		/* unsigned long, in [min, max] */
	OPTION_U64,		/* uint64_t, in [min, max] */
	OPTION_DOUBLE,		/* double, in [dmin, dmax] */
	OPTION_CALLBACK,	/* cb(opt, value) */
};

/* cli_opt.flags */
#define OPT_REQUIRED	(1u << 0)	/* must be given (said after the parse) */
#define OPT_OPTARG	(1u << 1)	/* value optional (--x[=V]); without one a
					 * number takes @data, a callback NULL */
#define OPT_NOARG	(1u << 2)	/* a callback that takes no value */
#define OPT_OUTPUT	(1u << 3)	/* OPTION_STRING: a file the command writes,
					 * checked (trace/outfile.c's out_check)
					 * once the options are read: before any
					 * long run; a bad one exits 1 */

struct cli_opt;
/*
 * A callback's check and store of @arg (NULL: no value, with OPT_NOARG or
 * OPT_OPTARG). Return: NULL when taken, else what the option expects
 * ("callsite or callsite,size"), said as "--sort: expected ..., found '@arg'".
 */
typedef const char *(*cli_opt_cb)(const struct cli_opt *opt, const char *arg);

struct cli_opt {
	enum cli_opt_type type;
	int short_name;			/* 0: long name only */
	const char *long_name;		/* NULL: short name only */
	void *value;			/* where the value goes (by type) */
	const char *argh;		/* the value's name in the usage: "N" */
	const char *help;		/* the usage's text; '\n' starts a line */
	uint64_t min, max;		/* integers: the range accepted */
	double dmin, dmax;		/* OPTION_DOUBLE: the range accepted */
	long data;			/* OPTION_BOOLEAN's value, OPT_OPTARG's
					 * default, anything a callback wants */
	cli_opt_cb cb;
	bool *set;			/* when non-NULL: set true when given */
	unsigned int flags;		/* OPT_REQUIRED, OPT_OPTARG, OPT_NOARG */
	const char *formats;		/* OPT_OUTPUT: the extensions the file may
					 * have, "svg,png" (one format each; the
					 * extension chooses); "-" (standard
					 * output) only when listed. NULL: any */
};

/* A compile-time check that @v points to @type (a warning otherwise). */
#define OPT_VALUE(v, type)	((void *)(1 ? (v) : (type)NULL))

/*
 * The table's entries. What follows the named arguments is more of the
 * entry's fields, designated: OPT_STRING('o', "output", &out, "FILE",
 * "the trace", .flags = OPT_REQUIRED).
 */
#define OPT_END()		{ .type = OPTION_END }
#define OPT_BOOLEAN(s, l, v, h, ...) \
	{ .type = OPTION_BOOLEAN, .short_name = (s), .long_name = (l), \
	  .value = OPT_VALUE(v, bool *), .help = (h), .data = 1, __VA_ARGS__ }
/* A flag that turns a default-on setting off (--no-touch). */
#define OPT_BOOLEAN_OFF(s, l, v, h, ...) \
	{ .type = OPTION_BOOLEAN, .short_name = (s), .long_name = (l), \
	  .value = OPT_VALUE(v, bool *), .help = (h), .data = 0, __VA_ARGS__ }
#define OPT_STRING(s, l, v, a, h, ...) \
	{ .type = OPTION_STRING, .short_name = (s), .long_name = (l), \
	  .value = OPT_VALUE(v, const char **), .argh = (a), .help = (h), __VA_ARGS__ }
#define OPT_NUMBER(t, ct, s, l, v, a, h, lo, hi, ...) \
	{ .type = (t), .short_name = (s), .long_name = (l), .value = OPT_VALUE(v, ct *), \
	  .argh = (a), .help = (h), .min = (lo), .max = (hi), __VA_ARGS__ }
#define OPT_INTEGER(s, l, v, a, h, lo, hi, ...) \
	OPT_NUMBER(OPTION_INTEGER, int, s, l, v, a, h, lo, hi, __VA_ARGS__)
#define OPT_UINT(s, l, v, a, h, lo, hi, ...) \
	OPT_NUMBER(OPTION_UINT, unsigned int, s, l, v, a, h, lo, hi, __VA_ARGS__)
#define OPT_ULONG(s, l, v, a, h, lo, hi, ...) \
	OPT_NUMBER(OPTION_ULONG, unsigned long, s, l, v, a, h, lo, hi, __VA_ARGS__)
#define OPT_U64(s, l, v, a, h, lo, hi, ...) \
	OPT_NUMBER(OPTION_U64, uint64_t, s, l, v, a, h, lo, hi, __VA_ARGS__)
#define OPT_DOUBLE(s, l, v, a, h, lo, hi, ...) \
	{ .type = OPTION_DOUBLE, .short_name = (s), .long_name = (l), \
	  .value = OPT_VALUE(v, double *), .argh = (a), .help = (h), \
	  .dmin = (lo), .dmax = (hi), __VA_ARGS__ }
/* @v is the callback's: opt->value. */
#define OPT_CALLBACK(s, l, v, a, h, f, ...) \
	{ .type = OPTION_CALLBACK, .short_name = (s), .long_name = (l), \
	  .value = (v), .argh = (a), .help = (h), .cb = (f), __VA_ARGS__ }

/*
 * parse_options - the options of @argv[1..@argc) by @opts (OPT_END last)
 * @usage: synopsis and notes, as above; the option lines come from @opts
 * @flags: PARSE_OPT_STOP_AT_NON_OPTION: the first operand ends the options
 *	   (record's command and its own options follow); otherwise options
 *	   and operands may mix, as with getopt_long.
 *	   PARSE_OPT_ONE_TRACE: exactly one operand (a trace, "TRACE" in the
 *	   messages); PARSE_OPT_NO_OPERAND: none.
 *
 * After the options, in this order: the required ones given, the operands
 * as @flags say, the OPT_OUTPUT files writable.
 *
 * Context: one parse at a time (getopt's globals); restarts getopt, so a
 * command may be run again in the same process (help, the fuzzers).
 * Return: the index in @argv of the first operand (argc when none: the
 * operands are @argv[ret..@argc), in getopt's order), always >= 1; or 0
 * after -h/--help (printed), -1 after --help could not be written or an
 * OPT_OUTPUT file cannot be, -2 after a usage error (said, with the
 * usage): the command returns -ret.
 */
#define PARSE_OPT_STOP_AT_NON_OPTION	(1u << 0)
#define PARSE_OPT_ONE_TRACE		(1u << 1)
#define PARSE_OPT_NO_OPERAND		(1u << 2)
int parse_options(int argc, char **argv, const struct cli_opt *opts,
		  const char *usage, unsigned int flags);

/*
 * output_format - the format @path names among @formats ("csv,svg,png"):
 * its extension, compared without case, or "-" for standard output when
 * "-" is listed. Return: the entry of @formats as a static string
 * ("svg"), or NULL when @path names none of them.
 */
const char *output_format(const char *path, const char *formats);

/* The usage, then every option of @opts with its help, on @f. */
void usage_with_options(FILE *f, const struct cli_opt *opts, const char *usage);
/* "CMD: " @fmt on stderr, then the usage. Return: 2 (the usage exit status). */
int usage_error(const struct cli_opt *opts, const char *usage, const char *fmt, ...)
	__printf(3, 4);
/* A whole number as every option takes one (decimal, or hexadecimal after
 * 0x; no sign, no space), for callbacks. Return: 0, or -1 (not one, or
 * past 2^64 - 1). */
int parse_number(const char *s, uint64_t *v);
#endif /* USLAB_TOOLS_PARSE_OPTIONS_H */
