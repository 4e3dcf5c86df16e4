/* SPDX-License-Identifier: MIT */
/*
 * tools/uslab/ private declarations: the `uslab` subcommands (uslab.c holds
 * the table) and the plotting helpers. Each command gets argv[0] = its own
 * name and returns the exit status.
 */
#ifndef USLAB_TOOLS_BUILTIN_H
#define USLAB_TOOLS_BUILTIN_H

#include "trace/trace.h"
#include "sim/sim.h"
#include <signal.h>
#include <sys/types.h>
#include "uslab/statseg.h"
#include "lib/grow.h"
#include "tools/lib/cmd.h"
#include "tools/lib/parse-options.h"

/* --calibration FILE of the commands that run the cost model (sim, tune). */
#define OPT_CALIBRATION(path)							\
	OPT_STRING(0, "calibration", path, "FILE",				\
		   "the cost model of `uslab calibrate -o FILE` (default:\n"	\
		   "the built-in one; a calibration is used only when named)")

/* builtin-script.c */
int cmd_script(int argc, char **argv);
/* builtin-report.c */
int cmd_report(int argc, char **argv);
/* builtin-record.c */
int cmd_record(int argc, char **argv);
/* record-attach.c: `uslab record -p PID` */
struct record_attach_opts {
	pid_t pid;
	double duration;		/* seconds; 0: until Ctrl-C or exit */
	unsigned int depth;		/* -g: frames per stack; 0 no stacks */
	const char *out, *dir, *lib;	/* the trace, the raw folder, the recorder */
	int level;
	bool quiet;
};
int record_attach(const struct record_attach_opts *o);
const char *record_opt_duration(const struct cli_opt *opt, const char *arg);
/* builtin-import.c */
int cmd_import(int argc, char **argv);
/* builtin-tune.c */
int cmd_tune(int argc, char **argv);
/* builtin-replay.c */
int cmd_replay(int argc, char **argv);
/* replay-stats.c: USLAB_OPTIONS=stats, the replayed events' own table */
#define RP_STATS_MAX_CACHES	128
bool rp_stats_begin(void);
void rp_stats_snapshot(void);
void rp_stats_end(FILE *f);
/* replay-runs.c: real replays as measurements, and their statistics. */
struct replay_fig {
	double wall, cpu;		/* s: the timed run; CPU = user + system */
	double rss_peak, rss_mean;	/* KiB above the replayer's own at the start */
	unsigned long long events;	/* events the replay ran */
};
struct stat_est {
	double median, lo, hi;		/* bootstrap 95% interval of the median */
};
double stat_median(double *v, unsigned int n);
int stat_ci(const double *v, unsigned int n, const double *base, unsigned int nb,
	    struct stat_est *e);
void stat_print(FILE *out, const struct stat_est *e, double scale, int prec,
		const char *unit);
int replay_first_cpu(void);
void replay_child_setup(const char *opts, int cpu);
int replay_run_once(char *const args[], const char *opts, int cpu, struct replay_fig *f,
		    char *opt_line, size_t len, bool quiet, const char *who);
/* tune-real.c: tune's real replays and its verdict. */
#define TUNE_REAL_MAX_RUNS	64
struct tune_real {
	const char *trace;
	const char *pid, *comm;		/* the process the replays take (as tune's) */
	int cpu;			/* >= 0: one thread pinned there */
	unsigned int runs;
	unsigned long long events;	/* the simulation's: each replay must run as many */
	enum tune_goal goal;
	bool progress;
};
struct tune_real_point {
	char label[16];			/* "defaults", "candidate 1", ... */
	char desc[512];			/* the configuration */
	char opts[2048];		/* USLAB_OPTIONS; "" = the defaults */
	size_t job;
	double model_ms, model_peak_kib, model_mean_kib;
	double cpu[TUNE_REAL_MAX_RUNS], peak[TUNE_REAL_MAX_RUNS], mean[TUNE_REAL_MAX_RUNS];
	unsigned int n;
	struct stat_est e_cpu, e_peak, e_mean;	/* ms, KiB, KiB */
	struct stat_est d_cpu, d_peak, d_mean;	/* change against the defaults */
};
const char *tune_goal_name(enum tune_goal g);
int tune_real_decide(const struct tune_real *tr, struct tune_real_point *pts, unsigned int n,
		     FILE *out);
/* tune-verify.c: uslab tune --verify */
#define TUNE_VERIFY_MAX_POINTS	32
struct tune_verify_point {
	const char *label;
	char opts[2048];		/* USLAB_OPTIONS; "" = the defaults */
	double model_ms, model_ovh_kib;
	double wall_ms, cpu_ms, rss_kib;	/* measured medians */
	double cpu_spread;		/* (q3 - q1) / median of the CPU times, % */
};
/* @one_cpu: one replay thread pinned to one CPU (tune --cpus 1), else the
 * recorded threads on every CPU. */
int tune_verify(const char *trace, struct tune_verify_point *pts, unsigned int npts,
		unsigned int runs, bool one_cpu, FILE *out);
/* After tune_verify() of a grid: rank correlation, noise, rms error. */
void tune_verify_grid_report(const struct tune_verify_point *pts, unsigned int npts,
			     FILE *out);
double tune_spearman(const double *x, const double *y, unsigned int n);
/* builtin-gen.c */
int cmd_gen(int argc, char **argv);
/* uslab.c: the folder of this binary (/proc/self/exe), where the build
 * tree and `make install` put what uslab finds beside it. Return: 0 or -1. */
int cmd_exe_dir(char *dir, size_t len);
/* timeline_draw.c: a plot script, installed or in the source tree */
int cmd_find_script(const char *name, char *buf, size_t len);
/*
 * A live object's slot in the array *@obj of @elem-byte entries (report's
 * stacks and timeline views): a freed slot first, else the array grows;
 * trace id @id maps to it in @ids. obj_slot_put keeps a freed slot for
 * reuse. Return: 0 or -errno.
 */
int obj_slot_take(void **obj, uint64_t *nobj, uint64_t *cap, size_t elem,
		  const uint64_t *free_obj, uint64_t *nfree, struct hmap *ids, uint64_t id,
		  uint64_t *slot);
int obj_slot_put(uint64_t **free_obj, uint64_t *nfree, uint64_t *free_cap, uint64_t slot);
/*
 * builtin-report.c: every event of @r to a report view, as what it does to
 * objects (trace_event_objects): @end(@ctx, ev, id) for the one it ends,
 * then @make(@ctx, ev) for the one it makes. The reader's error is said
 * (cmd_read_error: a truncated trace is a warning, and what came before
 * counts). Return: 0, 1 after the reader's error, or a callback's (< 0).
 */
int report_walk(struct trace_reader *r,
		int (*end)(void *ctx, const struct trace_event *ev, uint64_t id),
		int (*make)(void *ctx, const struct trace_event *ev), void *ctx);
/* builtin-report.c: a report view's error said: -ENOMEM, or -E2BIG
 * (@too_big says what), with the trace @path; another negative one is the
 * reader's, said by cmd_read_error() (a truncated trace: a warning, 0).
 * Return: 1 when said as an error, else @rc (>= 0) or 0. */
int report_view_error(struct trace_reader *r, const char *path, int rc, const char *too_big);
/* builtin-sim.c */
int cmd_sim(int argc, char **argv);
/* @path opened for @who (--pid/--comm applied) and decoded into @t: whole
 * (tune), or as a stream (sim, which reads it in sim_run). Says what
 * failed (the byte offset of a bad trace). Return: 0 or 1. */
int cmd_sim_trace(struct sim_trace *t, const char *who, const char *path,
		  unsigned int cpus, bool stream);
/* The cost model of --calibration @path (NULL: built in); says what is
 * wrong with the file. Return: 0 or 1. */
int cmd_cost_model(struct sim_cost_model *m, const char *path);
/* builtin-calibrate.c */
int cmd_calibrate(int argc, char **argv);

/* builtin-slabinfo.c */
int cmd_slabinfo(int argc, char **argv);
/* builtin-top.c */
int cmd_top(int argc, char **argv);

/* statseg.c: the reader's side of a process's statistics segment */
struct statseg_handle {
	void *map;			/* its first page: the futex words' address, never touched */
	int fd;
	pid_t pid;
	uint64_t start;			/* its start time (/proc/PID/stat field 22) */
	const char *cmd;		/* for messages */
	volatile sig_atomic_t *stop;	/* set by the caller's signal handler, or NULL */
};
/* -p/--pid PID of `uslab slabinfo` and `uslab top` (required there; in
 * slabinfo unless --gc): into the pid_t @v; more fields of the option after
 * it. PID_MAX_LIMIT is 2^22; 2^30 - 1 leaves room. */
#define OPT_STATSEG_PID(v, ...)							\
	OPT_INTEGER('p', "pid", v, "PID", "the process (running on uslab)", 1, 0x3fffffff, \
		    __VA_ARGS__)
int statseg_open(const char *cmd, pid_t pid, struct statseg_handle *h);
int statseg_snapshot(struct statseg_handle *h, const char *write, int *write_result,
		     struct uslab_statseg *out);
void statseg_close(struct statseg_handle *h);
/* What the segment says, for a terminal: every byte outside printable
 * ASCII as \xNN, backslash as \\; statseg_fput_text keeps newlines. */
void statseg_fput_text(FILE *f, const char *s);
const char *statseg_printable(const char *s, char *buf, size_t len);

/* plot.c; plot-frontier.py reads the same kinds as numbers. */
enum plot_kind {
	PLOT_SWEPT,			/* a configuration swept */
	PLOT_FRONTIER,			/* on the frontier */
	PLOT_RECOMMENDED,		/* the recommended one */
	PLOT_DEFAULTS,			/* the library's defaults */
	PLOT_MEASURED,			/* a candidate as real replays placed it */
	PLOT_ADAPTIVE,			/* the adaptive magazines' default (adapt=1) */
};

struct plot_point {
	double x, y;
	int kind;			/* enum plot_kind */
	double xlo, xhi, ylo, yhi;	/* PLOT_MEASURED: the 95% intervals */
};
/* The view both pictures share: zoomed to the frontier, the defaults, the
 * recommendation and the measured points (with their intervals); the
 * points outside it are counted, not drawn. */
struct plot_view {
	double x0, x1, y0, y1;
	size_t outside;
};
void plot_view_of(struct plot_view *v, const struct plot_point *pts, size_t n);
int plot_svg(const char *path, const char *title, const char *xlabel,
	     const char *ylabel, const struct plot_point *pts, size_t n);

/* ---- tools/uslab/symbolize.c: a frame's function and source line (elfutils libdw). */
struct symbolizer;
struct sym_info {
	char func[256];
	char file[512];
	int line;		/* 0: unknown */
};
struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);
/* @off: the byte offset in the file @path of the address (for a return
 * address, one byte before it). Return: 0, or -1 when nothing is known. */
int symbolize(struct symbolizer *s, const char *path, uint64_t off, struct sym_info *out);
/* tools/uslab/report_callsite.c: `uslab report --sort callsite[,size] [--children]` */
struct trace_reader;
int report_callsites(struct trace_reader *r, const char *path, bool by_size,
		     bool children, unsigned int rows);
/* tools/uslab/report_stacks.c: `uslab report --folded | --flamegraph FILE |
 * --callsite N`, and the allocation wrappers charged to their caller. */
enum report_weight {
	REPORT_WEIGHT_ALLOCS,
	REPORT_WEIGHT_BYTES,
	REPORT_WEIGHT_PEAK,		/* each stack's live bytes at the peak */
	REPORT_WEIGHT_LEAKED,		/* each stack's live bytes at the end */
};
struct report_stacks_opts {
	bool folded;
	const char *flamegraph;		/* SVG path, or NULL */
	unsigned int callsite;		/* row of --sort callsite, 1-based; 0 none */
	bool children;
	int weight;			/* enum report_weight */
};
int report_stacks(struct trace_reader *r, const char *path, const struct report_stacks_opts *o);
/* --wrappers LIST: file-name prefixes of the objects whose frames are
 * charged to their caller ("none": none). */
const char *report_opt_wrappers(const struct cli_opt *opt, const char *arg);
/* tools/uslab/report_timeline.c: `uslab report --timeline FILE.svg|.png` */
/*
 * A chart of memory over time, drawn by timeline_draw() as @path's
 * extension says: .svg by uslab, .png by plot-timeline.py (matplotlib).
 * report --timeline, sim --timeline and (the figures each has) share it.
 * @y[k][i]: series k at @x[i] (in @xunit); the first series is drawn
 * thickest; the peak is marked at (@peak_x, @peak_y).
 */
struct timeline_plot {
	const char *who, *title, *xlabel, *xunit, *ylabel;
	uint32_t npts, nseries;
	const double *x;
	const char *const *names;
	uint64_t *const *y;
	double peak_x;
	uint64_t peak_y;
};
/* Return: 0, or 1 after saying why (nothing left at @path). */
int timeline_draw(const struct timeline_plot *p, const char *path);
int report_timeline(const char *trace, const char *out);
/* tools/uslab/report_maps.c: what the call-stack reports share. */
struct report_maps {
	const struct trace_meta *m;
	uint32_t *by_start;		/* m->objects' indexes by (process, start) */
	int8_t *wrapper;		/* per object: -1 unknown, 0 no, 1 yes */
};
/* Load @r's object table (not its stacks) and sort it. Return: 0, -ENOMEM
 * or a reader's error. */
int report_maps_init(struct report_maps *rm, struct trace_reader *r);
void report_maps_free(struct report_maps *rm);
/*
 * A call-stack report's opening and walk: @r has call stacks (else says
 * so), its object table into @rm, a symbolizer into *@sym, one address
 * map per process into *@byproc (*@nprocs of them, zeroed: each made at
 * first use), then report_walk(@r, @end, @make, @ctx). Return: 0, 1 after
 * saying why, or < 0 (memory, the reader's, a callback's) for
 * report_view_error() to say; what was made is the caller's to free.
 */
int report_stacks_walk(struct trace_reader *r, const char *path, struct report_maps *rm,
		       struct symbolizer **sym, struct hmap **byproc, uint32_t *nprocs,
		       int (*end)(void *ctx, const struct trace_event *ev, uint64_t id),
		       int (*make)(void *ctx, const struct trace_event *ev), void *ctx);
/* The mapping of process @proc holding @addr: of those starting at or below
 * it, the one starting last (the earliest entry on a tie); or NULL. */
const struct trace_object *report_object_of(const struct report_maps *rm, uint32_t proc,
					    uint64_t addr);
/* The leading frames of @t inside the wrappers (0 when all are). */
uint32_t report_wrapper_frames(struct report_maps *rm, const struct trace_stack *t);
/* A frame's names: "func" (or "object+0xoff", "?? [0x...]") into @func,
 * "func (file:line)" into @full (as --sort callsite prints them). */
struct symbolizer;
void report_frame_names(const struct report_maps *rm, struct symbolizer *sym, uint32_t proc,
			uint64_t addr, char *func, size_t flen, char *full, size_t len);

#endif /* USLAB_TOOLS_BUILTIN_H */
