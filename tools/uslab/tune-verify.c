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
#include <sys/wait.h>
#include <unistd.h>
#include "tools/uslab/builtin.h"

#define VERIFY_MAX_RUNS	64

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * One real replay of @trace with USLAB_OPTIONS=@opts.
 * Return: 0 with the wall time (s) and peak RSS above the replayer's own
 * (KiB), or -1 (said on stderr).
 */
static int verify_once(const char *trace, const char *opts, double *wall,
		       double *rss)
{
	char self[4096], line[512];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fds[2], status, got = 0;
	FILE *f;
	pid_t pid;

	if (n <= 0 || pipe(fds))
		return -1;
	self[n] = '\0';
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		if (*opts)
			setenv("USLAB_OPTIONS", opts, 1);
		else
			unsetenv("USLAB_OPTIONS");
		execl(self, "uslab", "replay", trace, "--allocator", "uslab", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f) {
		close(fds[0]);
		waitpid(pid, &status, 0);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		long a, b;

		if (sscanf(line, "wall time: %lf s", wall) == 1)
			got |= 1;
		else if (sscanf(line, "peak RSS: %ld KiB (%ld KiB above", &a, &b) == 2) {
			*rss = (double)b;
			got |= 2;
		}
	}
	fclose(f);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    got != 3) {
		fprintf(stderr, "uslab tune --verify: replay of %s with USLAB_OPTIONS='%s' failed\n",
			trace, opts);
		return -1;
	}
	return 0;
}

/**
 * tune_verify - replay @trace for real under each of @pts (interleaved,
 * @runs times each), fill in their measured medians and print the table.
 * Return: 0, or -1 when a replay failed.
 */
int tune_verify(const char *trace, struct tune_verify_point *pts, unsigned int npts,
		unsigned int runs, FILE *out)
{
	static double wall[TUNE_VERIFY_MAX_POINTS][VERIFY_MAX_RUNS];
	static double rss[TUNE_VERIFY_MAX_POINTS][VERIFY_MAX_RUNS];
	unsigned int r, p;

	if (npts > TUNE_VERIFY_MAX_POINTS)
		npts = TUNE_VERIFY_MAX_POINTS;
	if (runs > VERIFY_MAX_RUNS)
		runs = VERIFY_MAX_RUNS;
	for (r = 0; r < runs; r++)
		for (p = 0; p < npts; p++)
			if (verify_once(trace, pts[p].opts, &wall[p][r], &rss[p][r]))
				return -1;
	for (p = 0; p < npts; p++) {
		pts[p].wall_ms = median(wall[p], runs) * 1e3;
		pts[p].rss_kib = median(rss[p], runs);
	}
	fprintf(out, "\nverified (real replays on libuslab.so, %u runs each, interleaved, medians):\n",
		runs);
	fprintf(out, "  %-18s %14s %14s %18s %20s\n", "", "modelled_ms", "measured_ms",
		"modelled_ovh_KiB", "measured_RSS_KiB");
	for (p = 0; p < npts; p++)
		fprintf(out, "  %-18s %14.3f %14.3f %18.1f %20.0f\n", pts[p].label,
			pts[p].model_ms, pts[p].wall_ms, pts[p].model_ovh_kib, pts[p].rss_kib);
	if (npts == 2 && pts[0].wall_ms > 0 && pts[0].model_ms > 0 && pts[0].rss_kib > 0)
		fprintf(out, "  %s against %s: modelled time %+.1f%%, measured time %+.1f%%; "
			"measured peak RSS %+.1f%%\n", pts[1].label, pts[0].label,
			100 * (pts[1].model_ms - pts[0].model_ms) / pts[0].model_ms,
			100 * (pts[1].wall_ms - pts[0].wall_ms) / pts[0].wall_ms,
			100 * (pts[1].rss_kib - pts[0].rss_kib) / pts[0].rss_kib);
	fprintf(out, "  (measured: wall time of the whole replay, RSS above the replayer's own; "
		"modelled: allocator time and mean held - live)\n");
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
