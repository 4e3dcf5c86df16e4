/* SPDX-License-Identifier: MIT */
/*
 * tools/record/ private declarations: the raw stream between the preloaded
 * recorder (tools/record/preload.c, libc only, never uslab) and the collector
 * (tools/record/collect.c) that turns it into a trace.
 */
#ifndef USLAB_TOOLS_RECORD_H
#define USLAB_TOOLS_RECORD_H

#include "trace/internal.h"

/* ---- Recorder raw stream (tools/record/preload.c -> tools/record/collect.c).
 *
 * The preloaded recorder appends blocks with one write(2) each (O_APPEND)
 * to $USLAB_RECORD_DIR/raw.<pid>.<n>; a block is a struct rec_block and
 * @bytes of @count events of one thread, in that thread's order, each
 * encoded by rec_encode() against the previous one in the block (about 10
 * bytes an event instead of 40). Host byte order: raw files never leave the
 * machine.
 */
#define REC_BLOCK_MAGIC		0x4b4c4255u	/* "UBLK" */
#define REC_BLOCK_BYTES		(32u << 10)
#define REC_EVENT_MAX		64u		/* worst-case encoded event */
#define REC_ENV_DIR		"USLAB_RECORD_DIR"
/* The first half of a realloc: @addr (the old pointer) is given up. */
#define REC_OP_REALLOC_OLD	31u
#define REC_SAME_CPU		0x80u

struct rec_event {
	uint64_t time;		/* CLOCK_MONOTONIC ns */
	uint64_t size;
	uint64_t addr;		/* object allocated or freed; realloc: result */
	uint64_t old_addr;	/* realloc: the pointer passed in */
	uint32_t align;
	uint16_t cpu;		/* 0xffff: unknown */
	uint8_t op;
	uint8_t pad;
};

struct rec_block {
	uint32_t magic;
	uint32_t tid;
	uint32_t count;
	uint32_t bytes;
};

/* Which ops carry a size / an alignment (the table in trace_common.c, as
 * masks the recorder can use without linking it). */
#define REC_SIZE_OPS	(1u << TRACE_OP_MALLOC | 1u << TRACE_OP_CALLOC |		\
			 1u << TRACE_OP_REALLOC | 1u << TRACE_OP_MEMALIGN |		\
			 1u << TRACE_OP_POSIX_MEMALIGN | 1u << TRACE_OP_ALIGNED_ALLOC |	\
			 1u << TRACE_OP_VALLOC | 1u << TRACE_OP_PVALLOC |		\
			 1u << TRACE_OP_FREE_SIZED | 1u << TRACE_OP_FREE_ALIGNED_SIZED |	\
			 1u << TRACE_OP_KMALLOC | 1u << TRACE_OP_CACHE_ALLOC)
#define REC_ALIGN_OPS	(1u << TRACE_OP_MEMALIGN | 1u << TRACE_OP_POSIX_MEMALIGN |	\
			 1u << TRACE_OP_ALIGNED_ALLOC | 1u << TRACE_OP_VALLOC |		\
			 1u << TRACE_OP_PVALLOC | 1u << TRACE_OP_FREE_ALIGNED_SIZED)

/* Delta state within one block; all zero at a block's start. */
struct rec_state {
	uint64_t time;
	uint64_t addr;
	uint32_t cpu;
	bool started;
};

/* Op byte (bit 7: same CPU as before), time delta, [cpu], zigzag address
 * delta, [zigzag old - new], [size], [align]. Return: bytes written. */
static inline size_t rec_encode(uint8_t *buf, struct rec_state *st,
				const struct rec_event *e)
{
	uint8_t *p = buf;
	bool same = st->started && st->cpu == e->cpu;

	*p++ = (uint8_t)(e->op | (same ? REC_SAME_CPU : 0));
	p = put_varint(p, e->time - st->time);
	if (!same)
		p = put_varint(p, e->cpu);
	p = put_varint(p, zigzag((int64_t)(e->addr - st->addr)));
	if (e->op == TRACE_OP_REALLOC)
		p = put_varint(p, zigzag((int64_t)(e->old_addr - e->addr)));
	if (REC_SIZE_OPS >> e->op & 1)
		p = put_varint(p, e->size);
	if (REC_ALIGN_OPS >> e->op & 1)
		p = put_varint(p, e->align);
	st->time = e->time;
	st->addr = e->addr;
	st->cpu = e->cpu;
	st->started = true;
	return (size_t)(p - buf);
}

/* Return: 0, or -1 for a damaged record (the rest of the block is lost). */
static inline int rec_decode(const uint8_t **pp, const uint8_t *end,
			     struct rec_state *st, struct rec_event *e)
{
	const uint8_t *p = *pp;
	uint64_t v;

	if (p >= end)
		return -1;
	e->op = *p & 0x7f;
	if ((*p & REC_SAME_CPU) && !st->started)
		return -1;
	if (e->op >= TRACE_OP_NR && e->op != REC_OP_REALLOC_OLD)
		return -1;
	v = *p++ & REC_SAME_CPU;
	if (get_varint(&p, end, &e->time))
		return -1;
	e->time += st->time;
	if (v) {
		e->cpu = (uint16_t)st->cpu;
	} else {
		if (get_varint(&p, end, &v) || v > 0xffff)
			return -1;
		e->cpu = (uint16_t)v;
	}
	if (get_varint(&p, end, &v))
		return -1;
	e->addr = st->addr + (uint64_t)unzigzag(v);
	e->old_addr = 0;
	if (e->op == TRACE_OP_REALLOC) {
		if (get_varint(&p, end, &v))
			return -1;
		e->old_addr = e->addr + (uint64_t)unzigzag(v);
	}
	e->size = 0;
	if ((REC_SIZE_OPS >> e->op & 1) && get_varint(&p, end, &e->size))
		return -1;
	e->align = 0;
	if (REC_ALIGN_OPS >> e->op & 1) {
		if (get_varint(&p, end, &v) || v > UINT32_MAX)
			return -1;
		e->align = (uint32_t)v;
	}
	st->time = e->time;
	st->addr = e->addr;
	st->cpu = e->cpu;
	st->started = true;
	*pp = p;
	return 0;
}

/* Written once per process image as raw.<pid>.<n>.meta (text, key=value). */
#define REC_META_SUFFIX		".meta"

/* ---- The collector (tools/record/collect.c). */

#include <limits.h>
#include <sys/types.h>

/* One process image's raw file and the trace made of it. */
struct record_image {
	char raw[PATH_MAX + 320];
	char out[PATH_MAX + 32];
	unsigned int pid, gen;
	bool root;
	uint64_t events, dropped, fixups;
	uint32_t threads;
	bool written;
};

/* Every raw.<pid>.<n> in @dir, the root image (@root's first) first; the
 * trace of the root image is @out, the others @out.<pid>[.<n>]. */
struct record_image *record_list_images(const char *dir, const char *out,
					pid_t root, size_t *nimg);
/* Write @im's trace at zstd @level. Return: 0, or -errno (reported on stderr). */
int record_convert(struct record_image *im, int level);
/* Remove @dir and the files in it. */
void record_remove_dir(const char *dir);

#endif /* USLAB_TOOLS_RECORD_H */
