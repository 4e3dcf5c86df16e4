// SPDX-License-Identifier: MIT
/*
 * uslab gen: synthetic workloads written as traces.
 *
 * Each generator is a set of per-thread state machines; the threads are
 * interleaved round-robin, one operation each, so the trace looks like the
 * threads ran in parallel on min(threads, cpus) CPUs. Time advances by a
 * fixed step per event. Everything is drawn from one seeded xoshiro256**
 * stream per thread, so the same arguments give the same bytes.
 *
 *   rpmalloc      the rpmalloc thread-cache study (shared/seeds): each thread
 *                 allocates B blocks in [min, max] bytes with a linear
 *                 falloff, then L loops each freeing and reallocating F% of
 *                 them at scattered indices, then frees everything. No
 *                 cross-thread frees.
 *   mtmalloc-N    mtmalloc's benchmark size ranges (0-32K ... 0-256K): each
 *                 thread allocates sizes uniform in [1, N] and keeps a window
 *                 of W live blocks, freeing the oldest as it goes.
 *   prodcons      producer-consumer: the first half of the threads allocate
 *                 messages into a FIFO of depth Q, the second half free them
 *                 (every free is cross-thread).
 *
 * No locks: single-threaded tool.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/compiler.h"
#include "uslab/trace.h"
#include "tools/uslab/builtin.h"

struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed * 0x2545f4914f6cdd1dULL + stream;
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256**: a few shifts and multiplies per draw. */
static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

/* Uniform in [0, n), n > 0; the multiply-shift bias is below 2^-32. */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform double in [0, 1). */
static double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * gen_size_linear_falloff - a size in [lo, hi] whose density falls linearly
 * from lo to hi (density at hi is zero): with y = (hi - x) / (hi - lo),
 * the density of y is 2y, so y = sqrt(u).
 */
static uint64_t size_linear_falloff(struct rng *r, uint64_t lo, uint64_t hi)
{
	double y = __builtin_sqrt(rng_unit(r));
	uint64_t x = hi - (uint64_t)(y * (double)(hi - lo));

	return x < lo ? lo : (x > hi ? hi : x);
}

struct gen_kind;

struct gen_params {
	const char *kind;	/* its name, as given */
	const struct gen_kind *k;
	unsigned int threads;
	unsigned int cpus;
	uint64_t seed;
	uint64_t blocks;	/* rpmalloc: blocks per thread */
	uint64_t loops;		/* rpmalloc: loops; mtmalloc/prodcons: ops per thread */
	uint64_t percent;	/* rpmalloc: share freed per loop */
	uint64_t min_size, max_size;
	uint64_t window;	/* mtmalloc: live blocks per thread; prodcons: queue depth */
	uint64_t step_ns;
};

struct gen_thread {
	struct rng rng;
	uint64_t *ids;		/* live object ids by slot (rpmalloc, mtmalloc ring) */
	uint64_t nr;		/* slots in use */
	uint64_t phase, i, l, idx;
	int substep;
	bool done;
};

struct gen_state {
	struct gen_params p;
	struct gen_thread *t;
	struct trace_writer *out;
	uint64_t next_id;	/* ids handed out so far: the id space */
	uint64_t *free_ids;	/* ids freed, reused last-in first-out */
	uint64_t nr_free_ids, free_ids_cap;
	uint64_t objects;
	uint64_t now;
	uint64_t events;
	/* prodcons FIFO of ids */
	uint64_t *fifo;
	uint64_t head, tail;
	unsigned int turn;	/* consumer whose turn it is to free */
};

/* One event; @old_id for a realloc, @align for the memalign family. */
static int emit_full(struct gen_state *g, unsigned int tid, enum trace_op op,
		     uint64_t id, uint64_t old_id, uint64_t size, uint64_t align)
{
	struct trace_event ev = {
		.op = op,
		.id = id,
		.old_id = old_id,
		.size = size,
		.align = align,
		.tid = tid,
		.cpu = tid % g->p.cpus,
		.time_ns = g->now,
	};
	int err;

	if (op == TRACE_OP_FREE) {
		/* Keep ids dense, as the format promises readers (trace.h). */
		if (g->nr_free_ids == g->free_ids_cap) {
			uint64_t cap = g->free_ids_cap ? 2 * g->free_ids_cap : 1024;
			uint64_t *n = realloc(g->free_ids, cap * sizeof(*n));

			if (!n) {
				fprintf(stderr, "uslab gen: out of memory\n");
				return -ENOMEM;
			}
			g->free_ids = n;
			g->free_ids_cap = cap;
		}
		g->free_ids[g->nr_free_ids++] = id;
	}
	g->now += g->p.step_ns;
	g->events++;
	err = trace_writer_add(g->out, &ev);
	if (err)
		fprintf(stderr, "uslab gen: %s\n", trace_writer_error(g->out));
	return err;
}

static int emit(struct gen_state *g, unsigned int tid, enum trace_op op,
		uint64_t id, uint64_t size)
{
	return emit_full(g, tid, op, id, 0, size, 0);
}

static uint64_t new_id(struct gen_state *g)
{
	g->objects++;
	if (g->nr_free_ids)
		return g->free_ids[--g->nr_free_ids];
	return ++g->next_id;
}

static int rp_step(struct gen_state *g, unsigned int tid)
{
	struct gen_thread *t = &g->t[tid];
	const struct gen_params *p = &g->p;
	uint64_t nfree = p->blocks * p->percent / 100;
	uint64_t id;

	switch (t->phase) {
	case 0:	/* fill */
		if (t->i < p->blocks) {
			id = new_id(g);
			t->ids[t->i++] = id;
			return emit(g, tid, TRACE_OP_MALLOC, id,
				    size_linear_falloff(&t->rng, p->min_size, p->max_size));
		}
		t->phase = 1;
		t->i = 0;
		/* fall through */
	case 1:	/* loops: free then reallocate at scattered indices */
		if (t->l < p->loops && nfree) {
			if (t->substep == 0) {
				t->idx = rng_below(&t->rng, p->blocks);
				t->substep = 1;
				return emit(g, tid, TRACE_OP_FREE, t->ids[t->idx], 0);
			}
			id = new_id(g);
			t->ids[t->idx] = id;
			t->substep = 0;
			if (++t->i == nfree) {
				t->i = 0;
				t->l++;
			}
			return emit(g, tid, TRACE_OP_MALLOC, id,
				    size_linear_falloff(&t->rng, p->min_size, p->max_size));
		}
		t->phase = 2;
		t->i = 0;
		/* fall through */
	case 2:	/* free everything */
		if (t->i < p->blocks)
			return emit(g, tid, TRACE_OP_FREE, t->ids[t->i++], 0);
		t->done = true;
	}
	return 0;
}

static int mt_step(struct gen_state *g, unsigned int tid)
{
	struct gen_thread *t = &g->t[tid];
	const struct gen_params *p = &g->p;
	uint64_t id;

	if (t->phase == 0) {
		if (t->l < p->loops) {
			/* Ring of p->window slots: when full, free the oldest first. */
			if (t->substep == 0 && t->nr == p->window) {
				t->substep = 1;
				return emit(g, tid, TRACE_OP_FREE, t->ids[t->idx], 0);
			}
			if (t->substep == 1)
				t->nr--;
			t->substep = 0;
			id = new_id(g);
			t->ids[t->idx] = id;
			t->idx = (t->idx + 1) % p->window;
			t->nr++;
			t->l++;
			return emit(g, tid, TRACE_OP_MALLOC, id,
				    1 + rng_below(&t->rng, p->max_size));
		}
		t->phase = 1;
	}
	if (t->nr) {
		/* oldest live slot is idx - nr (mod window) */
		uint64_t slot = (t->idx + p->window - t->nr) % p->window;

		t->nr--;
		return emit(g, tid, TRACE_OP_FREE, t->ids[slot], 0);
	}
	t->done = true;
	return 0;
}

/*
 * Producers are threads [0, np), consumers [np, threads). A producer step
 * allocates one message unless the FIFO holds @window of them; a consumer
 * step frees the oldest message once the FIFO is full (or the producers are
 * done), so about @window messages are live in the steady state.
 */
static int pc_step(struct gen_state *g, unsigned int tid)
{
	struct gen_thread *t = &g->t[tid];
	const struct gen_params *p = &g->p;
	unsigned int i, np = p->threads / 2;
	bool producers_done = true;
	uint64_t id;

	if (tid < np) {
		if (t->l >= p->loops) {
			t->done = true;
			return 0;
		}
		if (g->tail - g->head >= p->window)
			return 0;	/* queue full: the producer waits */
		id = new_id(g);
		g->fifo[g->tail++ % p->window] = id;
		t->l++;
		return emit(g, tid, TRACE_OP_MALLOC, id,
			    p->min_size + rng_below(&t->rng, p->max_size - p->min_size + 1));
	}
	for (i = 0; i < np; i++)
		producers_done &= g->t[i].done;
	if (g->head == g->tail) {
		t->done = producers_done;
		return 0;
	}
	/* Consumers wait for a full queue, so about @window messages stay live,
	 * and take turns, so each frees its share. */
	if (!producers_done && g->tail - g->head < p->window)
		return 0;
	if (tid - np != g->turn)
		return 0;
	g->turn = (g->turn + 1) % (p->threads - np);
	return emit(g, tid, TRACE_OP_FREE, g->fifo[g->head++ % p->window], 0);
}

/*
 * resize: our own workload of the malloc family's whole surface, for the
 * simulator's fidelity test: each thread keeps up to @window blocks and per
 * step frees one (when full) or makes one by malloc, calloc, realloc (grow
 * or shrink, in a range that moves between classes), memalign,
 * posix_memalign, aligned_alloc or valloc (alignments 16 .. 4096).
 */
static int rs_step(struct gen_state *g, unsigned int tid)
{
	static const enum trace_op aligned_ops[] = {
		TRACE_OP_MEMALIGN, TRACE_OP_POSIX_MEMALIGN, TRACE_OP_ALIGNED_ALLOC,
	};
	struct gen_thread *t = &g->t[tid];
	const struct gen_params *p = &g->p;
	uint64_t id, size, slot, r;

	if (t->l >= p->loops) {
		if (!t->nr) {
			t->done = true;
			return 0;
		}
		return emit(g, tid, TRACE_OP_FREE, t->ids[--t->nr], 0);
	}
	t->l++;
	size = p->min_size + rng_below(&t->rng, p->max_size - p->min_size + 1);
	r = rng_below(&t->rng, 100);
	if (t->nr == p->window || (t->nr && r < 30)) {
		slot = rng_below(&t->rng, t->nr);
		if (r < 15) {		/* resize in place or move: same id */
			id = t->ids[slot];
			return emit_full(g, tid, TRACE_OP_REALLOC, id, id, size, 0);
		}
		id = t->ids[slot];
		t->ids[slot] = t->ids[--t->nr];
		return emit(g, tid, TRACE_OP_FREE, id, 0);
	}
	id = new_id(g);
	t->ids[t->nr++] = id;
	if (r < 50)
		return emit(g, tid, TRACE_OP_MALLOC, id, size);
	if (r < 60)
		return emit(g, tid, TRACE_OP_CALLOC, id, size);
	if (r < 70)			/* realloc(NULL, n) */
		return emit_full(g, tid, TRACE_OP_REALLOC, id, 0, size, 0);
	if (r < 95)
		return emit_full(g, tid, aligned_ops[r % 3], id, 0, size,
				 (uint64_t)16 << rng_below(&t->rng, 9));
	return emit_full(g, tid, TRACE_OP_VALLOC, id, 0, size, 4096);
}

/* The kinds an option applies to, as bits of its table entry's .data. */
#define GEN_RP		(1 << 0)	/* rpmalloc */
#define GEN_MT		(1 << 1)	/* mtmalloc-N */
#define GEN_PC		(1 << 2)	/* prodcons */
#define GEN_RS		(1 << 3)	/* resize */
#define GEN_ALL		(GEN_RP | GEN_MT | GEN_PC | GEN_RS)

/* Each kind: its generator and the defaults of what it takes. */
static const struct gen_kind {
	const char *name;
	int (*step)(struct gen_state *g, unsigned int tid);
	long bit;			/* GEN_RP ...: the options it takes */
	uint64_t threads, min_threads;
	uint64_t min_size, max_size, loops, window;
} gen_kinds[] = {
	{ "rpmalloc", rp_step, GEN_RP, 1, 1, 16, 16000, 1000, 0 },
	/* mtmalloc: sizes from 1 (no --min) */
	{ "mtmalloc-32k", mt_step, GEN_MT, 1, 1, 1, 32 << 10, 100000, 64 },
	{ "mtmalloc-64k", mt_step, GEN_MT, 1, 1, 1, 64 << 10, 100000, 64 },
	{ "mtmalloc-128k", mt_step, GEN_MT, 1, 1, 1, 128 << 10, 100000, 64 },
	{ "mtmalloc-256k", mt_step, GEN_MT, 1, 1, 1, 256 << 10, 100000, 64 },
	{ "prodcons", pc_step, GEN_PC, 2, 2, 16, 1024, 100000, 256 },
	{ "resize", rs_step, GEN_RS, 1, 1, 1, 6000, 100000, 512 },
};

static int gen_run(struct gen_state *g)
{
	unsigned int i, live;
	int err;

	do {
		live = 0;
		for (i = 0; i < g->p.threads; i++) {
			if (g->t[i].done)
				continue;
			err = g->p.k->step(g, i);
			if (err)
				return err;
			live += !g->t[i].done;
		}
	} while (live);
	return 0;
}

static const char gen_usage[] =
	"uslab gen KIND [-t THREADS] [-o TRACE] [options]\n"
	"  KIND: rpmalloc | mtmalloc-32k | mtmalloc-64k | mtmalloc-128k |\n"
	"        mtmalloc-256k | prodcons | resize\n"
	"        (resize: malloc, calloc, realloc, memalign, posix_memalign,\n"
	"        aligned_alloc, valloc; window of -w blocks, -l operations)";

#define GEN_SIZE_MAX	(1ull << 30)
#define GEN_NOPTS	10

/* The options as given; 0 = not given (the kind's default). */
struct gen_args {
	const char *out;
	uint64_t threads, cpus, loops, window, min_size, max_size;
	bool given[GEN_NOPTS];	/* numeric option i given (GEN_OPT's @i) */
};

/* A numeric option: one of @a->given[@i], applies to the kinds @kinds. */
#define GEN_OPT(s, l, v, i, h, lo, hi, kinds) \
	OPT_U64(s, l, v, "N", h, lo, hi, .data = (kinds), .set = &a->given[i])

/* An option the kind has no use for is an error, not silently ignored. */
static int gen_check_applies(const struct cli_opt *opts, const char *kind, long kinds)
{
	for (const struct cli_opt *o = opts; o->type != OPTION_END; o++)
		if (o->set && *o->set && !(o->data & kinds))
			return usage_error(opts, gen_usage, "--%s: %s has no such parameter",
					   o->long_name, kind);
	return 0;
}

/* The kind's shape: its defaults under what was given. Return: 0 or 2. */
static int gen_kind(struct gen_params *p, struct gen_args *a, const struct cli_opt *opts)
{
	const struct gen_kind *k = gen_kinds;

	while (k < gen_kinds + ARRAY_SIZE(gen_kinds) && strcmp(k->name, p->kind))
		k++;
	if (k == gen_kinds + ARRAY_SIZE(gen_kinds))
		return usage_error(opts, gen_usage, "unknown kind '%s'", p->kind);
	if (gen_check_applies(opts, p->kind, k->bit))
		return 2;
	p->k = k;
	p->min_size = a->min_size ? a->min_size : k->min_size;
	p->max_size = a->max_size ? a->max_size : k->max_size;
	p->loops = a->loops ? a->loops : k->loops;
	p->window = a->window ? a->window : k->window;
	a->threads = a->threads ? a->threads : k->threads;
	if (a->threads < k->min_threads)
		return usage_error(opts, gen_usage, "--threads: %s needs %" PRIu64 " or more, found %"
				   PRIu64, p->kind, k->min_threads, a->threads);
	/* The one range that depends on two options (or on a kind's default). */
	if (p->min_size > p->max_size)
		return usage_error(opts, gen_usage, "--min: %" PRIu64 " is above the largest size %"
				   PRIu64 " (--max%s)", p->min_size, p->max_size,
				   a->max_size ? "" : ", the kind's default");
	p->threads = (unsigned int)a->threads;
	p->cpus = (unsigned int)(a->cpus ? a->cpus : (a->threads < 2 ? a->threads : 2));
	return 0;
}

/* Per-thread state, the prodcons queue. Return: 0 or -ENOMEM. */
static int gen_alloc(struct gen_state *g)
{
	const struct gen_params *p = &g->p;
	bool prodcons = p->k->bit == GEN_PC;

	g->t = calloc(p->threads, sizeof(*g->t));
	if (!g->t)
		return -ENOMEM;
	for (unsigned int i = 0; i < p->threads; i++) {
		uint64_t n = p->k->bit == GEN_RP ? p->blocks : p->window;

		rng_seed(&g->t[i].rng, p->seed, i);
		if (prodcons)
			continue;
		g->t[i].ids = malloc((n ? n : 1) * sizeof(uint64_t));
		if (!g->t[i].ids)
			return -ENOMEM;
	}
	if (prodcons) {
		g->fifo = malloc(p->window * sizeof(uint64_t));
		if (!g->fifo)
			return -ENOMEM;
	}
	return 0;
}

static void gen_free(struct gen_state *g)
{
	if (g->t)
		for (unsigned int i = 0; i < g->p.threads; i++)
			free(g->t[i].ids);
	free(g->t);
	free(g->fifo);
	free(g->free_ids);
}

/* Run the workload into @path. Return: 0, or 1 after saying what failed. */
static int gen_write(struct gen_state *g, const char *path)
{
	const struct gen_params *p = &g->p;
	struct trace_meta meta = { 0 };
	char cmdline[256];
	int rc;

	snprintf(cmdline, sizeof(cmdline), "uslab gen %s -t %u --seed %" PRIu64,
		 p->kind, p->threads, p->seed);
	meta.version_major = TRACE_FORMAT_MAJOR;
	meta.version_minor = TRACE_FORMAT_MINOR;
	meta.cpus = p->cpus;
	meta.clock_id = CLOCK_MONOTONIC;
	snprintf(meta.tool, sizeof(meta.tool), "uslab gen");
	meta.cmdline = cmdline;
	rc = trace_writer_open(&g->out, path, &meta, 0);
	if (rc)		/* the writer said why */
		return 1;
	if (gen_run(g)) {
		trace_writer_abort(g->out);
		return 1;
	}
	rc = trace_writer_close(g->out);
	if (rc) {
		fprintf(stderr, "uslab gen: %s: %s\n", path, strerror(-rc));
		return 1;
	}
	fprintf(stderr, "uslab gen: %s: %" PRIu64 " events, %" PRIu64 " objects, %u threads\n",
		path, g->events, g->objects, p->threads);
	return 0;
}

int cmd_gen(int argc, char **argv)
{
	struct gen_state g = { .p = { .seed = 1, .blocks = 150000, .percent = 50,
				      .step_ns = 50 } };
	struct gen_args args = { 0 }, *a = &args;
	struct gen_params *p = &g.p;
	const struct cli_opt opts[] = {
		GEN_OPT('t', "threads", &a->threads, 0, "threads (default 1; prodcons: 2)",
			1, 4096, GEN_ALL),
		OPT_STRING('o', "output", &a->out, "FILE", "trace to write (required)",
			   .flags = OPT_REQUIRED),
		GEN_OPT('s', "seed", &p->seed, 1, "seed (default 1)", 0, UINT64_MAX, GEN_ALL),
		GEN_OPT('c', "cpus", &a->cpus, 2, "CPUs the threads run on (default min(threads, 2))",
			1, TRACE_MAX_CPUS, GEN_ALL),
		GEN_OPT('b', "blocks", &p->blocks, 3, "rpmalloc: blocks per thread (default 150000)",
			1, 1u << 24, GEN_RP),
		GEN_OPT('l', "loops", &a->loops, 4, "rpmalloc: loops (default 1000);\n"
			"mtmalloc, prodcons: allocations per thread\n(default 100000)",
			1, 1ull << 32, GEN_ALL),
		GEN_OPT('p', "percent", &p->percent, 5,
			"rpmalloc: blocks freed and reallocated per loop (50)", 0, 100, GEN_RP),
		GEN_OPT('w', "window", &a->window, 6, "mtmalloc: live blocks per thread (64);\n"
			"resize (512); prodcons: queue depth (256)", 1, 1u << 24,
			GEN_MT | GEN_PC | GEN_RS),
		GEN_OPT(0, "min", &a->min_size, 7, "smallest size (rpmalloc 16, prodcons 16)",
			1, GEN_SIZE_MAX, GEN_RP | GEN_PC | GEN_RS),
		GEN_OPT(0, "max", &a->max_size, 8, "largest size (rpmalloc 16000, mtmalloc-NK N\n"
			"KiB, prodcons 1024)", 1, GEN_SIZE_MAX, GEN_ALL),
		GEN_OPT(0, "step-ns", &p->step_ns, 9, "virtual time between events (default 50)",
			1, 1000000000, GEN_ALL),
		OPT_END(),
	};
	int rc;

	rc = parse_options(argc, argv, opts, gen_usage, 0);
	if (rc <= 0)
		return -rc;
	if (rc != argc - 1)
		return usage_error(opts, gen_usage, "need one KIND");
	p->kind = argv[rc];
	rc = gen_kind(p, a, opts);
	if (rc)
		return rc;
	if (gen_alloc(&g)) {
		fprintf(stderr, "uslab gen: out of memory\n");
		rc = 1;
	} else {
		rc = gen_write(&g, a->out);
	}
	gen_free(&g);
	return rc;
}
