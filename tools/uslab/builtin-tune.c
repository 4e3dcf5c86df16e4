// SPDX-License-Identifier: MIT
/*
 * uslab tune: the command around the tuner's engine (sim/tune.c). Parses the
 * sweep, prints the frontier of memory overhead against modelled allocator
 * time, prints the recommended settings in the two forms the library reads
 * (USLAB_OPTIONS and a Kconfig fragment), and draws the frontier: as SVG by
 * plot.c, or as PNG by plot-frontier.py (matplotlib) from a CSV file.
 *
 * No locks: single-threaded (the engine's children are processes).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "uslab/percpu.h"
#include "tools/uslab/builtin.h"

/* Where `make install` puts plot-frontier.py, relative to bin/uslab. */
#define PLOT_SCRIPT		"plot-frontier.py"

struct tune_cli {
	struct tune_space sp;
	const char *svg, *png;
	unsigned long cpus;
	bool all_rows;
	unsigned long verify;		/* --verify-grid runs */
	bool verify_grid;
	enum tune_goal goal;
	bool model_only, mean;
	unsigned long runs, candidates;
	const char *calibration;
	bool jobs;			/* --jobs: print the sweep as command lines */
	const char *merge;		/* --merge FILE: their results */
};

static const char tune_usage[] =
	"uslab tune TRACE [--goal time|memory|balanced] [--model-only] [-j N] [options]\n"
	"  sweeps magazine sizes and depot limits through the simulator, takes the few\n"
	"  configurations it models best for the goal, replays each for real against\n"
	"  the library's defaults, and recommends one only when the real runs show a\n"
	"  significant gain; otherwise it says \"keep the defaults\"";

/* --goal time|memory|balanced (opt->value: the enum tune_goal). */
static const char *tune_goal_opt(const struct cli_opt *opt, const char *arg)
{
	static const enum tune_goal goals[] = { TUNE_BALANCED, TUNE_TIME, TUNE_MEMORY };

	for (unsigned int i = 0; i < ARRAY_SIZE(goals); i++)
		if (!strcmp(arg, tune_goal_name(goals[i]))) {
			*(enum tune_goal *)opt->value = goals[i];
			return NULL;
		}
	return "time, memory or balanced";
}

/*
 * --mag-sizes ('m' in opt->data), --depot-limits ('d'), --adapt-max ('x'),
 * --adapt-budgets ('B'): up to TUNE_MAX_VALUES numbers, each read by its
 * row of <uslab/tunables.h> (sim_tunable_row(): the rows `uslab sim`'s
 * options read; a swept magazine size is at least 1: 0 means the
 * default; a swept largest adaptive magazine at least the smallest, which
 * the sweep leaves at its default: percpu/ refuses less, said apart from
 * the row's bounds), into the struct
 * tune_space at opt->value.
 */
static const char *tune_list(const struct cli_opt *opt, const char *arg)
{
	static char expect[128];
	struct tune_space *sp = opt->value;
	bool mags = opt->data == 'm', amax = opt->data == 'x', abud = opt->data == 'B';
	const struct uslab_tunable *t = sim_tunable_row((int)opt->data);
	long *v = mags ? sp->mags : amax ? sp->amaxs : abud ? sp->abudgets : sp->depots;
	unsigned long amin, amax_def, abud_def;
	long lo = mags ? 1 : t->min;
	unsigned int *n = mags ? &sp->nm : amax ? &sp->nam : abud ? &sp->nab : &sp->nd;
	char buf[256], *item, *save = NULL;
	size_t len = strlen(arg);
	bool ok = len && len < sizeof(buf) && arg[0] != ',' && arg[len - 1] != ',' &&
		  !strstr(arg, ",,");

	if (ok)
		strcpy(buf, arg);
	for (*n = 0, item = ok ? strtok_r(buf, ",", &save) : NULL; item;
	     item = strtok_r(NULL, ",", &save)) {
		if (*n == TUNE_MAX_VALUES || uslab_tunable_parse(t, item, &v[*n]) ||
		    v[*n] < lo) {
			ok = false;
			break;
		}
		(*n)++;
	}
	if (ok && *n && amax) {	/* the smallest magazine: what percpu/ starts at */
		pcp_adapt_get_bounds(&amin, &amax_def, &abud_def);
		for (unsigned int i = 0; i < *n; i++)
			if (v[i] < (long)amin) {
				snprintf(expect, sizeof(expect), "sizes of at least the smallest "
					 "magazine, %lu bytes (the default adapt_min)", amin);
				return expect;
			}
	}
	if (ok && *n)
		return NULL;
	snprintf(expect, sizeof(expect), "up to %d numbers %ld..%ld, comma-separated",
		 TUNE_MAX_VALUES, lo, t->max);
	return expect;
}

/* Return: as parse_options() (the trace at the index returned). */
static int tune_parse(int argc, char **argv, struct tune *tu, struct tune_cli *o)
{
	static const long mags[] = { 4, 8, 16, 32, 64, 128, 256 };
	static const long depots[] = { 0, 2, 8, 32, -1 };
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int i;
	const struct cli_opt opts[] = {
		OPT_UINT('j', "workers", &tu->workers, "N",
			 "simulations at once (default: online CPUs)", 1, 256),
		OPT_BOOLEAN(0, "jobs", &o->jobs,
			    "print the sweep as independent command lines (for GNU\n"
			    "parallel, a Slurm array...) and stop"),
		OPT_STRING(0, "merge", &o->merge, "FILE",
			   "the results of those command lines (- for standard\n"
			   "input): the frontier and the verdict from them"),
		OPT_STRING(0, "svg", &o->svg, "FILE", "draw the frontier as SVG (our own writer)",
			   .flags = OPT_OUTPUT, .formats = "svg"),
		OPT_STRING(0, "png", &o->png, "FILE", "draw it as PNG (python3-matplotlib)",
			   .flags = OPT_OUTPUT, .formats = "png"),
		OPT_ULONG(0, "cpus", &o->cpus, "N", "virtual CPUs (default: the trace's)",
			  1, TRACE_MAX_CPUS),
		OPT_CALLBACK(0, "mag-sizes", &o->sp, "LIST",
			     "magazine sizes swept (default 4,8,16,32,64,128,256)", tune_list,
			     .data = 'm'),
		OPT_CALLBACK(0, "depot-limits", &o->sp, "LIST",
			     "depot limits swept (default 0,2,8,32,-1)", tune_list, .data = 'd'),
		OPT_INTEGER(0, "batch", &tu->batch, "N",
			    "batch count for every run (default: half a magazine)", 1,
			    uslab_tunables[USLAB_OPT_BATCH].max),
		OPT_CALLBACK(0, "goal", &o->goal, "GOAL",
			     "time (less CPU time), memory (less resident memory)\n"
			     "or balanced (default: less memory at no measurable\n"
			     "cost in CPU time, or less CPU time at no more memory)",
			     tune_goal_opt),
		OPT_BOOLEAN(0, "model-only", &o->model_only,
			    "no real replays: the model's word alone (every line\n"
			    "of the output says so)"),
		OPT_ULONG(0, "runs", &o->runs, "N",
			  "real replays of each configuration per round (default 7)", 3,
			  TUNE_REAL_MAX_RUNS),
		OPT_ULONG(0, "candidates", &o->candidates, "N",
			  "configurations the model picks for real replays\n"
			  "(default 3)", 1, TUNE_MAX_CANDIDATES),
		OPT_CALIBRATION(&o->calibration),
		OPT_BOOLEAN(0, "peak", &tu->peak, "frontier on peak resident memory (the default)"),
		OPT_BOOLEAN(0, "mean", &o->mean, "frontier on mean resident memory"),
		OPT_CALLBACK(0, "adapt-max", &o->sp, "LIST",
			     "adaptive magazines: largest magazine sizes to\n"
			     "sweep, bytes (beside the adaptive default)", tune_list, .data = 'x'),
		OPT_CALLBACK(0, "adapt-budgets", &o->sp, "LIST",
			     "adaptive magazines: per-CPU budgets to sweep, KiB",
			     tune_list, .data = 'B'),
		OPT_BOOLEAN(0, "no-adapt", &o->sp.no_adapt,
			    "fixed magazine sizes only (no adaptive configuration)"),
		OPT_BOOLEAN_OFF(0, "no-compose", &o->sp.compose,
				"only the uniform grid, no per-class round"),
		OPT_BOOLEAN(0, "all", &o->all_rows, "print every frontier point"),
		OPT_ULONG(0, "verify", &o->runs, "N",
			  "the real replays, N runs each (what tune does by\n"
			  "default; kept for old command lines)", 3, TUNE_REAL_MAX_RUNS,
			  .flags = OPT_OPTARG, .data = 7),
		OPT_ULONG(0, "verify-grid", &o->verify, "N",
			  "the same for every point of the uniform grid (at most\n"
			  "32; e.g. --mag-sizes 8,32,128,512 --depot-limits\n"
			  "0,8,32,-1): the rank correlation of modelled against\n"
			  "measured time, the noise, the rms error", 1, 64,
			  .flags = OPT_OPTARG, .data = 5, .set = &o->verify_grid),
		OPT_PROC_SELECT(),
		OPT_END(),
	};

	memcpy(o->sp.mags, mags, sizeof(mags));
	memcpy(o->sp.depots, depots, sizeof(depots));
	o->sp.nm = ARRAY_SIZE(mags);
	o->sp.nd = ARRAY_SIZE(depots);
	o->sp.compose = true;
	o->runs = 7;
	o->candidates = 3;
	tu->peak = true;
	tu->workers = online > 0 ? (unsigned int)online : 1;
	tu->batch = -1;
	i = parse_options(argc, argv, opts, tune_usage, PARSE_OPT_ONE_TRACE);
	/* --jobs prints the command lines and stops: what it would never do is
	 * refused, not dropped (a merge, a picture, the grid's replays) */
	if (i > 0 && o->jobs && (o->merge || o->svg || o->png || o->verify_grid))
		return -usage_error(opts, tune_usage, "--jobs prints the sweep's command lines "
				    "and stops: not with %s", o->merge ? "--merge" :
				    o->svg ? "--svg" : o->png ? "--png" : "--verify-grid");
	return i;
}

/* An adaptive job's settings in one syntax: @s->on, then each bound set
 * as PRE NAME=VALUE POST, then @s->end. */
struct adapt_syntax {
	const char *on, *pre, *post, *end;
	const char *max, *budget;	/* the bounds' names */
};

static void print_adapt(FILE *f, const struct tune_job *j, const struct adapt_syntax *s)
{
	fputs(s->on, f);
	if (j->adapt_max)
		fprintf(f, "%s%s=%ld%s", s->pre, s->max, j->adapt_max, s->post);
	if (j->adapt_budget_kb)
		fprintf(f, "%s%s=%ld%s", s->pre, s->budget, j->adapt_budget_kb, s->post);
	fputs(s->end, f);
}

static void print_options(FILE *f, const struct tune_job *j)
{
	static const struct adapt_syntax opts = {
		.on = "adapt=1", .pre = ",", .post = "", .end = "\n",
		.max = "adapt_max", .budget = "adapt_budget_kb",
	};
	bool first = true;

	if (j->defaults) {
		fprintf(f, "USLAB_OPTIONS=   (empty: the defaults are best)\n");
		return;
	}
	fprintf(f, "USLAB_OPTIONS=");
	if (j->adapt) {
		print_adapt(f, j, &opts);
		return;
	}
	if (IS_ENABLED(CONFIG_PERCPU_ADAPT))	/* fixed sizes, not the build's adaptive ones */
		fprintf(f, "adapt=0,");
	if (j->uniform) {
		fprintf(f, "mag_size=%d", j->mag[0]);
		first = false;
	} else {
		for (unsigned int c = 0; c < j->out.nr_cls; c++) {
			if (!j->out.cls_ops[c])
				continue;
			fprintf(f, "%smag_size.%s=%d", first ? "" : ",", j->out.cls_name[c],
				j->mag[c]);
			first = false;
		}
	}
	fprintf(f, "%sdepot_limit=%ld\n", first ? "" : ",", j->depot);
}

/* Kconfig has one magazine size: the median class setting, weighted by ops. */
static int kconfig_mag(const struct tune_job *j)
{
	unsigned int idx[SIM_MAX_CLASSES], n = 0, a, b;
	uint64_t total = 0, acc = 0;

	if (j->uniform)
		return j->mag[0];
	for (unsigned int c = 0; c < j->out.nr_cls; c++)
		if (j->out.cls_ops[c]) {
			idx[n++] = c;
			total += j->out.cls_ops[c];
		}
	for (a = 1; a < n; a++)		/* insertion sort by magazine size */
		for (b = a; b > 0 && j->mag[idx[b - 1]] > j->mag[idx[b]]; b--) {
			unsigned int x = idx[b];

			idx[b] = idx[b - 1];
			idx[b - 1] = x;
		}
	for (a = 0; a < n; a++) {
		acc += j->out.cls_ops[idx[a]];
		if (2 * acc >= total)
			return j->mag[idx[a]];
	}
	return j->mag[0];
}

static void print_kconfig(FILE *f, const struct tune_job *j)
{
	static const struct adapt_syntax kconfig = {
		.on = "CONFIG_PERCPU_ADAPT=y\n", .pre = "", .post = "\n", .end = "",
		.max = "CONFIG_PERCPU_ADAPT_MAX_BYTES", .budget = "CONFIG_PERCPU_ADAPT_BUDGET_KB",
	};

	if (j->defaults) {
		fprintf(f, "# the defaults: no fragment needed\n");
		return;
	}
	if (j->adapt) {
		print_adapt(f, j, &kconfig);
		return;
	}
	fprintf(f, "# CONFIG_PERCPU_ADAPT is not set\n");
	fprintf(f, "CONFIG_PERCPU_MAG_SIZE=%d\n", kconfig_mag(j));
	fprintf(f, "CONFIG_PERCPU_DEPOT_LIMIT=%ld\n", j->depot);
	if (!j->uniform)
		fprintf(f, "# Kconfig holds one size (the median weighted by operations);\n"
			"# the per-cache sizes above apply at run time only.\n");
}

static void describe(char *buf, size_t len, const struct tune_job *j)
{
	size_t pos = 0;

	if (j->defaults) {
		snprintf(buf, len, "library defaults (Kconfig)");
		return;
	}
	if (j->adapt) {
		pos += (size_t)snprintf(buf, len, "adaptive");
		if (j->adapt_max && pos < len)
			pos += (size_t)snprintf(buf + pos, len - pos, " max=%ldB", j->adapt_max);
		if (j->adapt_budget_kb && pos < len)
			pos += (size_t)snprintf(buf + pos, len - pos, " budget=%ldK",
						j->adapt_budget_kb);
		if (!j->adapt_max && !j->adapt_budget_kb && pos < len)
			snprintf(buf + pos, len - pos, " (default bounds)");
		return;
	}
	if (j->uniform) {
		snprintf(buf, len, "mag=%d depot=%ld", j->mag[0], j->depot);
		return;
	}
	pos += (size_t)snprintf(buf, len, "depot=%ld mags", j->depot);
	for (unsigned int c = 0; c < j->out.nr_cls && pos < len; c++) {
		const char *name = j->out.cls_name[c];

		if (!strncmp(name, "kmalloc-", 8))
			name += 8;
		if (j->out.cls_ops[c])
			pos += (size_t)snprintf(buf + pos, len - pos, " %s:%d", name, j->mag[c]);
	}
}

static void print_row(const struct tune *tu, size_t job, const char *tail)
{
	const struct tune_job *x = &tu->jobs[job];
	char desc[512];

	describe(desc, sizeof(desc), x);
	printf("  %12.1f %12.1f %14.3f %8.2f %8" PRIu64 "  %s%s\n",
	       (double)x->out.res_peak / 1024.0, x->out.res_mean / 1024.0, x->out.cost_ns / 1e6,
	       100.0 * x->out.hit_rate, x->out.faults, desc, tail);
}

/* The frontier by overhead; a long one is thinned: its ends, every step-th
 * point, the pick and the defaults. Return: 0 or -ENOMEM. */
static int print_frontier(const struct tune *tu, bool all_rows)
{
	struct tune_rank *rows = calloc(tu->nr_jobs ? tu->nr_jobs : 1, sizeof(*rows));
	size_t nfr = 0, step, j;

	if (!rows)
		return -ENOMEM;
	printf("\nfrontier of modelled time against %s resident memory (the heap's pages\n"
	       "the run writes, as the kernel counts them in the simulating process):\n",
	       tu->peak ? "peak" : "mean");
	printf("  %12s %12s %14s %8s %8s  %s\n", "res_peak_KiB", "res_mean_KiB", "model_time_ms",
	       "hit%", "faults", "configuration");
	for (j = 0; j < tu->nr_jobs; j++)
		if (tu->jobs[j].frontier) {
			rows[nfr].key = tune_job_ovh(tu, &tu->jobs[j]);
			rows[nfr++].job = j;
		}
	qsort(rows, nfr, sizeof(*rows), tune_rank_cmp);
	step = all_rows || nfr <= 16 ? 1 : (nfr + 13) / 14;
	for (j = 0; j < nfr; j++) {
		if (j % step && j != nfr - 1 && rows[j].job != tu->rec &&
		    rows[j].job != tu->grid)
			continue;
		print_row(tu, rows[j].job, rows[j].job == tu->rec ? "   <- the model's knee" :
			  rows[j].job == tu->grid ? "   <- the defaults" : "");
	}
	if (!tu->jobs[tu->grid].frontier && tu->jobs[tu->grid].out.ok)
		print_row(tu, tu->grid, " (not on the frontier)");
	if (step > 1)
		printf("  (%zu frontier points, one in %zu shown; --all shows all)\n", nfr, step);
	free(rows);
	return 0;
}

static void print_recommended(const struct tune *tu, size_t job, bool model_only)
{
	const struct tune_job *r = &tu->jobs[job], *d = &tu->jobs[tu->grid];
	char desc[512];

	describe(desc, sizeof(desc), r);
	printf("\nrecommended%s: %s\n  modelled: time %.3f ms (%+.1f%%), resident peak %.1f KiB "
	       "(%+.1f%%), mean %.1f KiB (%+.1f%%), hit rate %.2f%%\n",
	       model_only ? " by the model alone" : "", desc, r->out.cost_ns / 1e6,
	       100 * (r->out.cost_ns / d->out.cost_ns - 1), (double)r->out.res_peak / 1024.0,
	       100 * ((double)r->out.res_peak / (double)(d->out.res_peak ? d->out.res_peak : 1) - 1),
	       r->out.res_mean / 1024.0,
	       100 * (r->out.res_mean / (d->out.res_mean > 0 ? d->out.res_mean : 1) - 1),
	       100.0 * r->out.hit_rate);
	printf("\nas a runtime option string:\n  ");
	print_options(stdout, r);
	printf("\nas a Kconfig fragment:\n");
	print_kconfig(stdout, r);
}

/*
 * --verify-grid: every uniform grid point (jobs 0 .. tu->grid - 1) replayed
 * for real; Spearman's rho of modelled against measured time.
 */
static int verify_uniform_grid(const char *trace, const struct tune *tu, unsigned int runs)
{
	static struct tune_verify_point pts[TUNE_VERIFY_MAX_POINTS];
	static char labels[TUNE_VERIFY_MAX_POINTS][32];
	unsigned int n = 0;

	for (size_t i = 0; i < tu->grid && n < TUNE_VERIFY_MAX_POINTS; i++) {
		const struct tune_job *j = &tu->jobs[i];

		if (!j->out.ok || !j->uniform || j->adapt)
			continue;
		snprintf(labels[n], sizeof(labels[n]), "mag=%d,depot=%ld", j->mag[0], j->depot);
		pts[n].label = labels[n];
		snprintf(pts[n].opts, sizeof(pts[n].opts), "%smag_size=%d,depot_limit=%ld",
			 IS_ENABLED(CONFIG_PERCPU_ADAPT) ? "adapt=0," : "", j->mag[0], j->depot);
		pts[n].model_ms = j->out.cost_ns / 1e6;
		pts[n].model_ovh_kib = j->out.ovh_mean / 1024.0;
		n++;
	}
	if (tu->grid > n)
		fprintf(stderr, "uslab tune: --verify-grid: %u of %zu grid points replayed\n",
			n, tu->grid);
	fflush(stdout);
	if (tune_verify(trace, pts, n, runs, tu->t->cpus == 1, stdout))
		return -1;
	tune_verify_grid_report(pts, n, stdout);
	return 0;
}

/* Every successful point: x overhead KiB, y modelled ms, its kind. */
/* The real replays of the last verdict, for the pictures. */
static struct tune_real_point real_pts[TUNE_MAX_CANDIDATES + 1];
static unsigned int real_n;

static size_t plot_points(const struct tune *tu, struct plot_point *pts)
{
	const struct tune_real_point *d = &real_pts[0];
	size_t n = 0;

	for (size_t i = 0; i < tu->nr_jobs; i++) {
		const struct tune_job *j = &tu->jobs[i];

		if (!j->out.ok)
			continue;
		pts[n].x = tune_job_ovh(tu, j) / 1024.0;
		pts[n].y = j->out.cost_ns / 1e6;
		pts[n].kind = j->recommended ? PLOT_RECOMMENDED : j->defaults ? PLOT_DEFAULTS :
			      j->adapt && !j->adapt_max && !j->adapt_budget_kb ? PLOT_ADAPTIVE :
			      j->frontier ? PLOT_FRONTIER : PLOT_SWEPT;
		n++;
		/* the adaptive default on the frontier: the line passes it too */
		if (pts[n - 1].kind == PLOT_ADAPTIVE && j->frontier) {
			pts[n] = pts[n - 1];
			pts[n].kind = PLOT_FRONTIER;
			n++;
		}
	}
	/* Each replayed candidate where the measurement puts it: the defaults'
	 * modelled figures scaled by the measured change, with its interval. */
	for (unsigned int k = 1; k < real_n; k++) {
		const struct tune_real_point *x = &real_pts[k];
		const struct stat_est *dm = tu->peak ? &x->d_peak : &x->d_mean;
		double x0 = tu->peak ? d->model_peak_kib : d->model_mean_kib;

		pts[n].kind = PLOT_MEASURED;
		pts[n].x = x0 * (1 + dm->median);
		pts[n].xlo = x0 * (1 + dm->lo);
		pts[n].xhi = x0 * (1 + dm->hi);
		pts[n].y = d->model_ms * (1 + x->d_cpu.median);
		pts[n].ylo = d->model_ms * (1 + x->d_cpu.lo);
		pts[n].yhi = d->model_ms * (1 + x->d_cpu.hi);
		n++;
	}
	return n;
}

/* Runs /usr/bin/python3 SCRIPT CSV PNG TITLE XLABEL. Return: 0 or -EIO. */
static int run_plot_script(const char *script, const char *csv, const char *png,
			   const char *title, const char *xlabel)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		execl("/usr/bin/python3", "python3", script, csv, png, title, xlabel,
		      (char *)NULL);
		fprintf(stderr, "uslab tune: /usr/bin/python3: %s\n", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

/* The points as CSV (x,y,kind) for plot-frontier.py, which draws the PNG. */
static int write_png(const char *png, const char *title, const char *xlabel,
		     const struct plot_point *pts, size_t n)
{
	char csv[] = "/tmp/uslab-tune-XXXXXX", script[PATH_MAX + 64];
	struct plot_view v;
	int fd, rc;
	FILE *f;

	if (cmd_find_script(PLOT_SCRIPT, script, sizeof(script))) {
		fprintf(stderr, "uslab tune: %s not found (installed in share/uslab/)\n",
			PLOT_SCRIPT);
		return -ENOENT;
	}
	fd = mkstemp(csv);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(csv);
		return -ENOMEM;
	}
	plot_view_of(&v, pts, n);	/* the SVG's view: the same axes */
	fprintf(f, "view,%.6f,%.6f,%.6f,%.6f,%zu\n", v.x0, v.x1, v.y0, v.y1, v.outside);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.3f,%.6f,%d,%.3f,%.3f,%.6f,%.6f\n", pts[i].x, pts[i].y, pts[i].kind,
			pts[i].xlo, pts[i].xhi, pts[i].ylo, pts[i].yhi);
	rc = fclose(f) ? -errno : 0;
	if (!rc)
		rc = run_plot_script(script, csv, png, title, xlabel);
	unlink(csv);
	return rc;
}

static int draw(const struct tune *tu, const struct tune_cli *o, const char *trace)
{
	struct plot_point *pts = calloc(tu->nr_jobs + TUNE_MAX_CANDIDATES + 2, sizeof(*pts));
	const char *xlabel = tu->peak ? "peak resident memory of the heap, simulated (KiB)" :
					"mean resident memory of the heap, simulated (KiB)";
	char title[256];
	size_t n;
	int rc = 0;

	if (!pts)
		return -ENOMEM;
	n = plot_points(tu, pts);
	snprintf(title, sizeof(title), "uslab tune: %s", trace);
	if (o->svg) {
		rc = plot_svg(o->svg, title, xlabel, "modelled allocator time (ms)", pts, n);
		if (rc)
			fprintf(stderr, "uslab tune: %s: %s\n", o->svg, strerror(-rc));
		else
			printf("\nfrontier drawn in %s\n", o->svg);
	}
	if (!rc && o->png) {
		rc = write_png(o->png, title, xlabel, pts, n);
		if (rc)
			fprintf(stderr, "uslab tune: %s: the PNG was not drawn (python3-matplotlib: "
				"scripts/deps.sh plot)\n", o->png);
		else
			printf("\nfrontier drawn in %s\n", o->png);
	}
	free(pts);
	return rc;
}

/* Did the process read allocate anything (an object id; the failed calls
 * of the trace, id NULL, allocate nothing)? */
static bool trace_has_object(const struct sim_trace *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->ev[i].id)
			return true;
	return false;
}

static void print_header(const struct tune *tu, const char *trace, const struct tune_cli *o)
{
	const struct sim_cost_model *m = &tu->model;

	printf("uslab tune: %s (%zu events, %u virtual CPUs), goal %s\n", trace, tu->t->n,
	       tu->t->cpus, tune_goal_name(o->goal));
	printf("cost model: hit %.1f ns, refill %.1f + %.1f/object ns, flush %.1f + %.1f/object ns,\n"
	       "            depot %.1f ns, page %.1f ns, fault %.0f ns a page made resident;\n"
	       "            from %s\n",
	       m->hit_ns, m->refill_ns, m->refill_obj_ns, m->flush_ns, m->flush_obj_ns,
	       m->depot_ns, m->page_ns, m->fault_ns, m->source);
}

/* The sweep's progress on a terminal (the engine calls it as each
 * simulation ends): ESC [K clears what a longer line left. */
static void tune_bar(const struct tune *tu)
{
	unsigned int w = 40, fill = (unsigned int)(tu->done * w / tu->total);

	fprintf(stderr, "\r  [%.*s%*s] %zu/%zu configurations\033[K", (int)fill,
		"########################################", (int)(w - fill), "",
		tu->done, tu->total);
	if (tu->done == tu->total)
		fputc('\n', stderr);
	fflush(stderr);
}

/* Both rounds, the frontier. Return: 0, or 1 after saying what failed. */
static int tune_sweep(struct tune *tu, const struct tune_space *sp)
{
	int rc = tune_grid(tu, sp);

	if (!rc && sp->compose)
		rc = tune_compose(tu, sp);
	if (!rc || rc == -ENOENT)
		rc = tune_frontier(tu);
	if (tu->err[0])		/* the first failure, the others still ran */
		fprintf(stderr, "uslab tune: %s\n", tu->err);
	if (rc == -ENOMEM)
		fprintf(stderr, "uslab tune: out of memory\n");
	else if (rc == -ENOENT)
		fprintf(stderr, "uslab tune: no simulation succeeded\n");
	return rc ? 1 : 0;
}

/* The USLAB_OPTIONS value of @j ("" for the defaults). */
static void job_opts(const struct tune_job *j, char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len - 1, "w");
	size_t pre = strlen("USLAB_OPTIONS=");
	char *nl;

	buf[0] = '\0';
	if (!f || j->defaults) {
		if (f)
			fclose(f);
		buf[0] = '\0';
		return;
	}
	print_options(f, j);
	fclose(f);
	buf[len - 1] = '\0';
	memmove(buf, buf + pre, strlen(buf + pre) + 1);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
}

/*
 * --model-only: the model's verdict on its best candidate for the goal:
 * a gain of at least 1% on the goal's axis (peak resident memory, or
 * modelled time) at no more than 3% more on the other. Return: the job, or
 * SIZE_MAX to keep the defaults.
 */
static size_t model_verdict(const struct tune *tu, enum tune_goal goal, const size_t *cand,
			    unsigned int n)
{
	const struct tune_job *d = &tu->jobs[tu->grid];
	double dt = d->out.cost_ns, dm = (double)d->out.res_peak;

	for (unsigned int k = 0; k < n; k++) {
		const struct tune_job *j = &tu->jobs[cand[k]];
		double t = j->out.cost_ns, m = (double)j->out.res_peak;
		bool tgain = t < dt * 0.99, mgain = m < dm * 0.99;
		bool tok = t <= dt * 1.03, mok = m <= dm * 1.03;

		if ((goal == TUNE_TIME && tgain && mok) || (goal == TUNE_MEMORY && mgain && tok) ||
		    (goal == TUNE_BALANCED && ((mgain && tok) || (tgain && m <= dm))))
			return cand[k];
	}
	return SIZE_MAX;
}

#define TUNE_FAILED	(SIZE_MAX - 1)

/* The real replays: the defaults and the candidates. Return: the job
 * recommended, SIZE_MAX to keep the defaults, or TUNE_FAILED. */
static size_t real_verdict(const struct tune *tu, const struct tune_cli *o, const char *trace,
			   const size_t *cand, unsigned int n)
{
	static struct tune_real_point pts[TUNE_MAX_CANDIDATES + 1];
	static char pid[16];
	struct tune_real tr = {
		.trace = trace, .comm = cmd_select.comm, .runs = (unsigned int)o->runs,
		.goal = o->goal, .progress = isatty(2), .events = tu->t->n,
		.cpu = tu->t->cpus == 1 ? replay_first_cpu() : -1,
	};
	int best;

	if (cmd_select.pid) {
		snprintf(pid, sizeof(pid), "%u", cmd_select.pid);
		tr.pid = pid;
	}
	memset(pts, 0, sizeof(pts));
	for (unsigned int k = 0; k <= n; k++) {
		const struct tune_job *j = &tu->jobs[k ? cand[k - 1] : tu->grid];

		if (k)
			snprintf(pts[k].label, sizeof(pts[k].label), "candidate %u", k);
		else
			snprintf(pts[k].label, sizeof(pts[k].label), "defaults");
		describe(pts[k].desc, sizeof(pts[k].desc), j);
		job_opts(j, pts[k].opts, sizeof(pts[k].opts));
		pts[k].job = k ? cand[k - 1] : tu->grid;
		pts[k].model_ms = j->out.cost_ns / 1e6;
		pts[k].model_peak_kib = (double)j->out.res_peak / 1024.0;
		pts[k].model_mean_kib = j->out.res_mean / 1024.0;
	}
	best = tune_real_decide(&tr, pts, n + 1, stdout);
	if (best < 0)
		return TUNE_FAILED;
	memcpy(real_pts, pts, sizeof(real_pts));
	real_n = n + 1;
	return best ? pts[best].job : SIZE_MAX;
}

/* --model-only: every line of standard output starts with this. */
struct prefix_out {
	FILE *to;
	bool bol;
};

static ssize_t prefix_write(void *c, const char *buf, size_t n)
{
	struct prefix_out *p = c;

	for (size_t i = 0; i < n; i++) {
		if (p->bol && fputs("[model only] ", p->to) == EOF)
			return -1;
		if (fputc(buf[i], p->to) == EOF)
			return -1;
		p->bol = buf[i] == '\n';
	}
	return (ssize_t)n;
}

static int prefix_close(void *c)
{
	struct prefix_out *p = c;

	return fflush(p->to) ? -1 : 0;
}

/* The verdict, printed; @rec set to the job recommended or SIZE_MAX. */
static int tune_decide(struct tune *tu, const struct tune_cli *o, const char *trace,
		       size_t *rec)
{
	size_t cand[TUNE_MAX_CANDIDATES];
	unsigned int n = tune_candidates(tu, o->goal, (unsigned int)o->candidates, cand);
	bool model_only = o->model_only;

	if (!model_only && !strcmp(trace, "-")) {
		printf("\nno real replay: the trace came from standard input, read once; the "
		       "model's word alone follows\n");
		model_only = true;
	}
	if (model_only) {
		*rec = model_verdict(tu, o->goal, cand, n);
		if (*rec == SIZE_MAX)
			printf("\nkeep the defaults (the model alone, goal %s: no configuration "
			       "gains 1%% on the goal at no more than 3%% on the other axis; real "
			       "runs were not made)\n", tune_goal_name(o->goal));
		else
			printf("\nthe model alone recommends a setting; no real run confirmed it "
			       "(run without --model-only to have replays decide)\n");
	} else {
		*rec = real_verdict(tu, o, trace, cand, n);
		if (*rec == TUNE_FAILED)
			return 1;
	}
	for (size_t i = 0; i < tu->nr_jobs; i++)
		tu->jobs[i].recommended = i == *rec;
	if (*rec == SIZE_MAX) {
		printf("\nkeep the defaults\nas a runtime option string (empty: the library's "
		       "defaults):\n  USLAB_OPTIONS=\n");
		return 0;
	}
	print_recommended(tu, *rec, model_only);
	return 0;
}

/* @s in single quotes for a POSIX shell ('\'' for a quote inside). */
static void put_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/*
 * --jobs: round 1 of the sweep (the uniform grid and the defaults) as one
 * `uslab sim ... --result` command line each, independent of each other,
 * for whatever runs them (GNU parallel, a Slurm array); `--merge` reads
 * their output back. The per-class round needs round 1's per-class figures
 * and stays with a sweep on one machine.
 */
static int print_jobs(const struct tune *tu, const struct tune_cli *o, const char *trace)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	unsigned long every = tu->t->n >= 200 ? tu->t->n / 200 : 1;

	if (n <= 0) {
		fprintf(stderr, "uslab tune: cannot find my own binary\n");
		return 1;
	}
	self[n] = '\0';
	if (!strcmp(trace, "-")) {
		fprintf(stderr, "uslab tune: --jobs: the trace must be a file the jobs can read\n");
		return 1;
	}
	for (unsigned int a = 0; a <= o->sp.nd; a++)
		for (unsigned int b = 0; b < (a < o->sp.nd ? o->sp.nm : 1); b++) {
			put_quoted(stdout, self);
			printf(" sim ");
			put_quoted(stdout, trace);
			printf(" --cpus %u --sample %lu", tu->t->cpus, every);
			if (a < o->sp.nd)	/* the last line: the defaults */
				printf(" --mag-size %ld --depot-limit %ld", o->sp.mags[b],
				       o->sp.depots[a]);
			if (tu->batch > 0)
				printf(" --batch %d", tu->batch);
			if (cmd_select.pid)
				printf(" --pid %u", cmd_select.pid);
			if (cmd_select.comm) {
				printf(" --comm ");
				put_quoted(stdout, cmd_select.comm);
			}
			if (o->calibration) {
				printf(" --calibration ");
				put_quoted(stdout, o->calibration);
			}
			printf(" --result\n");
		}
	return cmd_check_stdout("uslab tune");
}

/*
 * A count field of a result line (" KEY=digits"): sscanf's %llu takes "-1"
 * as 2^64-1 and saturates past 2^64, so the field is read again here.
 * Return: true when KEY is followed by a number 0..2^64-1 and a space.
 */
static bool merge_count(const char *line, const char *key, unsigned long long *v)
{
	const char *p = strstr(line, key);
	char *end;

	if (!p || !(*(p += strlen(key)) >= '0' && *p <= '9'))
		return false;
	errno = 0;
	*v = strtoull(p, &end, 10);
	return !errno && *end == ' ';
}

/*
 * --merge FILE: the result lines of those jobs, in any order (other lines
 * are skipped), become round 1's jobs, the defaults last (tu->grid).
 * Return: 0, or 1 after saying what is wrong (with the line).
 */
static int merge_results(struct tune *tu, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct tune_job def = { 0 };
	bool have_def = false;
	char line[1024];
	unsigned int lineno = 0, n = 0;

	if (!f) {
		fprintf(stderr, "uslab tune: --merge %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct tune_job j = { .uniform = true };
		char depot[16], model[16], *end;
		unsigned long long peak, faults, pops;
		long long ovh_peak;
		int mag, batch;

		lineno++;
		if (strncmp(line, "uslab-sim-result ", 17))
			continue;
		if (sscanf(line, "uslab-sim-result v1 mag=%d depot=%15s batch=%d cost_ns=%lf "
			   "res_peak=%llu res_mean=%lf faults=%llu hit=%lf page_ops=%llu "
			   "ovh_mean=%lf ovh_peak=%lld model=%15s", &mag, depot, &batch,
			   &j.out.cost_ns, &peak, &j.out.res_mean, &faults, &j.out.hit_rate,
			   &pops, &j.out.ovh_mean, &ovh_peak, model) != 12 ||
		    (mag < 1 && mag != -1) || mag > uslab_tunables[USLAB_OPT_MAG_SIZE].max ||
		    !(j.out.cost_ns >= 0)) {
			fprintf(stderr, "uslab tune: --merge %s:%u: not a result line of this "
				"version (uslab sim --result)\n", path, lineno);
			goto bad;
		}
		/* counts, sizes and the hit rate as uslab sim prints them (a
		 * damaged "res_peak=-1" was 16 EiB, "hit=7" a hit rate of 700%) */
		{
			static const char *const keys[] = { " res_peak=", " faults=",
							    " page_ops=" };
			unsigned long long *counts[] = { &peak, &faults, &pops };
			const char *what = NULL, *is = "a count (0..2^64-1)";

			for (unsigned int k = 0; k < ARRAY_SIZE(keys) && !what; k++)
				if (!merge_count(line, keys[k], counts[k]))
					what = keys[k] + 1;
			if (!what && !isfinite(j.out.cost_ns))
				what = "cost_ns=", is = "a finite time";
			if (!what && !(isfinite(j.out.res_mean) && j.out.res_mean >= 0))
				what = "res_mean=", is = "a mean of bytes (0 or more)";
			if (!what && !(j.out.hit_rate >= 0 && j.out.hit_rate <= 1))
				what = "hit=", is = "a hit rate (0..1)";
			if (!what && !isfinite(j.out.ovh_mean))
				what = "ovh_mean=", is = "a finite mean";
			if (what) {
				const char *v = strstr(line, what);

				fprintf(stderr, "uslab tune: --merge %s:%u: %.*s is not %s\n",
					path, lineno, (int)strcspn(v, " \n"), v, is);
				goto bad;
			}
		}
		if (strcmp(model, tu->model.calibrated ? "calibrated" : "built-in")) {
			fprintf(stderr, "uslab tune: --merge %s:%u: simulated with the %s cost model, "
				"this tune uses the %s one (--calibration on both or neither)\n",
				path, lineno, model, tu->model.calibrated ? "calibrated" : "built-in");
			goto bad;
		}
		j.out.ok = 1;
		j.out.res_peak = peak;
		j.out.faults = faults;
		j.out.page_ops = pops;
		j.out.ovh_peak = ovh_peak;
		for (unsigned int c = 0; c < SIM_MAX_CLASSES; c++)
			j.mag[c] = mag;
		if (!strcmp(depot, "default") && mag == -1) {
			j.defaults = true;
			j.depot = SIM_DEFAULT;
			def = j;
			have_def = true;
			continue;
		}
		errno = 0;
		j.depot = strtol(depot, &end, 10);
		if (errno || end == depot || *end ||
		    j.depot < uslab_tunables[USLAB_OPT_DEPOT_LIMIT].min ||
		    j.depot > uslab_tunables[USLAB_OPT_DEPOT_LIMIT].max) {
			fprintf(stderr, "uslab tune: --merge %s:%u: depot=%s is not a depot limit "
				"(%ld..%ld, or default with mag=-1)\n", path, lineno, depot,
				uslab_tunables[USLAB_OPT_DEPOT_LIMIT].min,
				uslab_tunables[USLAB_OPT_DEPOT_LIMIT].max);
			goto bad;
		}
		if (mag < 1) {
			fprintf(stderr, "uslab tune: --merge %s:%u: a magazine size below 1\n",
				path, lineno);
			goto bad;
		}
		if (!tune_add(tu))
			goto nomem;
		tu->jobs[tu->nr_jobs - 1] = j;
		n++;
	}
	if (f != stdin)
		fclose(f);
	if (!have_def || !n) {
		fprintf(stderr, "uslab tune: --merge %s: %s\n", path, !have_def ?
			"no result for the library's defaults (the last line of --jobs)" :
			"no result but the defaults'");
		return 1;
	}
	tu->grid = tu->nr_jobs;
	if (!tune_add(tu))
		return 1;
	tu->jobs[tu->grid] = def;
	return tune_frontier(tu) ? 1 : 0;
nomem:
	fprintf(stderr, "uslab tune: out of memory\n");
bad:
	if (f != stdin)
		fclose(f);
	return 1;
}

int cmd_tune(int argc, char **argv)
{
	struct tune_cli o = { 0 };
	struct tune tu = { 0 };
	struct prefix_out po = { .bol = true };
	FILE *real_stdout = NULL;
	struct sim_trace t;
	const char *trace;
	size_t rec = SIZE_MAX;
	int rc;

	/* a trace reader's opening: its options, then its one TRACE */
	rc = tune_parse(argc, argv, &tu, &o);
	if (rc <= 0)
		return -rc;
	trace = argv[rc];
	if (o.mean)
		tu.peak = false;
	if (cmd_cost_model(&tu.model, o.calibration))
		return 1;
	if (!strcmp(trace, "-") && !o.model_only && !o.jobs) {
		/* read once: nothing to replay, and every line says so */
		fprintf(stderr, "uslab tune: the trace comes from standard input, read once: "
			"no real replay, the model's word alone (--model-only)\n");
		o.model_only = true;
	}
	if (o.model_only) {
		cookie_io_functions_t fns = { .write = prefix_write, .close = prefix_close };
		FILE *f;

		po.to = stdout;
		f = fopencookie(&po, "w", fns);
		if (f) {
			real_stdout = stdout;
			stdout = f;
		}
	}
	if (cmd_sim_trace(&t, "uslab tune", trace, (unsigned int)o.cpus, false)) {
		rc = 1;
		goto out_stdout;
	}
	tu.t = &t;
	if (!trace_has_object(&t)) {
		/* every configuration models 0 work: a "gain" would be noise
		 * (--model-only recommended mag=4 depot=0 at "-100%") */
		fprintf(stderr, "uslab tune: %s: the process read allocated nothing: "
			"nothing to tune\n", trace);
		rc = 1;
		goto out;
	}
	tu.progress = isatty(2) ? tune_bar : NULL;
	if (o.jobs) {
		rc = print_jobs(&tu, &o, trace);
		goto out;
	}
	print_header(&tu, trace, &o);
	if (cmd_check_stdout("uslab tune")) {	/* before the sweep */
		rc = 1;
		goto out;
	}
	if (o.merge) {
		rc = merge_results(&tu, o.merge);
		if (!rc)
			printf("\nmerged %zu configurations (round 1: the uniform grid and the "
			       "defaults) from %s\n", tu.nr_jobs, o.merge);
		if (!rc)
			rc = print_frontier(&tu, o.all_rows) ? 1 : 0;
	} else {
		rc = tune_sweep(&tu, &o.sp);
	}
	if (!rc && !o.merge) {
		size_t nad = 0;

		for (size_t i = 0; i < tu.grid; i++)
			nad += tu.jobs[i].adapt;
		printf("\nswept %zu configurations (%zu uniform, %zu adaptive, %zu per-class, the defaults) "
		       "on %u workers\n", tu.nr_jobs, tu.grid - nad, nad, tu.nr_jobs - tu.grid - 1,
		       tu.workers);
		rc = print_frontier(&tu, o.all_rows) ? 1 : 0;
	}
	if (!rc && o.verify_grid)
		rc = verify_uniform_grid(trace, &tu, (unsigned int)o.verify) ? 1 : 0;
	else if (!rc)
		rc = tune_decide(&tu, &o, trace, &rec);
	if (!rc && (o.svg || o.png))
		rc = draw(&tu, &o, trace) ? 1 : 0;
	if (!rc)
		printf("\ncost model: %s\n", tu.model.source);
	if (!rc && cmd_check_stdout("uslab tune"))
		rc = 1;
out:
	tune_free(&tu);
	sim_trace_free(&t);
out_stdout:
	if (real_stdout) {
		fclose(stdout);
		stdout = real_stdout;
	}
	return rc;
}
