// SPDX-License-Identifier: MIT
/*
 * uslab sim: run a trace through the simulation engine (sim/simulate.c) and
 * print what the layers counted: per cache, the page allocator, memory over
 * time, the modelled allocator time. Output on stdout is a function of the
 * trace and the options only (no times, no addresses), so two runs compare
 * equal byte for byte; the speed of the simulation goes to stderr.
 *
 * No locks: single-threaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "tools/uslab/builtin.h"

struct sim_cli {
	const char *timeline;
	struct sim_cost_model model;	/* --calibration, else built in */
	const char *calibration;
	unsigned long cpus, rows;
	bool result;			/* --result: the line tune --merge reads */
};

static void print_kib(FILE *f, const char *what, uint64_t bytes)
{
	fprintf(f, "  %-28s %12.1f KiB\n", what, (double)bytes / 1024.0);
}

static void print_config(FILE *f, const struct sim_config *cfg, unsigned int cpus)
{
	fprintf(f, "config: cpus=%u mag_size=", cpus);
	if (cfg->mag_size < 0)
		fprintf(f, "default");
	else
		fprintf(f, "%d", cfg->mag_size);
	for (unsigned int i = 0; i < cfg->nr_class_mag; i++)
		fprintf(f, ",%s=%d", cfg->class_mag[i].name, cfg->class_mag[i].mag);
	fprintf(f, " batch=");
	if (cfg->batch < 0)
		fprintf(f, "default");
	else
		fprintf(f, "%d", cfg->batch);
	fprintf(f, " depot_limit=");
	if (cfg->depot_limit == SIM_DEFAULT)
		fprintf(f, "default");
	else
		fprintf(f, "%ld", cfg->depot_limit);
	if (cfg->adapt == 1 || (cfg->adapt < 0 && IS_ENABLED(CONFIG_PERCPU_ADAPT))) {
		fprintf(f, " adapt=1");
		if (cfg->adapt_min)
			fprintf(f, " adapt_min=%ld", cfg->adapt_min);
		if (cfg->adapt_max)
			fprintf(f, " adapt_max=%ld", cfg->adapt_max);
		if (cfg->adapt_budget_kb)
			fprintf(f, " adapt_budget_kb=%ld", cfg->adapt_budget_kb);
	} else if (cfg->adapt == 0) {
		fprintf(f, " adapt=0");
	}
	fprintf(f, "\n");
}

/* One row per cache that did anything, then the total and the page line. */
static void print_caches(FILE *f, const struct sim_trace *t, const struct sim_result *res)
{
	struct kmem_cache_stats_sum sum = { 0 };
	char line[512];
	unsigned int c;

	fprintf(f, "\nper cache (magazine = per-CPU loaded+spare, depot behind them):\n");
	/* slab/'s formatter: the table USLAB_OPTIONS=stats prints */
	kmem_cache_stats_header(line, sizeof(line));
	fputs(line, f);
	for (c = 0; c < res->nr_cls; c++) {
		const struct kmem_cache_stats *cs = &res->cls[c].stats;

		if (!kmem_cache_stats_shown(cs))
			continue;
		kmem_cache_stats_sum_add(&sum, cs);
		kmem_cache_stats_row(cs, line, sizeof(line));
		fputs(line, f);
	}
	/* the trace's named caches (import perf: filp, dentry, ...) */
	for (c = 0; c < res->nr_named; c++) {
		const struct kmem_cache_stats *cs = &res->named[c].stats;

		if (!res->named[c].cache || !kmem_cache_stats_shown(cs))
			continue;
		kmem_cache_stats_sum_add(&sum, cs);
		kmem_cache_stats_row(cs, line, sizeof(line));
		fputs(line, f);
	}
	if (t->named_folded)
		fprintf(f, "  (%u more named caches of the trace ran in their sizes' kmalloc "
			"classes: the simulator makes the first %u)\n", t->named_folded,
			SIM_MAX_NAMED);
	for (c = 0; c < res->nr_cls && !res->cls[c].c.mag_size; c++)
		;
	if (c == res->nr_cls)
		fprintf(f, "  (no kmalloc cache has per-CPU magazines in this build: debug caches\n"
			"   bypass them, nocache has none; every operation goes to the slabs)\n");
	kmem_cache_stats_total(sum.allocs, sum.frees, sum.hits, line, sizeof(line));
	fputs(line, f);
	fputc('\n', f);
	kmem_cache_stats_page_line(&res->pages, line, sizeof(line));
	fputs(line, f);
}

static void print_memory(FILE *f, const struct sim_config *cfg, const struct sim_result *res)
{
	double mean_ovh = sim_mean_overhead(res);

	fprintf(f, "\nmemory (sampled every %" PRIu64 " events, %zu samples):\n",
		cfg->sample_every, res->nr_samples);
	print_kib(f, "peak held by page_alloc", res->held_peak);
	print_kib(f, "mean held", res->nr_samples ? res->held_sum / res->nr_samples : 0);
	print_kib(f, "peak live (requested)", res->live_peak);
	print_kib(f, "mean live", res->nr_samples ? res->live_sum / res->nr_samples : 0);
	print_kib(f, "peak overhead (held-live)", (uint64_t)(res->ovh_peak > 0 ? res->ovh_peak : 0));
	print_kib(f, "mean overhead", mean_ovh > 0 ? (uint64_t)mean_ovh : 0);
	print_kib(f, "live at the end", res->live_end);
	if (res->res_known) {
		print_kib(f, "peak resident (heap)", res->res_peak);
		print_kib(f, "mean resident (heap)", (uint64_t)sim_mean_resident(res));
		fprintf(f, "  %-28s %12" PRIu64 "  (each block written as replay --touch=first)\n",
			"page faults", res->faults);
	}
}

/* About @rows samples, evenly spaced. */
static void print_over_time(FILE *f, const struct sim_result *res, unsigned long rows,
			    bool no_clock)
{
	size_t step;

	if (!rows || !res->nr_samples)
		return;
	fprintf(f, "\nover time:\n  %12s %12s %12s %12s %12s %12s\n",
		no_clock ? "event" : "time_ms", "events",
		"held_KiB", "live_KiB", "overhd_KiB", "freeres_KiB");
	step = (res->nr_samples + rows - 1) / rows;
	for (size_t i = 0; i < res->nr_samples; i += step) {
		const struct sim_sample *s = &res->samples[i];

		/* a trace without a clock has event indices, not times */
		if (no_clock)
			fprintf(f, "  %12" PRIu64, s->time_ns);
		else
			fprintf(f, "  %12.3f", (double)s->time_ns / 1e6);
		fprintf(f, " %12" PRIu64 " %12.1f %12.1f %12.1f %12.1f\n",
			s->events, (double)s->held / 1024.0,
			(double)s->live / 1024.0,
			((double)s->held - (double)s->live) / 1024.0,
			(double)s->resident_free / 1024.0);
	}
}

static void sim_print(FILE *f, const struct sim_trace *t, const struct sim_config *cfg,
		      const struct sim_result *res, const char *path, unsigned long rows,
		      const struct sim_cost_model *m)
{
	fprintf(f, "uslab sim: %s\n", path);
	if (t->cmdline && *t->cmdline) {
		fprintf(f, "recorded: ");
		trace_fput_printable(f, t->cmdline);
		fputc('\n', f);
	}
	print_config(f, cfg, t->cpus);
	fprintf(f, "engine: %s\n", sim_layers_engine());
	fprintf(f, "events: %" PRIu64 " (allocations %" PRIu64 ", frees %" PRIu64
		", reallocs %" PRIu64 ", failed in the trace %" PRIu64
		", ENOMEM here %" PRIu64 ")\n",
		res->events, res->allocs, res->frees, res->reallocs, res->failed,
		res->enomem);
	print_caches(f, t, res);
	fprintf(f, "modelled allocator time: %.3f ms (cost model: %s)\n",
		sim_cost(m, res) / 1e6, m->calibrated ? m->source : "built-in default");
	print_memory(f, cfg, res);
	print_over_time(f, res, rows, t->no_clock);
}

/*
 * --result: one line for `uslab tune --merge` (tools/uslab/builtin-tune.c
 * parses it): the configuration (uniform magazine size and depot limit,
 * -1 and "default" for the library's defaults), then what tune's children
 * report for a simulation.
 */
static void sim_print_result(FILE *f, const struct sim_config *cfg,
			     const struct sim_result *res, const struct sim_cost_model *m)
{
	uint64_t hits = 0, ops = 0;

	for (unsigned int c = 0; c < res->nr_cls; c++) {
		hits += res->cls[c].c.alloc_hits + res->cls[c].c.free_hits;
		ops += res->cls[c].c.allocs + res->cls[c].c.frees;
	}
	fprintf(f, "uslab-sim-result v1 mag=%d depot=", cfg->mag_size);
	if (cfg->depot_limit == SIM_DEFAULT)
		fprintf(f, "default");
	else
		fprintf(f, "%ld", cfg->depot_limit);
	fprintf(f, " batch=%d cost_ns=%.1f res_peak=%" PRIu64 " res_mean=%.0f faults=%" PRIu64
		" hit=%.6f page_ops=%" PRIu64 " ovh_mean=%.0f ovh_peak=%" PRId64 " model=%s\n",
		cfg->batch, sim_cost(m, res), res->res_peak, sim_mean_resident(res), res->faults,
		ops ? (double)hits / (double)ops : 0.0, res->page_allocs + res->page_frees,
		sim_mean_overhead(res), res->ovh_peak, m->calibrated ? "calibrated" : "built-in");
}

/* Every sample drawn (report --timeline's chart): held, resident (when
 * measured) and live, the held peak marked. Return: 0, or -1 after saying
 * why (nothing left). */
static int draw_timeline(const char *path, const char *trace, const struct sim_result *res,
			 bool no_clock)
{
	size_t n = res->nr_samples ? res->nr_samples : 1;
	double *x = calloc(n, sizeof(double));
	uint64_t *y = calloc(n * 3, sizeof(uint64_t)), *ys[3];
	const char *names[3] = { "held by page_alloc", "live (requested)", "resident (heap)" };
	char title[1024];
	struct timeline_plot p = {
		.who = "uslab sim", .title = title, .ylabel = "memory",
		.xlabel = no_clock ? "event" : "time (s)", .xunit = no_clock ? "" : "s",
		.npts = (uint32_t)res->nr_samples, .x = x, .names = names, .y = ys,
		.nseries = res->res_known ? 3 : 2,
	};
	int rc;

	if (!x || !y || res->nr_samples > UINT32_MAX) {
		fprintf(stderr, "uslab sim: %s: out of memory\n", path);
		free(x);
		free(y);
		return -1;
	}
	snprintf(title, sizeof(title), "Memory over time (simulated): %s", trace);
	for (int k = 0; k < 3; k++)
		ys[k] = y + (size_t)k * n;
	for (size_t i = 0; i < res->nr_samples; i++) {
		const struct sim_sample *s = &res->samples[i];

		x[i] = no_clock ? (double)s->time_ns : (double)s->time_ns / 1e9;
		ys[0][i] = s->held;
		ys[1][i] = s->live;
		ys[2][i] = s->resident;
		if (s->held > p.peak_y || !i) {
			p.peak_y = s->held;
			p.peak_x = x[i];
		}
	}
	rc = timeline_draw(&p, path);
	free(x);
	free(y);
	return rc ? -1 : 0;
}

/* Every sample as CSV (FILE.csv or -), or drawn (FILE.svg, FILE.png).
 * Return: 0, or -1 after saying why (nothing left). */
static int write_timeline(const char *path, const char *trace, const struct sim_result *res,
			  bool no_clock)
{
	struct out_file o;
	char err[PATH_MAX + 128];
	FILE *f;
	size_t i;

	if (strcmp(output_format(path, "csv,svg,png,-"), "csv") &&
	    strcmp(output_format(path, "csv,svg,png,-"), "-"))
		return draw_timeline(path, trace, res, no_clock);
	/* never clobbers: temporary renamed over a file, FIFOs in place */
	if (cmd_out_fopen(&o, path, &f, err, sizeof(err))) {
		fprintf(stderr, "uslab sim: %s\n", err);
		return -1;
	}
	fprintf(f, "%s,events,held_bytes,live_bytes,overhead_bytes,free_resident_bytes",
		no_clock ? "event_index" : "time_ns");
	/* adaptive magazines: each cache's size over time (largest over CPUs) */
	if (res->adaptive)
		for (unsigned int c = 0; c < res->nr_cls; c++)
			fprintf(f, ",mag_%s", res->cls[c].name);
	fprintf(f, "\n");
	for (i = 0; i < res->nr_samples; i++) {
		const struct sim_sample *s = &res->samples[i];

		fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRIu64,
			s->time_ns, s->events, s->held, s->live,
			(int64_t)(s->held - s->live), s->resident_free);
		if (res->adaptive)
			for (unsigned int c = 0; c < res->nr_cls; c++)
				fprintf(f, ",%u", (unsigned int)s->mag[c]);
		fprintf(f, "\n");
	}
	if (cmd_out_fclose(&o, f, err, sizeof(err))) {
		fprintf(stderr, "uslab sim: %s\n", err);
		return -1;
	}
	return 0;
}

static const char sim_usage[] =
	"uslab sim TRACE [options]\n"
	"  runs the trace through uslab on virtual CPUs and prints what each layer\n"
	"  counted; the same trace and options print the same bytes";

/* --mag-size, --batch, --depot-limit, --adapt, --adapt-min, --adapt-max,
 * --adapt-budget into the sim_config at opt->value,
 * each value read by its row of <uslab/tunables.h> (sim_parse_tunable). */
static const char *sim_tunable(const struct cli_opt *opt, const char *arg)
{
	static char cls[128];
	const struct uslab_tunable *t = sim_tunable_row((int)opt->data);
	int err = sim_parse_tunable(opt->value, (int)opt->data, arg);

	if (!err)
		return NULL;
	if (err == -ENOENT && opt->data == 'h') {
		snprintf(cls, sizeof(cls), "CACHE=N with CACHE a kmalloc cache (%s .. %s)",
			 kmalloc_info[0].name, kmalloc_info[NR_KMALLOC_CLASSES - 1].name);
		return cls;
	}
	if (err == -ENOENT) {	/* CLASS=N, CLASS no kmalloc class */
		snprintf(cls, sizeof(cls), "CLASS=N with CLASS a kmalloc cache (%s .. %s) "
			 "or a size 1..%d", kmalloc_info[0].name,
			 kmalloc_info[NR_KMALLOC_CLASSES - 1].name, KMALLOC_MAX_CACHE_SIZE);
		return cls;
	}
	if (opt->data == 'h')
		return "CACHE=N (kmalloc-384=1), N 0 .. 2^20";
	snprintf(cls, sizeof(cls), "%s%ld..%ld%s", opt->data == 'm' ?
		 "N or CLASS=N (kmalloc-64=32 or 64=32), N " :
		 opt->data == 'n' || opt->data == 'x' ? "bytes " :
		 opt->data == 'B' ? "KiB " : "", t->min, t->max,
		 opt->data == 'd' ? " (-1 unlimited)" : "");
	return cls;
}

/*
 * Adaptive bounds percpu/ would refuse (pcp_adapt_set_bounds(): the smallest
 * magazine above the largest, each as given or the build's default) said
 * in @buf with the options' names. Return: true when refused.
 */
static bool sim_adapt_bounds_bad(const struct sim_config *cfg, char *buf, size_t len)
{
	unsigned long lo, hi, budget;

	pcp_adapt_get_bounds(&lo, &hi, &budget);	/* the defaults: nothing set yet */
	if (cfg->adapt_min && cfg->adapt_max && cfg->adapt_min > cfg->adapt_max)
		snprintf(buf, len, "--adapt-min: %ld is above --adapt-max %ld",
			 cfg->adapt_min, cfg->adapt_max);
	else if (cfg->adapt_min && !cfg->adapt_max && (unsigned long)cfg->adapt_min > hi)
		snprintf(buf, len, "--adapt-min: %ld is above the largest magazine, %lu bytes "
			 "(the default --adapt-max)", cfg->adapt_min, hi);
	else if (cfg->adapt_max && !cfg->adapt_min && (unsigned long)cfg->adapt_max < lo)
		snprintf(buf, len, "--adapt-max: %ld is below the smallest magazine, %lu bytes "
			 "(the default --adapt-min)", cfg->adapt_max, lo);
	else
		return false;
	return true;
}

/* Return: as parse_options() (the trace at the index returned). */
static int sim_parse(int argc, char **argv, struct sim_config *cfg, struct sim_cli *o)
{
	char bad[160];
	int rc;

	const struct cli_opt opts[] = {
		OPT_ULONG(0, "cpus", &o->cpus, "N", "virtual CPUs (trace CPU ids are folded onto\n"
			  "them; default: the trace's CPU count)", 1, TRACE_MAX_CPUS),
		OPT_CALLBACK(0, "mag-size", cfg, "N", "magazine size of every kmalloc cache;\n"
			     "CLASS=N: one cache (kmalloc-64=32 or 64=32),\n"
			     "repeatable", sim_tunable, .data = 'm'),
		OPT_CALLBACK(0, "batch", cfg, "N", "objects per refill/flush", sim_tunable,
			     .data = 'b'),
		OPT_CALLBACK(0, "depot-limit", cfg, "N", "full magazines kept per depot (-1 unlimited)",
			     sim_tunable, .data = 'd'),
		OPT_CALLBACK(0, "adapt", cfg, "0|1", "magazines that size themselves (the\n"
			     "library's adapt=0|1; default: Kconfig)", sim_tunable, .data = 'a'),
		OPT_CALLBACK(0, "adapt-min", cfg, "BYTES", "adaptive: smallest magazine",
			     sim_tunable, .data = 'n'),
		OPT_CALLBACK(0, "adapt-max", cfg, "BYTES", "adaptive: largest magazine",
			     sim_tunable, .data = 'x'),
		OPT_CALLBACK(0, "adapt-budget", cfg, "KIB", "adaptive: per-CPU budget over all caches",
			     sim_tunable, .data = 'B'),
		OPT_U64(0, "sample", &cfg->sample_every, "N", "sample memory every N events (default:\n"
			"1000 samples over the trace)", 1, UINT64_MAX),
		OPT_ULONG(0, "rows", &o->rows, "N", "rows of the over-time table (default 20, 0 = none)",
			  0, ULONG_MAX),
		OPT_STRING(0, "timeline", &o->timeline, "FILE", "every sample as CSV (FILE.csv or -), or drawn:\n"
			   "held, resident, live over time (FILE.svg, FILE.png)",
			   .flags = OPT_OUTPUT, .formats = "csv,svg,png,-"),
		OPT_CALLBACK(0, "held", cfg, "CACHE=N", "N objects of a kmalloc cache allocated\n"
			     "before the run and kept (what `uslab replay` with\n"
			     "stats prints as the replayer's own), repeatable",
			     sim_tunable, .data = 'h'),
		OPT_BOOLEAN(0, "no-reaper", &cfg->no_reaper,
			    "no reaper passes (a real run: USLAB_OPTIONS=reaper_ms=0)"),
		OPT_BOOLEAN(0, "result", &o->result,
			    "print only the one line `uslab tune --merge` reads\n"
			    "(what `uslab tune --jobs` asks for)"),
		OPT_CALIBRATION(&o->calibration),
		OPT_PROC_SELECT(),
		OPT_END(),
	};

	rc = parse_options(argc, argv, opts, sim_usage, PARSE_OPT_ONE_TRACE);
	if (rc > 0 && sim_adapt_bounds_bad(cfg, bad, sizeof(bad)))
		return -usage_error(opts, sim_usage, "%s", bad);
	return rc;
}

static void print_run_error(const char *path, int err, const struct sim_trace *t,
			    const struct sim_result *res)
{
	if (err == -EINVAL && res->bad_event != UINT64_MAX)
		fprintf(stderr, "uslab sim: %s: event %" PRIu64
			": object state does not match the operation (%s of id %" PRIu64 ")\n",
			path, res->bad_event, trace_op_name(res->bad_op),
			sim_trace_id(t, res->bad_id));
	else if (res->err[0])
		fprintf(stderr, "uslab sim: %s\n", res->err);
	else
		fprintf(stderr, "uslab sim: %s: %s\n", path,
			err == -EINVAL ? "cannot set up the simulated allocator" :
			strerror(-err));
}

int cmd_sim_trace(struct sim_trace *t, const char *who, const char *path,
		  unsigned int cpus, bool stream)
{
	/* "-" is stdin; --pid/--comm (or the busiest process) selected */
	struct trace_reader *r = cmd_open_trace_as(who, path);
	int rc;

	if (!r)
		return 1;
	rc = stream ? sim_trace_open(t, r, path, cpus) : sim_trace_load(t, r, cpus, who);
	if (rc == -ENOMEM && !stream)
		fprintf(stderr, "%s: %s: out of memory at event %zu\n", who, path, t->n);
	else if (rc == -ENOMEM)
		fprintf(stderr, "%s: out of memory\n", who);
	else if (rc)
		fprintf(stderr, "%s: %s\n", who, trace_reader_error(r));
	if (!stream)
		trace_reader_close(r);	/* decoded: the trace is in memory */
	if (rc)
		sim_trace_free(t);	/* a stream's reader with it */
	return rc ? 1 : 0;
}

int cmd_cost_model(struct sim_cost_model *m, const char *path)
{
	char err[512];

	if (!sim_cost_model_load(m, path, err, sizeof(err)))
		return 0;
	fprintf(stderr, "%s: %s\n", cmd_who, err);	/* uslab sim:, uslab tune: */
	return 1;
}

int cmd_sim(int argc, char **argv)
{
	struct sim_cli o = { .rows = 20 };
	struct sim_config cfg;
	struct sim_result res;
	struct sim_trace t;
	const char *path;
	FILE *rep;
	int err;

	sim_fixed_layout(argv - 1);	/* argv[-1] is "uslab" */
	sim_config_init(&cfg);
	/* a trace reader's opening: its options, then its one TRACE */
	err = sim_parse(argc, argv, &cfg, &o);
	if (err <= 0)
		return -err;
	path = argv[err];
	if (cmd_cost_model(&o.model, o.calibration))
		return 1;
	/* Streamed: memory follows the live objects, not the trace's length. */
	if (cmd_sim_trace(&t, "uslab sim", path, (unsigned int)o.cpus, true))
		return 1;
	cfg.cpus = t.cpus;
	if (!cfg.sample_every)	/* 1000 samples, when the trailer says how many events */
		cfg.sample_every = t.n >= 1000 ? t.n / 1000 : (t.n ? 1 : 10000);
	sim_own_program_pages();	/* as tune's children: the same faults */
	err = sim_run(&t, &cfg, &res);
	if (err) {
		print_run_error(path, err, &t, &res);
		sim_result_free(&res);
		sim_trace_free(&t);
		return 1;
	}
	/* --timeline -: the CSV owns standard output, the text goes to stderr
	 * (it came first on stdout: `> t.csv` began with 75 lines of prose) */
	rep = o.timeline && !strcmp(o.timeline, "-") ? stderr : stdout;
	if (o.result)
		sim_print_result(rep, &cfg, &res, &o.model);
	else
		sim_print(rep, &t, &cfg, &res, path, o.rows, &o.model);
	if (cmd_check_stdout("uslab sim")) {	/* no further work after it */
		sim_result_free(&res);
		sim_trace_free(&t);
		return 1;
	}
	/* CPU time of this thread: what one core does, whatever else runs */
	fprintf(stderr, "uslab sim: %" PRIu64 " events in %.3f s CPU (%.3f s wall): "
		"%.2f million events/s on one core\n",
		res.events, res.cpu_seconds, res.seconds,
		res.cpu_seconds > 0 ? (double)res.events / res.cpu_seconds / 1e6 : 0.0);
	err = o.timeline ? write_timeline(o.timeline, path, &res, t.no_clock) : 0;
	sim_result_free(&res);
	sim_trace_free(&t);
	return err ? 1 : 0;
}
