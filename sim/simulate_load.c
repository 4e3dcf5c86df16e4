// SPDX-License-Identifier: MIT
/*
 * Decoding a trace into the compact form that the simulator, the tuner and
 * the replayer run from: 32 bytes an event, ids checked against the id
 * space, the CPU folded onto the simulated CPU count, the alignment kept as
 * a shift. Decoding happens before any timing starts, so the measured loops
 * never pay for zstd or varints.
 *
 * No locks: a loaded trace is read-only once built and shared by forked
 * tuner workers copy-on-write.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "uslab/trace.h"
#include "sim/internal.h"

#define SIM_LOAD_CHUNK	(1u << 20)	/* events per allocation step */

/*
 * sim_dense_id - the dense id of trace id @id, given at first sight (0, NULL,
 * stays 0). Return: 0, -E2BIG past 2^32 - 2 distinct ids, -ENOMEM.
 */
static int sim_dense_id(struct sim_trace *t, uint64_t id, uint32_t *out)
{
	const uint64_t *v;
	uint64_t d;

	if (!id) {
		*out = 0;
		return 0;
	}
	v = hmap_find(&t->ids, id);
	if (likely(v)) {
		*out = (uint32_t)*v;
		return 0;
	}
	d = t->id_space ? t->id_space : 1;
	if (d >= UINT32_MAX)
		return -E2BIG;
	if (d >= t->trace_id_cap) {
		uint64_t cap = t->trace_id_cap ? 2 * t->trace_id_cap : 4096;
		uint64_t *n = realloc(t->trace_id, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->trace_id = n;
		t->trace_id_cap = cap;
	}
	if (hmap_insert(&t->ids, id, d))
		return -ENOMEM;
	t->trace_id[d] = id;
	t->id_space = d + 1;
	*out = (uint32_t)d;
	return 0;
}

/*
 * sim_event_budget - decoded events a whole-trace load may hold: a quarter of
 * physical memory or of the address-space limit, at 32 bytes an event (the
 * rule `uslab replay` follows for its own decoding, docs/sim.md). A few
 * kilobytes of zstd can decode to hundreds of millions of events; past the
 * budget the load stops with the event's byte offset rather than growing
 * until the machine swaps or the kernel kills it.
 */
uint64_t sim_event_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t mem = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 1ull << 31;
	const char *env = getenv("USLAB_EVENT_BUDGET");
	struct rlimit rl;

	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < mem)
		mem = rl.rlim_cur;
	if (env && *env) {	/* tests: a smaller budget without a smaller machine */
		char *end;
		unsigned long long v = strtoull(env, &end, 10);

		if (!*end && v && v < mem / 4 / sizeof(struct sim_ev))
			return v;
	}
	return mem / 4 / sizeof(struct sim_ev);
}

uint64_t sim_trace_id(const struct sim_trace *t, uint32_t id)
{
	return id && id < t->id_space ? t->trace_id[id] : id;
}

/*
 * sim_named_of - the simulator's named cache (index + 1, 0 = folded into
 * the size's class) of trace cache id @id, mapping the table's entries met
 * so far: the first SIM_MAX_NAMED become caches of their own (a name met
 * twice, with another size, gets the size appended), the rest fold.
 */
static int sim_named_of(struct sim_trace *t, const struct trace_meta *m, uint32_t id,
			uint32_t *out)
{
	if (id > t->nr_named_of) {
		uint8_t *n = realloc(t->named_of, m->ncaches);

		if (!n)
			return -ENOMEM;
		t->named_of = n;
		for (uint32_t i = t->nr_named_of; i < m->ncaches; i++) {
			struct sim_named_cache *c = &t->named[t->nr_named];
			bool dup = false;

			if (t->nr_named == SIM_MAX_NAMED) {
				t->named_of[i] = 0;
				t->named_folded++;
				continue;
			}
			for (unsigned int k = 0; k < t->nr_named; k++)
				dup |= !strncmp(t->named[k].name, m->caches[i].name,
						sizeof(c->name) - 1);
			if (dup)
				snprintf(c->name, sizeof(c->name), "%.20s-%" PRIu64,
					 m->caches[i].name, m->caches[i].size);
			else
				snprintf(c->name, sizeof(c->name), "%s", m->caches[i].name);
			c->size = m->caches[i].size;
			t->named_of[i] = (uint8_t)++t->nr_named;
		}
		t->nr_named_of = m->ncaches;
	}
	*out = id ? t->named_of[id - 1] : 0;
	return 0;
}

/*
 * sim_ev_from_trace - fold one event. @t->cpus > 0. Return: 0, or -errno
 * reported on the reader (the message names the event and its field).
 */
static int sim_ev_from_trace(struct sim_trace *t, struct trace_reader *r,
			     struct sim_ev *d, const struct trace_event *ev)
{
	uint32_t cpu = ev->cpu == TRACE_CPU_UNKNOWN ? ev->tid : ev->cpu;
	int rc;

	rc = sim_dense_id(t, ev->id, &d->id);
	if (!rc && ev->op == TRACE_OP_CACHE_ALLOC)
		rc = sim_named_of(t, trace_reader_meta(r), ev->cache, &d->cache);
	else if (!rc)
		rc = sim_dense_id(t, ev->old_id, &d->old_id);
	if (unlikely(rc == -E2BIG))
		return trace_reader_reject(r, ev->old_id && d->id ? TRACE_FIELD_OLD_ID :
					   TRACE_FIELD_ID, "more than 2^32 - 2 distinct object ids");
	if (unlikely(rc))
		return rc;
	d->time_ns = ev->time_ns;
	d->size = ev->size;
	d->tid = ev->tid;
	d->cpu = (uint16_t)(cpu % t->cpus);
	d->op = ev->op;
	d->align_shift = ev->align ? (uint8_t)(63 - __builtin_clzll(ev->align)) : 0;
	if ((ev->align & (ev->align - 1)) && d->align_shift < 63)
		d->align_shift++;	/* not a power of two: round up, as glibc */
	if (ev->tid >= t->nthreads)
		t->nthreads = ev->tid + 1;
	return 0;
}

void sim_trace_free(struct sim_trace *t)
{
	if (t->r)
		trace_reader_close(t->r);
	free(t->ev);
	free(t->named_of);
	free(t->cmdline);
	free(t->trace_id);
	hmap_destroy(&t->ids);
	memset(t, 0, sizeof(*t));
}

/*
 * Header fields both loaders use. The CPU count is the recording's; the
 * simulator runs at most TRACE_MAX_CPUS virtual CPUs (the percpu layer's
 * vcpu table is sized by it), so a larger one is refused, naming the field.
 */
static int sim_trace_begin(struct sim_trace *t, struct trace_reader *r,
			   unsigned int cpus, const char *who)
{
	const struct trace_meta *m = trace_reader_meta(r);

	t->rec_cpus = m->cpus;
	t->no_clock = m->clock_id == TRACE_CLOCK_NONE;
	if (!cpus && m->cpus > TRACE_MAX_CPUS) {
		trace_reader_reject(r, TRACE_FIELD_HDR_CPUS, "the recording says %u CPUs; "
				    "the simulator runs 1 to %u virtual CPUs: choose with --cpus N",
				    m->cpus, TRACE_MAX_CPUS);
		fprintf(stderr, "%s: %s\n", who, trace_reader_error(r));
		return -EPROTO;
	}
	/* --cpus, else the recording machine's, else Kconfig's default */
	t->cpus = cpus ? cpus : (m->cpus ? m->cpus : CONFIG_SIM_DEFAULT_CPUS);
	t->cmdline = strdup(m->cmdline ? m->cmdline : "");
	if (!t->cmdline || hmap_init(&t->ids)) {
		fprintf(stderr, "%s: out of memory\n", who);
		return -ENOMEM;
	}
	return 0;
}

int sim_trace_load(struct sim_trace *t, const char *path, unsigned int cpus,
		   const char *who)
{
	struct trace_reader *r = NULL;
	const struct trace_meta *m;
	struct trace_event ev;
	uint64_t budget = sim_event_budget();
	int rc;

	memset(t, 0, sizeof(*t));
	/* "-" is stdin; --pid/--comm (or the busiest process) selected */
	r = cmd_open_trace_as(who, path);
	if (!r) {
		rc = -EINVAL;
		goto out_close;
	}
	rc = sim_trace_begin(t, r, cpus, who);
	if (rc)
		goto out_close;
	m = trace_reader_meta(r);
	/* The trailer's count is a claim until the end: a hint for the first
	 * step only, growth follows the events met. */
	t->cap = m->has_summary && m->nevents ? min_t(uint64_t, m->nevents, SIM_LOAD_CHUNK) : 0;
	if (t->cap) {
		t->ev = malloc(t->cap * sizeof(*t->ev));
		if (!t->ev) {
			rc = -ENOMEM;
			fprintf(stderr, "%s: %s: out of memory\n", who, path);
			goto out_close;
		}
	}
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		if (unlikely(t->n == budget)) {
			rc = trace_reader_reject(r, TRACE_FIELD_OP, "more than %" PRIu64
						 " events to hold: %s decodes the whole trace into "
						 "memory first (32 bytes an event), and that is a "
						 "quarter of the memory it may use", budget, who);
			break;
		}
		if (unlikely(t->n == t->cap)) {
			size_t cap = t->cap < SIM_LOAD_CHUNK ? SIM_LOAD_CHUNK : 2 * t->cap;

			if (cap > budget)
				cap = (size_t)budget;	/* never ask beyond the budget */
			struct sim_ev *n = realloc(t->ev, cap * sizeof(*n));

			if (!n) {
				rc = -ENOMEM;
				fprintf(stderr, "%s: %s: out of memory at event %zu\n",
					who, path, t->n);
				goto out_close;
			}
			t->ev = n;
			t->cap = cap;
		}
		rc = sim_ev_from_trace(t, r, &t->ev[t->n], &ev);
		if (rc)
			break;
		t->n++;
	}
	if (rc < 0) {
		if (rc == -ENOMEM)
			fprintf(stderr, "%s: %s: out of memory at event %zu\n", who, path, t->n);
		else
			fprintf(stderr, "%s: %s\n", who, trace_reader_error(r));
		goto out_close;
	}
	rc = 0;
out_close:
	if (r)
		trace_reader_close(r);
	if (rc)
		sim_trace_free(t);
	return rc;
}

int sim_trace_open(struct sim_trace *t, const char *path, unsigned int cpus,
		   const char *who)
{
	const struct trace_meta *m;
	int rc;

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->r = cmd_open_trace_as(who, path);
	if (!t->r) {
		sim_trace_free(t);
		return -EINVAL;
	}
	rc = sim_trace_begin(t, t->r, cpus, who);
	if (rc) {
		sim_trace_free(t);
		return rc;
	}
	m = trace_reader_meta(t->r);
	/* Claims, for the sampling interval only: the id space and threads
	 * follow the events met. */
	if (m->has_summary)
		t->n = m->nevents;
	return 0;
}

long sim_trace_read(struct sim_trace *t, struct sim_ev *buf, size_t max,
		    const char *who)
{
	struct trace_event ev;
	size_t n = 0;
	int rc = 0;

	while (n < max && (rc = trace_reader_next(t->r, &ev)) == 1) {
		rc = sim_ev_from_trace(t, t->r, &buf[n], &ev);
		if (rc)
			break;
		n++;
	}
	if (rc < 0) {
		if (rc == -ENOMEM)
			fprintf(stderr, "%s: %s: out of memory\n", who, t->path);
		else
			fprintf(stderr, "%s: %s\n", who, trace_reader_error(t->r));
		return rc;
	}
	return (long)n;
}
