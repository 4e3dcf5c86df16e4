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
#include <unistd.h>
#include "lib/compiler.h"
#include "uslab/trace.h"
#include "sim/internal.h"

#define SIM_LOAD_CHUNK	(1u << 20)	/* the first step at most: the trailer's claim */
#define SIM_LOAD_FIRST	4096u		/* the first step without a claim */

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
	return trace_event_budget(sizeof(struct trace_dense_ev));
}

uint64_t sim_trace_id(const struct sim_trace *t, uint32_t id)
{
	return trace_decoder_trace_id(&t->dec, id);
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
 * sim_decode - the next event of @t's reader through the shared decoder
 * (trace/decode.c), its named cache mapped. Return: 1, 0 at the end, or
 * -errno reported on the reader (the message names the event and its
 * field), -ENOMEM.
 */
static int sim_decode(struct sim_trace *t, struct trace_reader *r, struct trace_dense_ev *d)
{
	int rc = trace_decode_next(&t->dec, d);

	if (rc == 1 && d->op == TRACE_OP_CACHE_ALLOC) {
		int err = sim_named_of(t, trace_reader_meta(r), d->cache, &d->cache);

		if (err)
			return err;
	}
	return rc;
}

void sim_trace_free(struct sim_trace *t)
{
	if (t->r)
		trace_reader_close(t->r);
	free(t->ev);
	free(t->named_of);
	free(t->cmdline);
	trace_decoder_destroy(&t->dec);
	memset(t, 0, sizeof(*t));
}

/*
 * Header fields both loaders use. The CPU count is the recording's; the
 * simulator runs at most TRACE_MAX_CPUS virtual CPUs (the percpu layer's
 * vcpu table is sized by it), so a larger one is refused, naming the field.
 */
static int sim_trace_begin(struct sim_trace *t, struct trace_reader *r, unsigned int cpus)
{
	const struct trace_meta *m = trace_reader_meta(r);

	t->rec_cpus = m->cpus;
	t->no_clock = m->clock_id == TRACE_CLOCK_NONE;
	if (!cpus && m->cpus > TRACE_MAX_CPUS)
		return trace_reader_reject(r, TRACE_FIELD_HDR_CPUS, "the recording says %u CPUs; "
					   "the simulator runs 1 to %u virtual CPUs: choose with "
					   "--cpus N", m->cpus, TRACE_MAX_CPUS);
	/* --cpus, else the recording machine's, else Kconfig's default */
	t->cpus = cpus ? cpus : (m->cpus ? m->cpus : CONFIG_SIM_DEFAULT_CPUS);
	t->cmdline = strdup(m->cmdline ? m->cmdline : "");
	trace_decoder_init(&t->dec, r, TRACE_DENSE_BY_ID, t->cpus);
	return t->cmdline ? 0 : -ENOMEM;
}

int sim_trace_load(struct sim_trace *t, struct trace_reader *r, unsigned int cpus,
		   const char *who)
{
	const struct trace_meta *m = trace_reader_meta(r);
	struct trace_dense_ev ev;
	uint64_t budget = sim_event_budget();
	int rc;

	memset(t, 0, sizeof(*t));
	rc = sim_trace_begin(t, r, cpus);
	if (rc)
		return rc;
	/* The trailer's count is a claim until the end: a hint for the first
	 * step only, growth follows the events met. */
	t->cap = m->has_summary && m->nevents ? min_t(uint64_t, m->nevents, SIM_LOAD_CHUNK) : 0;
	if (t->cap) {
		t->ev = malloc(t->cap * sizeof(*t->ev));
		if (!t->ev)
			return -ENOMEM;
	}
	while ((rc = sim_decode(t, r, &ev)) == 1) {
		if (unlikely(t->n == budget)) {
			rc = trace_decoder_over_budget(&t->dec, budget, who);
			break;
		}
		if (unlikely(t->n == t->cap)) {
			/* doubling from what is held: a trace without a claim
			 * (cut, or a forged trailer) of a few events is not
			 * given 32 MiB */
			size_t cap = t->cap ? 2 * t->cap : SIM_LOAD_FIRST;

			if (cap > budget)
				cap = (size_t)budget;	/* never ask beyond the budget */
			struct trace_dense_ev *n = realloc(t->ev, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			t->ev = n;
			t->cap = cap;
		}
		t->ev[t->n++] = ev;
	}
	t->dec.r = NULL;	/* the caller's, closed after */
	return rc < 0 ? rc : 0;
}

int sim_trace_open(struct sim_trace *t, struct trace_reader *r, const char *path,
		   unsigned int cpus)
{
	const struct trace_meta *m = trace_reader_meta(r);
	int rc;

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->r = r;
	rc = sim_trace_begin(t, r, cpus);
	if (rc)
		return rc;
	/* Claims, for the sampling interval only: the id space and threads
	 * follow the events met. */
	if (m->has_summary)
		t->n = m->nevents;
	return 0;
}

long sim_trace_read(struct sim_trace *t, struct trace_dense_ev *buf, size_t max)
{
	size_t n = 0;
	int rc = 0;

	while (n < max && (rc = sim_decode(t, t->r, &buf[n])) == 1)
		n++;
	return rc < 0 ? rc : (long)n;
}
