// SPDX-License-Identifier: MIT
/*
 * `uslab tune`'s decision: the simulation narrows, real runs decide. The
 * few candidates the model finds best for the goal are replayed for real
 * on libuslab.so (`uslab replay`, this binary, in child processes),
 * interleaved run by run with the library's defaults so that a change of
 * load on the machine hits all alike; the one that did best is then
 * replayed again against the defaults (a fresh confirmation round, so the
 * pick is not judged on the runs it was picked on). A setting is
 * recommended only when, in that confirmation, its gain on the goal is
 * significant (the bootstrap 95% interval of the change lies below -1%)
 * and the other axis is not significantly worse (its interval reaches 0
 * or below, and its upper end is at most +3%); otherwise the verdict is
 * "keep the defaults", with the figures.
 *
 * Time is the CPU time of the replay's timed run (user + system, all
 * threads); memory is the resident memory above the replayer's own at the
 * start: the peak decides, the mean is printed beside it.
 *
 * No locks: single-threaded (replays are child processes).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/uslab/builtin.h"

#define TUNE_MIN_GAIN	0.01	/* a gain must be at least 1% to count */
#define TUNE_TOLERANCE	0.03	/* the other axis: at most +3% at the upper end */

static const char *const goal_name[] = {
	[TUNE_BALANCED] = "balanced", [TUNE_TIME] = "time", [TUNE_MEMORY] = "memory",
};

const char *tune_goal_name(enum tune_goal g)
{
	return goal_name[g];
}

/* Every configuration of one round, each @runs times, interleaved. */
static int real_round(const struct tune_real *tr, struct tune_real_point *pts,
		      unsigned int n, unsigned int runs)
{
	char *args[16];
	unsigned int a = 0;

	args[a++] = (char *)tr->trace;
	args[a++] = "-a";
	args[a++] = "uslab";
	if (tr->cpu >= 0) {
		args[a++] = "--threads";
		args[a++] = "1";
	}
	if (tr->pid) {
		args[a++] = "--pid";
		args[a++] = (char *)tr->pid;
	}
	if (tr->comm) {
		args[a++] = "--comm";
		args[a++] = (char *)tr->comm;
	}
	args[a] = NULL;
	for (unsigned int p = 0; p < n; p++)
		pts[p].n = 0;
	for (unsigned int r = 0; r < runs; r++)
		for (unsigned int p = 0; p < n; p++) {
			struct replay_fig f;
			struct tune_real_point *x = &pts[p];

			if (replay_run_once(args, x->opts, tr->cpu, &f, NULL, 0, true, "uslab tune"))
				return -1;
			if (f.events != tr->events) {
				fprintf(stderr, "uslab tune: the replay ran %llu events, the simulation "
					"%llu: not the same process\n", f.events, tr->events);
				return -1;
			}
			x->cpu[x->n] = f.cpu * 1e3;
			x->peak[x->n] = f.rss_peak;
			x->mean[x->n] = f.rss_mean;
			x->n++;
			if (tr->progress) {
				fprintf(stderr, "\r  real replays: %u/%u", r * n + p + 1, runs * n);
				if (r * n + p + 1 == runs * n)
					fputc('\n', stderr);
			}
		}
	return 0;
}

/* Figures of @x alone and, against @base, its changes. */
static int real_estimate(struct tune_real_point *x, const struct tune_real_point *base)
{
	if (stat_ci(x->cpu, x->n, NULL, 0, &x->e_cpu) ||
	    stat_ci(x->peak, x->n, NULL, 0, &x->e_peak) ||
	    stat_ci(x->mean, x->n, NULL, 0, &x->e_mean))
		return -1;
	if (!base)
		return 0;
	if (stat_ci(x->cpu, x->n, base->cpu, base->n, &x->d_cpu) ||
	    stat_ci(x->peak, x->n, base->peak, base->n, &x->d_peak) ||
	    stat_ci(x->mean, x->n, base->mean, base->n, &x->d_mean))
		return -1;
	return 0;
}

/*
 * Why the other axis (@d: change against the defaults) rules @x out: its
 * 95% CI lies above zero, or its upper end passes the tolerance (the
 * verdict line prints the figures after it).
 */
static void real_axis_worse(char *buf, size_t len, const char *pre, const char *axis,
			    const struct stat_est *d)
{
	if (d->lo > 0)
		snprintf(buf, len, "%s%s significantly worse", pre, axis);
	else
		snprintf(buf, len, "%s%s may be worse by up to %+.1f%% (tolerance %+.0f%%)",
			 pre, axis, 100 * d->hi, 100 * TUNE_TOLERANCE);
}

/* A goal of one axis: a significant @gain there, the @other axis (its
 * change @d) within the tolerance; else @why says which failed. */
static bool real_accept_axis(bool gain, bool other_ok, const char *no_gain, const char *other,
			     const struct stat_est *d, char *why, size_t len)
{
	if (gain && other_ok)
		return true;
	if (!gain)
		snprintf(why, len, "%s", no_gain);
	else
		real_axis_worse(why, len, "", other, d);
	return false;
}

/* Does @x beat the defaults for @goal? @why says what decided. */
static bool real_accept(enum tune_goal goal, const struct tune_real_point *x, char *why,
			size_t len)
{
	bool cpu_gain = x->d_cpu.hi < -TUNE_MIN_GAIN;
	bool mem_gain = x->d_peak.hi < -TUNE_MIN_GAIN;
	bool cpu_ok = x->d_cpu.lo <= 0 && x->d_cpu.hi <= TUNE_TOLERANCE;
	bool mem_ok = x->d_peak.lo <= 0 && x->d_peak.hi <= TUNE_TOLERANCE;

	switch (goal) {
	case TUNE_TIME:
		return real_accept_axis(cpu_gain, mem_ok, "no significant gain in CPU time",
					"resident memory", &x->d_peak, why, len);
	case TUNE_MEMORY:
		return real_accept_axis(mem_gain, cpu_ok,
					"no significant gain in peak resident memory",
					"CPU time", &x->d_cpu, why, len);
	case TUNE_BALANCED:
		if ((mem_gain && cpu_ok) || (cpu_gain && mem_ok && x->d_peak.median <= 0))
			return true;
		if (!mem_gain && !cpu_gain)
			snprintf(why, len, "no significant gain in resident memory or in CPU time");
		else if (mem_gain)
			real_axis_worse(why, len, "less memory, but ", "CPU time", &x->d_cpu);
		else
			snprintf(why, len, "less CPU time, but more resident memory");
		return false;
	}
	return false;
}

/* How good @x looks for @goal (lower is better), to pick the finalist. */
static double real_score(enum tune_goal goal, const struct tune_real_point *x)
{
	return goal == TUNE_TIME ? x->d_cpu.median : goal == TUNE_MEMORY ? x->d_peak.median :
	       x->d_cpu.median + x->d_peak.median;
}

static void real_table(FILE *out, const char *prefix, struct tune_real_point *pts,
		       unsigned int n)
{
	fprintf(out, "%s  %-14s %-30s %-30s %-26s %-24s %s\n", prefix, "", "CPU_ms [95% CI]",
		"peak_RSS_KiB [95% CI]", "mean_RSS_KiB [95% CI]", "CPU vs defaults",
		"peak RSS vs defaults");
	for (unsigned int p = 0; p < n; p++) {
		const struct tune_real_point *x = &pts[p];
		char c[64], pk[64], mn[64], dc[64], dp[64];

		snprintf(c, sizeof(c), "%.2f [%.2f, %.2f]", x->e_cpu.median, x->e_cpu.lo,
			 x->e_cpu.hi);
		snprintf(pk, sizeof(pk), "%.0f [%.0f, %.0f]", x->e_peak.median, x->e_peak.lo,
			 x->e_peak.hi);
		snprintf(mn, sizeof(mn), "%.0f [%.0f, %.0f]", x->e_mean.median, x->e_mean.lo,
			 x->e_mean.hi);
		if (p) {
			snprintf(dc, sizeof(dc), "%+.1f%% [%+.1f, %+.1f]", 100 * x->d_cpu.median,
				 100 * x->d_cpu.lo, 100 * x->d_cpu.hi);
			snprintf(dp, sizeof(dp), "%+.1f%% [%+.1f, %+.1f]", 100 * x->d_peak.median,
				 100 * x->d_peak.lo, 100 * x->d_peak.hi);
		} else {
			snprintf(dc, sizeof(dc), "-");
			snprintf(dp, sizeof(dp), "-");
		}
		fprintf(out, "%s  %-14s %-30s %-30s %-26s %-24s %s\n", prefix, x->label, c, pk, mn,
			dc, dp);
	}
}

static void real_models(FILE *out, struct tune_real_point *pts, unsigned int n)
{
	const struct tune_real_point *d = &pts[0];

	fprintf(out, "  %-14s %-16s %-22s %-22s %s\n", "", "model_time_ms", "model_res_peak_KiB",
		"model_res_mean_KiB", "configuration");
	for (unsigned int p = 0; p < n; p++) {
		const struct tune_real_point *x = &pts[p];

		fprintf(out, "  %-14s %-16.3f %-22.0f %-22.0f %s", x->label, x->model_ms,
			x->model_peak_kib, x->model_mean_kib, x->desc);
		if (p && d->model_ms > 0 && d->model_peak_kib > 0)
			fprintf(out, " (model: time %+.1f%%, peak %+.1f%%)",
				100 * (x->model_ms / d->model_ms - 1),
				100 * (x->model_peak_kib / d->model_peak_kib - 1));
		fputc('\n', out);
	}
}

/**
 * tune_real_decide - the real replays and the verdict.
 * @pts: the defaults at [0], the candidates after them (@n in all).
 * Return: the index in @pts of the recommendation, 0 for "keep the
 * defaults", -1 when a replay failed (said).
 */
int tune_real_decide(const struct tune_real *tr, struct tune_real_point *pts, unsigned int n,
		     FILE *out)
{
	struct tune_real_point conf[2];
	unsigned int best = 0;
	double best_score = INFINITY;
	char why[160] = "no candidate", where[96];

	if (tr->cpu >= 0)
		snprintf(where, sizeof(where), "one thread pinned to CPU %d", tr->cpu);
	else
		snprintf(where, sizeof(where), "the recorded threads");
	fprintf(out, "\ncandidates the model picked for goal %s (simulation narrows, real runs "
		"decide):\n", goal_name[tr->goal]);
	real_models(out, pts, n);
	fflush(out);
	if (n < 2) {
		fprintf(out, "\nkeep the defaults: the model found no candidate\n");
		return 0;
	}
	if (real_round(tr, pts, n, tr->runs))
		return -1;
	for (unsigned int p = 0; p < n; p++)
		if (real_estimate(&pts[p], p ? &pts[0] : NULL))
			return -1;
	fprintf(out, "\nround 1, selection: real replays on libuslab.so (%s), %u runs each, "
		"interleaved, each of the %llu events simulated%s%s%s%s; medians [bootstrap 95%% CI]:\n",
		where, tr->runs, tr->events, tr->pid ? ", --pid " : "", tr->pid ? tr->pid : "",
		tr->comm ? ", --comm " : "", tr->comm ? tr->comm : "");
	real_table(out, "", pts, n);
	for (unsigned int p = 1; p < n; p++) {
		double sc = real_score(tr->goal, &pts[p]);

		if (real_accept(tr->goal, &pts[p], why, sizeof(why)) && sc < best_score) {
			best_score = sc;
			best = p;
		}
	}
	if (!best) {
		/* the closest to passing, for the figures */
		for (unsigned int p = 1; p < n; p++)
			if (!best || real_score(tr->goal, &pts[p]) < real_score(tr->goal, &pts[best]))
				best = p;
		real_accept(tr->goal, &pts[best], why, sizeof(why));
		fprintf(out, "\nkeep the defaults: no candidate passed in round 1 (goal %s; the best, "
			"%s: %s): CPU time %+.1f%% [%+.1f, %+.1f], peak RSS %+.1f%% [%+.1f, %+.1f], "
			"mean RSS %+.1f%% [%+.1f, %+.1f]\n", goal_name[tr->goal], pts[best].label, why,
			100 * pts[best].d_cpu.median, 100 * pts[best].d_cpu.lo,
			100 * pts[best].d_cpu.hi, 100 * pts[best].d_peak.median,
			100 * pts[best].d_peak.lo, 100 * pts[best].d_peak.hi,
			100 * pts[best].d_mean.median, 100 * pts[best].d_mean.lo,
			100 * pts[best].d_mean.hi);
		return 0;
	}
	/* Round 2: the finalist against the defaults on fresh runs. */
	conf[0] = pts[0];
	conf[1] = pts[best];
	if (real_round(tr, conf, 2, tr->runs))
		return -1;
	if (real_estimate(&conf[0], NULL) || real_estimate(&conf[1], &conf[0]))
		return -1;
	fprintf(out, "\nround 2, confirmation: %s against the defaults on fresh replays (%s), "
		"%u runs each, interleaved:\n", conf[1].label, where, tr->runs);
	real_table(out, "", conf, 2);
	pts[0] = conf[0];
	pts[best] = conf[1];
	if (!real_accept(tr->goal, &conf[1], why, sizeof(why))) {
		fprintf(out, "\nkeep the defaults: %s passed round 1 but not the confirmation "
			"(goal %s: %s): CPU time %+.1f%% [%+.1f, %+.1f], peak RSS %+.1f%% [%+.1f, "
			"%+.1f], mean RSS %+.1f%% [%+.1f, %+.1f]\n", conf[1].label, goal_name[tr->goal],
			why, 100 * conf[1].d_cpu.median, 100 * conf[1].d_cpu.lo,
			100 * conf[1].d_cpu.hi, 100 * conf[1].d_peak.median, 100 * conf[1].d_peak.lo,
			100 * conf[1].d_peak.hi, 100 * conf[1].d_mean.median, 100 * conf[1].d_mean.lo,
			100 * conf[1].d_mean.hi);
		return 0;
	}
	fprintf(out, "\nmeasured (confirmation round, goal %s): %s against the defaults: CPU time "
		"%+.1f%% [%+.1f, %+.1f], peak RSS %+.1f%% [%+.1f, %+.1f], mean RSS %+.1f%% "
		"[%+.1f, %+.1f]\n", goal_name[tr->goal], conf[1].label, 100 * conf[1].d_cpu.median,
		100 * conf[1].d_cpu.lo, 100 * conf[1].d_cpu.hi, 100 * conf[1].d_peak.median,
		100 * conf[1].d_peak.lo, 100 * conf[1].d_peak.hi, 100 * conf[1].d_mean.median,
		100 * conf[1].d_mean.lo, 100 * conf[1].d_mean.hi);
	return (int)best;
}
