/* SPDX-License-Identifier: MIT */
/*
 * Structure-aware trace forging for the libFuzzer targets: the fuzzer's
 * bytes describe a trace (header fields, events or raw decoded payloads,
 * trailer fields) and forge_trace() builds the file with every checksum
 * right and every payload a real zstd frame, so the input reaches past the
 * CRCs into the event decoder, the trailer checks and the consumers.
 *
 * Input layout (each field taken from the input as far as it lasts; what
 * is missing reads as zero):
 *   u8 flags   FORGE_RAW: chunks are raw decoded bytes (any op byte, any
 *                         varint, any event count) instead of events
 *              FORGE_TRAILER: trailer fields overridden from the input
 *              FORGE_CUT: no trailer (a truncated file)
 *              FORGE_JUNK: a byte after the trailer
 *              FORGE_CHUNK_HDR: first-index and base-time fields from the
 *                         input instead of the right ones
 *   u32 cpus, u8 cmdline length (< 64) and its bytes
 *   u8 chunks (< 5), then per chunk:
 *     events mode: u16 count (< 512), then per event: u8 op, u8 shape
 *         (which of small/medium/huge to take for thread, CPU, id, old id,
 *         size, alignment), u8 time step, then the values the shape asks
 *     raw mode: u16 bytes (< 4096), u32 event count, the bytes
 *   trailer overrides: u64 events, u64 chunks, u64 id space, u64 time,
 *     u32 threads, each taken when a u8 selector says so
 */
#ifndef USLAB_FUZZ_FORGE_H
#define USLAB_FUZZ_FORGE_H

#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "trace/internal.h"

#define FORGE_RAW	0x01
#define FORGE_TRAILER	0x02
#define FORGE_CUT	0x04
#define FORGE_JUNK	0x08
#define FORGE_CHUNK_HDR	0x10

struct forge_in {
	const uint8_t *p;
	size_t n;
};

static uint64_t forge_take(struct forge_in *in, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes; i++) {
		if (!in->n)
			break;
		v |= (uint64_t)*in->p++ << (8 * i);
		in->n--;
	}
	return v;
}

struct forge_buf {
	uint8_t *b;
	size_t len, cap;
};

static int forge_put(struct forge_buf *o, const void *p, size_t len)
{
	if (o->len + len > o->cap) {
		size_t cap = (o->len + len) * 2 + 256;
		uint8_t *n = realloc(o->b, cap);

		if (!n)
			return -1;
		o->b = n;
		o->cap = cap;
	}
	memcpy(o->b + o->len, p, len);
	o->len += len;
	return 0;
}

/* A value of the class @shape picks: 0 small, 1 medium, 2 huge, 3 any. */
static uint64_t forge_value(struct forge_in *in, unsigned int shape, uint64_t limit)
{
	uint64_t v;

	switch (shape & 3) {
	case 0:
		v = forge_take(in, 1) & 15;
		break;
	case 1:
		v = forge_take(in, 2);
		break;
	case 2:
		v = limit - 1 - (forge_take(in, 2) & 0xff);
		break;
	default:
		v = forge_take(in, 8);
		break;
	}
	return limit ? v % limit : v;
}

struct forge_state {
	uint64_t time, nevents, max_id;
	uint32_t max_tid;
	bool any;
};

/* One event in the writer's encoding; its fields from the input. */
static uint8_t *forge_event(struct forge_in *in, uint8_t *p, struct forge_state *st,
			    bool first, uint64_t *prev_id, uint32_t *prev_tid,
			    uint64_t *prev_cpu)
{
	unsigned int op = (unsigned int)forge_take(in, 1) % TRACE_OP_NR;
	unsigned int shape = (unsigned int)forge_take(in, 2);
	uint64_t dt = forge_take(in, 1), tid, cpu1, id, old = 0;
	uint8_t b = (uint8_t)op;

	tid = forge_value(in, shape, UINT32_MAX);
	cpu1 = forge_value(in, shape >> 2, (uint64_t)UINT32_MAX + 1);
	id = forge_value(in, shape >> 4, TRACE_ID_LIMIT);
	if (op == TRACE_OP_REALLOC)
		old = forge_value(in, shape >> 6, TRACE_ID_LIMIT);
	if (!first && tid == *prev_tid)
		b |= TRACE_EV_SAME_TID;
	if (!first && cpu1 == *prev_cpu)
		b |= TRACE_EV_SAME_CPU;
	*p++ = b;
	p = put_varint(p, dt);
	if (!(b & TRACE_EV_SAME_TID))
		p = put_varint(p, tid);
	if (!(b & TRACE_EV_SAME_CPU))
		p = put_varint(p, cpu1);
	p = put_varint(p, zigzag((int64_t)(id - *prev_id)));
	if (op == TRACE_OP_REALLOC)
		p = put_varint(p, zigzag((int64_t)(old - id)));
	if (trace_op_has_size(op))
		p = put_varint(p, forge_value(in, shape >> 8, 0));
	if (trace_op_has_align(op))	/* a power of two, or anything */
		p = put_varint(p, shape & 0x400 ? forge_value(in, shape >> 12, 0) :
			       (uint64_t)1 << (forge_take(in, 1) % 64));
	st->time += dt;
	st->nevents++;
	st->any = true;
	if (id > st->max_id)
		st->max_id = id;
	if (old > st->max_id)
		st->max_id = old;
	if (tid > st->max_tid)
		st->max_tid = (uint32_t)tid;
	*prev_id = id;
	*prev_tid = (uint32_t)tid;
	*prev_cpu = cpu1;
	return p;
}

/* The file the input describes, in @o (free o->b). Return: 0, -1 no memory. */
static int forge_trace(const uint8_t *data, size_t size, struct forge_buf *o)
{
	static uint8_t raw[512 * TRACE_EVENT_MAX + 4096], comp[ZSTD_COMPRESSBOUND(sizeof(raw))];
	struct forge_in in = { data, size };
	struct forge_state st = { 0 };
	unsigned int flags = (unsigned int)forge_take(&in, 1);
	uint8_t h[TRACE_HDR_FIXED + 64 + 4], t[TRACE_TRAILER];
	uint32_t clen, nchunks, c;

	memset(o, 0, sizeof(*o));
	memset(h, 0, sizeof(h));
	memcpy(h, TRACE_MAGIC, 8);
	put_le16(h + 8, TRACE_FORMAT_MAJOR);
	put_le16(h + 10, TRACE_FORMAT_MINOR);
	put_le32(h + 16, (uint32_t)forge_take(&in, 4));
	put_le32(h + 20, 1);
	memcpy(h + 40, "fuzz", 4);
	clen = (uint32_t)forge_take(&in, 1) % 64;
	for (uint32_t i = 0; i < clen; i++)
		h[TRACE_HDR_FIXED + i] = (uint8_t)forge_take(&in, 1);
	put_le32(h + 72, clen);
	put_le32(h + 12, TRACE_HDR_FIXED + clen + 4);
	put_le32(h + TRACE_HDR_FIXED + clen, trace_crc32c(0, h, TRACE_HDR_FIXED + clen));
	if (forge_put(o, h, TRACE_HDR_FIXED + clen + 4))
		return -1;

	nchunks = (uint32_t)forge_take(&in, 1) % 5;
	for (c = 0; c < nchunks; c++) {
		uint8_t ch[TRACE_CHUNK_HDR], *p = raw;
		uint64_t base = st.time, first = st.nevents, prev_id = 0, prev_cpu = 0;
		uint32_t nev, prev_tid = 0;
		size_t rlen, clen2;

		if (flags & FORGE_RAW) {
			rlen = (size_t)forge_take(&in, 2) % 4096;
			nev = (uint32_t)forge_take(&in, 4);
			for (size_t i = 0; i < rlen; i++)
				raw[i] = (uint8_t)forge_take(&in, 1);
			st.nevents += nev;
		} else {
			nev = (uint32_t)forge_take(&in, 2) % 512;
			for (uint32_t i = 0; i < nev; i++)
				p = forge_event(&in, p, &st, !i, &prev_id, &prev_tid, &prev_cpu);
			rlen = (size_t)(p - raw);
		}
		clen2 = ZSTD_compress(comp, sizeof(comp), raw, rlen, 1);
		if (ZSTD_isError(clen2))
			return -1;
		put_le32(ch, TRACE_CHUNK_MAGIC);
		put_le32(ch + 4, (uint32_t)clen2);
		put_le32(ch + 8, (uint32_t)rlen);
		put_le32(ch + 12, nev);
		put_le64(ch + 16, flags & FORGE_CHUNK_HDR ? forge_take(&in, 8) : first);
		put_le64(ch + 24, flags & FORGE_CHUNK_HDR ? forge_take(&in, 8) : base);
		put_le32(ch + 32, trace_crc32c(0, comp, clen2));
		put_le32(ch + 36, trace_crc32c(0, ch, 36));
		if (forge_put(o, ch, sizeof(ch)) || forge_put(o, comp, clen2))
			return -1;
	}

	if (flags & FORGE_CUT)
		return 0;
	memset(t, 0, sizeof(t));
	put_le32(t, TRACE_END_MAGIC);
	put_le64(t + 8, st.nevents);
	put_le64(t + 16, nchunks);
	put_le64(t + 24, st.any ? st.max_id + 1 : 0);
	put_le64(t + 32, st.time);
	put_le32(t + 40, st.any ? st.max_tid + 1 : 0);
	if (flags & FORGE_TRAILER) {
		unsigned int sel = (unsigned int)forge_take(&in, 1);

		if (sel & 1)
			put_le64(t + 8, forge_take(&in, 8));
		if (sel & 2)
			put_le64(t + 16, forge_take(&in, 8));
		if (sel & 4)
			put_le64(t + 24, forge_take(&in, 8));
		if (sel & 8)
			put_le64(t + 32, forge_take(&in, 8));
		if (sel & 16)
			put_le32(t + 40, (uint32_t)forge_take(&in, 4));
	}
	put_le32(t + 44, trace_crc32c(0, t, 44));
	if (forge_put(o, t, sizeof(t)))
		return -1;
	if ((flags & FORGE_JUNK) && forge_put(o, "", 1))
		return -1;
	return 0;
}

/* The forged file behind a path the path-taking tools can open. */
#include <sys/mman.h>
#include <unistd.h>

static inline const char *forge_path(const struct forge_buf *o)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("forged.ustr", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, o->b, o->len, 0) != (ssize_t)o->len)
		abort();
	return path;
}

#endif /* USLAB_FUZZ_FORGE_H */
