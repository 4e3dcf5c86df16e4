// SPDX-License-Identifier: MIT
/*
 * The one decoder from a trace's events to the 32-byte events the simulator,
 * the tuner and the replayer run (struct trace_dense_ev, trace/trace.h): ids
 * made dense through a keyed table of the ids met, the CPU folded, the
 * alignment kept as a shift, every limit refused on the reader so the error
 * names the byte offset. sim/simulate_load.c keeps the events as they come;
 * tools/uslab/builtin-replay.c adds its per-thread order on top.
 *
 * Memory follows what the file holds, never what its trailer declares. No
 * locks: one decoder per reader.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "trace/internal.h"

uint64_t trace_event_budget(size_t event_bytes)
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

		if (!*end && v && v < mem / 4 / event_bytes)
			return v;
	}
	return mem / 4 / event_bytes;
}

int trace_decoder_over_budget(struct trace_decoder *d, uint64_t budget, const char *who)
{
	return trace_reader_reject(d->r, TRACE_FIELD_OP, "more than %" PRIu64
				   " events to hold: %s decodes the whole trace into "
				   "memory first (32 bytes an event), and that is a "
				   "quarter of the memory it may use", budget, who);
}

void trace_decoder_init(struct trace_decoder *d, struct trace_reader *r,
		       enum trace_dense_ids ids, unsigned int cpus)
{
	memset(d, 0, sizeof(*d));
	d->r = r;
	d->mode = ids;
	d->cpus = cpus ? cpus : 1;
	d->id_space = 1;
	hmap_init(&d->ids);
}

void trace_decoder_destroy(struct trace_decoder *d)
{
	free(d->trace_id);
	hmap_destroy(&d->ids);
	memset(d, 0, sizeof(*d));
}

uint64_t trace_decoder_trace_id(const struct trace_decoder *d, uint32_t id)
{
	return d->trace_id && id && id < d->id_space ? d->trace_id[id] : id;
}

/* A new dense id for trace id @id: the next one (by id: its trace id noted
 * for messages). Return: 0, -E2BIG past 2^32 - 2, -ENOMEM. */
static int new_dense(struct trace_decoder *d, uint64_t id, uint32_t *out)
{
	uint64_t n = d->id_space;

	if (n >= UINT32_MAX)
		return -E2BIG;
	if (d->mode == TRACE_DENSE_BY_LIFETIME) {
		/* no trace ids kept: nothing names a lifetime by them */
		d->id_space = n + 1;
		*out = (uint32_t)n;
		return 0;
	}
	if (n >= d->trace_id_cap) {
		uint64_t cap = d->trace_id_cap ? 2 * d->trace_id_cap : 4096;
		uint64_t *t = realloc(d->trace_id, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		d->trace_id = t;
		d->trace_id_cap = cap;
	}
	d->trace_id[n] = id;
	d->id_space = n + 1;
	*out = (uint32_t)n;
	return 0;
}

/* TRACE_DENSE_BY_ID: one dense id per trace id, given at first sight (0,
 * NULL, stays 0). */
static int dense_of_id(struct trace_decoder *d, uint64_t id, uint32_t *out)
{
	const uint64_t *v;
	int rc;

	if (!id) {
		*out = 0;
		return 0;
	}
	v = hmap_find(&d->ids, id);
	if (likely(v)) {
		*out = (uint32_t)*v;
		return 0;
	}
	rc = new_dense(d, id, out);
	if (!rc && hmap_insert(&d->ids, id, *out))
		rc = -ENOMEM;
	return rc;
}

/* TRACE_DENSE_BY_LIFETIME: the slot of a trace id's current object, 0
 * (NULL) for an id never allocated. */
static uint32_t slot_of(const struct trace_decoder *d, uint64_t id)
{
	const uint64_t *v = hmap_find(&d->ids, id);

	return v ? (uint32_t)*v : 0;
}

/*
 * TRACE_DENSE_BY_LIFETIME: one slot per object lifetime (an id reused later
 * gets a new one); a free names its object in @e->id.
 */
static int dense_lifetime(struct trace_decoder *d, const struct trace_event *ev,
			  struct trace_dense_ev *e)
{
	bool is_free = trace_op_is_free(ev->op);
	uint64_t *v;
	int rc;

	e->id = e->old_id = 0;
	if (ev->op == TRACE_OP_REALLOC && ev->old_id)
		e->old_id = slot_of(d, ev->old_id);
	if (is_free) {
		e->id = slot_of(d, ev->id);
		return 0;
	}
	if (!ev->id)
		return 0;
	if (ev->op == TRACE_OP_REALLOC && ev->id == ev->old_id) {
		e->id = e->old_id;	/* in place: the same lifetime */
		return 0;
	}
	rc = new_dense(d, ev->id, &e->id);
	if (rc)
		return rc;
	v = hmap_find(&d->ids, ev->id);
	if (v)
		*v = e->id;
	else if (hmap_insert(&d->ids, ev->id, e->id))
		return -ENOMEM;
	return 0;
}

/* log2 of the alignment, rounded up as glibc rounds memalign's; above
 * 2^63 it stays 63 (the call fails, as it did). */
static uint8_t align_shift(uint64_t align)
{
	unsigned int shift = align > 1 ? 64 - (unsigned int)__builtin_clzll(align - 1) : 0;

	return (uint8_t)min_t(unsigned int, shift, 63);
}

int trace_decode_next(struct trace_decoder *d, struct trace_dense_ev *e)
{
	struct trace_event ev;
	uint32_t cpu;
	int rc;

	rc = trace_reader_next(d->r, &ev);
	if (rc != 1)
		return rc;
	if (d->mode == TRACE_DENSE_BY_ID) {
		rc = dense_of_id(d, ev.id, &e->id);
		if (!rc && ev.op == TRACE_OP_CACHE_ALLOC)
			e->cache = ev.cache;
		else if (!rc)
			rc = dense_of_id(d, ev.old_id, &e->old_id);
		if (unlikely(rc == -E2BIG))
			return trace_reader_reject(d->r, ev.old_id && e->id ? TRACE_FIELD_OLD_ID :
						   TRACE_FIELD_ID,
						   "more than 2^32 - 2 distinct object ids");
	} else {
		rc = dense_lifetime(d, &ev, e);
		if (!rc && ev.op == TRACE_OP_CACHE_ALLOC)
			e->cache = ev.cache;
		if (unlikely(rc == -E2BIG))
			return trace_reader_reject(d->r, TRACE_FIELD_ID, "more than 2^32 objects");
	}
	if (unlikely(rc))
		return rc;
	cpu = ev.cpu == TRACE_CPU_UNKNOWN ? ev.tid : ev.cpu;
	e->time_ns = ev.time_ns;
	e->size = ev.size;
	e->tid = ev.tid;
	e->cpu = (uint16_t)(cpu % d->cpus);
	e->op = ev.op;
	e->align_shift = align_shift(ev.align);
	if (ev.tid >= d->nthreads)
		d->nthreads = ev.tid + 1;
	return 1;
}
