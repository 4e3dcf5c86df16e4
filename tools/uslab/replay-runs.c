// SPDX-License-Identifier: MIT
/*
 * Real replays as measurements: one `uslab replay` run in a child process
 * (this very binary), its figures read back from its output, and the
 * statistics every caller prints them with: medians and bootstrap 95%
 * confidence intervals, of one configuration and of the change from one
 * configuration to another. `uslab replay --runs N` and `uslab tune` (its
 * real replays, tune-verify.c) use them.
 *
 * The bootstrap draws from a fixed-seed generator, so the same runs always
 * give the same intervals. No locks: single-threaded.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tools/uslab/builtin.h"

#define BOOT_ROUNDS	2000

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of @n values (@v is reordered). 0 for none. */
double stat_median(double *v, unsigned int n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t boot_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* A resample of @v's @n values (with replacement) into @out; its median. */
static double boot_median(const double *v, unsigned int n, double *out, uint64_t *s)
{
	for (unsigned int i = 0; i < n; i++)
		out[i] = v[boot_next(s) % n];
	return stat_median(out, n);
}

/*
 * stat_ci - the median of @v (@n values) and its bootstrap 95% interval
 * (2.5th and 97.5th percentiles of the medians of BOOT_ROUNDS resamples).
 * With @base (@nb values), the same for the change median(v)/median(base)
 * - 1, each side resampled apart. Return: 0, -ENOMEM, -EINVAL for no data.
 */
int stat_ci(const double *v, unsigned int n, const double *base, unsigned int nb,
	    struct stat_est *e)
{
	double *tmp = malloc(((n > nb ? n : nb) + 1) * sizeof(*tmp));
	double *m = malloc(BOOT_ROUNDS * sizeof(*m));
	uint64_t s = 0x9e3779b97f4a7c15ull;
	double mv, mb = 1;
	int rc = 0;

	if (!tmp || !m) {
		rc = -ENOMEM;
		goto out;
	}
	if (!n || (base && !nb)) {
		rc = -EINVAL;
		goto out;
	}
	memcpy(tmp, v, n * sizeof(*tmp));
	mv = stat_median(tmp, n);
	if (base) {
		memcpy(tmp, base, nb * sizeof(*tmp));
		mb = stat_median(tmp, nb);
	}
	e->median = base ? (mb > 0 ? mv / mb - 1 : 0) : mv;
	for (unsigned int k = 0; k < BOOT_ROUNDS; k++) {
		double a = boot_median(v, n, tmp, &s), b;

		if (!base) {
			m[k] = a;
			continue;
		}
		b = boot_median(base, nb, tmp, &s);
		m[k] = b > 0 ? a / b - 1 : 0;
	}
	qsort(m, BOOT_ROUNDS, sizeof(*m), cmp_double);
	e->lo = m[BOOT_ROUNDS * 25 / 1000];
	e->hi = m[BOOT_ROUNDS * 975 / 1000 - 1];
out:
	free(tmp);
	free(m);
	return rc;
}

/* The first CPU this process may run on, to pin one-CPU replays to. */
int replay_first_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	return -1;
}

/**
 * replay_child_setup - in a replay's child, before its exec: USLAB_OPTIONS
 * as @opts says (NULL: as it is, "": unset, the library's defaults) and,
 * with @cpu >= 0, pinned to that CPU (the child exits 127 if it cannot be).
 */
void replay_child_setup(const char *opts, int cpu)
{
	if (opts && *opts)
		setenv("USLAB_OPTIONS", opts, 1);
	else if (opts)
		unsetenv("USLAB_OPTIONS");
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(127);
	}
}

/* The child's stderr @err to ours, unless the previous call forwarded
 * the same text (kept here: one replay at a time per process). */
static void forward_once(FILE *err)
{
	static char *prev;
	static size_t prev_len;
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	char buf[4096];

	rewind(err);
	while ((n = fread(buf, 1, sizeof(buf), err)) > 0) {
		if (len + n > cap) {
			char *t = realloc(text, cap = 2 * (len + n));

			if (!t) {	/* no room to compare: say it all */
				fwrite(text, 1, len, stderr);
				fwrite(buf, 1, n, stderr);
				while ((n = fread(buf, 1, sizeof(buf), err)) > 0)
					fwrite(buf, 1, n, stderr);
				free(text);
				return;
			}
			text = t;
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	if (!len || (prev && len == prev_len && !memcmp(text, prev, len))) {
		free(text);
		return;
	}
	fwrite(text, 1, len, stderr);
	free(prev);
	prev = text;
	prev_len = len;
}

/**
 * replay_run_once - `uslab replay ARGS...` once, in a child of this binary.
 * @args: the replay's arguments after "replay", NULL-terminated.
 * @opts: USLAB_OPTIONS for the run; NULL leaves the environment as it is,
 *        "" unsets it (the library's defaults).
 * @cpu: >= 0 pins the run to that CPU.
 * @opt_line: when non-NULL, the replay's "options: ..." line (@len bytes).
 * @quiet: keep the replay's stderr (what process it took, the library's
 *         warnings) unless it fails; else it goes to ours once the replay
 *         ends, unless it is the very text the previous run said (--runs
 *         N said the same notice N times).
 * Return: 0 with @f filled, or -1 (said on stderr, naming @who).
 */
int replay_run_once(char *const args[], const char *opts, int cpu, struct replay_fig *f,
		    char *opt_line, size_t len, bool quiet, const char *who)
{
	char self[4096], line[1024];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *argv[64];
	int fds[2], status, got = 0;
	unsigned int k = 0;
	FILE *in, *err = tmpfile();	/* the child's stderr: shown on failure */
	pid_t pid;

	if (n <= 0 || !err || pipe(fds)) {
		if (err)
			fclose(err);
		return -1;
	}
	self[n] = '\0';
	argv[k++] = "uslab";
	argv[k++] = "replay";
	for (unsigned int i = 0; args[i] && k < ARRAY_SIZE(argv) - 1; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		fclose(err);
		return -1;
	}
	if (!pid) {
		dup2(fds[1], 1);
		dup2(fileno(err), 2);
		close(fds[0]);
		close(fds[1]);
		replay_child_setup(opts, cpu);
		execv(self, argv);
		_exit(127);
	}
	close(fds[1]);
	in = fdopen(fds[0], "r");
	if (!in) {
		close(fds[0]);
		waitpid(pid, &status, 0);
		fclose(err);
		return -1;
	}
	memset(f, 0, sizeof(*f));
	while (fgets(line, sizeof(line), in)) {
		long a, b;
		double u, sy;

		if (sscanf(line, "events: %llu", &f->events) == 1) {
			got |= 16;
		} else if (sscanf(line, "wall time: %lf s", &f->wall) == 1) {
			got |= 1;
		} else if (sscanf(line, "peak RSS: %ld KiB (%ld KiB above", &a, &b) == 2) {
			f->rss_peak = (double)b;
			got |= 2;
		} else if (sscanf(line, "CPU time: %lf s user, %lf s system", &u, &sy) == 2) {
			f->cpu = u + sy;
			got |= 4;
		} else if (sscanf(line, "mean RSS: %lf KiB above", &f->rss_mean) == 1) {
			got |= 8;
		} else if (opt_line && !strncmp(line, "options: ", 9)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(opt_line, len, "%s", line + 9);
		}
	}
	fclose(in);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    got != 31) {
		/* the user's own settings: the child's reason says it all */
		if (opts)
			fprintf(stderr, "%s: a replay (USLAB_OPTIONS='%s') failed:\n", who,
				opts);
		rewind(err);
		while (fgets(line, sizeof(line), err))
			fputs(line, stderr);
		fclose(err);
		return -1;
	}
	if (!quiet)
		forward_once(err);
	/* a setting the library refused would measure the defaults under
	 * another name */
	rewind(err);
	while (quiet && fgets(line, sizeof(line), err))
		if (strstr(line, "ignoring option")) {
			fprintf(stderr, "%s: the library refused part of USLAB_OPTIONS='%s': %s",
				who, opts ? opts : "", line);
			fclose(err);
			return -1;
		}
	fclose(err);
	return 0;
}

/* "median [lo, hi]" of an estimate scaled by @scale, with @prec decimals
 * and @unit after the median ("%" for a change). */
void stat_print(FILE *out, const struct stat_est *e, double scale, int prec,
		const char *unit)
{
	bool pct = !strcmp(unit, "%");

	fprintf(out, pct ? "%+.*f%s [%+.*f, %+.*f]" : "%.*f %s [%.*f, %.*f]", prec,
		e->median * scale, unit, prec, e->lo * scale, prec, e->hi * scale);
}
