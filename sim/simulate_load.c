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
#include "lib/compiler.h"
#include "uslab/trace.h"
#include "sim/internal.h"

#define SIM_LOAD_CHUNK	(1u << 20)	/* events per allocation step */

/*
 * sim_ev_from_trace - fold one event. @cpus > 0. Return: 0, or -ERANGE when
 * an id does not fit the compact form (the caller names the event).
 */
static int sim_ev_from_trace(struct sim_ev *d, const struct trace_event *ev,
			     unsigned int cpus)
{
	uint32_t cpu = ev->cpu == TRACE_CPU_UNKNOWN ? ev->tid : ev->cpu;

	if (unlikely(ev->id > UINT32_MAX || ev->old_id > UINT32_MAX))
		return -ERANGE;
	d->time_ns = ev->time_ns;
	d->size = ev->size;
	d->id = (uint32_t)ev->id;
	d->old_id = (uint32_t)ev->old_id;
	d->tid = ev->tid;
	d->cpu = (uint16_t)(cpu % cpus);
	d->op = ev->op;
	d->align_shift = ev->align ? (uint8_t)(63 - __builtin_clzll(ev->align)) : 0;
	if (ev->align & (ev->align - 1))
		d->align_shift++;	/* not a power of two: round up, as glibc */
	return 0;
}

void sim_trace_free(struct sim_trace *t)
{
	if (t->r)
		trace_reader_close(t->r);
	free(t->ev);
	free(t->cmdline);
	memset(t, 0, sizeof(*t));
}

int sim_trace_load(struct sim_trace *t, const char *path, unsigned int cpus,
		   const char *who)
{
	struct trace_reader *r = NULL;
	const struct trace_meta *m;
	struct trace_event ev;
	int rc;

	memset(t, 0, sizeof(*t));
	r = cmd_open_trace_as(who, path);
	if (!r) {
		rc = -EINVAL;
		goto out_close;
	}
	m = trace_reader_meta(r);
	t->rec_cpus = m->cpus;
	t->no_clock = m->clock_id == TRACE_CLOCK_NONE;
	/* --cpus, else the recording machine's, else Kconfig's default */
	t->cpus = cpus ? cpus : (m->cpus ? m->cpus : CONFIG_SIM_DEFAULT_CPUS);
	t->cmdline = strdup(m->cmdline ? m->cmdline : "");
	if (m->has_summary && m->nevents) {
		t->cap = m->nevents;
		t->ev = malloc(t->cap * sizeof(*t->ev));
		if (!t->ev) {
			rc = -ENOMEM;
			fprintf(stderr, "%s: %s: no memory for %" PRIu64 " events\n",
				who, path, m->nevents);
			goto out_close;
		}
	}
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		if (unlikely(t->n == t->cap)) {
			size_t cap = t->cap + SIM_LOAD_CHUNK;
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
		if (sim_ev_from_trace(&t->ev[t->n], &ev, t->cpus)) {
			rc = -ERANGE;
			fprintf(stderr, "%s: %s: event %zu: object id %" PRIu64
				" above 2^32 (ids are dense: damaged trace?)\n",
				who, path, t->n, ev.id > ev.old_id ? ev.id : ev.old_id);
			goto out_close;
		}
		if (ev.id >= t->id_space)
			t->id_space = ev.id + 1;
		if (ev.old_id >= t->id_space)
			t->id_space = ev.old_id + 1;
		if (ev.tid >= t->nthreads)
			t->nthreads = ev.tid + 1;
		t->n++;
	}
	if (rc < 0) {
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

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->r = cmd_open_trace_as(who, path);
	if (!t->r) {
		sim_trace_free(t);
		return -EINVAL;
	}
	m = trace_reader_meta(t->r);
	t->rec_cpus = m->cpus;
	t->no_clock = m->clock_id == TRACE_CLOCK_NONE;
	t->cpus = cpus ? cpus : (m->cpus ? m->cpus : CONFIG_SIM_DEFAULT_CPUS);
	t->cmdline = strdup(m->cmdline ? m->cmdline : "");
	if (m->has_summary) {
		t->n = m->nevents;
		t->id_space = m->id_space;
		t->nthreads = m->nthreads;
	}
	return 0;
}

long sim_trace_read(struct sim_trace *t, struct sim_ev *buf, size_t max,
		    const char *who)
{
	struct trace_event ev;
	size_t n = 0;
	int rc = 0;

	while (n < max && (rc = trace_reader_next(t->r, &ev)) == 1) {
		if (sim_ev_from_trace(&buf[n], &ev, t->cpus)) {
			fprintf(stderr, "%s: %s: event %" PRIu64 ": object id above 2^32 "
				"(ids are dense: damaged trace?)\n", who, t->path,
				trace_reader_position(t->r) - 1);
			return -ERANGE;
		}
		if (ev.id >= t->id_space)
			t->id_space = ev.id + 1;
		if (ev.old_id >= t->id_space)
			t->id_space = ev.old_id + 1;
		n++;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", who, trace_reader_error(t->r));
		return rc;
	}
	return (long)n;
}
