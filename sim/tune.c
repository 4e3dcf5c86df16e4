// SPDX-License-Identifier: MIT
/*
 * The tuner's engine: sweep magazine sizes per kmalloc class and depot
 * limits over a trace and find the frontier of memory overhead against
 * modelled allocator time. `uslab tune` (tools/uslab/builtin-tune.c) parses
 * the options, prints the result and draws it.
 *
 * Every configuration is one simulation in a child forked from a parent
 * that has decoded the trace but never touched the allocator, so each run
 * starts from a pristine library and the trace is shared copy-on-write.
 * Up to tu->workers children run at once; each sends one fixed-size record
 * back through its pipe (well under the pipe's buffer, so it never blocks).
 *
 * The sweep has two rounds:
 *  1. tune_grid(): every magazine size M for every class, times every depot
 *     limit D, and the library's defaults;
 *  2. tune_compose(): per-class settings composed from round 1 (for each D
 *     and each price lambda of a byte in nanoseconds, every class takes the
 *     magazine size minimizing its own time + lambda * its own mean
 *     overhead), each then simulated for real: the frontier is made of
 *     measured points only.
 * tune_frontier() then marks the frontier and the recommended point.
 *
 * No locks: the parent is one thread; children are processes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "sim/internal.h"

struct tune_worker {
	pid_t pid;
	int fd;
	size_t job;
};

static void tune_progress(struct tune *tu)
{
	if (tu->progress && tu->total)
		tu->progress(tu);
}

/* What one run counted, as the parent needs it. */
static void tune_fill_out(struct tune *tu, const struct sim_result *res,
			  struct tune_out *out)
{
	uint64_t hits = 0, ops = 0;

	out->ok = 1;
	out->nr_cls = res->nr_cls;
	out->cost_ns = sim_cost(&tu->model, res);
	out->ovh_mean = sim_mean_overhead(res);
	out->ovh_peak = res->ovh_peak;
	out->held_peak = res->held_peak;
	out->res_mean = sim_mean_resident(res);
	out->res_peak = res->res_peak;
	out->faults = res->faults;
	out->page_ops = res->page_allocs + res->page_frees;
	for (unsigned int c = 0; c < res->nr_cls; c++) {
		const struct sim_class_result *cr = &res->cls[c];

		out->cls_cost[c] = sim_class_cost(&tu->model, &cr->c);
		out->cls_ovh[c] = res->nr_cls_samples ?
			(double)cr->ovh_sum / (double)res->nr_cls_samples : 0;
		out->cls_ops[c] = cr->c.allocs + cr->c.frees;
		snprintf(out->cls_name[c], sizeof(out->cls_name[c]), "%s", cr->name);
		hits += cr->c.alloc_hits + cr->c.free_hits;
		ops += out->cls_ops[c];
	}
	out->hit_rate = ops ? (double)hits / (double)ops : 0;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22	/* Linux 5.14 */
#define MADV_POPULATE_WRITE 23
#endif

/*
 * A forked child shares the parent's writable pages copy-on-write and has
 * no page-table entries for its file-backed ones: the first write to a
 * global of the library (kmalloc_miss's, the RCU pointers) then faults
 * inside a timed segment, where `uslab sim` in one process does not (113
 * faults against sim's 110 on a two-thread prodcons). Each writable
 * mapping of the program's files, and the .bss that follows each, gets
 * its own copy here, and its read-only file pages are mapped, before
 * anything is timed (the clock's page: sim_segment_begin, for both). The parent's heap (the decoded
 * trace, only read) stays shared. Best effort: an older kernel
 * without MADV_POPULATE_WRITE counts as before. uslab sim does the same
 * before its run (builtin-sim.c): without it, the defaults' run wrote a
 * page of the program's .bss first inside its run and sim counted one
 * fault and one resident page more than tune for the same setting.
 */
void sim_own_program_pages(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	bool after_data = false;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, inode;
		char perm[8];

		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu", &lo, &hi, perm, &inode) != 4) {
			after_data = false;
			continue;
		}
		if (perm[0] == 'r' && perm[1] == 'w' && (inode || (after_data && !strchr(line, '['))))
			madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
		else if (perm[0] == 'r' && inode)
			madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
		after_data = inode && perm[1] == 'w';
	}
	fclose(f);
}

/* Child: one simulation, one record on @fd. */
static __attribute__((noreturn)) void tune_child(struct tune *tu, struct tune_job *job, int fd)
{
	struct tune_out out = { 0 };
	struct sim_trace tr;
	struct sim_config cfg;
	struct sim_result *res = calloc(1, sizeof(*res));
	unsigned int c;
	ssize_t w;

	sim_own_program_pages();
	sim_config_init(&cfg);
	cfg.cpus = tu->t->cpus;
	cfg.depot_limit = job->depot;
	cfg.batch = tu->batch;
	cfg.sample_every = tu->t->n >= 200 ? tu->t->n / 200 : 1;
	/* fixed sizes stay fixed whatever Kconfig says; the defaults are Kconfig's */
	cfg.adapt = job->adapt ? 1 : job->defaults ? -1 : 0;
	cfg.adapt_max = job->adapt_max;
	cfg.adapt_budget_kb = job->adapt_budget_kb;
	if (job->adapt) {
		cfg.mag_size = -1;
	} else if (job->uniform) {
		cfg.mag_size = job->mag[0];
	} else {
		for (c = 0; c < SIM_MAX_CLASSES && job->mag[c] > 0; c++) {
			snprintf(cfg.class_mag[c].name, sizeof(cfg.class_mag[c].name), "%s",
				 job->out.cls_name[c]);
			cfg.class_mag[c].mag = job->mag[c];
		}
		cfg.nr_class_mag = c;
	}
	tr = *tu->t;	/* in memory: sim_run only reads it */
	if (!res) {
		snprintf(out.err, sizeof(out.err), "out of memory");
	} else {
		int rc = sim_run(&tr, &cfg, res);

		if (!rc)
			tune_fill_out(tu, res, &out);
		else
			snprintf(out.err, sizeof(out.err), "%.250s",
				 res->err[0] ? res->err : strerror(-rc));
	}
	w = write(fd, &out, sizeof(out));
	_exit(w == (ssize_t)sizeof(out) && out.ok ? 0 : 1);
}

/* Start job @job in a child on the free slot @wk. Return: 0 or -errno. */
static int tune_start(struct tune *tu, struct tune_worker *wk, size_t job)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(p[0]);
		close(p[1]);
		return err;
	}
	if (!pid) {
		close(p[0]);
		tune_child(tu, &tu->jobs[job], p[1]);
	}
	close(p[1]);
	wk->pid = pid;
	wk->fd = p[0];
	wk->job = job;
	return 0;
}

/*
 * Wait for one child of @run and take its record. Return: 1 when one of
 * ours finished (its slot freed), 0 for another child, -errno when wait
 * fails, -EIO (after 1) when the simulation failed.
 */
static int tune_reap(struct tune *tu, struct tune_worker *run, int *err)
{
	struct tune_out *out;
	int status;
	pid_t pid = wait(&status);
	unsigned int i;
	ssize_t r;

	if (pid < 0)
		return -errno;
	for (i = 0; i < tu->workers && run[i].pid != pid; i++)
		;
	if (i == tu->workers)
		return 0;	/* not ours */
	out = &tu->jobs[run[i].job].out;
	r = read(run[i].fd, out, sizeof(*out));
	if (r != (ssize_t)sizeof(*out) || !WIFEXITED(status) || WEXITSTATUS(status)) {
		out->ok = 0;
		if (!*err)
			snprintf(tu->err, sizeof(tu->err), "a simulation failed (%s)",
				 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) :
				 r == (ssize_t)sizeof(*out) && out->err[0] ? out->err :
				 "no result");
		*err = -EIO;
	}
	close(run[i].fd);
	run[i].pid = 0;
	tu->done++;
	tune_progress(tu);
	return 1;
}

/* Run jobs [from, to) on up to tu->workers children at once. */
static int tune_run(struct tune *tu, size_t from, size_t to)
{
	struct tune_worker *run = calloc(tu->workers, sizeof(*run));
	size_t next = from, running = 0;
	int err = 0, rc;
	bool stop = false;
	unsigned int i;

	if (!run)
		return -ENOMEM;
	for (;;) {
		while (next < to && !stop && running < tu->workers) {
			for (i = 0; run[i].pid; i++)
				;
			rc = tune_start(tu, &run[i], next++);
			if (rc) {
				snprintf(tu->err, sizeof(tu->err), "%s", strerror(-rc));
				err = rc;
				stop = true;
			} else {
				running++;
			}
		}
		if (!running)
			break;
		rc = tune_reap(tu, run, &err);
		if (rc < 0) {
			snprintf(tu->err, sizeof(tu->err), "wait: %s", strerror(-rc));
			err = rc;
			break;
		}
		running -= (size_t)rc;
	}
	free(run);
	return err;
}

struct tune_job *tune_add(struct tune *tu)
{
	if (tu->nr_jobs == tu->cap_jobs) {
		size_t cap = tu->cap_jobs ? 2 * tu->cap_jobs : 64;
		struct tune_job *n = realloc(tu->jobs, cap * sizeof(*n));

		if (!n)
			return NULL;
		tu->jobs = n;
		tu->cap_jobs = cap;
	}
	memset(&tu->jobs[tu->nr_jobs], 0, sizeof(tu->jobs[0]));
	return &tu->jobs[tu->nr_jobs++];
}

/* A new uniform job: depot limit @depot, magazine size @mag for every
 * class (-1: the library's). NULL: out of memory. */
static struct tune_job *tune_add_uniform(struct tune *tu, long depot, int mag)
{
	struct tune_job *jb = tune_add(tu);

	if (!jb)
		return NULL;
	jb->depot = depot;
	jb->uniform = true;
	for (unsigned int c = 0; c < SIM_MAX_CLASSES; c++)
		jb->mag[c] = mag;
	return jb;
}

double tune_job_ovh(const struct tune *tu, const struct tune_job *j)
{
	return tu->peak ? (double)j->out.res_peak : j->out.res_mean;
}

int tune_grid(struct tune *tu, const struct tune_space *sp)
{
	struct tune_job *jb;

	for (unsigned int a = 0; a < sp->nd; a++)
		for (unsigned int b = 0; b < sp->nm; b++) {
			if (!tune_add_uniform(tu, sp->depots[a], (int)sp->mags[b]))
				return -ENOMEM;
		}
	/*
	 * Adaptive magazines (after the uniform grid: round 2 indexes it as
	 * depot x mag): the default bounds, then every pair of the bounds
	 * asked for, each with the default depot limit.
	 */
	for (unsigned int a = 0; !sp->no_adapt && a <= sp->nam; a++)
		for (unsigned int b = 0; b <= sp->nab; b++) {
			/* (0, 0): the default bounds; then the pairs asked for */
			if ((a == 0 || b == 0) && (a || b) && sp->nam && sp->nab)
				continue;
			if (a && !b && sp->nab)
				continue;
			jb = tune_add_uniform(tu, SIM_DEFAULT, -1);
			if (!jb)
				return -ENOMEM;
			jb->adapt = true;
			jb->adapt_max = a ? sp->amaxs[a - 1] : 0;
			jb->adapt_budget_kb = b ? sp->abudgets[b - 1] : 0;
		}
	tu->grid = tu->nr_jobs;
	/* The library's own defaults, for comparison (not part of the grid). */
	jb = tune_add_uniform(tu, SIM_DEFAULT, -1);
	if (!jb)
		return -ENOMEM;
	jb->defaults = true;
	tu->total = tu->grid + 1;
	if (sp->compose)
		tu->total += (size_t)sp->nd * TUNE_LAMBDAS;
	return tune_run(tu, 0, tu->grid + 1);
}

/* Each class takes the size of round 1 (depot limit @a) that minimizes its
 * time + @lambda * its mean overhead. */
static void tune_pick(const struct tune *tu, const struct tune_space *sp,
		      unsigned int a, double lambda, struct tune_job *cand)
{
	for (unsigned int c = 0; c < cand->out.nr_cls; c++) {
		double bestc = INFINITY;

		for (unsigned int b = 0; b < sp->nm; b++) {
			const struct tune_out *o = &tu->jobs[a * sp->nm + b].out;
			double v = o->cls_cost[c] + lambda * o->cls_ovh[c];

			if (o->ok && v < bestc) {
				bestc = v;
				cand->mag[c] = (int)sp->mags[b];
			}
		}
	}
}

static bool tune_have(const struct tune *tu, const struct tune_job *cand)
{
	for (size_t i = 0; i < tu->nr_jobs; i++) {
		const struct tune_job *x = &tu->jobs[i];
		bool dup = x->depot == cand->depot;

		for (unsigned int c = 0; c < cand->out.nr_cls && dup; c++)
			dup = x->mag[c] == cand->mag[c];
		if (dup)
			return true;
	}
	return false;
}

int tune_compose(struct tune *tu, const struct tune_space *sp)
{
	double cmin = INFINITY, cmax = -INFINITY, omin = INFINITY, omax = -INFINITY;
	/* an index, not a pointer: tune_add() below may move tu->jobs */
	size_t i, i0 = SIZE_MAX, grid = tu->grid;

	for (i = 0; i < grid; i++) {
		const struct tune_out *o = &tu->jobs[i].out;

		if (!o->ok)
			continue;
		i0 = i0 == SIZE_MAX ? i : i0;
		cmin = fmin(cmin, o->cost_ns);
		cmax = fmax(cmax, o->cost_ns);
		omin = fmin(omin, o->res_mean);
		omax = fmax(omax, o->res_mean);
	}
	if (i0 == SIZE_MAX)
		return -ENOENT;
	for (unsigned int a = 0; a < sp->nd; a++) {
		for (unsigned int k = 0; k < TUNE_LAMBDAS; k++) {
			double lambda = (cmax - cmin > 0 ? cmax - cmin : 1) /
					(omax - omin > 0 ? omax - omin : 1) *
					pow(10, ((double)k - TUNE_LAMBDAS / 2) / 2.0);
			struct tune_job cand = { .depot = sp->depots[a] }, *jb;

			const struct tune_out *o0 = &tu->jobs[i0].out;

			memcpy(cand.out.cls_name, o0->cls_name, sizeof(cand.out.cls_name));
			cand.out.nr_cls = o0->nr_cls;
			tune_pick(tu, sp, a, lambda, &cand);
			if (tune_have(tu, &cand)) {
				tu->total--;
				continue;
			}
			jb = tune_add(tu);
			if (!jb)
				return -ENOMEM;
			*jb = cand;
		}
	}
	tune_progress(tu);
	/* round 1 ran [0, grid]: the defaults job at index grid too */
	return tu->nr_jobs > grid + 1 ? tune_run(tu, grid + 1, tu->nr_jobs) : 0;
}

/* Is @x on the frontier: no other point at most as costly and as large? */
static bool tune_dominated(const struct tune *tu, size_t i)
{
	const struct tune_job *x = &tu->jobs[i];

	for (size_t j = 0; j < tu->nr_jobs; j++) {
		const struct tune_job *y = &tu->jobs[j];

		if (j == i || !y->out.ok)
			continue;
		if (y->out.cost_ns <= x->out.cost_ns &&
		    tune_job_ovh(tu, y) <= tune_job_ovh(tu, x) &&
		    (y->out.cost_ns < x->out.cost_ns ||
		     tune_job_ovh(tu, y) < tune_job_ovh(tu, x) || j < i))
			return true;
	}
	return false;
}

int tune_frontier(struct tune *tu)
{
	double cmin = INFINITY, cmax = -INFINITY, omin = INFINITY, omax = -INFINITY;
	double best = INFINITY;
	size_t i;

	tu->rec = SIZE_MAX;
	for (i = 0; i < tu->nr_jobs; i++) {
		struct tune_job *x = &tu->jobs[i];

		x->frontier = x->out.ok && !tune_dominated(tu, i);
		if (!x->frontier)
			continue;
		cmin = fmin(cmin, x->out.cost_ns);
		cmax = fmax(cmax, x->out.cost_ns);
		omin = fmin(omin, tune_job_ovh(tu, x));
		omax = fmax(omax, tune_job_ovh(tu, x));
	}
	/* Recommended: the frontier point nearest the ideal corner, both axes
	 * scaled to the frontier's own range. */
	for (i = 0; i < tu->nr_jobs; i++) {
		const struct tune_job *x = &tu->jobs[i];
		double dc, dov, d;

		if (!x->frontier)
			continue;
		dc = cmax > cmin ? (x->out.cost_ns - cmin) / (cmax - cmin) : 0;
		dov = omax > omin ? (tune_job_ovh(tu, x) - omin) / (omax - omin) : 0;
		d = dc * dc + dov * dov;
		if (d < best) {
			best = d;
			tu->rec = i;
		}
	}
	if (tu->rec == SIZE_MAX)
		return -ENOENT;
	tu->jobs[tu->rec].recommended = true;
	return 0;
}

/* Is job @i already among @out's first @n? */
static bool tune_listed(const size_t *out, unsigned int n, size_t i)
{
	for (unsigned int k = 0; k < n; k++)
		if (out[k] == i)
			return true;
	return false;
}

/** tune_rank_cmp - qsort order of struct tune_rank: by key, ties by key2, then job. */
int tune_rank_cmp(const void *a, const void *b)
{
	const struct tune_rank *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->key2 != y->key2)
		return x->key2 < y->key2 ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

/*
 * Rank the jobs by @key_time (modelled time) or by memory, keeping those
 * within @slack of the defaults on the other axis. Return: how many.
 */
static size_t tune_rank_by(const struct tune *tu, bool by_time, double slack,
			   struct tune_rank *r)
{
	const struct tune_job *d = &tu->jobs[tu->grid];
	size_t n = 0;

	for (size_t i = 0; i < tu->nr_jobs; i++) {
		const struct tune_job *j = &tu->jobs[i];

		if (!j->out.ok || j->defaults)
			continue;
		if (by_time ? tune_job_ovh(tu, j) > tune_job_ovh(tu, d) * (1 + slack) :
			      j->out.cost_ns > d->out.cost_ns * (1 + slack))
			continue;
		/* Memory in whole pages: the model's resident memory moves by
		 * less than a page between settings that hold the same pages,
		 * and such a tie goes to the faster (was: to the lower mean). */
		r[n].key = by_time ? j->out.cost_ns : round(tune_job_ovh(tu, j) / 4096.0);
		r[n].key2 = by_time ? tune_job_ovh(tu, j) : j->out.cost_ns;
		r[n++].job = i;
	}
	qsort(r, n, sizeof(*r), tune_rank_cmp);
	return n;
}

/*
 * The model narrows, real runs decide: time takes the fastest modelled
 * configurations that hold no more than 3% more memory than the defaults;
 * memory the smallest that take no more than 3% more modelled time;
 * balanced alternates the two lists. The frontier's knee fills what is
 * left, then the fastest and the smallest whatever their other axis.
 */
unsigned int tune_candidates(const struct tune *tu, enum tune_goal goal, unsigned int k,
			     size_t *out)
{
	struct tune_rank *rt = calloc(tu->nr_jobs + 1, sizeof(*rt));
	struct tune_rank *rm = calloc(tu->nr_jobs + 1, sizeof(*rm));
	size_t nt, nm, it = 0, im = 0;
	unsigned int n = 0;

	if (!rt || !rm || !tu->nr_jobs || tu->grid >= tu->nr_jobs ||
	    !tu->jobs[tu->grid].out.ok) {
		free(rt);
		free(rm);
		return 0;
	}
	k = k > TUNE_MAX_CANDIDATES ? TUNE_MAX_CANDIDATES : k;
	nt = tune_rank_by(tu, true, 0.03, rt);
	nm = tune_rank_by(tu, false, 0.03, rm);
	while (n < k && (it < nt || im < nm)) {
		bool take_time = goal == TUNE_TIME ? true : goal == TUNE_MEMORY ? false :
				 n % 2 == 1;

		if (take_time && it >= nt)
			take_time = false;
		if (!take_time && im >= nm)
			take_time = true;
		if (take_time ? it >= nt : im >= nm)
			break;
		if (take_time) {
			if (!tune_listed(out, n, rt[it].job))
				out[n++] = rt[it].job;
			it++;
		} else {
			if (!tune_listed(out, n, rm[im].job))
				out[n++] = rm[im].job;
			im++;
		}
		if (goal != TUNE_BALANCED && (goal == TUNE_TIME ? it >= nt : im >= nm))
			break;
	}
	if (n < k && tu->rec != SIZE_MAX && !tu->jobs[tu->rec].defaults &&
	    !tune_listed(out, n, tu->rec))
		out[n++] = tu->rec;
	/* nothing within the slack: the best of the goal's axis alone */
	nt = tune_rank_by(tu, true, INFINITY, rt);
	nm = tune_rank_by(tu, false, INFINITY, rm);
	for (it = 0, im = 0; n < k && (it < nt || im < nm);) {
		bool take_time = goal == TUNE_TIME || (goal == TUNE_BALANCED && it <= im);
		size_t j;

		if (take_time ? it >= nt : im >= nm)
			take_time = !take_time;
		if (take_time ? it >= nt : im >= nm)
			break;
		j = take_time ? rt[it++].job : rm[im++].job;
		if (!tune_listed(out, n, j))
			out[n++] = j;
	}
	free(rt);
	free(rm);
	return n;
}

void tune_free(struct tune *tu)
{
	free(tu->jobs);
	tu->jobs = NULL;
	tu->nr_jobs = tu->cap_jobs = 0;
}
