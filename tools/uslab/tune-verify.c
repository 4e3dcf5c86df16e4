// SPDX-License-Identifier: MIT
/*
 * `uslab tune --verify`: the recommendation checked against reality. Each
 * configuration (the library defaults, the recommendation) is replayed for
 * real on libuslab.so (`uslab replay TRACE --allocator uslab`, this very
 * binary, with USLAB_OPTIONS set), the configurations interleaved run by
 * run so that a change of load on the machine hits both alike; medians of
 * the wall time and of the peak RSS above the replayer's own are printed
 * beside the modelled time and memory overhead.
 *
 * The replays are child processes; nothing here touches the simulation's
 * state.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/uslab/builtin.h"

#define VERIFY_MAX_RUNS	64

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * One real replay of @trace with USLAB_OPTIONS=@opts (replay-runs.c's
 * replay_run_once); with @cpu >= 0, one thread pinned to CPU @cpu.
 * Return: 0 with the wall time and the CPU time of the run (s, user +
 * system, all threads) and peak RSS above the replayer's own (KiB), or -1
 * (said on stderr).
 */
static int verify_once(const char *trace, const char *opts, int cpu, double *wall,
		       double *cpu_s, double *rss)
{
	char *args[] = { (char *)trace, "--allocator", "uslab", "--threads", "1", NULL };
	struct replay_fig f;

	if (cpu < 0)
		args[3] = NULL;		/* the threads as recorded */
	if (replay_run_once(args, opts, cpu, &f, NULL, 0, false, "uslab tune --verify"))
		return -1;
	*wall = f.wall;
	*cpu_s = f.cpu;
	*rss = f.rss_peak;
	return 0;
}

/* Every run's figures, kept for the grid report (split halves). */
static double verify_wall[TUNE_VERIFY_MAX_POINTS][VERIFY_MAX_RUNS];
static double verify_cpu[TUNE_VERIFY_MAX_POINTS][VERIFY_MAX_RUNS];
static double verify_rss[TUNE_VERIFY_MAX_POINTS][VERIFY_MAX_RUNS];
static unsigned int verify_runs;

/* Median of every @step-th of @v's first @n values from @first (a copy). */
static double median_of(const double *v, unsigned int n, unsigned int first,
			unsigned int step)
{
	double tmp[VERIFY_MAX_RUNS];
	unsigned int k = 0;

	for (unsigned int i = first; i < n; i += step)
		tmp[k++] = v[i];
	return k ? stat_median(tmp, k) : 0;
}

/**
 * tune_verify - replay @trace for real under each of @pts (interleaved,
 * @runs times each), fill in their measured medians and print the table.
 * Return: 0, or -1 when a replay failed.
 */
int tune_verify(const char *trace, struct tune_verify_point *pts, unsigned int npts,
		unsigned int runs, bool one_cpu, FILE *out)
{
	int cpu = one_cpu ? replay_first_cpu() : -1;
	unsigned int r, p;

	if (one_cpu && cpu < 0) {
		fprintf(stderr, "uslab tune --verify: no CPU to pin the replay to\n");
		return -1;
	}
	if (npts > TUNE_VERIFY_MAX_POINTS)
		npts = TUNE_VERIFY_MAX_POINTS;
	if (runs > VERIFY_MAX_RUNS)
		runs = VERIFY_MAX_RUNS;
	verify_runs = runs;
	for (r = 0; r < runs; r++)
		for (p = 0; p < npts; p++)
			if (verify_once(trace, pts[p].opts, cpu, &verify_wall[p][r],
					&verify_cpu[p][r], &verify_rss[p][r]))
				return -1;
	for (p = 0; p < npts; p++) {
		double c[VERIFY_MAX_RUNS];

		pts[p].wall_ms = median_of(verify_wall[p], runs, 0, 1) * 1e3;
		pts[p].cpu_ms = median_of(verify_cpu[p], runs, 0, 1) * 1e3;
		pts[p].rss_kib = median_of(verify_rss[p], runs, 0, 1);
		memcpy(c, verify_cpu[p], runs * sizeof(*c));
		qsort(c, runs, sizeof(*c), cmp_double);
		pts[p].cpu_spread = pts[p].cpu_ms > 0 ?
			100 * (c[runs * 3 / 4] - c[runs / 4]) * 1e3 / pts[p].cpu_ms : 0;
	}
	if (one_cpu)
		fprintf(out, "\nverified (real replays on libuslab.so, one thread pinned to CPU %d, "
			"%u runs each, interleaved, medians):\n", cpu, runs);
	else
		fprintf(out, "\nverified (real replays on libuslab.so, the recorded threads, "
			"%u runs each, interleaved, medians):\n", runs);
	fprintf(out, "  %-18s %12s %12s %12s %8s %17s %17s\n", "", "modelled_ms", "measured_ms",
		"CPU_ms", "spread", "modelled_ovh_KiB", "measured_RSS_KiB");
	for (p = 0; p < npts; p++)
		fprintf(out, "  %-18s %12.3f %12.3f %12.3f %7.1f%% %17.1f %17.0f\n", pts[p].label,
			pts[p].model_ms, pts[p].wall_ms, pts[p].cpu_ms, pts[p].cpu_spread,
			pts[p].model_ovh_kib, pts[p].rss_kib);
	if (npts == 2 && pts[0].cpu_ms > 0 && pts[0].model_ms > 0 && pts[0].rss_kib > 0)
		fprintf(out, "  %s against %s: modelled time %+.1f%%, measured wall time %+.1f%%, "
			"CPU time %+.1f%%; measured peak RSS %+.1f%%\n", pts[1].label, pts[0].label,
			100 * (pts[1].model_ms - pts[0].model_ms) / pts[0].model_ms,
			100 * (pts[1].wall_ms - pts[0].wall_ms) / pts[0].wall_ms,
			100 * (pts[1].cpu_ms - pts[0].cpu_ms) / pts[0].cpu_ms,
			100 * (pts[1].rss_kib - pts[0].rss_kib) / pts[0].rss_kib);
	fprintf(out, "  (measured: the timed run of the replay: wall time, CPU time of all its "
		"threads (user + system), spread = interquartile range of the CPU times over "
		"their median, RSS above the replayer's own; modelled: allocator time and mean "
		"held - live)\n");
	return 0;
}

/* Ranks of @v (1-based, ties share their mean rank) into @rank. */
static void ranks(const double *v, unsigned int n, double *rank)
{
	for (unsigned int i = 0; i < n; i++) {
		unsigned int below = 0, same = 0;

		for (unsigned int j = 0; j < n; j++) {
			below += v[j] < v[i];
			same += v[j] == v[i];
		}
		rank[i] = below + (same + 1) / 2.0;
	}
}

/**
 * tune_spearman - Spearman's rank correlation of @x and @y (Pearson's
 * correlation of their ranks, so ties are handled).
 * Return: rho in [-1, 1]; 0 when either has no spread.
 */
double tune_spearman(const double *x, const double *y, unsigned int n)
{
	double rx[TUNE_VERIFY_MAX_POINTS], ry[TUNE_VERIFY_MAX_POINTS];
	double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;

	if (n < 2 || n > TUNE_VERIFY_MAX_POINTS)
		return 0;
	ranks(x, n, rx);
	ranks(y, n, ry);
	for (unsigned int i = 0; i < n; i++) {
		mx += rx[i] / n;
		my += ry[i] / n;
	}
	for (unsigned int i = 0; i < n; i++) {
		sxy += (rx[i] - mx) * (ry[i] - my);
		sxx += (rx[i] - mx) * (rx[i] - mx);
		syy += (ry[i] - my) * (ry[i] - my);
	}
	return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0;
}

/*
 * The median of the CPU times over the runs of every point whose
 * simulation came out the same (same modelled time and overhead: the
 * same configuration in effect, e.g. a depot limit above what any CPU
 * ever parks), @k of them in @same.
 */
static double pooled_cpu(const unsigned int *same, unsigned int k)
{
	double v[TUNE_VERIFY_MAX_POINTS * VERIFY_MAX_RUNS];
	unsigned int n = 0;

	for (unsigned int i = 0; i < k; i++)
		for (unsigned int r = 0; r < verify_runs; r++)
			v[n++] = verify_cpu[same[i]][r];
	return n ? stat_median(v, n) * 1e3 : 0;
}

/**
 * tune_verify_grid_report - after tune_verify() of @npts grid points: how
 * well modelled time ranks measured CPU and wall time (Spearman), how well
 * the measurement ranks against itself (medians of the even runs against
 * those of the odd runs: the noise, a ceiling for any model), the same
 * over distinct configurations, and the rms error of modelled time plus
 * the replay's own fixed cost (fitted) against measured CPU time.
 */
void tune_verify_grid_report(const struct tune_verify_point *pts, unsigned int npts,
			     FILE *out)
{
	double model[TUNE_VERIFY_MAX_POINTS], cpu[TUNE_VERIFY_MAX_POINTS];
	double wall[TUNE_VERIFY_MAX_POINTS], even[TUNE_VERIFY_MAX_POINTS];
	double odd[TUNE_VERIFY_MAX_POINTS], spread[TUNE_VERIFY_MAX_POINTS];
	double dmodel[TUNE_VERIFY_MAX_POINTS], dcpu[TUNE_VERIFY_MAX_POINTS];
	double base = 0, se = 0, mm = 0, mc = 0, sxy = 0, sxx = 0;
	unsigned int i, j, nd = 0;
	bool seen[TUNE_VERIFY_MAX_POINTS] = { false };

	if (npts < 2 || npts > TUNE_VERIFY_MAX_POINTS)
		return;
	/*
	 * Ranked as printed (%.3f ms): two points the table shows equal tie
	 * here too, so the correlation can be recomputed from the table (two
	 * CPU times 0.4 us apart ranked apart gave -0.600 where the table says
	 * -0.738).
	 */
	for (i = 0; i < npts; i++) {
		model[i] = round(pts[i].model_ms * 1e3) / 1e3;
		cpu[i] = round(pts[i].cpu_ms * 1e3) / 1e3;
		wall[i] = round(pts[i].wall_ms * 1e3) / 1e3;
		spread[i] = pts[i].cpu_spread;
		even[i] = median_of(verify_cpu[i], verify_runs, 0, 2);
		odd[i] = median_of(verify_cpu[i], verify_runs, 1, 2);
		base += (cpu[i] - model[i]) / npts;
		mm += model[i] / npts;
		mc += cpu[i] / npts;
	}
	for (i = 0; i < npts; i++) {
		unsigned int same[TUNE_VERIFY_MAX_POINTS], k = 0;

		se += cpu[i] > 0 ? pow((base + model[i] - cpu[i]) / cpu[i], 2) : 0;
		sxy += (model[i] - mm) * (cpu[i] - mc);
		sxx += (model[i] - mm) * (model[i] - mm);
		if (seen[i])
			continue;
		for (j = i; j < npts; j++)
			if (!seen[j] && pts[j].model_ms == pts[i].model_ms &&
			    pts[j].model_ovh_kib == pts[i].model_ovh_kib) {
				seen[j] = true;
				same[k++] = j;
			}
		dmodel[nd] = model[i];
		dcpu[nd++] = pooled_cpu(same, k);
	}
	fprintf(out, "grid: %u points; Spearman rank correlation of modelled time with measured "
		"CPU time %.3f, with wall time %.3f\n", npts, tune_spearman(model, cpu, npts),
		tune_spearman(model, wall, npts));
	if (verify_runs >= 2)
		fprintf(out, "  noise: the medians of the even runs rank the points against those "
			"of the odd runs at %.3f (the measurement against itself); CPU time spread "
			"per point: median %.1f%%\n", tune_spearman(even, odd, npts),
			stat_median(spread, npts));
	if (nd < npts && nd >= 2)
		fprintf(out, "  %u distinct configurations (the others simulate to the same "
			"counts): Spearman %.3f, runs of the same configuration pooled\n",
			nd, tune_spearman(dmodel, dcpu, nd));
	fprintf(out, "  rms error of modelled time + the replay's own cost (fitted: %.3f ms) "
		"against measured CPU time %.1f%%; slope of measured on modelled time %.2f "
		"(1: the model's scale is right)\n", base, 100 * sqrt(se / npts),
		sxx > 0 ? sxy / sxx : 0.0);
}
