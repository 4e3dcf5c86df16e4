// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the trace reader on forged traces (fuzz/forge.h), whose
 * checksums and zstd frames are right, so every input reaches the event
 * decoder and the trailer checks. What the reader hands out must keep its
 * own contract: ops in range, ids below 2^63, time never going back, and at
 * a clean end the trailer's counts exactly what was read. With the process,
 * stack and object tables (FORGE_TABLES), what the reader loads must keep
 * theirs: tid ranges within 2^20, every stack and object in a process of
 * the table, at most 256 frames a stack, no empty mapping, and every
 * event's thread in a process and its stack in the table. With a cache
 * table (format 1.2): every event's cache id names an entry met so far,
 * only kmem_cache_alloc names one, and each named entry has a size and a
 * name of 1 to 255 bytes.
 */
#include <stdio.h>
#include "fuzz/forge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_reader *r = NULL;
	struct trace_event ev;
	struct forge_buf o;
	uint64_t n = 0, last = 0, max_id = 0;
	uint32_t max_tid = 0;
	FILE *f;
	int rc;

	if (forge_trace(data, size, &o))
		goto out;
	f = fmemopen(o.b, o.len, "rb");
	if (!f)
		goto out;
	if (!trace_reader_open_file(&r, f, "fuzz")) {
		const struct trace_meta *mt = trace_reader_meta(r);

		for (uint32_t i = 0; i < mt->nprocs; i++)
			if ((uint64_t)mt->procs[i].first_tid + mt->procs[i].nthreads > TRACE_THREADS_MAX)
				__builtin_trap();
		if ((mt->nstacks && mt->stacks) || (mt->nobjects && mt->objects))
			__builtin_trap();	/* decoded before anyone asked */
		if ((size & 1) && !trace_reader_load_stacks(r)) {
			for (uint32_t i = 0; i < mt->nstacks; i++)
				if (mt->stacks[i].nframes > TRACE_STACK_MAX ||
				    (mt->nprocs ? mt->stacks[i].proc >= mt->nprocs : mt->stacks[i].proc))
					__builtin_trap();
			for (uint32_t i = 0; i < mt->nobjects; i++)
				if (mt->objects[i].end <= mt->objects[i].start || !mt->objects[i].path ||
				    (mt->nprocs ? mt->objects[i].proc >= mt->nprocs : mt->objects[i].proc))
					__builtin_trap();
		}
		while ((rc = trace_reader_next(r, &ev)) > 0) {
			if (ev.stack > mt->nstacks)
				__builtin_trap();
			/* a cache id names an entry of the table met so far */
			if (ev.cache > mt->ncaches || (ev.cache && ev.op != TRACE_OP_CACHE_ALLOC) ||
			    mt->ncaches > TRACE_CACHES_MAX)
				__builtin_trap();
			if (ev.cache) {
				const struct trace_cache *c = &mt->caches[ev.cache - 1];
				size_t l = strlen(c->name);

				if (!c->size || !l || l > TRACE_CACHE_NAME_MAX)
					__builtin_trap();
			}
			if (ev.stack && (n & 3) == 0) {	/* one at a time, as report does */
				uint64_t frames[TRACE_STACK_MAX];
				struct trace_stack one;

				if (!trace_reader_stack(r, ev.stack, &one, frames) &&
				    (one.nframes > TRACE_STACK_MAX || one.frames != frames ||
				     (mt->nprocs ? one.proc >= mt->nprocs : one.proc) ||
				     (mt->stacks && (one.nframes != mt->stacks[ev.stack - 1].nframes ||
						     one.proc != mt->stacks[ev.stack - 1].proc))))
					__builtin_trap();
			}
			if (ev.op >= TRACE_OP_NR || ev.id >= TRACE_ID_LIMIT ||
			    ev.old_id >= TRACE_ID_LIMIT || ev.time_ns < last ||
			    ev.tid == UINT32_MAX || trace_reader_position(r) != ++n)
				__builtin_trap();
			last = ev.time_ns;
			max_id = ev.id > max_id ? ev.id : max_id;
			max_id = ev.old_id > max_id ? ev.old_id : max_id;
			max_tid = ev.tid > max_tid ? ev.tid : max_tid;
			/* A consumer refusing a field: the message must format. */
			if ((ev.size & 0xfff) == 0x5a5)
				rc = trace_reader_reject(r, (enum trace_field)(ev.size >> 12 & 7),
							 "fuzz %u", ev.tid);
			if (rc < 0)
				break;
		}
		if (!rc) {
			const struct trace_meta *m = trace_reader_meta(r);

			if (!m->has_summary || m->nevents != n ||
			    (n && (m->id_space <= max_id || m->nthreads <= max_tid ||
				   m->duration_ns != last)))
				__builtin_trap();
		}
		if (strlen(trace_reader_error(r)) >= 768)
			__builtin_trap();
	}
	trace_reader_close(r);
	fclose(f);
out:
	free(o.b);
	return 0;
}
