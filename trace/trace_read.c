// SPDX-License-Identifier: MIT
/*
 * Streaming trace reader: holds one chunk (compressed and decoded bytes) at
 * a time. Every size read from the file is bounded before anything is
 * allocated, every checksum is verified before a payload is decompressed,
 * and every error names the byte offset where the damage was found. No
 * locks: one reader, one thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>
#include "trace/internal.h"

struct trace_reader {
	FILE *f;
	bool own_file;
	char *name;
	struct trace_meta meta;
	struct trace_meta trailer;	/* as read at open, if seekable */
	bool trailer_at_open;
	int error;			/* sticky -errno */
	bool truncated;			/* the error: the file ended early */
	bool done;
	uint64_t off;			/* file offset of the next unread byte */
	ZSTD_DCtx *dctx;
	uint8_t *comp;
	size_t comp_cap;
	uint8_t *raw;
	size_t raw_cap;
	/* The decoded chunk. */
	uint64_t chunk_off;
	const uint8_t *p, *end;
	uint32_t chunk_left;
	uint32_t chunk_events;
	uint64_t nevents;		/* events returned so far */
	uint64_t nchunks;
	uint64_t prev_time;
	uint64_t prev_id;
	uint32_t prev_tid;
	uint64_t prev_cpu;
	uint64_t max_id;		/* for checking the trailer */
	uint32_t max_tid;
	uint8_t pending[4];		/* a record magic read ahead */
	bool has_pending;
	struct trace_proc *procs;	/* process table (1.1), meta.procs */
	uint64_t *proc_events;		/* events seen per process */
	uint32_t *ranges;		/* processes with threads, by first tid */
	struct trace_stack *stacks;	/* meta.stacks, once loaded */
	uint64_t *frames;		/* their frames */
	struct trace_object *objects;	/* meta.objects, once loaded */
	/* The stack and object tables as stored (checked at open, decoded by
	 * trace_reader_load_stacks()): their zstd payloads, the decoded
	 * sizes, and the frames the stack table holds. */
	struct lazy_table { uint8_t *comp; uint32_t comp_len, raw; bool seen; } lazy_stk, lazy_obj;
	uint64_t nframes;
	bool stacks_loaded, objects_loaded;
	uint8_t *stk_raw;		/* trace_reader_stack(): the decoded table */
	uint32_t *stk_off;		/* and where each entry starts in it */
	uint32_t nranges;
	/* Named caches (1.2): the table so far, and the ids of the chunk's
	 * kmem_cache_alloc events from the UCID record before it. */
	struct trace_cache *caches;
	uint32_t ncaches, caches_cap;
	uint32_t *cid;
	uint32_t cid_n, cid_pos, cid_cap;
	bool cid_pending;		/* read, its chunk not yet */
	bool cid_active;		/* the current chunk has one */
	uint64_t cid_off;		/* where the record was */
	int sel;			/* selected process, -1 all */
	/* one heap (TRACE_HDR_ONE_HEAP) read for one process: the objects it
	 * allocated, so that its frees of others' objects are left out */
	struct hmap sel_live;
	bool sel_one_heap;
	uint64_t sel_events;		/* events of it returned so far */
	/* Decoded byte of each field of the event returned last, for
	 * trace_reader_reject(); inherited fields point at the op byte. */
	uint32_t fld[TRACE_FIELD_NR];
	char err[768];
};

static int __printf(3, 4) fail(struct trace_reader *r, uint64_t off,
			       const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, sizeof(r->err), "%s: byte offset %" PRIu64 ": ",
		     r->name, off);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(r->err))
		vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	r->error = -EPROTO;
	return r->error;
}

/*
 * Read exactly @len bytes at the current offset. A short read is reported
 * as truncation at the offset where @what was expected.
 */
static int read_exact(struct trace_reader *r, void *buf, size_t len,
		      const char *what)
{
	size_t n = fread(buf, 1, len, r->f);

	if (n == len) {
		r->off += len;
		return 0;
	}
	if (ferror(r->f)) {
		snprintf(r->err, sizeof(r->err), "%s: byte offset %" PRIu64
			 ": read error: %s", r->name, r->off + n, strerror(errno));
		return r->error = -EIO;
	}
	fail(r, r->off, "expected %s (%zu bytes), file ends after %zu (truncated)",
	     what, len, n);
	r->truncated = true;
	return r->error;
}

bool trace_reader_truncated(const struct trace_reader *r)
{
	return r->error == -EPROTO && r->truncated;
}

/* The next record's 4-byte magic, read ahead at open or read now. */
static size_t read_magic(struct trace_reader *r, uint8_t *h)
{
	size_t n;

	if (r->has_pending) {
		memcpy(h, r->pending, 4);
		r->has_pending = false;
		return 4;
	}
	n = fread(h, 1, 4, r->f);
	if (n == 4)
		r->off += 4;
	return n;
}

static int grow(uint8_t **buf, size_t *cap, size_t need);

static int nomem(struct trace_reader *r)
{
	snprintf(r->err, sizeof(r->err), "%s: out of memory", r->name);
	return r->error = -ENOMEM;
}

/*
 * The zstd payload of a record or a chunk whose header ends at @at: @comp
 * stored bytes that must have the CRC @want, decoded into r->raw (@raw
 * bytes). @what names it in messages ("record", "chunk"), @read_as while
 * reading. Return: 0, or the error said.
 */
static int read_payload(struct trace_reader *r, uint64_t at, uint32_t comp, uint32_t raw,
			uint32_t want, const char *what, const char *read_as)
{
	uint32_t crc;
	size_t got;
	int rc;

	if (grow(&r->comp, &r->comp_cap, comp) || grow(&r->raw, &r->raw_cap, raw ? raw : 1))
		return nomem(r);
	rc = read_exact(r, r->comp, comp, read_as);
	if (rc)
		return rc;
	crc = trace_crc32c(0, r->comp, comp);
	if (crc != want)
		return fail(r, at, "%s payload checksum mismatch (expected %08x, found %08x): "
			    "payload damaged", what, want, crc);
	got = ZSTD_decompressDCtx(r->dctx, r->raw, raw, r->comp, comp);
	if (ZSTD_isError(got) || got != raw)
		return fail(r, at, "expected a zstd frame of %u bytes: %s", raw,
			    ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
	return 0;
}

/*
 * USTK: n x (varint proc, varint nframes, frames as zigzag deltas). Each
 * stack takes at least 2 bytes and each frame 1: bounds before allocating.
 * With @fill false the table is only checked and its frames counted
 * (r->nframes), nothing allocated; with @fill true (a table checked at
 * open) r->stacks and r->frames are filled, sized by that count.
 */
static int decode_stacks(struct trace_reader *r, const uint8_t *buf, size_t len,
			 uint32_t n, uint64_t at, bool fill)
{
	const uint8_t *p = buf, *end = buf + len;
	uint64_t used = 0;

	if (n > TRACE_STACKS_MAX || n > len / 2)
		return fail(r, at, "stack table of %u entries in %zu bytes", n, len);
	if (fill) {
		r->stacks = calloc(n ? n : 1, sizeof(*r->stacks));
		r->frames = malloc((r->nframes ? r->nframes : 1) * sizeof(*r->frames));
		if (!r->stacks || !r->frames)
			return nomem(r);
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t proc, nf, v, prev = 0;

		if (get_varint(&p, end, &proc) || (r->meta.nprocs ? proc >= r->meta.nprocs : proc) ||
		    get_varint(&p, end, &nf) || nf > TRACE_STACK_MAX || nf > (uint64_t)(end - p))
			return fail(r, at, "stack table entry %u, decoded byte %td: expected a process index and a frame count <= %u",
				    i, p - buf, TRACE_STACK_MAX);
		if (fill) {
			r->stacks[i].proc = (uint32_t)proc;
			r->stacks[i].nframes = (uint32_t)nf;
			r->stacks[i].frames = r->frames + used;
		}
		for (uint64_t k = 0; k < nf; k++) {
			if (get_varint(&p, end, &v))
				return fail(r, at, "stack table entry %u, decoded byte %td: expected a frame varint",
					    i, p - buf);
			prev += (uint64_t)unzigzag(v);
			if (fill)
				r->frames[used] = prev;
			used++;
		}
		/* the recorder's mark of a stack cut at its depth */
		if (fill && nf && r->frames[used - 1] == TRACE_FRAME_CUT) {
			r->stacks[i].nframes--;
			r->stacks[i].cut = true;
		}
	}
	if (p != end)
		return fail(r, at, "stack table: %td bytes left over after %u entries", end - p, n);
	if (fill && used != r->nframes)
		return fail(r, at, "stack table: %" PRIu64 " frames, %" PRIu64 " when checked",
			    used, r->nframes);
	r->nframes = used;
	if (fill)
		r->meta.stacks = r->stacks;
	r->meta.nstacks = n;
	return 0;
}

/* UMAP: n x (varint proc, start, size, offset, path length, path bytes).
 * @fill as for decode_stacks(): false checks, true fills r->objects. */
static int decode_objects(struct trace_reader *r, const uint8_t *buf, size_t len,
			  uint32_t n, uint64_t at, bool fill)
{
	const uint8_t *p = buf, *end = buf + len;

	if (n > TRACE_OBJECTS_MAX || n > len / 5)
		return fail(r, at, "object table of %u entries in %zu bytes", n, len);
	if (fill) {
		r->objects = calloc(n ? n : 1, sizeof(*r->objects));
		if (!r->objects)
			return nomem(r);
		r->meta.objects = r->objects;
		r->meta.nobjects = 0;	/* the entries filled so far (freed at close) */
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t proc, start, size, off, l;
		char *path;

		if (get_varint(&p, end, &proc) || (r->meta.nprocs ? proc >= r->meta.nprocs : proc) ||
		    get_varint(&p, end, &start) || get_varint(&p, end, &size) || !size ||
		    size > UINT64_MAX - start || get_varint(&p, end, &off) ||
		    get_varint(&p, end, &l) || l > TRACE_PROC_STR_MAX || l > (uint64_t)(end - p))
			return fail(r, at, "object table entry %u, decoded byte %td: expected process, range, offset and path",
				    i, p - buf);
		if (fill) {
			path = malloc(l + 1);
			if (!path)
				return nomem(r);
			memcpy(path, p, l);
			path[l] = 0;
			r->objects[i] = (struct trace_object){ .proc = (uint32_t)proc,
				.start = start, .end = start + size, .offset = off, .path = path };
			r->meta.nobjects = i + 1;
		}
		p += l;
	}
	if (p != end)
		return fail(r, at, "object table: %td bytes left over after %u entries", end - p, n);
	r->meta.nobjects = n;
	return 0;
}

/*
 * A stack or object table just read and checked at open (in r->raw): its
 * payload (@comp bytes in r->comp) kept as stored for
 * trace_reader_load_stacks(), which only the readers that symbolize call.
 * Decoded, a table of a few KiB on disk can take hundreds of MiB.
 */
static int keep_table(struct trace_reader *r, struct lazy_table *t, uint32_t comp,
		      uint32_t raw)
{
	t->comp = malloc(comp);
	if (!t->comp)
		return nomem(r);
	memcpy(t->comp, r->comp, comp);
	t->comp_len = comp;
	t->raw = raw;
	return 0;
}

/* The stored table @t decoded into a new buffer, *@out (free it). */
static int unpack_table(struct trace_reader *r, const struct lazy_table *t,
			const char *what, uint8_t **out)
{
	uint8_t *raw = malloc(t->raw ? t->raw : 1);
	size_t got;

	if (!raw)
		return nomem(r);
	got = ZSTD_decompressDCtx(r->dctx, raw, t->raw, t->comp, t->comp_len);
	if (ZSTD_isError(got) || got != t->raw) {	/* it decoded at open */
		free(raw);
		return fail(r, 0, "%s table: decodes differently than at open", what);
	}
	*out = raw;
	return 0;
}

/* A table kept at open (@t), decoded now with @decode into the reader;
 * *@loaded once it is. */
static int load_lazy(struct trace_reader *r, const struct lazy_table *t, const char *what,
		     int (*decode)(struct trace_reader *, const uint8_t *, size_t, uint32_t,
				   uint64_t, bool),
		     uint32_t n, bool *loaded)
{
	uint8_t *raw;
	int rc;

	if (*loaded || !t->seen)
		return 0;
	rc = unpack_table(r, t, what, &raw);
	if (rc)
		return rc;
	rc = decode(r, raw, t->raw, n, 0, true);
	free(raw);
	*loaded = !rc;
	return rc;
}

int trace_reader_load_objects(struct trace_reader *r)
{
	if (r->error)
		return r->error;
	return load_lazy(r, &r->lazy_obj, "object", decode_objects, r->meta.nobjects,
			 &r->objects_loaded);
}

int trace_reader_load_stacks(struct trace_reader *r)
{
	int rc = trace_reader_load_objects(r);

	return rc ? rc : load_lazy(r, &r->lazy_stk, "stack", decode_stacks, r->meta.nstacks,
				   &r->stacks_loaded);
}

int trace_reader_stack(struct trace_reader *r, uint32_t id, struct trace_stack *out,
		       uint64_t *frames)
{
	const uint8_t *p, *end;
	uint64_t proc, nf, v, prev = 0;

	if (r->error)
		return r->error;
	if (!id || id > r->meta.nstacks)
		return -EINVAL;
	if (!r->stk_raw) {	/* the table's bytes, and where each entry starts */
		int rc = unpack_table(r, &r->lazy_stk, "stack", &r->stk_raw);

		if (rc)
			return rc;
		r->stk_off = malloc(r->meta.nstacks * sizeof(*r->stk_off));
		if (!r->stk_off)
			return nomem(r);
		p = r->stk_raw;
		end = p + r->lazy_stk.raw;
		for (uint32_t i = 0; i < r->meta.nstacks; i++) {
			r->stk_off[i] = (uint32_t)(p - r->stk_raw);
			/* checked at open: these cannot fail */
			if (get_varint(&p, end, &proc) || get_varint(&p, end, &nf))
				return fail(r, 0, "stack table: entry %u unreadable", i);
			for (uint64_t k = 0; k < nf; k++)
				if (get_varint(&p, end, &v))
					return fail(r, 0, "stack table: entry %u unreadable", i);
		}
	}
	p = r->stk_raw + r->stk_off[id - 1];
	end = r->stk_raw + r->lazy_stk.raw;
	if (get_varint(&p, end, &proc) || get_varint(&p, end, &nf) || nf > TRACE_STACK_MAX)
		return fail(r, 0, "stack table: entry %u unreadable", id - 1);
	for (uint64_t k = 0; k < nf; k++) {
		if (get_varint(&p, end, &v))
			return fail(r, 0, "stack table: entry %u unreadable", id - 1);
		prev += (uint64_t)unzigzag(v);
		frames[k] = prev;
	}
	*out = (struct trace_stack){ .proc = (uint32_t)proc, .nframes = (uint32_t)nf,
				     .frames = frames };
	/* the recorder's mark of a stack cut at its depth, as decode_stacks() */
	if (nf && frames[nf - 1] == TRACE_FRAME_CUT) {
		out->nframes--;
		out->cut = true;
	}
	return 0;
}

/*
 * The frame every chunk and record header opens with (docs/trace-format.md):
 * magic, compressed size C at +4, decoded size R at +8, and the header's
 * checksum at @crc_at over the bytes before it. Both sizes are bounded here,
 * before anything is allocated for them.
 */
static int check_frame(struct trace_reader *r, const uint8_t *h, uint64_t at,
		       size_t crc_at, const char *what, uint32_t raw_min,
		       uint32_t raw_max, uint32_t *comp, uint32_t *raw)
{
	uint32_t crc = trace_crc32c(0, h, crc_at);

	if (crc != get_le32(h + crc_at))
		return fail(r, at + crc_at, "expected %s header checksum %08x, found %08x",
			    what, crc, get_le32(h + crc_at));
	*comp = get_le32(h + 4);
	*raw = get_le32(h + 8);
	if (*raw > raw_max || *raw < raw_min)
		return fail(r, at + 8, "expected decoded %s size in [%u, %u], found %u",
			    what, raw_min, raw_max, *raw);
	if (*comp == 0 || *comp > ZSTD_compressBound(*raw))
		return fail(r, at + 4, "expected compressed %s size in [1, %zu], found %u",
			    what, ZSTD_compressBound(*raw), *comp);
	return 0;
}

/* PROC: the process table, and the per-process event counters and thread
 * ranges sized by it. */
static int decode_procs(struct trace_reader *r, const uint8_t *raw, size_t len,
			uint32_t n, uint64_t at)
{
	char why[256];
	int rc;

	rc = trace_procs_decode(raw, len, n, &r->procs, why, sizeof(why));
	if (rc == -ENOMEM)
		return nomem(r);
	if (rc)
		return fail(r, at, "%s", why);
	r->proc_events = calloc(n, sizeof(*r->proc_events));
	if (!r->proc_events)
		return nomem(r);
	r->ranges = calloc(n, sizeof(*r->ranges));
	if (!r->ranges)
		return nomem(r);
	for (uint32_t i = 0; i < n; i++)
		if (r->procs[i].nthreads)
			r->ranges[r->nranges++] = i;
	r->meta.procs = r->procs;
	r->meta.nprocs = n;
	return 0;
}

/* A record of a kind this reader does not know: its @comp bytes skipped
 * without allocating for them. */
static int skip_payload(struct trace_reader *r, uint32_t comp)
{
	uint8_t skip[4096];
	size_t got;
	int rc;

	for (uint32_t left = comp; left; left -= (uint32_t)got) {
		got = min_t(uint32_t, left, sizeof(skip));
		rc = read_exact(r, skip, got, "record payload");
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * UCAC (1.2): @n entries appended to the cache table, each a varint object
 * size (>= 1), a varint name length (1..TRACE_CACHE_NAME_MAX) and the name
 * (no NUL). Each entry takes at least 3 bytes: bounded before allocating.
 */
static int decode_caches(struct trace_reader *r, const uint8_t *buf, size_t len,
			 uint32_t n, uint64_t at)
{
	const uint8_t *p = buf, *end = buf + len;

	if (!n || n > len / 3 || n > TRACE_CACHES_MAX - r->ncaches)
		return fail(r, at, "cache table record of %u entries in %zu bytes (%u entries before it, at most %u in all)",
			    n, len, r->ncaches, TRACE_CACHES_MAX);
	if (r->ncaches + n > r->caches_cap) {
		uint32_t cap = r->ncaches + n;
		struct trace_cache *c;

		if (cap < 2 * r->caches_cap)
			cap = min_t(uint32_t, 2 * r->caches_cap, TRACE_CACHES_MAX);
		c = realloc(r->caches, cap * sizeof(*c));
		if (!c)
			return nomem(r);
		r->caches = c;
		r->caches_cap = cap;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t size, l;
		char *name;

		if (get_varint(&p, end, &size) || !size || get_varint(&p, end, &l) || !l ||
		    l > TRACE_CACHE_NAME_MAX || l > (uint64_t)(end - p) || memchr(p, 0, l))
			return fail(r, at, "cache table entry %u, decoded byte %td: expected an object size >= 1 and a name of 1 to %u bytes without NUL",
				    r->ncaches, p - buf, TRACE_CACHE_NAME_MAX);
		name = malloc(l + 1);
		if (!name)
			return nomem(r);
		memcpy(name, p, l);
		name[l] = 0;
		p += l;
		r->caches[r->ncaches++] = (struct trace_cache){ .size = size, .name = name };
	}
	r->meta.caches = r->caches;
	r->meta.ncaches = r->ncaches;
	if (p != end)
		return fail(r, at, "cache table record: %td bytes left over after %u entries", end - p, n);
	return 0;
}

/*
 * UCID (1.2): the cache id (0..the table's entries) of each kmem_cache_alloc
 * event of the chunk that follows, @n of them (1..a chunk's events, each
 * at least one byte). Checked against that chunk as it is read.
 */
static int decode_cache_ids(struct trace_reader *r, const uint8_t *buf, size_t len,
			    uint32_t n, uint64_t at)
{
	const uint8_t *p = buf, *end = buf + len;

	if (r->cid_pending)
		return fail(r, at, "expected a chunk after the cache id record at byte offset %" PRIu64 ", found another",
			    r->cid_off);
	if (!n || n > len || n > TRACE_CHUNK_RAW_MAX / TRACE_EVENT_MIN)
		return fail(r, at, "cache id record of %u entries in %zu bytes", n, len);
	if (n > r->cid_cap) {
		uint32_t *c = realloc(r->cid, n * sizeof(*c));

		if (!c)
			return nomem(r);
		r->cid = c;
		r->cid_cap = n;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v;

		if (get_varint(&p, end, &v) || v > r->ncaches)
			return fail(r, at, "cache id record entry %u, decoded byte %td: expected a cache id of 0 to %u (the cache table's entries so far)",
				    i, p - buf, r->ncaches);
		r->cid[i] = (uint32_t)v;
	}
	if (p != end)
		return fail(r, at, "cache id record: %td bytes left over after %u entries", end - p, n);
	r->cid_n = n;
	r->cid_pending = true;
	r->cid_off = at;
	return 0;
}

/*
 * An extension record (format 1.1) whose magic @h was just read at @at:
 * the process table is decoded; a record of a kind this reader does not
 * know (a later minor version) is skipped.
 */
static int load_record(struct trace_reader *r, const uint8_t *h4, uint64_t at)
{
	uint8_t h[TRACE_REC_HDR];
	uint32_t magic, comp, raw, n, crc;
	int rc;

	memcpy(h, h4, 4);
	magic = get_le32(h);
	if (r->meta.version_minor < 1)
		return fail(r, at, "expected a chunk (\"UCHK\") or the trailer (\"UEND\") in a format %u.%u trace, found %02x %02x %02x %02x",
			    r->meta.version_major, r->meta.version_minor, h[0], h[1], h[2], h[3]);
	rc = read_exact(r, h + 4, TRACE_REC_HDR - 4, "record header");
	crc = rc ? 0 : trace_crc32c(0, h, 20);
	/* A magic this reader does not know, without a valid record header:
	 * damage where a chunk was expected, and said so. */
	if (magic != TRACE_PROCS_MAGIC && magic != TRACE_STACKS_MAGIC &&
	    magic != TRACE_OBJECTS_MAGIC && magic != TRACE_CACHES_MAGIC &&
	    magic != TRACE_CACHE_IDS_MAGIC && (rc || crc != get_le32(h + 20)))
		return fail(r, at, "expected a chunk (\"UCHK\"), the trailer (\"UEND\") or a record, found %02x %02x %02x %02x",
			    h[0], h[1], h[2], h[3]);
	if (rc)
		return rc;
	rc = check_frame(r, h, at, 20, "record", 0, TRACE_REC_RAW_MAX, &comp, &raw);
	if (rc)
		return rc;
	n = get_le32(h + 12);
	if (magic == TRACE_CACHES_MAGIC || magic == TRACE_CACHE_IDS_MAGIC) {
		/* 1.2: anywhere before the trailer; a cache id record's
		 * decoded size is bounded by the ids a chunk can need */
		if (magic == TRACE_CACHE_IDS_MAGIC &&
		    raw > TRACE_CHUNK_RAW_MAX / TRACE_EVENT_MIN * 10)
			return fail(r, at + 8, "expected a cache id record of at most %u decoded bytes, found %u",
				    TRACE_CHUNK_RAW_MAX / TRACE_EVENT_MIN * 10, raw);
		rc = read_payload(r, at + TRACE_REC_HDR, comp, raw, get_le32(h + 16), "record",
				  "record payload");
		if (!rc)
			rc = magic == TRACE_CACHES_MAGIC ?
				decode_caches(r, r->raw, raw, n, at + TRACE_REC_HDR) :
				decode_cache_ids(r, r->raw, raw, n, at + TRACE_REC_HDR);
		if (r->raw_cap > TRACE_CHUNK_RAW_MAX) {
			free(r->raw);
			r->raw = NULL;
			r->raw_cap = 0;
		}
		return rc;
	}
	if (magic != TRACE_PROCS_MAGIC && magic != TRACE_STACKS_MAGIC &&
	    magic != TRACE_OBJECTS_MAGIC)
		return skip_payload(r, comp);
	if (r->nchunks)
		return fail(r, at, "expected records before the first chunk");
	if (magic == TRACE_PROCS_MAGIC && (r->procs || r->lazy_stk.seen || r->lazy_obj.seen))
		return fail(r, at, "expected one process table, before the stacks and objects");
	if (magic == TRACE_STACKS_MAGIC && r->lazy_stk.seen)
		return fail(r, at, "expected one stack table, found a second");
	if (magic == TRACE_OBJECTS_MAGIC && r->lazy_obj.seen)
		return fail(r, at, "expected one object table, found a second");
	rc = read_payload(r, at + TRACE_REC_HDR, comp, raw, get_le32(h + 16), "record",
			  "record payload");
	if (rc)
		return rc;
	if (magic == TRACE_STACKS_MAGIC) {
		r->lazy_stk.seen = true;
		rc = decode_stacks(r, r->raw, raw, n, at + TRACE_REC_HDR, false);
		if (!rc)
			rc = keep_table(r, &r->lazy_stk, comp, raw);
	} else if (magic == TRACE_OBJECTS_MAGIC) {
		r->lazy_obj.seen = true;
		rc = decode_objects(r, r->raw, raw, n, at + TRACE_REC_HDR, false);
		if (!rc)
			rc = keep_table(r, &r->lazy_obj, comp, raw);
	} else {
		rc = decode_procs(r, r->raw, raw, n, at + TRACE_REC_HDR);
	}
	/* a record's decoded bytes may be 8 times a chunk's: not kept */
	if (r->raw_cap > TRACE_CHUNK_RAW_MAX) {
		free(r->raw);
		r->raw = NULL;
		r->raw_cap = 0;
	}
	return rc;
}

/* Records between the header and the first chunk, so that trace_meta has
 * the process table at open. The first chunk's magic is kept for later. */
static int read_prelude(struct trace_reader *r)
{
	for (;;) {
		uint64_t at = r->off;
		size_t n = read_magic(r, r->pending);
		uint32_t magic;
		int rc;

		if (n != 4) {
			if (ferror(r->f))
				return read_exact(r, r->pending, 4, "chunk");
			return fail(r, at, "expected a chunk (\"UCHK\") or the trailer (\"UEND\"), file ends after %zu bytes (truncated)",
				    n);
		}
		magic = get_le32(r->pending);
		if (magic == TRACE_CHUNK_MAGIC || magic == TRACE_END_MAGIC) {
			r->has_pending = true;
			return 0;
		}
		if (r->meta.version_minor < 1 || r->pending[0] != 'U')
			return fail(r, at, "expected a chunk (\"UCHK\") or the trailer (\"UEND\"), found %02x %02x %02x %02x",
				    r->pending[0], r->pending[1], r->pending[2], r->pending[3]);
		rc = load_record(r, r->pending, at);
		if (rc)
			return rc;
	}
}

static bool parse_trailer(const uint8_t *t, struct trace_meta *m)
{
	if (get_le32(t) != TRACE_END_MAGIC ||
	    get_le32(t + 44) != trace_crc32c(0, t, 44))
		return false;
	m->nevents = get_le64(t + 8);
	m->id_space = get_le64(t + 24);
	m->duration_ns = get_le64(t + 32);
	m->nthreads = get_le32(t + 40);
	m->has_summary = true;
	return true;
}

static int read_header(struct trace_reader *r)
{
	uint8_t h[TRACE_HDR_FIXED], c[4];
	uint32_t clen, hsize, crc;
	int rc;

	rc = read_exact(r, h, 8, "trace magic \"USLABTRC\"");
	if (rc)
		return rc;
	if (memcmp(h, TRACE_MAGIC, 8))
		return fail(r, 0, "expected trace magic \"USLABTRC\": not a uslab trace");
	rc = read_exact(r, h + 8, TRACE_HDR_FIXED - 8, "trace header");
	if (rc)
		return rc;
	r->meta.version_major = get_le16(h + 8);
	r->meta.version_minor = get_le16(h + 10);
	if (r->meta.version_major != TRACE_FORMAT_MAJOR)
		return fail(r, 8, "expected format version %d.x, found %u.%u",
			    TRACE_FORMAT_MAJOR, r->meta.version_major,
			    r->meta.version_minor);
	hsize = get_le32(h + 12);
	clen = get_le32(h + 72);
	if (clen > TRACE_CMDLINE_MAX)
		return fail(r, 72, "expected command line length <= %u, found %u",
			    TRACE_CMDLINE_MAX, clen);
	if (hsize != TRACE_HDR_FIXED + clen + 4)
		return fail(r, 12, "expected header size %u, found %u",
			    TRACE_HDR_FIXED + clen + 4, hsize);
	r->meta.cmdline = malloc(clen + 1);
	if (!r->meta.cmdline)
		return r->error = -ENOMEM;
	rc = read_exact(r, r->meta.cmdline, clen, "command line");
	if (rc)
		return rc;
	r->meta.cmdline[clen] = 0;
	rc = read_exact(r, c, 4, "header checksum");
	if (rc)
		return rc;
	crc = trace_crc32c(trace_crc32c(0, h, TRACE_HDR_FIXED), r->meta.cmdline, clen);
	if (crc != get_le32(c))
		return fail(r, r->off - 4, "expected header checksum %08x, found %08x",
			    crc, get_le32(c));
	r->meta.cpus = get_le32(h + 16);
	r->meta.clock_id = get_le32(h + 20);
	r->meta.pid = get_le32(h + 24);
	r->meta.flags = get_le32(h + 28);
	r->meta.start_ns = get_le64(h + 32);
	memcpy(r->meta.tool, h + 40, 31);
	r->meta.tool[31] = 0;
	for (char *s = r->meta.tool; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			*s = '?';
	return 0;
}

/*
 * The trailer read at open is a claim, checked against the events at the
 * end; until then it must at least fit the file: chunks of at least 41
 * bytes each in the bytes between header and trailer, between 1 and
 * TRACE_CHUNK_RAW_MAX / TRACE_EVENT_MIN events per chunk, ids below 2^63.
 * Consumers still size nothing by it (they follow the events they meet).
 * Return: 0, or the error naming the offending field.
 */
static int check_claims(struct trace_reader *r, const uint8_t *t, uint64_t at)
{
	uint64_t nev = get_le64(t + 8), nch = get_le64(t + 16);
	uint64_t room = at - r->off;	/* bytes for the chunks */
	const uint64_t k = TRACE_CHUNK_RAW_MAX / TRACE_EVENT_MIN;	/* events a chunk */

	if (nch > room / (TRACE_CHUNK_HDR + 1))
		return fail(r, at + 16, "expected at most %" PRIu64 " chunks in %" PRIu64
			    " bytes, trailer says %" PRIu64, room / (TRACE_CHUNK_HDR + 1),
			    room, nch);
	if (nev < nch || nev / k > nch || (nev / k == nch && nev % k))
		return fail(r, at + 8, "expected %" PRIu64 " to %" PRIu64 " events in %"
			    PRIu64 " chunks, trailer says %" PRIu64, nch, nch * k, nch, nev);
	if (get_le64(t + 24) > TRACE_ID_LIMIT)
		return fail(r, at + 24, "expected an id space of at most 2^63, trailer says %"
			    PRIu64, get_le64(t + 24));
	return 0;
}

/* On a seekable stream, the trailer is read up front for trace_meta. */
static int peek_trailer(struct trace_reader *r)
{
	uint8_t t[TRACE_TRAILER];
	off_t here = ftello(r->f), end;
	int rc = 0;

	if (here < 0 || fseeko(r->f, -(off_t)TRACE_TRAILER, SEEK_END) < 0)
		goto out;
	end = ftello(r->f);
	if (fread(t, 1, sizeof(t), r->f) == sizeof(t) && end >= here &&
	    parse_trailer(t, &r->trailer)) {
		rc = check_claims(r, t, (uint64_t)end);
		if (rc)
			goto out;
		r->trailer_at_open = true;
		r->meta.has_summary = true;
		r->meta.nevents = r->trailer.nevents;
		r->meta.id_space = r->trailer.id_space;
		r->meta.nthreads = r->trailer.nthreads;
		r->meta.duration_ns = r->trailer.duration_ns;
	}
out:
	clearerr(r->f);
	if (here >= 0)
		fseeko(r->f, here, SEEK_SET);
	return rc;
}

int trace_reader_open_file(struct trace_reader **rp, FILE *f, const char *name)
{
	struct trace_reader *r = calloc(1, sizeof(*r));
	int rc;

	*rp = r;
	if (!r)
		return -ENOMEM;
	r->f = f;
	r->name = strdup(name ? name : "(trace)");
	r->dctx = ZSTD_createDCtx();
	if (!r->name || !r->dctx) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		return r->error = -ENOMEM;
	}
	r->sel = -1;
	r->meta.selected = -1;
	/* the header, the trailer's totals, then the tables before the events */
	rc = read_header(r);
	if (!rc)
		rc = peek_trailer(r);
	return rc ? rc : read_prelude(r);
}

int trace_reader_open(struct trace_reader **rp, const char *path)
{
	FILE *f = fopen(path, "rbe");
	int rc;

	if (!f) {
		rc = -errno;
		*rp = calloc(1, sizeof(**rp));
		if (*rp) {
			(*rp)->error = rc;
			snprintf((*rp)->err, sizeof((*rp)->err), "%s: %s", path,
				 strerror(-rc));
		}
		return rc;
	}
	rc = trace_reader_open_file(rp, f, path);
	if (*rp)
		(*rp)->own_file = true;
	else
		fclose(f);
	return rc;
}

const struct trace_meta *trace_reader_meta(const struct trace_reader *r)
{
	return &r->meta;
}

uint64_t trace_reader_position(const struct trace_reader *r)
{
	return r->nevents;
}

const char *trace_reader_error(const struct trace_reader *r)
{
	return r->err[0] ? r->err : "no error";
}

void trace_reader_close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->own_file && r->f)
		fclose(r->f);
	ZSTD_freeDCtx(r->dctx);
	free(r->comp);
	free(r->raw);
	free(r->meta.cmdline);
	trace_procs_free(r->procs, r->meta.nprocs);
	free(r->proc_events);
	free(r->ranges);
	free(r->stacks);
	free(r->frames);
	free(r->lazy_stk.comp);
	free(r->lazy_obj.comp);
	free(r->stk_raw);
	free(r->stk_off);
	for (uint32_t i = 0; i < r->ncaches; i++)
		free((char *)r->caches[i].name);
	free(r->caches);
	free(r->cid);
	if (r->sel_one_heap)
		hmap_destroy(&r->sel_live);
	for (uint32_t i = 0; r->objects && i < r->meta.nobjects; i++)
		free((char *)r->objects[i].path);
	free(r->objects);
	free(r->name);
	free(r);
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t *n;

	if (*cap >= need)
		return 0;
	n = realloc(*buf, need);
	if (!n)
		return -ENOMEM;
	*buf = n;
	*cap = need;
	return 0;
}

static int check_trailer(struct trace_reader *r, const uint8_t *t, uint64_t at)
{
	struct trace_meta m = { 0 };

	if (get_le32(t + 44) != trace_crc32c(0, t, 44))
		return fail(r, at + 44, "expected trailer checksum %08x, found %08x",
			    trace_crc32c(0, t, 44), get_le32(t + 44));
	parse_trailer(t, &m);
	if (m.nevents != r->nevents)
		return fail(r, at + 8, "trailer says %" PRIu64 " events, the chunks hold %" PRIu64,
			    m.nevents, r->nevents);
	if (get_le64(t + 16) != r->nchunks)
		return fail(r, at + 16, "trailer says %" PRIu64 " chunks, found %" PRIu64,
			    get_le64(t + 16), r->nchunks);
	if (r->nevents && (m.id_space <= r->max_id || m.nthreads <= r->max_tid ||
			   m.duration_ns != r->prev_time))
		return fail(r, at + 24, "trailer summary (id space, threads, duration) disagrees with the events");
	if (fgetc(r->f) != EOF)
		return fail(r, at + TRACE_TRAILER, "expected end of file after the trailer");
	for (uint32_t i = 0; i < r->meta.nprocs; i++)
		if (r->proc_events[i] != r->procs[i].events)
			return fail(r, at + 8, "process table says %" PRIu64 " events for process %u (%s), the chunks hold %" PRIu64,
				    r->procs[i].events, r->procs[i].pid, r->procs[i].comm,
				    r->proc_events[i]);
	r->meta.has_summary = true;
	r->meta.nevents = r->sel >= 0 ? r->procs[r->sel].events : m.nevents;
	r->meta.id_space = m.id_space;
	r->meta.nthreads = r->sel >= 0 ? r->procs[r->sel].nthreads : m.nthreads;
	r->meta.duration_ns = m.duration_ns;
	r->done = true;
	return 0;
}

/* Read the next chunk, or the trailer. Return: 1 chunk loaded, 0 end, <0. */
static int load_chunk(struct trace_reader *r)
{
	uint8_t h[TRACE_TRAILER];	/* a chunk header or the trailer */
	uint64_t at, base;
	uint32_t magic, comp, raw, nev;
	uint64_t first;
	size_t n;
	int rc;

again:
	at = r->off - (r->has_pending ? 4 : 0);
	n = read_magic(r, h);
	if (n != 4) {
		if (ferror(r->f))
			return read_exact(r, h, 4, "chunk");
		fail(r, at, "expected a chunk (\"UCHK\") or the trailer (\"UEND\"), file ends after %zu bytes (truncated)",
		     n);
		r->truncated = true;
		return r->error;
	}
	magic = get_le32(h);
	if (magic != TRACE_END_MAGIC && magic != TRACE_CHUNK_MAGIC &&
	    r->meta.version_minor >= 1 && h[0] == 'U') {
		rc = load_record(r, h, at);
		if (rc)
			return rc;
		goto again;
	}
	if (r->cid_pending && magic != TRACE_CHUNK_MAGIC)
		return fail(r, at, "expected the chunk the cache id record at byte offset %" PRIu64 " describes",
			    r->cid_off);
	if (magic == TRACE_END_MAGIC) {
		rc = read_exact(r, h + 4, TRACE_TRAILER - 4, "trailer");
		if (rc)
			return rc;
		return check_trailer(r, h, at);
	}
	if (magic != TRACE_CHUNK_MAGIC)
		return fail(r, at, "expected a chunk (\"UCHK\") or the trailer (\"UEND\"), found %02x %02x %02x %02x",
			    h[0], h[1], h[2], h[3]);
	rc = read_exact(r, h + 4, TRACE_CHUNK_HDR - 4, "chunk header");
	if (rc)
		return rc;
	rc = check_frame(r, h, at, 36, "chunk", TRACE_EVENT_MIN, TRACE_CHUNK_RAW_MAX,
			 &comp, &raw);
	if (rc)
		return rc;
	nev = get_le32(h + 12);
	first = get_le64(h + 16);
	base = get_le64(h + 24);
	if (nev == 0 || nev > raw / TRACE_EVENT_MIN)
		return fail(r, at + 12, "expected 1 to %u events for %u bytes, found %u",
			    raw / TRACE_EVENT_MIN, raw, nev);
	if (first != r->nevents)
		return fail(r, at + 16, "expected first event index %" PRIu64 ", found %" PRIu64,
			    r->nevents, first);
	if (base != r->prev_time)
		return fail(r, at + 24, "expected chunk base time %" PRIu64 ", found %" PRIu64,
			    r->prev_time, base);
	rc = read_payload(r, at + TRACE_CHUNK_HDR, comp, raw, get_le32(h + 32), "chunk",
			  "compressed chunk payload");
	if (rc)
		return rc;
	r->chunk_off = at;
	r->p = r->raw;
	r->end = r->raw + raw;
	r->chunk_left = nev;
	r->chunk_events = nev;
	r->prev_id = 0;
	r->prev_tid = 0;
	r->prev_cpu = 0;
	r->nchunks++;
	r->cid_active = r->cid_pending;
	r->cid_pending = false;
	r->cid_pos = 0;
	return 1;
}

static int bad_event_what(struct trace_reader *r, const char *what, const char *how)
{
	return fail(r, r->chunk_off,
		    "chunk event %u (trace event %" PRIu64 "), decoded byte %td: expected %s%s",
		    r->chunk_events - r->chunk_left, r->nevents, r->p - r->raw, what, how);
}

static int bad_event(struct trace_reader *r, const char *what)
{
	return bad_event_what(r, what, "");
}

/* Past the current chunk's last event: the next chunk. Return: 1 with
 * events to read, 0 at the end, or an error. */
static int next_chunk(struct trace_reader *r)
{
	int rc;

	while (!r->chunk_left) {
		if (r->p != r->end)
			return bad_event(r, "end of chunk (bytes left over after the last event)");
		if (r->cid_active && r->cid_pos != r->cid_n)
			return fail(r, r->cid_off, "cache id record: %u entries, its chunk at byte offset %" PRIu64 " has %u kmem_cache_alloc events",
				    r->cid_n, r->chunk_off, r->cid_pos);
		r->cid_active = false;
		if (r->done)
			return 0;
		rc = load_chunk(r);
		if (rc <= 0)
			return rc;
	}
	return 1;
}

/* A varint field of the event at *@pp, its offset noted for
 * trace_reader_reject(). Return: get_varint()'s. */
static inline int field_varint(struct trace_reader *r, const uint8_t **pp,
			       enum trace_field f, uint64_t *v)
{
	r->fld[f] = (uint32_t)(*pp - r->raw);
	return get_varint(pp, r->end, v);
}

/* An object id (TRACE_FIELD_ID) or realloc's old id (TRACE_FIELD_OLD_ID):
 * a zigzag delta from @base, below 2^63. */
static int decode_id(struct trace_reader *r, const uint8_t **pp,
		     enum trace_field f, uint64_t base, uint64_t *id)
{
	const char *what = f == TRACE_FIELD_ID ? "object id" : "realloc old id";
	uint64_t v;

	if (field_varint(r, pp, f, &v))
		return bad_event_what(r, what, " varint");
	*id = base + (uint64_t)unzigzag(v);
	if (*id >= TRACE_ID_LIMIT)
		return bad_event_what(r, what, " below 2^63");
	return 0;
}

/*
 * An event's fields after its op byte @b, thread and CPU: object id,
 * realloc's old id, size, alignment, stack (docs/trace-format.md).
 */
static int decode_ids(struct trace_reader *r, const uint8_t **pp, uint8_t b,
		      struct trace_event *ev)
{
	uint64_t v;
	int rc;

	rc = decode_id(r, pp, TRACE_FIELD_ID, r->prev_id, &ev->id);
	ev->old_id = 0;
	if (!rc && ev->op == TRACE_OP_REALLOC)
		rc = decode_id(r, pp, TRACE_FIELD_OLD_ID, ev->id, &ev->old_id);
	if (rc)
		return rc;
	ev->size = 0;
	r->fld[TRACE_FIELD_SIZE] = (uint32_t)(*pp - r->raw);
	if (trace_op_has_size(ev->op) && get_varint(pp, r->end, &ev->size))
		return bad_event(r, "size varint");
	ev->align = 0;
	r->fld[TRACE_FIELD_ALIGN] = (uint32_t)(*pp - r->raw);
	if (trace_op_has_align(ev->op) && get_varint(pp, r->end, &ev->align))
		return bad_event(r, "alignment varint");
	ev->cache = 0;
	if (ev->op == TRACE_OP_CACHE_ALLOC && r->cid_active) {
		if (r->cid_pos == r->cid_n)
			return fail(r, r->cid_off, "cache id record: %u entries, its chunk at byte offset %" PRIu64 " has more kmem_cache_alloc events",
				    r->cid_n, r->chunk_off);
		ev->cache = r->cid[r->cid_pos++];
	}
	ev->stack = 0;
	if (b & TRACE_EV_STACK) {
		if (get_varint(pp, r->end, &v) || v == 0 || v > r->meta.nstacks)
			return bad_event(r, "a stack id in the stack table");
		ev->stack = (uint32_t)v;
	}
	return 0;
}

static int next_event(struct trace_reader *r, struct trace_event *ev)
{
	const uint8_t *p;
	uint64_t v;
	uint8_t b;
	int rc;

	if (unlikely(r->error))
		return r->error;
	if (unlikely(!r->chunk_left)) {
		rc = next_chunk(r);
		if (rc <= 0)
			return rc;
	}
	p = r->p;
	if (p >= r->end)
		return bad_event(r, "an event (chunk ends early)");
	r->fld[TRACE_FIELD_OP] = r->fld[TRACE_FIELD_TID] = r->fld[TRACE_FIELD_CPU] =
		r->fld[TRACE_FIELD_OLD_ID] = r->fld[TRACE_FIELD_SIZE] =
		r->fld[TRACE_FIELD_ALIGN] = (uint32_t)(p - r->raw);
	b = *p++;
	if ((b & TRACE_EV_OP_MASK) >= TRACE_OP_NR ||
	    ((b & TRACE_EV_STACK) && r->meta.version_minor < 1))
		return bad_event(r, "a valid op byte");
	if (r->chunk_left == r->chunk_events && (b & (TRACE_EV_SAME_TID | TRACE_EV_SAME_CPU)))
		return bad_event(r, "explicit thread and CPU in a chunk's first event");
	ev->op = b & TRACE_EV_OP_MASK;
	if (field_varint(r, &p, TRACE_FIELD_TIME, &v) || v > UINT64_MAX - r->prev_time)
		return bad_event(r, "time delta varint");
	ev->time_ns = r->prev_time + v;
	/* thread and CPU: the previous event's unless written */
	v = r->prev_tid;
	if (!(b & TRACE_EV_SAME_TID) &&
	    (field_varint(r, &p, TRACE_FIELD_TID, &v) || v >= UINT32_MAX))
		return bad_event(r, "thread varint");
	ev->tid = (uint32_t)v;
	v = r->prev_cpu;
	if (!(b & TRACE_EV_SAME_CPU) &&
	    (field_varint(r, &p, TRACE_FIELD_CPU, &v) || v > UINT32_MAX))
		return bad_event(r, "CPU varint");
	r->prev_cpu = v;
	ev->cpu = v ? (uint32_t)(v - 1) : TRACE_CPU_UNKNOWN;
	rc = decode_ids(r, &p, b, ev);
	if (rc)
		return rc;
	r->p = p;
	r->prev_time = ev->time_ns;
	r->prev_id = ev->id;
	r->prev_tid = ev->tid;
	r->max_id = max_t(uint64_t, r->max_id, max_t(uint64_t, ev->id, ev->old_id));
	r->max_tid = max_t(uint32_t, r->max_tid, ev->tid);
	r->chunk_left--;
	r->nevents++;
	return 1;
}

/* The process image whose tid range holds @tid, or -1: a binary search of
 * the images that have threads (their ranges ascend). */
static int proc_of_tid(const struct trace_reader *r, uint32_t tid)
{
	uint32_t lo = 0, hi = r->nranges;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct trace_proc *t = &r->procs[r->ranges[mid]];

		if (tid < t->first_tid)
			hi = mid;
		else if (tid >= t->first_tid + t->nthreads)
			lo = mid + 1;
		else
			return (int)r->ranges[mid];
	}
	return -1;
}

int trace_reader_next(struct trace_reader *r, struct trace_event *ev)
{
	int rc, p;

	for (;;) {
		rc = next_event(r, ev);
		if (rc <= 0 || !r->meta.nprocs)
			return rc;
		p = proc_of_tid(r, ev->tid);
		if (p < 0)
			return fail(r, r->chunk_off, "chunk event %u (trace event %" PRIu64 "): thread %u belongs to no process of the process table",
				    r->chunk_events - r->chunk_left - 1, r->nevents - 1, ev->tid);
		r->proc_events[p]++;
		if (r->sel < 0)
			return 1;
		if (p == r->sel) {
			/* the selected process reads as a trace of its own */
			ev->tid -= r->procs[p].first_tid;
			r->sel_events++;
			if (r->sel_one_heap && ev->id) {
				uint64_t v;

				if (trace_op_is_free(ev->op) && hmap_remove(&r->sel_live, ev->id, &v))
					continue;	/* another process's object */
				if ((trace_op_is_alloc(ev->op) || ev->op == TRACE_OP_REALLOC) &&
				    hmap_insert(&r->sel_live, ev->id, 0) == -ENOMEM)
					return nomem(r);
			}
			return 1;
		}
	}
}

int trace_reader_select(struct trace_reader *r, int proc)
{
	if (r->error || r->nevents || proc < -1 || proc >= (int)r->meta.nprocs)
		return -EINVAL;
	r->sel = proc;
	r->meta.selected = proc;
	if (proc < 0)
		return 0;
	if ((r->meta.flags & TRACE_HDR_ONE_HEAP) && !r->sel_one_heap) {
		hmap_init(&r->sel_live);
		r->sel_one_heap = true;
	}
	r->meta.pid = r->procs[proc].pid;
	if (r->procs[proc].cmdline) {
		char *c = strdup(r->procs[proc].cmdline);

		if (!c)
			return -ENOMEM;
		free(r->meta.cmdline);
		r->meta.cmdline = c;
	}
	r->meta.nevents = r->procs[proc].events;
	r->meta.nthreads = r->procs[proc].nthreads;
	return 0;
}

static const char *const field_names[TRACE_FIELD_NR] = {
	[TRACE_FIELD_HDR_CPUS]	= "header CPU count",
	[TRACE_FIELD_OP]	= "op",
	[TRACE_FIELD_TIME]	= "time",
	[TRACE_FIELD_TID]	= "thread",
	[TRACE_FIELD_CPU]	= "CPU",
	[TRACE_FIELD_ID]	= "object id",
	[TRACE_FIELD_OLD_ID]	= "realloc old id",
	[TRACE_FIELD_SIZE]	= "size",
	[TRACE_FIELD_ALIGN]	= "alignment",
};

int trace_reader_reject(struct trace_reader *r, enum trace_field field,
			const char *fmt, ...)
{
	const char *what = (unsigned int)field < TRACE_FIELD_NR ? field_names[field] : "?";
	va_list ap;
	int n;

	if (field == TRACE_FIELD_HDR_CPUS || !r->nevents)
		n = snprintf(r->err, sizeof(r->err), "%s: byte offset %u (%s): ", r->name,
			     field == TRACE_FIELD_HDR_CPUS ? 16u : 0u, what);
	else
		n = snprintf(r->err, sizeof(r->err), "%s: byte offset %" PRIu64
			     ": chunk event %u (trace event %" PRIu64 "), decoded byte %u (%s): ",
			     r->name, r->chunk_off, r->chunk_events - r->chunk_left - 1,
			     r->nevents - 1, (unsigned int)field < TRACE_FIELD_NR ?
			     r->fld[field] : 0, what);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(r->err))
		vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return r->error = -EPROTO;
}
