/* SPDX-License-Identifier: MIT */
/*
 * sim/'s interface to the folders above (tools/uslab/): the decoded trace,
 * the simulation engine that runs the real page_alloc/slab/percpu code on
 * virtual CPUs, the tuner's engine and the cost model. sim/ may include
 * trace/trace.h, the public headers and lib/; never tools/. What only
 * sim/'s own files share is in sim/internal.h.
 */
#ifndef USLAB_SIM_SIM_H
#define USLAB_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "lib/compiler.h"
#include "uslab/page_alloc.h"
#include "uslab/slab.h"
#include "uslab/trace.h"
#include "trace/trace.h"

/* ---- Simulation, cost model, calibration (sim/simulate*.c, calibrate*.c). */

struct kmem_cache;

/* The simulator and the tuner run struct trace_dense_ev (trace/trace.h):
 * 32 bytes, decoded by trace/decode.c before any timing starts, its ids
 * dense by trace id; a kmem_cache_alloc's cache is then the named cache's
 * index + 1 in sim_trace.named, 0 = its size's kmalloc class. */

struct trace_reader;

/* Named caches (trace format 1.2, `import perf`) the simulator creates, as
 * the kernel's kmem_cache_create() made them; the trace's later ones fold
 * into their size's kmalloc class (said: sim_trace.named_folded). */
#define SIM_MAX_NAMED		64
struct sim_named_cache {
	char name[32];
	uint64_t size;
};

/*
 * A decoded trace in memory (sim_trace_load), or a stream (sim_trace_open).
 * Trace ids are renumbered densely in the order they first appear (a keyed
 * table of the ids met), so the simulator's per-object arrays follow the
 * objects the file really holds, whatever ids it uses.
 */
struct sim_trace {
	struct trace_dense_ev *ev;
	size_t n, cap;			/* stream: n = events (trailer's claim), 0 unknown */
	struct trace_reader *r;		/* stream: the reader */
	const char *path;
	struct trace_decoder dec;	/* ids: dense by trace id */
	unsigned int cpus;	/* simulated CPUs */
	unsigned int rec_cpus;	/* the recording's, 0 = unknown */
	bool no_clock;		/* time_ns is the event index (mtrace imports) */
	char *cmdline;
	struct sim_named_cache named[SIM_MAX_NAMED];
	unsigned int nr_named;
	uint8_t *named_of;		/* trace cache id -> named index + 1, 0 folded */
	uint32_t nr_named_of;		/* trace cache ids mapped so far */
	uint32_t named_folded;		/* trace caches past SIM_MAX_NAMED */
};

/* sim/simulate_load.c */
/* Decoded events a whole-trace load may hold (a quarter of the memory). */
uint64_t sim_event_budget(void);
/*
 * Decode the whole of @r (opened by the caller, who closes it after) into
 * @t; @cpus: --cpus, 0 = the recording's; @who names the decoder in the
 * budget's message. Prints nothing. Return: 0, -ENOMEM (t->n: the events
 * decoded), or -errno with the reader's error (trace_reader_error(), naming
 * the byte offset). Either way sim_trace_free(@t) after.
 */
int sim_trace_load(struct sim_trace *t, struct trace_reader *r, unsigned int cpus,
		   const char *who);
/* Free @t; a stream's reader is closed with it. */
void sim_trace_free(struct sim_trace *t);
/* Stream: header and trailer now, events chunk by chunk in sim_run(); @t
 * takes @r (of @path, for messages), closed by sim_trace_free(). Return:
 * as sim_trace_load(). */
int sim_trace_open(struct sim_trace *t, struct trace_reader *r, const char *path,
		   unsigned int cpus);
/* Next events of a stream into @buf. Return: count, 0 at the end, -errno
 * (-ENOMEM, or the reader's error). */
long sim_trace_read(struct sim_trace *t, struct trace_dense_ev *buf, size_t max);
/* The trace's own id for dense id @id, as messages name it. */
uint64_t sim_trace_id(const struct sim_trace *t, uint32_t id);

#define SIM_MAX_CLASSES		NR_KMALLOC_CLASSES	/* slab's kmalloc_info[] */
#define SIM_CLASS_NONE		0xff
#define SIM_DEFAULT		USLAB_DEPOT_BY_SIZE	/* depot_limit: the library's default */

struct sim_config {
	unsigned int cpus;
	int mag_size;			/* every kmalloc cache; -1 = default */
	struct {
		char name[32];		/* kmalloc-64 or 64 */
		int mag;
	} class_mag[SIM_MAX_CLASSES];
	unsigned int nr_class_mag;
	/* --held CACHE=N: objects allocated before the run and kept, as the
	 * replayer's own (a worker thread's glibc DTV) are in a real replay */
	struct {
		unsigned int cls;	/* kmalloc class index */
		long n;
	} held[SIM_MAX_CLASSES];
	unsigned int nr_held;
	int batch;			/* -1 = default */
	long depot_limit;		/* SIM_DEFAULT, -1 = unlimited, or N */
	uint64_t sample_every;		/* events between memory samples */
	bool per_class;			/* per-class overhead at each sample */
	bool no_reaper;			/* no virtual reaper passes */
	int adapt;			/* adaptive magazines: -1 = Kconfig, 0, 1 */
	long adapt_min, adapt_max;	/* bytes; 0 = default */
	long adapt_budget_kb;		/* per CPU; 0 = default */
};

/* What the layers counted for one cache over the run. */
struct sim_cache_counts {
	uint64_t allocs, frees;		/* counted by the simulator */
	uint64_t alloc_hits, free_hits;
	uint64_t alloc_slow, free_slow;
	uint64_t refills, flushes, swaps;
	uint64_t depot_gets, depot_puts;
	uint64_t drains, direct;
	unsigned int mag_size, batch;
};

struct sim_class_result {
	struct kmem_cache *cache;
	char name[32];
	unsigned int objsize;
	struct sim_cache_counts c;
	uint64_t slab_bytes_peak;
	struct kmem_cache_stats stats;	/* slab/'s counters at the end */
	struct kmem_cache_stats before;	/* at the start, if --held made it */
	bool has_before;
	int64_t ovh_peak;		/* slab bytes - live bytes of the class */
	int64_t ovh_sum;		/* over samples, for the mean */
};

struct sim_sample {
	uint64_t time_ns;
	uint64_t events;
	uint64_t held;			/* page_alloc bytes_allocated */
	uint64_t resident_free;		/* page_alloc bytes_free_resident */
	uint64_t live;			/* requested bytes of live objects */
	uint64_t resident;		/* the heap's resident bytes (sim_run) */
	/* adaptive magazines: each class's largest magazine size in force
	 * over the CPUs (objects; 0 before the cache exists) */
	uint16_t mag[SIM_MAX_CLASSES];
};

struct sim_result {
	uint64_t events, allocs, frees, reallocs, failed, enomem;
	uint64_t bad_event;		/* index, op and id of a bad event; UINT64_MAX none */
	/* what failed, in the engine's words, for the command to say after its
	 * name; "" when the error code (or bad_event) says it all */
	char err[512];
	unsigned int bad_op, bad_id;
	double seconds;			/* simulation loop only, wall */
	double cpu_seconds;		/* the same, CPU time of the thread */
	uint64_t page_allocs, page_frees, splits, merges;
	struct page_alloc_stats pages;	/* page_alloc's counters of the run;
					 * peak: above the start */
	struct page_alloc_stats pages_start;	/* when the run started */
	uint64_t held_peak, live_peak, live_end;
	int64_t ovh_peak;
	uint64_t held_sum, live_sum;	/* over samples */
	/*
	 * Resident memory, as the kernel counts it for this process: anonymous
	 * resident bytes above the start of the run, less the growth of the
	 * simulator's own structures (measured between the timed segments,
	 * where alone they grow). The simulation writes each block it is
	 * handed as `uslab replay --touch=first` does (its first 64 bytes and
	 * one byte of each further page); untouched pages of slabs and
	 * magazines stay free, and pages the library gives back are dropped.
	 * faults: minor page faults inside the timed segments.
	 */
	bool res_known;			/* /proc/self/statm was readable */
	uint64_t res_peak, res_sum;	/* res_sum over samples */
	uint64_t faults;
	unsigned int nr_cls;
	struct sim_class_result cls[SIM_MAX_CLASSES];
	/* the trace's named caches (sim_trace.named), created at their first
	 * allocation; NULL when the trace has none */
	struct sim_class_result *named;
	unsigned int nr_named;
	struct sim_sample *samples;
	size_t nr_samples, cap_samples;
	size_t nr_cls_samples;		/* samples with per-class figures */
	bool adaptive;			/* samples carry magazine sizes */
};

/* sim/simulate.c */
void sim_config_init(struct sim_config *cfg);
int sim_parse_mag_size(struct sim_config *cfg, const char *arg);
/* @opt: 'm' --mag-size, 'b' --batch, 'd' --depot-limit, 'a' --adapt,
 * 'n' --adapt-min, 'x' --adapt-max, 'B' --adapt-budget, 'h' --held
 * (CACHE=N, CACHE a kmalloc cache name, N >= 0). Return: 0, -EINVAL,
 * -ENOENT (--mag-size CLASS=N: CLASS no kmalloc class). */
int sim_parse_tunable(struct sim_config *cfg, int opt, const char *arg);
struct uslab_tunable;
/* The row of <uslab/tunables.h> that option @opt (as above) reads, or NULL. */
const struct uslab_tunable *sim_tunable_row(int opt);
/* Run @t once through the library (a stream is read to its end, chunk by
 * chunk); once per process (forked for more). */
int sim_run(struct sim_trace *t, const struct sim_config *cfg,
	    struct sim_result *res);
void sim_result_free(struct sim_result *res);
double sim_mean_overhead(const struct sim_result *res);
/* Exec this process again without address randomisation (once). */
void sim_fixed_layout(char **argv);
/* Mean resident bytes of the heap over the samples. */
double sim_mean_resident(const struct sim_result *res);

/* sim/simulate_layers.c: which engine the simulator runs (for reports). */
const char *sim_layers_engine(void);

/* sim/calibrate_model.c: the slow-path cost model. */
struct sim_cost_model {
	double hit_ns;			/* magazine hit, alloc or free */
	double refill_ns;		/* one refill from the slab layer, fixed part */
	double flush_ns;		/* one flush to the slab layer, fixed part */
	double refill_obj_ns;		/* ... and per object of its batch */
	double flush_obj_ns;
	double depot_ns;		/* one depot get or put */
	double page_ns;			/* one page_alloc block alloc or free */
	double fault_ns;		/* first touch of a page handed out fresh */
	bool calibrated;		/* read from a calibration file */
	char source[256];		/* the file, or "built-in default" */
};
/* @path: a calibration file, NULL: the built-in model. Return: 0, or -1
 * with what is wrong in @err ("--calibration PATH...: what"). */
int sim_cost_model_load(struct sim_cost_model *m, const char *path, char *err, size_t errlen);
/* Where the calibration lives. Return: 0, -ENOENT, -ENAMETOOLONG. */
int sim_calibration_path(char *buf, size_t len);
double sim_cost(const struct sim_cost_model *m, const struct sim_result *res);
double sim_class_cost(const struct sim_cost_model *m, const struct sim_cache_counts *c);

/* ---- sim/tune.c: the tuner's engine (uslab tune prints and draws). */

#define TUNE_MAX_VALUES	16	/* magazine sizes or depot limits swept */
#define TUNE_LAMBDAS	13	/* prices of a byte tried in round 2 */

/* One simulated configuration, as its child reports it. */
struct tune_out {
	int ok;
	unsigned int nr_cls;
	double cost_ns;
	double ovh_mean;
	int64_t ovh_peak;
	uint64_t held_peak;
	double res_mean;		/* resident bytes of the heap, mean over samples */
	uint64_t res_peak;		/* ... and peak */
	uint64_t faults;		/* page faults the run took */
	uint64_t page_ops;
	double hit_rate;
	double cls_cost[SIM_MAX_CLASSES];
	double cls_ovh[SIM_MAX_CLASSES];	/* mean over samples */
	uint64_t cls_ops[SIM_MAX_CLASSES];
	char cls_name[SIM_MAX_CLASSES][24];
	char err[256];			/* !ok: what the simulation said */
};

struct tune_job {
	long depot;
	int mag[SIM_MAX_CLASSES];	/* per class; uniform jobs repeat one value */
	bool uniform;
	bool defaults;			/* the library's defaults: mag -1, depot default */
	/* adaptive magazines (adapt=1): mag[] unused; bounds 0 = default */
	bool adapt;
	long adapt_max, adapt_budget_kb;
	struct tune_out out;
	bool frontier, recommended;
};

/* What is swept. */
struct tune_space {
	long mags[TUNE_MAX_VALUES];
	long depots[TUNE_MAX_VALUES];
	unsigned int nm, nd;
	bool compose;			/* round 2: per-class settings */
	/* adaptive magazines: the adaptive default always; with --adapt-max /
	 * --adapt-budgets, every pair of these bounds (0 = default) too */
	long amaxs[TUNE_MAX_VALUES], abudgets[TUNE_MAX_VALUES];
	unsigned int nam, nab;
	bool no_adapt;			/* --no-adapt: fixed sizes only */
};

struct tune {
	const struct sim_trace *t;	/* decoded in memory */
	struct sim_cost_model model;
	unsigned int workers;		/* simulations at once */
	int batch;			/* -1 = default */
	bool peak;			/* frontier on peak, not mean, resident memory */
	/* called as each simulation ends (NULL: none); the engine prints
	 * nothing, the command draws a bar */
	void (*progress)(const struct tune *tu);
	/* what failed, for the command to say after its name ("" none) */
	char err[512];
	struct tune_job *jobs;
	size_t nr_jobs, cap_jobs;
	size_t grid;			/* jobs[0, grid): round 1; jobs[grid]: defaults */
	size_t rec;			/* the recommended job (tune_frontier) */
	size_t done, total;
};

/* Round 1: the uniform grid and the defaults. Return: 0, -ENOMEM, -EIO when
 * a simulation failed (the others still ran), -errno of fork/pipe/wait. */
/* Before a counted simulation: the program's writable file pages and the
 * .bss after them get their own copies, its read-only file pages are
 * mapped (tune's forked children and uslab sim alike, so that both count
 * the same page faults and resident peak for the same setting). */
void sim_own_program_pages(void);
int tune_grid(struct tune *tu, const struct tune_space *sp);
/* A job ranked by @key (time, memory, a frontier's overhead). */
struct tune_rank {
	double key;
	double key2;	/* the other axis: breaks ties of @key */
	size_t job;
};
int tune_rank_cmp(const void *a, const void *b);
/* Round 2 (after tune_grid): per-class settings. Return: as tune_grid,
 * -ENOENT when no simulation of round 1 succeeded. */
int tune_compose(struct tune *tu, const struct tune_space *sp);
/* A new, zeroed job at the end of tu->jobs, or NULL (out of memory). */
struct tune_job *tune_add(struct tune *tu);
/* Marks the frontier and tu->rec. Return: 0, -ENOENT when nothing ran. */
int tune_frontier(struct tune *tu);
/* The memory the frontier is drawn on: the heap's resident bytes (mean, or
 * peak with tu->peak). */
double tune_job_ovh(const struct tune *tu, const struct tune_job *j);

/* What the user wants (uslab tune --goal). */
enum tune_goal { TUNE_BALANCED, TUNE_TIME, TUNE_MEMORY };
#define TUNE_MAX_CANDIDATES	8
/*
 * The few configurations (not the defaults) the model finds best for @goal,
 * at most @k, into @out (job indices), best first. Return: how many.
 */
unsigned int tune_candidates(const struct tune *tu, enum tune_goal goal, unsigned int k,
			     size_t *out);
void tune_free(struct tune *tu);

#endif /* USLAB_SIM_SIM_H */
