// SPDX-License-Identifier: MIT
/*
 * The option parser of every `uslab` subcommand (parse-options.h says how
 * a command uses it). One table per command gives getopt_long its short
 * string and long options, the usage its option lines, and each value its
 * type and range; the messages are made here, so every command words them
 * alike and names the option.
 *
 * No locks: getopt's state is global, one parse at a time.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace.h"
#include "tools/lib/cmd.h"
#include "tools/lib/parse-options.h"

/* Options in one table, -h/--help not counted. */
#define PARSE_OPT_MAX		48
/* getopt's value for the long-only option at index i of the table. */
#define PARSE_OPT_LONG_ONLY	0x100
/* The usage's option column: at most this wide, then the help. */
#define USAGE_COLUMN_MAX	24

/* The command's name, for messages: the first two words of the usage. */
static const char *cmd_name(const char *usage, char *buf, size_t len)
{
	size_t n = 0;
	int words = 0;

	while (usage[n] && usage[n] != '\n' && n + 1 < len) {
		if (usage[n] == ' ' && ++words == 2)
			break;
		n++;
	}
	memcpy(buf, usage, n);
	buf[n] = '\0';
	return buf;
}

/* How the option is named in a message: its long name if it has one. */
static const char *opt_name(const struct cli_opt *o, char *buf, size_t len)
{
	if (o->long_name)
		snprintf(buf, len, "--%s", o->long_name);
	else
		snprintf(buf, len, "-%c", o->short_name);
	return buf;
}

static int opt_has_arg(const struct cli_opt *o)
{
	if (o->flags & OPT_OPTARG)
		return optional_argument;
	if (o->type == OPTION_BOOLEAN || (o->flags & OPT_NOARG))
		return no_argument;
	return required_argument;
}

static int usage_left(const struct cli_opt *o, char *buf, size_t len)
{
	int n;

	if (o->short_name && o->long_name)
		n = snprintf(buf, len, "-%c, --%s", o->short_name, o->long_name);
	else if (o->short_name)
		n = snprintf(buf, len, "-%c", o->short_name);
	else
		n = snprintf(buf, len, "    --%s", o->long_name);
	if (o->argh && opt_has_arg(o) == optional_argument)
		n += snprintf(buf + n, len - (size_t)n, "[%s%s]", o->long_name ? "=" : "", o->argh);
	else if (o->argh && opt_has_arg(o) == required_argument)
		n += snprintf(buf + n, len - (size_t)n, " %s", o->argh);
	return n;
}

/* "  LEFT   HELP": the help at column @width + 4, each of its lines. */
static void usage_line(FILE *f, const char *left, int width, const char *help)
{
	int col = width + 4, n = fprintf(f, "  %s", left);

	if (n > width + 2) {	/* too wide for the column: help below */
		fputc('\n', f);
		n = 0;
	}
	for (;;) {
		size_t len = strcspn(help, "\n");

		fprintf(f, "%*s%.*s\n", col - n, "", (int)len, help);
		if (!help[len])
			break;
		help += len + 1;
		n = 0;
	}
}

void usage_with_options(FILE *f, const struct cli_opt *opts, const char *usage)
{
	static const struct cli_opt help = OPT_BOOLEAN('h', "help", NULL, "this help");
	char left[128];
	int width = 0;
	size_t ul = strlen(usage);

	fprintf(f, "usage: %s%s", usage, ul && usage[ul - 1] == '\n' ? "" : "\n");
	for (const struct cli_opt *o = opts; o->type != OPTION_END; o++) {
		int n = usage_left(o, left, sizeof(left));

		if (n > width && n <= USAGE_COLUMN_MAX)
			width = n;
	}
	for (const struct cli_opt *o = opts; o->type != OPTION_END; o++) {
		usage_left(o, left, sizeof(left));
		usage_line(f, left, width, o->help);
	}
	usage_left(&help, left, sizeof(left));
	usage_line(f, left, width, help.help);
}

int usage_error(const struct cli_opt *opts, const char *usage, const char *fmt, ...)
{
	char who[64];
	va_list ap;

	fprintf(stderr, "%s: ", cmd_name(usage, who, sizeof(who)));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage_with_options(stderr, opts, usage);
	return 2;
}

/* The operands @flags ask for (PARSE_OPT_ONE_TRACE, PARSE_OPT_NO_OPERAND)
 * at @argv[@first..@argc). Return: 0, or 2 after saying what is wrong. */
static int check_operands(int argc, char **argv, int first, unsigned int flags,
			  const struct cli_opt *opts, const char *usage)
{
	if ((flags & PARSE_OPT_NO_OPERAND) && first < argc)
		return usage_error(opts, usage, "unexpected argument '%s'", argv[first]);
	if (!(flags & PARSE_OPT_ONE_TRACE) || first == argc - 1)
		return 0;
	if (first >= argc)
		return usage_error(opts, usage, "no TRACE given");
	return usage_error(opts, usage, "one TRACE only (found also '%s')", argv[first + 1]);
}

/* The OPT_OUTPUT files that will be written. Return: 0, or 1 after saying
 * which cannot be, and why. */
static int check_outputs(const struct cli_opt *opts, const char *usage)
{
	char why[PATH_MAX + 128], name[64], who[64];

	for (const struct cli_opt *o = opts; o->type != OPTION_END; o++) {
		const char *path = o->flags & OPT_OUTPUT ? *(const char **)o->value : NULL;

		if (path && out_check(path, why, sizeof(why))) {
			fprintf(stderr, "%s: %s: %s\n", cmd_name(usage, who, sizeof(who)),
				opt_name(o, name, sizeof(name)), why);
			return 1;
		}
	}
	return 0;
}

/*
 * parse_number - @s as a whole number: decimal, or hexadecimal after 0x.
 * Return: 0, or -1 (not such a number, or past 2^64 - 1).
 */
int parse_number(const char *s, uint64_t *v)
{
	int base = s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -1;	/* strtoull would take spaces and a sign */
	errno = 0;
	*v = strtoull(s, &end, base);
	return errno || *end || end == s ? -1 : 0;
}

const char *output_format(const char *path, const char *formats)
{
	static char fmt[16];
	const char *dot = strrchr(path, '.'), *p = formats;

	if (strchr(path, '/') && dot && dot < strrchr(path, '/'))
		dot = NULL;		/* a dot of a directory's name */
	while (*p) {
		size_t n = strcspn(p, ",");
		bool match = !strcmp(path, "-") ? n == 1 && *p == '-' :
			     dot && n < sizeof(fmt) && strlen(dot + 1) == n &&
			     !strncasecmp(dot + 1, p, n);

		if (match) {
			memcpy(fmt, p, n);
			fmt[n] = 0;
			return fmt;
		}
		p += n + !!p[n];
	}
	return NULL;
}

/* @o's formats as "FILE.svg or FILE.png" (and "- (standard output)"). */
static void formats_text(const char *formats, char *buf, size_t len)
{
	const char *p = formats;
	size_t used = 0;
	int k = 0, all = 0;

	for (const char *q = formats; *q; q++)
		all += *q == ',';
	buf[0] = 0;
	while (*p && used < len) {
		size_t n = strcspn(p, ",");

		used += (size_t)snprintf(buf + used, len - used, "%s%s%.*s%s",
					 !k ? "" : k == all ? " or " : ", ",
					 n == 1 && *p == '-' ? "" : "FILE.", (int)n, p,
					 n == 1 && *p == '-' ? " (standard output)" : "");
		p += n + !!p[n];
		k++;
	}
}

/* One option's value (@arg; NULL when given without one). Return: 0 or 2. */
static int take_value(const struct cli_opt *opts, const char *usage,
		      const struct cli_opt *o, const char *arg)
{
	char name[64];
	const char *why;
	uint64_t v;
	double d;
	char *end;

	opt_name(o, name, sizeof(name));
	switch (o->type) {
	case OPTION_BOOLEAN:
		*(bool *)o->value = o->data;
		return 0;
	case OPTION_STRING:
		if (o->formats && arg && !output_format(arg, o->formats)) {
			char want[256];

			/* refused before anything is read or written: the
			 * format is the extension's, never a surprise */
			formats_text(o->formats, want, sizeof(want));
			return usage_error(opts, usage, "%s: expected %s (the format comes from "
					   "the extension), found '%s'", name, want, arg);
		}
		*(const char **)o->value = arg;
		return 0;
	case OPTION_CALLBACK:
		why = o->cb(o, arg);
		if (!why)
			return 0;
		if (!arg)
			return usage_error(opts, usage, "%s: expected %s", name, why);
		return usage_error(opts, usage, "%s: expected %s, found '%s'", name, why, arg);
	case OPTION_DOUBLE:
		if (!arg) {		/* OPT_OPTARG given no value */
			*(double *)o->value = (double)o->data;
			return 0;
		}
		errno = 0;
		d = strtod(arg, &end);
		if (errno || end == arg || *end || isspace((unsigned char)arg[0]))
			return usage_error(opts, usage, "%s: expected a number %g..%g, found '%s'",
					   name, o->dmin, o->dmax, arg);
		if (!(d >= o->dmin && d <= o->dmax))
			return usage_error(opts, usage, "%s: %s is out of range %g..%g",
					   name, arg, o->dmin, o->dmax);
		*(double *)o->value = d;
		return 0;
	case OPTION_INTEGER:
	case OPTION_UINT:
	case OPTION_ULONG:
	case OPTION_U64:
		if (!arg)
			v = (uint64_t)o->data;
		else if (parse_number(arg, &v))
			return usage_error(opts, usage, "%s: expected an integer %" PRIu64 "..%" PRIu64
					   ", found '%s'", name, o->min, o->max, arg);
		else if (v < o->min || v > o->max)
			return usage_error(opts, usage, "%s: %s is out of range %" PRIu64 "..%" PRIu64,
					   name, arg, o->min, o->max);
		/* the table's range fits the type: the stores below keep v whole */
		if (o->type == OPTION_INTEGER)
			*(int *)o->value = (int)v;
		else if (o->type == OPTION_UINT)
			*(unsigned int *)o->value = (unsigned int)v;
		else if (o->type == OPTION_ULONG)
			*(unsigned long *)o->value = (unsigned long)v;
		else
			*(uint64_t *)o->value = v;
		return 0;
	case OPTION_END:
		break;
	}
	return usage_error(opts, usage, "%s: option of no known type", name);
}

/* The long options that start with @word (no '=' part): more than one is
 * ambiguous. Return: how many, their names in @buf. */
static int long_matches(const struct cli_opt *opts, const char *word, char *buf, size_t len)
{
	size_t wl = strcspn(word, "=");
	int n = 0, off = 0;

	buf[0] = '\0';
	for (const struct cli_opt *o = opts; o->type != OPTION_END; o++) {
		if (!o->long_name || strncmp(o->long_name, word, wl))
			continue;
		if (off >= 0 && (size_t)off < len)
			off += snprintf(buf + off, len - (size_t)off, "%s--%s", n ? ", " : "",
					o->long_name);
		n++;
	}
	if (!strncmp("help", word, wl) && off >= 0 && (size_t)off < len)
		snprintf(buf + off, len - (size_t)off, "%s--help", n++ ? ", " : "");
	return n;
}

/* Is @c getopt's value for a long option that takes no value? */
static bool long_without_value(const struct cli_opt *opts, int c)
{
	for (size_t i = 0; opts[i].type != OPTION_END; i++)
		if ((opts[i].short_name ? opts[i].short_name : PARSE_OPT_LONG_ONLY + (int)i) == c)
			return opts[i].long_name && opt_has_arg(&opts[i]) == no_argument;
	return c == 'h';
}

/* getopt refused an option (opterr 0, ':' leading the string): @c is ':'
 * for a missing value, '?' for the rest. Return: 2, said. */
static int opt_refused(const struct cli_opt *opts, const char *usage, int c,
		       int argc, char **argv)
{
	const char *word = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	int wl = (int)strcspn(word, "=");
	bool is_long = !strncmp(word, "--", 2) && word[2];
	char names[256];

	/* A missing value is always the last word: getopt has passed it. */
	if (c == ':' && is_long)
		return usage_error(opts, usage, "option '%.*s' needs a value", wl, word);
	if (c == ':')
		return usage_error(opts, usage, "option '-%c' needs a value", optopt);
	if (optopt && is_long && word[wl] == '=' && long_without_value(opts, optopt))
		return usage_error(opts, usage, "option '%.*s' takes no value", wl, word);
	if (optopt)		/* within a word of short options maybe: by optopt */
		return usage_error(opts, usage, "unknown option '-%c'", optopt);
	if (long_matches(opts, word + 2, names, sizeof(names)) > 1)
		return usage_error(opts, usage, "option '%.*s' is ambiguous (%s)", wl, word, names);
	return usage_error(opts, usage, "unknown option '%s'", word);
}

int parse_options(int argc, char **argv, const struct cli_opt *opts,
		  const char *usage, unsigned int flags)
{
	struct option longopts[PARSE_OPT_MAX + 2];
	char shortopts[3 * PARSE_OPT_MAX + 8], who[64];
	bool seen[PARSE_OPT_MAX] = { false };
	size_t nl = 0, ns = 0, n;
	int c, rc;

	for (n = 0; opts[n].type != OPTION_END; n++)
		if (opts[n].short_name == 'h' || (opts[n].long_name &&
						  !strcmp(opts[n].long_name, "help")))
			return usage_error(opts, usage, "-h/--help is the parser's own");
	if (n > PARSE_OPT_MAX)	/* both: the command's table is wrong */
		return usage_error(opts, usage, "%zu options, more than the parser's %d",
				   n, PARSE_OPT_MAX);
	if (flags & PARSE_OPT_STOP_AT_NON_OPTION)
		shortopts[ns++] = '+';
	shortopts[ns++] = ':';		/* a missing value: ':', not '?' */
	for (size_t i = 0; i < n; i++) {
		const struct cli_opt *o = &opts[i];
		int has = opt_has_arg(o);
		int val = o->short_name ? o->short_name : PARSE_OPT_LONG_ONLY + (int)i;

		if (o->short_name) {
			shortopts[ns++] = (char)o->short_name;
			if (has != no_argument)
				shortopts[ns++] = ':';
			if (has == optional_argument)
				shortopts[ns++] = ':';
		}
		if (o->long_name)
			longopts[nl++] = (struct option){ o->long_name, has, NULL, val };
	}
	shortopts[ns++] = 'h';
	shortopts[ns] = '\0';
	longopts[nl++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[nl] = (struct option){ NULL, 0, NULL, 0 };

	opterr = 0;
	optind = 0;		/* a full restart: another argv, or the same again */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		size_t i = 0;

		if (c == 'h') {
			usage_with_options(stdout, opts, usage);
			return cmd_check_stdout(cmd_name(usage, who, sizeof(who))) ? -1 : 0;
		}
		if (c == '?' || c == ':')
			return -opt_refused(opts, usage, c, argc, argv);
		if (c >= PARSE_OPT_LONG_ONLY)
			i = (size_t)(c - PARSE_OPT_LONG_ONLY);
		else
			while (i < n && opts[i].short_name != c)
				i++;
		if (i >= n)	/* getopt gave back what we never gave it */
			return -usage_error(opts, usage, "option value %d unknown", c);
		rc = take_value(opts, usage, &opts[i], optarg);
		if (rc)
			return -rc;
		seen[i] = true;
		if (opts[i].set)
			*opts[i].set = true;
	}
	for (size_t i = 0; i < n; i++) {
		char name[64];

		if (!(opts[i].flags & OPT_REQUIRED) || seen[i])
			continue;
		if (opts[i].short_name)
			snprintf(name, sizeof(name), "-%c", opts[i].short_name);
		else
			opt_name(&opts[i], name, sizeof(name));
		return -usage_error(opts, usage, "%s%s%s is required", name,
				    opts[i].argh ? " " : "", opts[i].argh ? opts[i].argh : "");
	}
	rc = check_operands(argc, argv, optind, flags, opts, usage);
	if (!rc)
		rc = check_outputs(opts, usage);
	return rc ? -rc : optind;
}

/* --pid and --comm of the trace readers (OPT_PROC_SELECT): tools/lib/cmd.c's cmd_select. */
const char *opt_select_pid(const struct cli_opt *opt, const char *arg)
{
	uint64_t v;

	if (parse_number(arg, &v) || !v || v > UINT32_MAX)
		return "a process id 1..4294967295";
	cmd_select.pid = (uint32_t)v;
	return NULL;
}

const char *opt_select_comm(const struct cli_opt *opt, const char *arg)
{
	if (!*arg || strlen(arg) > 255)
		return "a process name of 1..255 bytes";
	cmd_select.comm = arg;
	return NULL;
}
