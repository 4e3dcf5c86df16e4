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
 * With FORGE_TABLES, right after the command line, the extension records
 * (format 1.1) a `record -g` trace opens with, each chosen by a u8 mode
 * (0 none, 1 built from fields, 2 raw decoded bytes: u16 length < 4096,
 * u32 entry count, the bytes):
 *   process table: u8 entries (1..8), each u8 shape, then its fields
 *     (pid, ppid, parent, exec_from, first_tid, nthreads, flags, start,
 *     allocs, comm, exe, cmdline as the shape picks: mostly valid, any
 *     value at times); the event counts are the forged events' own, so a
 *     clean end is reachable, unless the shape asks for any value
 *   stack table: u8 entries (< 16), each u8 process, u8 frame count (< 8)
 *     or any, the frames
 *   object table: u8 entries (< 8), each u8 process, start, size, offset,
 *     u8 path length (< 16) and its bytes
 *   cache table (1.2, UCAC): u8 entries (< 8), each object size and u8
 *     name length (< 16) and its bytes (any, NUL too, at times)
 * and the events then name stacks (op bit 7) when their shape says so.
 * With a cache table, each chunk in events mode is preceded, when a u8
 * says so, by a UCID record: one cache id per kmem_cache_alloc event of
 * the chunk, each within the table, or (another bit) any count, any ids.
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
#define FORGE_TABLES	0x20
#define FORGE_PROCS_MAX	8

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
	uint32_t nstacks;		/* stack ids events may name, 0 none */
	bool caches;			/* a cache table was forged */
	uint32_t ncaches;		/* its entries, when built from fields */
	uint32_t cache_allocs;		/* kmem_cache_alloc events of the chunk */
	/* the process table built from fields: tid ranges, counts to fill */
	uint32_t nprocs;
	uint64_t first_tid[FORGE_PROCS_MAX], nthreads[FORGE_PROCS_MAX];
	uint64_t events[FORGE_PROCS_MAX], allocs[FORGE_PROCS_MAX];
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
	if (st->nstacks && (shape & 0x8000))
		b |= TRACE_EV_STACK;
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
	if (b & TRACE_EV_STACK)		/* a stack of the table, or anything */
		p = put_varint(p, shape & 0x4000 ? forge_take(in, 4) :
			       1 + forge_take(in, 1) % st->nstacks);
	for (uint32_t i = 0; i < st->nprocs; i++)
		if (tid >= st->first_tid[i] && tid - st->first_tid[i] < st->nthreads[i]) {
			st->events[i]++;
			st->allocs[i] += trace_op_is_alloc(op) || op == TRACE_OP_REALLOC;
		}
	st->time += dt;
	st->nevents++;
	st->cache_allocs += op == TRACE_OP_CACHE_ALLOC;
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

/* One extension record of @n entries over @raw (@len bytes) into @o. */
static int forge_record(struct forge_buf *o, uint32_t magic, uint32_t n,
			const uint8_t *raw, size_t len)
{
	static uint8_t comp[ZSTD_COMPRESSBOUND(8192)];
	uint8_t h[TRACE_REC_HDR];
	size_t clen = ZSTD_compress(comp, sizeof(comp), raw, len, 1);

	if (ZSTD_isError(clen))
		return -1;
	put_le32(h, magic);
	put_le32(h + 4, (uint32_t)clen);
	put_le32(h + 8, (uint32_t)len);
	put_le32(h + 12, n);
	put_le32(h + 16, trace_crc32c(0, comp, clen));
	put_le32(h + 20, trace_crc32c(0, h, 20));
	return forge_put(o, h, sizeof(h)) || forge_put(o, comp, clen) ? -1 : 0;
}

/* A raw table: u16 length, u32 entries, the bytes. */
static int forge_raw_table(struct forge_in *in, struct forge_buf *o, uint32_t magic,
			   uint32_t *n)
{
	static uint8_t raw[4096];
	size_t len = (size_t)forge_take(in, 2) % sizeof(raw);

	*n = (uint32_t)forge_take(in, 4);
	for (size_t i = 0; i < len; i++)
		raw[i] = (uint8_t)forge_take(in, 1);
	return forge_record(o, magic, *n, raw, len);
}

static uint8_t *forge_str(struct forge_in *in, uint8_t *p, unsigned int max)
{
	unsigned int n = (unsigned int)forge_take(in, 1) % max;

	p = put_varint(p, n);
	for (unsigned int i = 0; i < n; i++)
		*p++ = (uint8_t)forge_take(in, 1);
	return p;
}

/* The process table's fields from the input (counts filled in later). */
static void forge_procs_layout(struct forge_in *in, struct forge_state *st, uint8_t *shape)
{
	uint64_t tid = 0;

	st->nprocs = 1 + (uint32_t)forge_take(in, 1) % FORGE_PROCS_MAX;
	for (uint32_t i = 0; i < st->nprocs; i++) {
		shape[i] = (uint8_t)forge_take(in, 1);
		st->first_tid[i] = shape[i] & 1 ? forge_value(in, 3, 0) : tid;
		st->nthreads[i] = shape[i] & 2 ? forge_value(in, 3, 0) : forge_take(in, 1) % 4;
		tid = st->first_tid[i] + st->nthreads[i];
	}
}

/* The process table itself, once the events are known. */
static int forge_procs(struct forge_in *in, struct forge_buf *o, struct forge_state *st,
		       const uint8_t *shape)
{
	static uint8_t raw[FORGE_PROCS_MAX * (11 * 10 + 3 * 64)];
	uint8_t *p = raw;

	for (uint32_t i = 0; i < st->nprocs; i++) {
		bool any = shape[i] & 4;

		p = put_varint(p, 100 + i);				/* pid */
		p = put_varint(p, 1);					/* ppid */
		p = put_varint(p, any ? forge_value(in, 3, 0) : forge_take(in, 1) % (i + 1));
		p = put_varint(p, any ? forge_value(in, 3, 0) : forge_take(in, 1) % (i + 1));
		p = put_varint(p, st->first_tid[i]);
		p = put_varint(p, st->nthreads[i]);
		p = put_varint(p, any ? forge_value(in, 3, 0) : forge_take(in, 1) & 3);
		p = put_varint(p, forge_value(in, 1, 0));		/* start */
		p = put_varint(p, shape[i] & 8 ? forge_value(in, 3, 0) : st->events[i]);
		p = put_varint(p, shape[i] & 16 ? forge_value(in, 3, 0) : st->allocs[i]);
		p = forge_str(in, p, 20);				/* comm */
		p = forge_str(in, p, 64);				/* exe */
		p = forge_str(in, p, 64);				/* cmdline */
	}
	return forge_record(o, TRACE_PROCS_MAGIC, st->nprocs, raw, (size_t)(p - raw));
}

static int forge_stacks(struct forge_in *in, struct forge_buf *o, struct forge_state *st)
{
	static uint8_t raw[16 * (2 * 10 + 8 * 10)];
	uint32_t n = (uint32_t)forge_take(in, 1) % 16;
	uint8_t *p = raw;

	for (uint32_t i = 0; i < n; i++) {
		unsigned int nf = (unsigned int)forge_take(in, 1);
		uint64_t prev = 0;

		p = put_varint(p, forge_take(in, 1) % (st->nprocs ? st->nprocs + 1 : 2));
		p = put_varint(p, nf & 0x80 ? forge_value(in, 3, 0) : nf % 8);
		for (unsigned int k = 0; k < (nf & 0x80 ? 1 : nf % 8); k++) {
			uint64_t f = forge_value(in, (unsigned int)forge_take(in, 1), 0);

			p = put_varint(p, zigzag((int64_t)(f - prev)));
			prev = f;
		}
	}
	st->nstacks = n;
	return forge_record(o, TRACE_STACKS_MAGIC, n, raw, (size_t)(p - raw));
}

static int forge_objects(struct forge_in *in, struct forge_buf *o, struct forge_state *st)
{
	static uint8_t raw[8 * (5 * 10 + 16)];
	uint32_t n = (uint32_t)forge_take(in, 1) % 8;
	uint8_t *p = raw;

	for (uint32_t i = 0; i < n; i++) {
		unsigned int shape = (unsigned int)forge_take(in, 1);

		p = put_varint(p, forge_take(in, 1) % (st->nprocs ? st->nprocs + 1 : 2));
		p = put_varint(p, forge_value(in, shape, 0));		/* start */
		p = put_varint(p, forge_value(in, shape >> 2, 0));	/* size */
		p = put_varint(p, forge_value(in, shape >> 4, 0));	/* offset */
		p = forge_str(in, p, 16);				/* path */
	}
	return forge_record(o, TRACE_OBJECTS_MAGIC, n, raw, (size_t)(p - raw));
}

/* UCAC: the named caches (1.2). */
static int forge_caches(struct forge_in *in, struct forge_buf *o, struct forge_state *st)
{
	static uint8_t raw[8 * (10 + 1 + 16)];
	uint32_t n = (uint32_t)forge_take(in, 1) % 8;
	uint8_t *p = raw;

	for (uint32_t i = 0; i < n; i++) {
		p = put_varint(p, forge_value(in, (unsigned int)forge_take(in, 1), 0));
		p = forge_str(in, p, 16);
	}
	st->caches = true;
	st->ncaches = n;
	return forge_record(o, TRACE_CACHES_MAGIC, n, raw, (size_t)(p - raw));
}

/* UCID before a chunk: its kmem_cache_alloc events' cache ids, right or
 * (@sel bit 1) any count and any ids. */
static int forge_cache_ids(struct forge_in *in, struct forge_buf *o, struct forge_state *st,
			   unsigned int sel)
{
	static uint8_t raw[512 * 10];
	uint32_t n = sel & 2 ? (uint32_t)forge_take(in, 2) % 512 : st->cache_allocs;
	uint8_t *p = raw;

	for (uint32_t i = 0; i < n; i++)
		p = put_varint(p, sel & 4 ? forge_value(in, 3, 0) :
			       forge_take(in, 1) % (st->ncaches + 1));
	return forge_record(o, TRACE_CACHE_IDS_MAGIC, n, raw, (size_t)(p - raw));
}

/* The records put between the header and the chunks (at @at in @o): the
 * process table (built now that the events are counted) and the rest. */
static int forge_tables_in(struct forge_buf *o, struct forge_in *in, struct forge_state *st,
			   unsigned int procs_mode, const uint8_t *shape,
			   struct forge_buf *tables, struct forge_buf *procs, size_t at)
{
	struct forge_buf n = { 0 };
	int rc = 0;

	if (procs_mode == 1)
		rc = forge_procs(in, procs, st, shape);
	if (!rc)
		rc = forge_put(&n, o->b, at);
	if (!rc && procs->len)
		rc = forge_put(&n, procs->b, procs->len);
	if (!rc && tables->len)
		rc = forge_put(&n, tables->b, tables->len);
	if (!rc && o->len > at)
		rc = forge_put(&n, o->b + at, o->len - at);
	free(tables->b);
	free(procs->b);
	tables->b = procs->b = NULL;
	if (rc) {
		free(n.b);
		return -1;
	}
	free(o->b);
	*o = n;
	return 0;
}

/* The file the input describes, in @o (free o->b). Return: 0, -1 no memory. */
static int forge_trace(const uint8_t *data, size_t size, struct forge_buf *o)
{
	static uint8_t raw[512 * TRACE_EVENT_MAX + 4096], comp[ZSTD_COMPRESSBOUND(sizeof(raw))];
	struct forge_in in = { data, size };
	struct forge_state st = { 0 };
	struct forge_buf tables = { 0 }, procs = { 0 };
	uint8_t shape[FORGE_PROCS_MAX];
	unsigned int procs_mode = 0;
	size_t chunks_at = 0;
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

	/* the tables before the events; the process table last of all, once
	 * the events it counts are forged */
	if (flags & FORGE_TABLES) {
		unsigned int mode = (unsigned int)forge_take(&in, 1);
		uint32_t n;
		int rc = 0;

		procs_mode = mode % 3;
		if (procs_mode == 1)
			forge_procs_layout(&in, &st, shape);
		else if (procs_mode == 2)
			rc = forge_raw_table(&in, &tables, TRACE_PROCS_MAGIC, &n);
		if (!rc && (mode / 3) % 3 == 1)
			rc = forge_stacks(&in, &tables, &st);
		else if (!rc && (mode / 3) % 3 == 2)
			rc = forge_raw_table(&in, &tables, TRACE_STACKS_MAGIC, &st.nstacks);
		if (!rc && (mode / 9) % 3 == 1)
			rc = forge_objects(&in, &tables, &st);
		else if (!rc && (mode / 9) % 3 == 2)
			rc = forge_raw_table(&in, &tables, TRACE_OBJECTS_MAGIC, &n);
		if (!rc && (mode / 27) % 3 == 1)
			rc = forge_caches(&in, &tables, &st);
		else if (!rc && (mode / 27) % 3 == 2) {
			rc = forge_raw_table(&in, &tables, TRACE_CACHES_MAGIC, &n);
			st.caches = true;
		}
		if (rc)
			goto fail;
		st.nstacks = st.nstacks > 64 ? 64 : st.nstacks;
		chunks_at = o->len;
	}

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
			st.cache_allocs = 0;
			for (uint32_t i = 0; i < nev; i++)
				p = forge_event(&in, p, &st, !i, &prev_id, &prev_tid, &prev_cpu);
			rlen = (size_t)(p - raw);
			if (st.caches) {
				unsigned int sel = (unsigned int)forge_take(&in, 1);

				if ((sel & 1) && forge_cache_ids(&in, o, &st, sel))
					return -1;
			}
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

	if ((flags & FORGE_TABLES) && forge_tables_in(o, &in, &st, procs_mode, shape, &tables,
						     &procs, chunks_at))
		goto fail;
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
fail:
	free(tables.b);
	free(procs.b);
	return -1;
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
