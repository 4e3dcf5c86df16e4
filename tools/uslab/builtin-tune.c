// SPDX-License-Identifier: MIT
/*
 * uslab tune: sweep magazine sizes per kmalloc class and depot limits over a
 * trace, find the frontier of memory overhead against modelled allocator
 * time, draw it, and print the recommended settings in the two forms the
 * library reads (USLAB_OPTIONS and a Kconfig fragment).
 *
 * Every configuration is one simulation in a child forked from a parent
 * that has decoded the trace but never touched the allocator, so each run
 * starts from a pristine library and the trace is shared copy-on-write.
 * Up to -j children run at once; each sends one fixed-size record back
 * through its pipe (well under the pipe's buffer, so it never blocks).
 *
 * The sweep has two rounds:
 *  1. the grid of uniform settings: every magazine size M for every class,
 *     times every depot limit D;
 *  2. per-class settings composed from round 1 (for each D and each price
 *     lambda of a byte in nanoseconds, every class takes the magazine size
 *     minimizing its own time + lambda * its own mean overhead), each then
 *     simulated for real: the frontier is made of measured points only.
 *
 * No locks: the parent is one thread; children are processes.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "tools/uslab/builtin.h"

#define TUNE_MAX_VALUES	16
#define TUNE_LAMBDAS	13

struct tune_out {
	int ok;
	unsigned int nr_cls;
	double cost_ns;
	double ovh_mean;
	int64_t ovh_peak;
	uint64_t held_peak;
	uint64_t page_ops;
	double hit_rate;
	double cls_cost[SIM_MAX_CLASSES];
	double cls_ovh[SIM_MAX_CLASSES];	/* mean over samples */
	uint64_t cls_ops[SIM_MAX_CLASSES];
	char cls_name[SIM_MAX_CLASSES][24];
};

struct tune_job {
	long depot;
	int mag[SIM_MAX_CLASSES];	/* per class; uniform jobs repeat one value */
	bool uniform;
	bool defaults;			/* the library's defaults: mag -1, depot default */
	struct tune_out out;
	bool frontier, recommended;
};

struct tune {
	const struct sim_trace *t;
	struct sim_cost_model model;
	struct tune_job *jobs;
	size_t nr_jobs, cap_jobs;
	unsigned int workers;
	bool peak;			/* frontier on peak, not mean, overhead */
	bool progress;
	bool all_rows;
	size_t done, total;
	int batch;
};

static void tune_progress(struct tune *tu)
{
	unsigned int w = 40, fill;

	if (!tu->progress || !tu->total)
		return;
	fill = (unsigned int)(tu->done * w / tu->total);
	fprintf(stderr, "\r  [%.*s%*s] %zu/%zu configurations", (int)fill,
		"########################################", (int)(w - fill), "",
		tu->done, tu->total);
	if (tu->done == tu->total)
		fputc('\n', stderr);
	fflush(stderr);
}

/* Child: one simulation, one record on @fd. */
static __attribute__((noreturn)) void tune_child(struct tune *tu, struct tune_job *job, int fd)
{
	struct tune_out out = { 0 };
	struct sim_trace tr;
	struct sim_config cfg;
	struct sim_result *res = calloc(1, sizeof(*res));
	uint64_t hits = 0, ops = 0;
	unsigned int c;
	ssize_t w;

	sim_config_init(&cfg);
	cfg.cpus = tu->t->cpus;
	cfg.depot_limit = job->depot;
	cfg.batch = tu->batch;
	cfg.sample_every = tu->t->n >= 200 ? tu->t->n / 200 : 1;
	if (job->uniform) {
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
	if (res && !sim_run(&tr, &cfg, res)) {
		out.ok = 1;
		out.nr_cls = res->nr_cls;
		out.cost_ns = sim_cost(&tu->model, res);
		out.ovh_mean = sim_mean_overhead(res);
		out.ovh_peak = res->ovh_peak;
		out.held_peak = res->held_peak;
		out.page_ops = res->page_allocs + res->page_frees;
		for (c = 0; c < res->nr_cls; c++) {
			const struct sim_class_result *cr = &res->cls[c];

			out.cls_cost[c] = sim_class_cost(&tu->model, &cr->c);
			out.cls_ovh[c] = res->nr_cls_samples ?
				(double)cr->ovh_sum / (double)res->nr_cls_samples : 0;
			out.cls_ops[c] = cr->c.allocs + cr->c.frees;
			snprintf(out.cls_name[c], sizeof(out.cls_name[c]), "%s", cr->name);
			hits += cr->c.alloc_hits + cr->c.free_hits;
			ops += out.cls_ops[c];
		}
		out.hit_rate = ops ? (double)hits / (double)ops : 0;
	}
	w = write(fd, &out, sizeof(out));
	_exit(w == (ssize_t)sizeof(out) && out.ok ? 0 : 1);
}

/* Run jobs [from, to) on up to tu->workers children at once. */
static int tune_run(struct tune *tu, size_t from, size_t to)
{
	struct { pid_t pid; int fd; size_t job; } *run;
	size_t next = from, running = 0, i;
	int err = 0;

	run = calloc(tu->workers, sizeof(*run));
	if (!run)
		return -ENOMEM;
	while (next < to || running) {
		while (next < to && running < tu->workers) {
			int p[2];
			pid_t pid;

			if (pipe(p))
				goto out_err;
			fflush(NULL);
			pid = fork();
			if (pid < 0) {
				close(p[0]);
				close(p[1]);
				goto out_err;
			}
			if (!pid) {
				close(p[0]);
				tune_child(tu, &tu->jobs[next], p[1]);
			}
			close(p[1]);
			for (i = 0; i < tu->workers; i++)
				if (!run[i].pid)
					break;
			run[i].pid = pid;
			run[i].fd = p[0];
			run[i].job = next++;
			running++;
		}
		{
			int status;
			pid_t pid = wait(&status);
			ssize_t r;

			if (pid < 0)
				goto out_err;
			for (i = 0; i < tu->workers; i++)
				if (run[i].pid == pid)
					break;
			if (i == tu->workers)
				continue;	/* not ours */
			r = read(run[i].fd, &tu->jobs[run[i].job].out, sizeof(struct tune_out));
			if (r != (ssize_t)sizeof(struct tune_out) || !WIFEXITED(status) ||
			    WEXITSTATUS(status)) {
				tu->jobs[run[i].job].out.ok = 0;
				if (!err)
					fprintf(stderr, "uslab tune: a simulation failed (%s)\n",
						WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) :
						"see above");
				err = -EIO;
			}
			close(run[i].fd);
			run[i].pid = 0;
			running--;
			tu->done++;
			tune_progress(tu);
		}
	}
	free(run);
	return err;
out_err:
	err = -errno;
	fprintf(stderr, "uslab tune: %s\n", strerror(errno));
	while (running) {
		if (wait(NULL) < 0)
			break;
		running--;
	}
	free(run);
	return err;
}

static struct tune_job *tune_add(struct tune *tu)
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

static double job_ovh(const struct tune *tu, const struct tune_job *j)
{
	return tu->peak ? (double)j->out.ovh_peak : j->out.ovh_mean;
}

struct fr_row {
	double ovh;
	size_t job;
};

static int cmp_fr_row(const void *a, const void *b)
{
	const struct fr_row *x = a, *y = b;

	if (x->ovh != y->ovh)
		return x->ovh < y->ovh ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

static int parse_list(const char *s, long *v, unsigned int *n, long lo, long hi)
{
	char *end;

	*n = 0;
	while (*s) {
		if (*n == TUNE_MAX_VALUES)
			return -EINVAL;
		v[*n] = strtol(s, &end, 10);
		if (end == s || v[*n] < lo || v[*n] > hi || (*end && *end != ','))
			return -EINVAL;
		(*n)++;
		s = *end ? end + 1 : end;
	}
	return *n ? 0 : -EINVAL;
}

static void print_options(FILE *f, const struct tune_job *j)
{
	unsigned int c;
	bool first = true;

	if (j->defaults) {
		fprintf(f, "USLAB_OPTIONS=   (empty: the defaults are best)\n");
		return;
	}
	fprintf(f, "USLAB_OPTIONS=");
	if (j->uniform) {
		fprintf(f, "mag_size=%d", j->mag[0]);
		first = false;
	} else {
		for (c = 0; c < j->out.nr_cls; c++) {
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
static void print_kconfig(FILE *f, const struct tune_job *j)
{
	uint64_t total = 0, acc = 0;
	unsigned int c, idx[SIM_MAX_CLASSES], n = 0, a, b;
	int median = j->mag[0];

	if (!j->uniform) {
		for (c = 0; c < j->out.nr_cls; c++)
			if (j->out.cls_ops[c]) {
				idx[n++] = c;
				total += j->out.cls_ops[c];
			}
		for (a = 1; a < n; a++)
			for (b = a; b > 0 && j->mag[idx[b - 1]] > j->mag[idx[b]]; b--) {
				unsigned int x = idx[b];

				idx[b] = idx[b - 1];
				idx[b - 1] = x;
			}
		for (a = 0; a < n; a++) {
			acc += j->out.cls_ops[idx[a]];
			if (2 * acc >= total) {
				median = j->mag[idx[a]];
				break;
			}
		}
	}
	if (j->defaults) {
		fprintf(f, "# the defaults: no fragment needed\n");
		return;
	}
	fprintf(f, "CONFIG_PERCPU_MAG_SIZE=%d\n", median);
	fprintf(f, "CONFIG_PERCPU_DEPOT_LIMIT=%ld\n", j->depot);
	if (!j->uniform) {
		fprintf(f, "# Kconfig holds one size (the median weighted by operations);\n"
			"# the per-cache sizes above apply at run time only.\n");
	}
}

static void describe(char *buf, size_t len, const struct tune_job *j)
{
	size_t pos = 0;
	unsigned int c;

	if (j->defaults) {
		snprintf(buf, len, "library defaults (Kconfig)");
		return;
	}
	if (j->uniform) {
		snprintf(buf, len, "mag=%d depot=%ld", j->mag[0], j->depot);
		return;
	}
	pos += (size_t)snprintf(buf, len, "depot=%ld mags", j->depot);
	for (c = 0; c < j->out.nr_cls && pos < len; c++)
		if (j->out.cls_ops[c])
			pos += (size_t)snprintf(buf + pos, len - pos, " %s:%d",
						j->out.cls_name[c] + (strncmp(j->out.cls_name[c], "kmalloc-", 8) ? 0 : 8),
						j->mag[c]);
}

static int write_png(const char *png, const struct tune *tu)
{
	char csv[] = "/tmp/uslab-tune-XXXXXX";
	int fd = mkstemp(csv);
	FILE *f;
	size_t i;
	int rc;
	char cmd[8192];

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(csv);
		return -ENOMEM;
	}
	for (i = 0; i < tu->nr_jobs; i++)
		if (tu->jobs[i].out.ok)
			fprintf(f, "%.3f,%.6f,%d\n", job_ovh(tu, &tu->jobs[i]) / 1024.0,
				tu->jobs[i].out.cost_ns / 1e6,
				tu->jobs[i].recommended ? 2 : tu->jobs[i].defaults ? 3 :
				tu->jobs[i].frontier ? 1 : 0);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 - '%s' '%s' '%s' <<'EOF'\n"
		 "import sys, matplotlib\n"
		 "matplotlib.use('Agg')\n"
		 "import matplotlib.pyplot as plt\n"
		 "pts = [tuple(map(float, l.split(','))) for l in open(sys.argv[1])]\n"
		 "fig, ax = plt.subplots(figsize=(8, 5.6))\n"
		 "ax.scatter([p[0] for p in pts if p[2] == 0], [p[1] for p in pts if p[2] == 0], c='#aaa', label='configuration swept')\n"
		 "fr = sorted(p for p in pts if p[2] in (1, 2))\n"
		 "ax.plot([p[0] for p in fr], [p[1] for p in fr], '-o', c='#1f77b4', label='frontier')\n"
		 "ax.scatter([p[0] for p in pts if p[2] == 2], [p[1] for p in pts if p[2] == 2], s=120, c='#d62728', label='recommended', zorder=3)\n"
		 "ax.scatter([p[0] for p in pts if p[2] == 3], [p[1] for p in pts if p[2] == 3], s=120, marker='D', c='#2ca02c', label='library defaults', zorder=3)\n"
		 "ax.set_xlabel('%s memory overhead, held - live (KiB)')\n"
		 "ax.set_ylabel('modelled allocator time (ms)')\n"
		 "ax.set_title(sys.argv[3])\n"
		 "ax.grid(True, alpha=0.3); ax.legend()\n"
		 "fig.savefig(sys.argv[2], dpi=100)\n"
		 "EOF\n", csv, png, "uslab tune", tu->peak ? "peak" : "mean");
	rc = system(cmd);
	unlink(csv);
	return rc == 0 ? 0 : -EIO;
}

static const char tune_usage[] =
	"usage: uslab tune TRACE [-j N] [--svg FILE | --png FILE] [options]\n"
	"  -j N                 simulations at once (default: online CPUs)\n"
	"  --svg FILE           draw the frontier as SVG (our own writer)\n"
	"  --png FILE           draw it as PNG (python3-matplotlib)\n"
	"  --cpus N             virtual CPUs (default: the trace's)\n"
	"  --mag-sizes LIST     magazine sizes swept (default 4,8,16,32,64,128,256)\n"
	"  --depot-limits LIST  depot limits swept (default 0,2,8,32,-1)\n"
	"  --batch N            batch count for every run (default: half a magazine)\n"
	"  --peak               frontier on peak instead of mean overhead\n"
	"  --no-compose         only the uniform grid, no per-class round\n"
	"  --all                print every frontier point\n"
	"  --verify[=N]         replay the trace for real under the defaults and the\n"
	"                       recommendation, interleaved, N runs each (5): medians\n"
	"  --verify-grid[=N]    the same for every point of the uniform grid (at most\n"
	"                       32; e.g. --mag-sizes 8,32,128,512 --depot-limits\n"
	"                       0,8,32,-1), and the rank correlation of modelled\n"
	"                       against measured time\n"
	"  --pid PID            the process of a multi-process recording (default:\n"
	"                       the program the command ran as: uslab record -h)\n"
	"  --comm NAME          the process with this name\n";

/* --verify: the defaults (job @def) and the recommendation (@rec) for real. */
static int verify_recommendation(const char *trace, const struct tune *tu, size_t def,
				 size_t rec, unsigned int runs)
{
	struct tune_verify_point pts[2] = {
		{ .label = "defaults" }, { .label = "recommended" },
	};
	FILE *f = fmemopen(pts[1].opts, sizeof(pts[1].opts) - 1, "w");
	char *nl;

	if (!f)
		return -1;
	print_options(f, &tu->jobs[rec]);
	fclose(f);
	memmove(pts[1].opts, pts[1].opts + strlen("USLAB_OPTIONS="),
		strlen(pts[1].opts) - strlen("USLAB_OPTIONS=") + 1);
	nl = strchr(pts[1].opts, '\n');
	if (nl)
		*nl = '\0';
	if (tu->jobs[rec].defaults)
		pts[1].opts[0] = '\0';
	pts[0].model_ms = tu->jobs[def].out.cost_ns / 1e6;
	pts[0].model_ovh_kib = tu->jobs[def].out.ovh_mean / 1024.0;
	pts[1].model_ms = tu->jobs[rec].out.cost_ns / 1e6;
	pts[1].model_ovh_kib = tu->jobs[rec].out.ovh_mean / 1024.0;
	fflush(stdout);
	return tune_verify(trace, pts, 2, runs, stdout);
}

/*
 * --verify-grid: every uniform grid point (jobs 0 .. @grid - 1) replayed
 * for real; Spearman's rho of modelled against measured time.
 */
static int verify_uniform_grid(const char *trace, const struct tune *tu, size_t grid,
			       unsigned int runs)
{
	static struct tune_verify_point pts[TUNE_VERIFY_MAX_POINTS];
	static char labels[TUNE_VERIFY_MAX_POINTS][32];
	double model[TUNE_VERIFY_MAX_POINTS], meas[TUNE_VERIFY_MAX_POINTS];
	double rho, se = 0;
	unsigned int n = 0, i;

	for (i = 0; i < grid && n < TUNE_VERIFY_MAX_POINTS; i++) {
		const struct tune_job *j = &tu->jobs[i];

		if (!j->out.ok || !j->uniform)
			continue;
		snprintf(labels[n], sizeof(labels[n]), "mag=%d,depot=%ld", j->mag[0], j->depot);
		pts[n].label = labels[n];
		snprintf(pts[n].opts, sizeof(pts[n].opts), "mag_size=%d,depot_limit=%ld",
			 j->mag[0], j->depot);
		pts[n].model_ms = j->out.cost_ns / 1e6;
		pts[n].model_ovh_kib = j->out.ovh_mean / 1024.0;
		n++;
	}
	if (grid > n)
		fprintf(stderr, "uslab tune: --verify-grid: %u of %zu grid points replayed\n",
			n, grid);
	fflush(stdout);
	if (tune_verify(trace, pts, n, runs, stdout))
		return -1;
	for (i = 0; i < n; i++) {
		model[i] = pts[i].model_ms;
		meas[i] = pts[i].wall_ms;
	}
	rho = tune_spearman(model, meas, n);
	/* relative error of modelled time once scaled to measured (least squares) */
	{
		double sxy = 0, sxx = 0, k;

		for (i = 0; i < n; i++) {
			sxy += model[i] * meas[i];
			sxx += model[i] * model[i];
		}
		k = sxx > 0 ? sxy / sxx : 0;
		for (i = 0; i < n; i++)
			se += meas[i] > 0 ? pow((k * model[i] - meas[i]) / meas[i], 2) : 0;
		printf("grid: %u points; Spearman rank correlation of modelled against measured "
		       "time %.3f; rms error of scaled modelled time %.1f%% (scale %.2f)\n",
		       n, rho, n ? 100 * sqrt(se / n) : 0.0, k);
	}
	return 0;
}

int cmd_tune(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 's' },
		{ "png", required_argument, NULL, 'p' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "mag-sizes", required_argument, NULL, 'm' },
		{ "depot-limits", required_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "peak", no_argument, NULL, 'P' },
		{ "no-compose", no_argument, NULL, 'N' },
		{ "all", no_argument, NULL, 'A' },
		{ "verify", optional_argument, NULL, 'V' },
		{ "verify-grid", optional_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		CMD_SELECT_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	long mags[TUNE_MAX_VALUES] = { 4, 8, 16, 32, 64, 128, 256 };
	long depots[TUNE_MAX_VALUES] = { 0, 2, 8, 32, -1 };
	unsigned int nm = 7, nd = 5, a, b, c, k;
	struct tune tu = { 0 };
	struct sim_trace t;
	const char *svg = NULL, *png = NULL;
	unsigned long cpus = 0;
	bool compose = true;
	size_t i, j, grid, step, rec = SIZE_MAX;
	unsigned long verify = 0;
	bool verify_grid = false;
	char *vend;
	double cmin = INFINITY, cmax = -INFINITY, omin = INFINITY, omax = -INFINITY, best;
	char *end, desc[512];
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int opt, err = 1;

	tu.workers = online > 0 ? (unsigned int)online : 1;
	tu.batch = -1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "j:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			tu.workers = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || !tu.workers || tu.workers > 256) {
				fprintf(stderr, "uslab tune: bad -j '%s'\n", optarg);
				fputs(tune_usage, stderr);
				return 2;
			}
			break;
		case CMD_OPT_PID:
		case CMD_OPT_COMM:
			if (cmd_parse_select("uslab tune", opt, optarg))
				return 2;
			break;
		case 's': svg = optarg; break;
		case 'p': png = optarg; break;
		case 'c':
			cpus = strtoul(optarg, &end, 10);
			if (*end || !cpus || cpus > TRACE_MAX_CPUS) {
				fprintf(stderr, "uslab tune: bad --cpus '%s'\n", optarg);
				fputs(tune_usage, stderr);
				return 2;
			}
			break;
		case 'm':
			if (parse_list(optarg, mags, &nm, 1, 4096)) {
				fprintf(stderr, "uslab tune: --mag-sizes wants up to %d numbers 1..4096\n",
					TUNE_MAX_VALUES);
				fputs(tune_usage, stderr);
				return 2;
			}
			break;
		case 'd':
			if (parse_list(optarg, depots, &nd, -1, 65536)) {
				fprintf(stderr, "uslab tune: --depot-limits wants up to %d numbers -1..65536\n",
					TUNE_MAX_VALUES);
				fputs(tune_usage, stderr);
				return 2;
			}
			break;
		case 'b':
			tu.batch = (int)strtol(optarg, &end, 10);
			if (*end || tu.batch < 1 || tu.batch > 4096) {
				fprintf(stderr, "uslab tune: bad --batch '%s'\n", optarg);
				fputs(tune_usage, stderr);
				return 2;
			}
			break;
		case 'P': tu.peak = true; break;
		case 'N': compose = false; break;
		case 'A': tu.all_rows = true; break;
		case 'G':
			verify_grid = true;
			/* fall through */
		case 'V':
			verify = optarg ? strtoul(optarg, &vend, 10) : 5;
			if ((optarg && *vend) || !verify || verify > 64) {
				fprintf(stderr, "uslab tune: --verify wants 1..64 runs\n");
				return 2;
			}
			break;
		case 'h': fputs(tune_usage, stdout); return 0;
		default: return cmd_opt_error("uslab tune", tune_usage, "j:h", argv);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "uslab tune: %s\n", optind < argc ? "one TRACE only" : "no TRACE given");
		fputs(tune_usage, stderr);
		return 2;
	}
	/* Output paths are checked before the sweep, not after it. */
	for (int o = 0; o < 2; o++) {
		const char *path = o ? png : svg;
		char why[PATH_MAX + 128];

		if (path && out_check(path, why, sizeof(why))) {
			fprintf(stderr, "uslab tune: --%s: %s\n", o ? "png" : "svg", why);
			return 1;
		}
	}
	if (sim_trace_load(&t, argv[optind], (unsigned int)cpus, "uslab tune"))
		return 1;
	tu.t = &t;
	tu.progress = isatty(2);
	sim_cost_model_load(&tu.model);
	printf("uslab tune: %s (%zu events, %u virtual CPUs)\n", argv[optind], t.n, t.cpus);
	printf("cost model: hit %.1f ns, refill %.1f + %.1f/object ns, flush %.1f + %.1f/object ns,\n"
	       "            depot %.1f ns, page %.1f ns; from %s\n", tu.model.hit_ns,
	       tu.model.refill_ns, tu.model.refill_obj_ns, tu.model.flush_ns,
	       tu.model.flush_obj_ns, tu.model.depot_ns, tu.model.page_ns, tu.model.source);
	if (cmd_check_stdout("uslab tune")) {	/* before the sweep */
		sim_trace_free(&t);
		return 1;
	}

	/* Round 1: the uniform grid. */
	for (a = 0; a < nd; a++)
		for (b = 0; b < nm; b++) {
			struct tune_job *jb = tune_add(&tu);

			if (!jb)
				goto out_nomem;
			jb->depot = depots[a];
			jb->uniform = true;
			for (c = 0; c < SIM_MAX_CLASSES; c++)
				jb->mag[c] = (int)mags[b];
		}
	grid = tu.nr_jobs;
	/* The library's own defaults, for comparison (not part of the grid). */
	{
		struct tune_job *jb = tune_add(&tu);

		if (!jb)
			goto out_nomem;
		jb->depot = SIM_DEFAULT;
		jb->uniform = true;
		jb->defaults = true;
		jb->mag[0] = -1;
	}
	tu.total = compose ? grid + 1 + (size_t)nd * TUNE_LAMBDAS : grid + 1;
	if (tune_run(&tu, 0, grid + 1))
		goto out;

	/* Round 2: per-class settings composed from round 1, for each depot. */
	if (compose) {
		const struct tune_out *o0 = &tu.jobs[0].out;
		double cr = 0, orng = 0;

		for (i = 0; i < grid && !tu.jobs[i].out.ok; i++)
			;
		if (i == grid) {
			fprintf(stderr, "uslab tune: no simulation succeeded\n");
			goto out;
		}
		o0 = &tu.jobs[i].out;

		for (i = 0; i < grid; i++) {
			if (!tu.jobs[i].out.ok)
				continue;
			cmin = fmin(cmin, tu.jobs[i].out.cost_ns);
			cmax = fmax(cmax, tu.jobs[i].out.cost_ns);
			omin = fmin(omin, tu.jobs[i].out.ovh_mean);
			omax = fmax(omax, tu.jobs[i].out.ovh_mean);
		}
		cr = cmax - cmin > 0 ? cmax - cmin : 1;
		orng = omax - omin > 0 ? omax - omin : 1;
		for (a = 0; a < nd; a++) {
			for (k = 0; k < TUNE_LAMBDAS; k++) {
				double lambda = cr / orng * pow(10, ((double)k - TUNE_LAMBDAS / 2) / 2.0);
				struct tune_job cand = { .depot = depots[a] };
				bool dup = false;

				memcpy(cand.out.cls_name, o0->cls_name, sizeof(cand.out.cls_name));
				cand.out.nr_cls = o0->nr_cls;
				for (c = 0; c < o0->nr_cls; c++) {
					double bestc = INFINITY;

					for (b = 0; b < nm; b++) {
						const struct tune_out *o = &tu.jobs[a * nm + b].out;
						double v = o->cls_cost[c] + lambda * o->cls_ovh[c];

						if (o->ok && v < bestc) {
							bestc = v;
							cand.mag[c] = (int)mags[b];
						}
					}
				}
				for (i = 0; i < tu.nr_jobs && !dup; i++) {
					const struct tune_job *x = &tu.jobs[i];

					dup = x->depot == cand.depot;
					for (c = 0; c < o0->nr_cls && dup; c++)
						dup = x->mag[c] == cand.mag[c];
				}
				if (dup) {
					tu.total--;
					continue;
				}
				{
					struct tune_job *jb = tune_add(&tu);

					if (!jb)
						goto out_nomem;
					*jb = cand;
				}
			}
		}
		tune_progress(&tu);
		/* round 1 ran [0, grid]: the defaults job at index grid too */
		if (tu.nr_jobs > grid + 1 && tune_run(&tu, grid + 1, tu.nr_jobs))
			goto out;
	}

	/* The frontier: no other point is at most as costly and as large. */
	cmin = omin = INFINITY;
	cmax = omax = -INFINITY;
	for (i = 0; i < tu.nr_jobs; i++) {
		struct tune_job *x = &tu.jobs[i];

		if (!x->out.ok)
			continue;
		x->frontier = true;
		for (j = 0; j < tu.nr_jobs && x->frontier; j++) {
			const struct tune_job *y = &tu.jobs[j];

			if (j == i || !y->out.ok)
				continue;
			if (y->out.cost_ns <= x->out.cost_ns && job_ovh(&tu, y) <= job_ovh(&tu, x) &&
			    (y->out.cost_ns < x->out.cost_ns || job_ovh(&tu, y) < job_ovh(&tu, x) || j < i))
				x->frontier = false;
		}
		if (x->frontier) {
			cmin = fmin(cmin, x->out.cost_ns);
			cmax = fmax(cmax, x->out.cost_ns);
			omin = fmin(omin, job_ovh(&tu, x));
			omax = fmax(omax, job_ovh(&tu, x));
		}
	}
	/* Recommended: the frontier point nearest the ideal corner, both axes
	 * scaled to the frontier's own range. */
	best = INFINITY;
	for (i = 0; i < tu.nr_jobs; i++) {
		const struct tune_job *x = &tu.jobs[i];
		double dc, dov, d;

		if (!x->frontier)
			continue;
		dc = cmax > cmin ? (x->out.cost_ns - cmin) / (cmax - cmin) : 0;
		dov = omax > omin ? (job_ovh(&tu, x) - omin) / (omax - omin) : 0;
		d = dc * dc + dov * dov;
		if (d < best) {
			best = d;
			rec = i;
		}
	}
	if (rec == SIZE_MAX) {
		fprintf(stderr, "uslab tune: no simulation succeeded\n");
		goto out;
	}
	tu.jobs[rec].recommended = true;

	printf("\nswept %zu configurations (%zu uniform, %zu per-class, the defaults) on %u workers\n",
	       tu.nr_jobs, grid, tu.nr_jobs - grid - 1, tu.workers);
	printf("\nfrontier (%s overhead = bytes held by page_alloc - bytes live):\n",
	       tu.peak ? "peak" : "mean");
	printf("  %12s %14s %8s %8s  %s\n", "overhd_KiB", "model_time_ms", "hit%", "page_ops",
	       "configuration");
	{
		struct fr_row *rows = calloc(tu.nr_jobs, sizeof(*rows));
		size_t nfr = 0;

		if (!rows)
			goto out_nomem;
		for (i = 0; i < tu.nr_jobs; i++)
			if (tu.jobs[i].frontier) {
				rows[nfr].ovh = job_ovh(&tu, &tu.jobs[i]);
				rows[nfr++].job = i;
			}
		qsort(rows, nfr, sizeof(*rows), cmp_fr_row);
		step = tu.all_rows || nfr <= 16 ? 1 : (nfr + 13) / 14;
		for (j = 0; j < nfr; j++) {
			const struct tune_job *x = &tu.jobs[rows[j].job];

			/* a long frontier is thinned: ends, every step-th, the pick, defaults */
			if (j % step && j != nfr - 1 && rows[j].job != rec && rows[j].job != grid)
				continue;

			describe(desc, sizeof(desc), x);
			printf("  %12.1f %14.3f %8.2f %8" PRIu64 "  %s%s\n",
			       rows[j].ovh / 1024.0, x->out.cost_ns / 1e6,
			       100.0 * x->out.hit_rate, x->out.page_ops, desc,
			       rows[j].job == rec ? "   <- recommended" : "");
		}
		if (!tu.jobs[grid].frontier && tu.jobs[grid].out.ok) {
			const struct tune_job *x = &tu.jobs[grid];

			printf("  %12.1f %14.3f %8.2f %8" PRIu64 "  %s (not on the frontier)\n",
			       job_ovh(&tu, x) / 1024.0, x->out.cost_ns / 1e6,
			       100.0 * x->out.hit_rate, x->out.page_ops, "library defaults");
		}
		if (step > 1)
			printf("  (%zu frontier points, one in %zu shown; --all shows all)\n",
			       nfr, step);
		free(rows);
	}
	describe(desc, sizeof(desc), &tu.jobs[rec]);
	printf("\nrecommended: %s\n  mean overhead %.1f KiB, peak overhead %.1f KiB, "
	       "modelled time %.3f ms, hit rate %.2f%%\n", desc,
	       tu.jobs[rec].out.ovh_mean / 1024.0, (double)tu.jobs[rec].out.ovh_peak / 1024.0,
	       tu.jobs[rec].out.cost_ns / 1e6, 100.0 * tu.jobs[rec].out.hit_rate);
	printf("\nas a runtime option string:\n  ");
	print_options(stdout, &tu.jobs[rec]);
	printf("\nas a Kconfig fragment:\n");
	print_kconfig(stdout, &tu.jobs[rec]);
	if (verify && !verify_grid &&
	    verify_recommendation(argv[optind], &tu, grid, rec, (unsigned int)verify))
		goto out;
	if (verify_grid && verify_uniform_grid(argv[optind], &tu, grid, (unsigned int)verify))
		goto out;

	if (svg || png) {
		struct plot_point *pts = calloc(tu.nr_jobs ? tu.nr_jobs : 1, sizeof(*pts));
		size_t n = 0;
		char title[256];

		if (!pts)
			goto out_nomem;
		for (i = 0; i < tu.nr_jobs; i++) {
			if (!tu.jobs[i].out.ok)
				continue;
			pts[n].x = job_ovh(&tu, &tu.jobs[i]) / 1024.0;
			pts[n].y = tu.jobs[i].out.cost_ns / 1e6;
			pts[n].kind = tu.jobs[i].recommended ? 2 : tu.jobs[i].defaults ? 3 :
				      tu.jobs[i].frontier ? 1 : 0;
			n++;
		}
		snprintf(title, sizeof(title), "uslab tune: %s", argv[optind]);
		if (svg) {
			int rc = plot_svg(svg, title,
					  tu.peak ? "peak memory overhead, held - live (KiB)" :
						    "mean memory overhead, held - live (KiB)",
					  "modelled allocator time (ms)", pts, n);

			if (rc) {
				fprintf(stderr, "uslab tune: %s: %s\n", svg, strerror(-rc));
				free(pts);
				goto out;
			}
			printf("\nfrontier drawn in %s\n", svg);
		}
		free(pts);
		if (png) {
			if (write_png(png, &tu)) {
				fprintf(stderr, "uslab tune: %s: matplotlib failed\n", png);
				goto out;
			}
			printf("\nfrontier drawn in %s\n", png);
		}
	}
	err = 0;
	goto out;
out_nomem:
	fprintf(stderr, "uslab tune: out of memory\n");
out:
	free(tu.jobs);
	sim_trace_free(&t);
	return err;
}
