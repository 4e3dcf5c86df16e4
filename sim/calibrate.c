// SPDX-License-Identifier: MIT
/*
 * uslab-calibrate: time each path of the real library on this machine and
 * write the tuner's cost model (sim/calibrate_model.c reads it).
 *
 * This is its own program, linked with libuslab-core.a (rseq fast paths),
 * because the uslab binary carries the virtual-CPU build whose fast path is
 * not the one a program gets. `uslab calibrate` runs it.
 *
 * Method: on one thread pinned to its CPU, run workloads on a private
 * 64-byte cache that stress different paths (alloc/free pairs: hits only;
 * bursts of K objects against small and large magazines, with and without
 * a depot), each three times, keeping the fastest. The per-cache counters
 * say how many hits, refills, flushes and depot exchanges each workload
 * made; page-allocator block operations are timed on their own first. A
 * least-squares fit with non-negative coefficients of
 *     time - page_ns * page_ops = hit * H + refill * R + flush * F + depot * D
 * over the workloads gives the cost of each path (refills and flushes with
 * a fixed and a per-object part). USLAB_CALIBRATE_DEBUG=1 prints each row,
 * measured against modelled.
 *
 * Page faults are timed on their own too: the first touch of pages
 * page_alloc hands out fresh (new from the OS, or given back to it by a
 * trim), less a second touch, per page it counted fresh. The tuner charges
 * them per fresh page of a simulation, which is what makes holding more
 * memory cost time.
 *
 * What the model leaves out: the difference between an alloc/free pair on
 * one object (latency-bound) and bursts (throughput-bound), cache misses
 * on cold objects, and contention between threads; the rms error printed
 * says how well the straight lines fit the workloads.
 *
 * No locks of our own: one thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "uslab/page_alloc.h"
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "sim/internal.h"
#include "trace/trace.h"

#define NX	6	/* hit, refill, flush, depot, refill objects, flush objects */
#define NW	8	/* workloads */
#define REPS	3

struct wl {
	const char *what;
	unsigned int limit, batch;
	long depot;		/* -1 unlimited, -2 default */
	unsigned int burst;	/* 0 = alloc/free pairs */
	bool in_mags;		/* burst counted in default magazines */
	uint64_t ops;
	/* measured, per phase: [0] allocations (or pairs), [1] frees */
	double ns[2];
	double x[2][NX];
	double page_ops[2];
};

#define WL(w, l, b, d, n, m, o) \
	{ .what = w, .limit = l, .batch = b, .depot = d, .burst = n, .in_mags = m, .ops = o }

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t page_ops(void)
{
	struct page_alloc_stats ps;
	uint64_t n = 0;
	unsigned int o;

	page_alloc_get_stats(&ps);
	for (o = 0; o < NR_PAGE_ORDERS; o++)
		n += ps.allocs[o] + ps.frees[o];
	return n;
}

/* ns per page_alloc block operation: 512 order-0 blocks out, then back. */
static double time_pages(void)
{
	static struct page *pg[512];
	double best = INFINITY;
	unsigned int r, i, rounds = 200;

	for (r = 0; r < REPS; r++) {
		uint64_t t0 = now_ns();
		unsigned int k;

		for (k = 0; k < rounds; k++) {
			for (i = 0; i < ARRAY_SIZE(pg); i++)
				pg[i] = alloc_pages(GFP_KERNEL, 0);
			for (i = 0; i < ARRAY_SIZE(pg); i++)
				if (pg[i])
					__free_pages(pg[i], 0);
		}
		best = fmin(best, (double)(now_ns() - t0) / (2.0 * rounds * ARRAY_SIZE(pg)));
	}
	return best;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * ns per page fault on memory page_alloc hands out fresh: trim (every free
 * page goes back to the OS), take 256 pages in blocks of 8, write one
 * byte of each page (the first touch faults), write again (no fault), give
 * them back. The first pass less the second, over the pages page_alloc
 * counted as fresh (pages_fresh), is what the cost model charges a fresh
 * page; the median of 15 short rounds (half a millisecond each): the
 * workloads below run long enough to average over a busy machine's moments
 * before the fastest of three is kept, a round here does not, and its
 * fastest would be the machine's quietest moment only.
 */
static double time_faults(void)
{
	static struct page *pg[32];
	double ns[15];
	unsigned int r, i, p, n = 0;

	for (r = 0; r < ARRAY_SIZE(ns); r++) {
		struct page_alloc_stats a, b;
		uint64_t t0, t1, t2;

		page_alloc_trim();
		page_alloc_get_stats(&a);
		for (i = 0; i < ARRAY_SIZE(pg); i++)
			pg[i] = alloc_pages(GFP_KERNEL, 3);
		page_alloc_get_stats(&b);
		t0 = now_ns();
		for (i = 0; i < ARRAY_SIZE(pg); i++)
			for (p = 0; pg[i] && p < 8; p++)
				((volatile char *)page_address(pg[i]))[p * PAGE_SIZE] = 1;
		t1 = now_ns();
		for (i = 0; i < ARRAY_SIZE(pg); i++)
			for (p = 0; pg[i] && p < 8; p++)
				((volatile char *)page_address(pg[i]))[p * PAGE_SIZE] = 2;
		t2 = now_ns();
		for (i = 0; i < ARRAY_SIZE(pg); i++)
			if (pg[i])
				__free_pages(pg[i], 3);
		if (b.pages_fresh > a.pages_fresh && t1 - t0 > t2 - t1)
			ns[n++] = (double)((t1 - t0) - (t2 - t1)) /
				  (double)(b.pages_fresh - a.pages_fresh);
	}
	page_alloc_trim();
	if (!n)
		return 0;
	qsort(ns, n, sizeof(*ns), cmp_double);
	return ns[n / 2];
}

static int run_wl(struct kmem_cache *s, struct wl *w, void **objs)
{
	struct pcp_cache *pc = kmem_cache_pcp(s);
	struct pcp_stats st0, st1;
	double best;
	unsigned int r;
	int err;

	if (!pc)
		return -EOPNOTSUPP;
	kmem_cache_shrink(s);
	err = kmem_cache_set_tunables(s, w->limit, w->batch, 0);
	if (!err)
		err = pcp_cache_set_depot_limit(pc, w->depot == -1 ? PCP_DEPOT_UNLIMITED :
						w->depot == -2 ? pcp_cache_default_depot_limit(pc) :
						(unsigned int)w->depot);
	if (err)
		return err;
	best = INFINITY;
	for (r = 0; r < REPS; r++) {
		double ns[2] = { 0, 0 }, x[2][NX] = { { 0 } }, pg[2] = { 0, 0 };
		uint64_t i, k, rounds = w->burst ? w->ops / (2 * w->burst) : 1;
		int ph;

		for (i = 0; i < rounds; i++) {
			for (ph = 0; ph < 2; ph++) {
				uint64_t p0, t0, t1;
				uint64_t nops = !w->burst ? (ph == 0 ? w->ops / 2 * 2 : 0) :
						w->burst;

				pcp_cache_stats(pc, -1, &st0);
				p0 = page_ops();
				t0 = now_ns();
				if (!w->burst && ph == 0) {
					for (k = 0; k < w->ops / 2; k++) {
						void *p = kmem_cache_alloc(s, GFP_KERNEL);

						kmem_cache_free(s, p);
					}
				} else if (w->burst && ph == 0) {
					for (k = 0; k < w->burst; k++)
						objs[k] = kmem_cache_alloc(s, GFP_KERNEL);
				} else if (w->burst) {
					for (k = 0; k < w->burst; k++)
						kmem_cache_free(s, objs[k]);
				}
				t1 = now_ns();
				pcp_cache_stats(pc, -1, &st1);
				ns[ph] += (double)(t1 - t0);
				pg[ph] += (double)(page_ops() - p0);
#define D(item) ((double)(st1.v[PCP_STAT_##item] - st0.v[PCP_STAT_##item]))
				/*
				 * hits: the operations the phase made, less those
				 * that took a slow path (rseq mode counts no hit by
				 * default: CONFIG_PERCPU_HIT_STATS, docs/percpu.md)
				 */
				x[ph][0] += (double)nops - D(ALLOC_SLOW) - D(FREE_SLOW);
				x[ph][1] += D(REFILL);
				x[ph][2] += D(FLUSH);
				x[ph][3] += D(DEPOT_GET) + D(DEPOT_PUT);
				/* a refill or flush moves a batch (or what is left) */
				x[ph][4] += D(REFILL) * w->batch;
				x[ph][5] += D(FLUSH) * w->batch;
#undef D
			}
		}
		if (ns[0] + ns[1] < best) {
			best = ns[0] + ns[1];
			memcpy(w->ns, ns, sizeof(ns));
			memcpy(w->x, x, sizeof(x));
			memcpy(w->page_ops, pg, sizeof(pg));
		}
	}
	return 0;
}

/* Solve the normal equations A x = b (n x n) by Gaussian elimination. */
static int solve(int n, double a[NX][NX], double *b, double *x)
{
	int i, j, k;

	for (i = 0; i < n; i++) {
		int p = i;

		for (k = i + 1; k < n; k++)
			if (fabs(a[k][i]) > fabs(a[p][i]))
				p = k;
		if (fabs(a[p][i]) < 1e-9)
			return -1;
		if (p != i) {
			double t;

			for (j = 0; j < n; j++) {
				t = a[i][j];
				a[i][j] = a[p][j];
				a[p][j] = t;
			}
			t = b[i];
			b[i] = b[p];
			b[p] = t;
		}
		for (k = i + 1; k < n; k++) {
			double f = a[k][i] / a[i][i];

			for (j = i; j < n; j++)
				a[k][j] -= f * a[i][j];
			b[k] -= f * b[i];
		}
	}
	for (i = n - 1; i >= 0; i--) {
		double v = b[i];

		for (j = i + 1; j < n; j++)
			v -= a[i][j] * x[j];
		x[i] = v / a[i][i];
	}
	return 0;
}

/*
 * Least squares with x >= 0: solve on the free variables, pin the most
 * negative one to zero, repeat. Rows are weighted by 1/y so that every
 * workload counts alike whatever its length.
 */
static int fit(const double (*rows)[NX], int nw, const double *y, double *x)
{
	bool fixed[NX] = { false };
	int iter, i, j, k;

	for (iter = 0; iter < NX; iter++) {
		double a[NX][NX] = { { 0 } }, b[NX] = { 0 }, xs[NX] = { 0 };
		int idx[NX], n = 0, worst = -1;

		for (i = 0; i < NX; i++)
			if (!fixed[i])
				idx[n++] = i;
		for (k = 0; k < nw; k++) {
			double wt = y[k] > 0 ? 1.0 / y[k] : 1.0;

			for (i = 0; i < n; i++) {
				for (j = 0; j < n; j++)
					a[i][j] += wt * wt * rows[k][idx[i]] * rows[k][idx[j]];
				b[i] += wt * wt * rows[k][idx[i]] * y[k];
			}
		}
		if (solve(n, a, b, xs))
			return -1;
		for (i = 0; i < NX; i++)
			x[i] = 0;
		for (i = 0; i < n; i++) {
			x[idx[i]] = xs[i];
			if (xs[i] < 0 && (worst < 0 || xs[i] < x[worst]))
				worst = idx[i];
		}
		if (worst < 0)
			return 0;
		fixed[worst] = true;
		x[worst] = 0;
	}
	return 0;
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			c += 2;
			c[strcspn(c, "\n")] = '\0';
			snprintf(buf, len, "%s", c);
			break;
		}
	}
	fclose(f);
}

static int mkdirs(const char *path)
{
	char tmp[4096], *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	p = strrchr(tmp, '/');
	if (!p)
		return 0;
	*p = '\0';
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* The measured rows the fit runs on: per workload half, its counts and time. */
struct fit_rows {
	double y[2 * NW], x[2 * NW][NX], pages[2 * NW];
	int n;
};

/* -o FILE or the default place. Return: 0, 2 (usage, said), or -1 for --help. */
static int parse_args(int argc, char **argv, char *path, size_t len, const char **out)
{
	*out = NULL;
	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "-o") && k + 1 < argc) {
			*out = argv[++k];
			continue;
		}
		bool help = !strcmp(argv[k], "-h") || !strcmp(argv[k], "--help");

		/* the CLI conventions: help on stdout (0), a bad argument
		 * named on stderr with the usage (2) */
		if (!help)
			fprintf(stderr, "uslab calibrate: %s '%s'\n",
				!strcmp(argv[k], "-o") ? "option needs a value:" :
				"unknown option", argv[k]);
		fprintf(help ? stdout : stderr, "usage: uslab calibrate [-o FILE]\n"
			"  times each allocator path here and writes the cost model to FILE\n"
			"  (default $USLAB_CALIBRATION or ~/.cache/uslab/calibration; - for\n"
			"  standard output, the measurements then on standard error)\n");
		return help ? -1 : 2;
	}
	if (!*out) {
		if (sim_calibration_path(path, len)) {
			fprintf(stderr, "uslab calibrate: no HOME and no USLAB_CALIBRATION: use -o FILE\n");
			return 2;
		}
		*out = path;
	}
	return 0;
}

/* Run every workload; its halves with counts become rows. Return: 0 or -errno. */
static int run_all(struct kmem_cache *s, struct wl *wls, void **objs, double page_ns,
		   struct fit_rows *fr)
{
	unsigned int defl = pcp_default_limit(64);

	for (unsigned int i = 0; i < NW; i++) {
		struct wl *w = &wls[i];
		int err;

		if (!w->limit) {
			w->limit = defl;
			w->batch = pcp_default_batchcount(defl);
		}
		if (w->in_mags)
			w->burst *= w->limit;
		if (w->burst > 4096 * 64)
			w->burst = 4096 * 64;
		err = run_wl(s, w, objs);
		if (err) {
			fprintf(stderr, "uslab calibrate: %s: %s\n", w->what, strerror(-err));
			return err;
		}
		for (int k = 0; k < 2; k++) {
			if (!w->ns[k] || !(w->x[k][0] + w->x[k][1] + w->x[k][2] + w->x[k][3]))
				continue;	/* the empty second half of the pairs */
			fr->pages[fr->n] = w->page_ops[k];
			fr->y[fr->n] = w->ns[k] - page_ns * w->page_ops[k];
			memcpy(fr->x[fr->n], w->x[k], sizeof(fr->x[0]));
			fr->n++;
		}
		printf("  %-52s %8.2f ns per op (hits %.0f, refills %.0f, flushes %.0f, depot %.0f)\n",
		       w->what, (w->ns[0] + w->ns[1]) / (double)w->ops,
		       w->x[0][0] + w->x[1][0], w->x[0][1] + w->x[1][1],
		       w->x[0][2] + w->x[1][2], w->x[0][3] + w->x[1][3]);
	}
	return 0;
}

/* Root mean square of the fit's relative error over the rows. */
static double fit_error(const struct fit_rows *fr, const double *x)
{
	double resid = 0;

	for (int i = 0; i < fr->n; i++) {
		double pred = 0, d;

		for (int k = 0; k < NX; k++)
			pred += x[k] * fr->x[i][k];
		d = fr->y[i] > 0 ? (pred - fr->y[i]) / fr->y[i] : 0;
		resid += d * d;
		if (getenv("USLAB_CALIBRATE_DEBUG"))
			fprintf(stderr, "row %d: measured %.0f ns, model %.0f ns, page ops %.0f, "
				"hits %.0f refills %.0f flushes %.0f depot %.0f\n",
				i, fr->y[i], pred, fr->pages[i], fr->x[i][0], fr->x[i][1],
				fr->x[i][2], fr->x[i][3]);
	}
	return fr->n ? sqrt(resid / fr->n) : 0;
}

/*
 * FILE is written as every other -o of the CLI writes (trace/outfile.c,
 * docs/sim.md "Output files"): a regular file or a new name through a
 * fresh temporary beside it, renamed over it at the end (a symlink
 * followed, its target replaced); a device, FIFO or socket in place
 * (renaming over /dev/null would replace the device node); a folder
 * refused. The folders of the default path are made (@make_dirs), a FILE
 * named by -o only where it is. Opened before anything is timed, so that
 * a FILE that cannot be written is said at once, not after the run.
 * Return: the stream (model_out holds the file), or NULL after saying why.
 */
static struct out_file model_out = { .fd = -1, .tmp_slot = -1 };

static FILE *open_model(const char *out, bool make_dirs)
{
	char err[PATH_MAX + 128];
	FILE *f;

	if (make_dirs && mkdirs(out)) {
		fprintf(stderr, "uslab calibrate: cannot create the folder of %s: %s\n", out,
			strerror(errno));
		return NULL;
	}
	if (out_open(&model_out, out, err, sizeof(err))) {
		fprintf(stderr, "uslab calibrate: -o %s: %s\n", out, err);
		return NULL;
	}
	f = fdopen(dup(model_out.fd), "w");
	if (!f) {
		fprintf(stderr, "uslab calibrate: %s: %s\n", out, strerror(errno));
		out_abort(&model_out);
	}
	return f;
}

/*
 * -o -: the model alone on standard output (the descriptor it had, in a
 * stream of its own), everything else on stderr, which takes over
 * descriptor 1 (it wrote a file named "-"); model_out stays closed.
 * Return: the stream, or NULL after saying why.
 */
static FILE *open_model_stdout(void)
{
	int fd;
	FILE *f;

	fflush(stdout);
	fd = dup(STDOUT_FILENO);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		fprintf(stderr, "uslab calibrate: standard output: %s\n", strerror(errno));
		if (f)
			fclose(f);
		else if (fd >= 0)
			close(fd);
		return NULL;
	}
	return f;
}

/* Write the model into @f (from open_model(), or standard output's with
 * -o -, model_out closed then) and commit model_out: renamed over @out,
 * or written in place. Return: 0, or 1 after saying why. */
static int write_model(FILE *f, const char *out, const char *model,
		       const double *x, double page_ns, double fault_ns, double resid)
{
	bool to_stdout = model_out.fd < 0;
	char err[PATH_MAX + 128];
	int e;

	if (to_stdout)
		fflush(stdout);	/* the measurements, on stderr, before the model */
	fprintf(f, "# uslab cost model, written by `uslab calibrate` at %ld (Unix time)\n"
		"# %s, mode %s, fit rms error %.1f%%\n"
		"hit_ns=%.3f\nrefill_ns=%.3f\nflush_ns=%.3f\nrefill_obj_ns=%.3f\n"
		"flush_obj_ns=%.3f\ndepot_ns=%.3f\npage_ns=%.3f\nfault_ns=%.3f\n",
		(long)time(NULL), model, pcp_mode(), 100 * resid, x[0], x[1], x[2], x[4], x[5],
		x[3], page_ns, fault_ns);
	errno = 0;
	e = fflush(f) || ferror(f) ? (errno ? errno : EIO) : 0;
	if (fclose(f) && !e)
		e = errno ? errno : EIO;
	if (e) {
		fprintf(stderr, "uslab calibrate: %s: %s\n", to_stdout ? "standard output" : out,
			strerror(e));
		if (!to_stdout)
			out_abort(&model_out);
		return 1;
	}
	if (to_stdout)
		return 0;
	if (out_commit(&model_out, err, sizeof(err))) {
		fprintf(stderr, "uslab calibrate: %s\n", err);
		return 1;
	}
	printf("wrote %s (used where named: uslab tune --calibration %s)\n", out, out);
	return 0;
}

/* A failed run leaves no temporary behind. */
static int drop_model(FILE *f)
{
	fclose(f);
	if (model_out.fd >= 0)
		out_abort(&model_out);
	return 1;
}

int main(int argc, char **argv)
{
	static struct wl wls[NW] = {
		WL("alloc/free pairs, default magazines", 0, 0, -2, 0, false, 2000000),
		WL("bursts of 4 magazines", 0, 0, -2, 4, true, 1000000),
		WL("bursts of 32 magazines", 0, 0, -2, 32, true, 1000000),
		WL("bursts of 64, magazines of 4", 4, 2, -2, 64, false, 400000),
		WL("bursts of 64, magazines of 4, no depot", 4, 2, 0, 64, false, 400000),
		WL("bursts of 256, magazines of 16, no depot", 16, 8, 0, 256, false, 400000),
		WL("bursts of 1024, magazines of 64, unlimited depot", 64, 32, -1, 1024, false, 1000000),
		WL("bursts of 2048, magazines of 8, batch 1", 8, 1, 0, 2048, false, 400000),
	};
	static struct fit_rows fr;
	const char *out;
	char path[4096], model[256];
	FILE *mf;
	double x[NX], page_ns, fault_ns, resid;
	struct kmem_cache *s;
	void **objs;
	cpu_set_t set;
	int cpu, rc;

	rc = parse_args(argc, argv, path, sizeof(path), &out);
	if (rc)
		return rc < 0 ? 0 : rc;
	mf = strcmp(out, "-") ? open_model(out, out == path) : open_model_stdout();
	if (!mf)
		return 1;
	cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);	/* best effort: fewer aborts */

	s = kmem_cache_create("calibrate-64", 64, 0, 0, NULL);
	objs = calloc(4096 * 64, sizeof(void *));
	if (!s || !objs) {
		fprintf(stderr, "uslab calibrate: cannot create the test cache\n");
		return drop_model(mf);
	}
	if (!kmem_cache_pcp(s)) {
		fprintf(stderr, "uslab calibrate: this build has no per-CPU magazines "
			"(mode %s): nothing to calibrate\n", pcp_mode());
		return drop_model(mf);
	}
	printf("uslab calibrate: mode %s, CPU %d, %s\n", pcp_mode(), cpu,
	       (cpu_model(model, sizeof(model)), model));
	page_ns = time_pages();
	printf("  %-52s %8.1f ns per block op\n", "page_alloc order-0 blocks, 512 out and back", page_ns);
	fault_ns = time_faults();
	if (!fault_ns) {
		fprintf(stderr, "uslab calibrate: page_alloc counted no fresh pages "
			"(statistics compiled out?)\n");
		return drop_model(mf);
	}
	printf("  %-52s %8.1f ns per page\n", "first touch of pages handed out fresh (faults)",
	       fault_ns);
	if (run_all(s, wls, objs, page_ns, &fr))
		return drop_model(mf);
	if (fit(fr.x, fr.n, fr.y, x)) {
		fprintf(stderr, "uslab calibrate: the workloads did not separate the paths "
			"(singular fit); counters off?\n");
		return drop_model(mf);
	}
	resid = fit_error(&fr, x);
	printf("fit: hit %.2f ns, refill %.1f + %.2f ns/object, flush %.1f + %.2f ns/object, "
	       "depot %.1f ns, page %.1f ns, fault %.0f ns (rms error %.1f%%)\n",
	       x[0], x[1], x[4], x[2], x[5], x[3], page_ns, fault_ns, 100 * resid);
	return write_model(mf, out, model, x, page_ns, fault_ns, resid);
}
