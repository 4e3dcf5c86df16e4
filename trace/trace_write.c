// SPDX-License-Identifier: MIT
/*
 * Streaming trace writer: buffers one chunk of encoded events, compresses it
 * with zstd and appends it to the output (trace/outfile.c: a temporary renamed
 * over a regular file at close, or a FIFO, device, socket or standard
 * output written in place). No locks: one writer, one thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include "trace/internal.h"

const char *trace_writer_who = "uslab";

struct trace_writer {
	struct out_file out;
	int failed;		/* -errno once a write failed */
	int level;
	ZSTD_CCtx *cctx;
	uint8_t *raw;		/* encoded events of the open chunk */
	size_t raw_len;
	uint8_t *comp;
	size_t comp_cap;
	uint32_t chunk_events;
	uint64_t chunk_first;	/* index of the chunk's first event */
	uint64_t chunk_base;	/* time the chunk's deltas start from */
	/* Delta state within the chunk. */
	uint64_t prev_time;
	uint64_t prev_id;
	uint32_t prev_tid;
	uint64_t prev_cpu;	/* cpu + 1, 0 = unknown */
	/* Summary for the trailer. */
	uint64_t nevents;
	uint64_t nchunks;
	uint64_t id_space;
	uint32_t nthreads;
	uint64_t last_time;
	uint8_t *hdr;		/* as written, for trace_writer_set_cpus_pid() */
	size_t hdr_len;
	bool hdr_dirty;
	bool has_procs;
	uint32_t nstacks;	/* events may name 1..nstacks */
	/* Named caches (1.2): entries not yet written (a UCAC record before
	 * the next chunk), and the cache ids of the open chunk's
	 * kmem_cache_alloc events (its UCID record). */
	uint32_t ncaches;
	uint8_t *cac_new;
	size_t cac_len, cac_cap;
	uint32_t cac_nnew;
	uint8_t *cid;
	size_t cid_len, cid_cap;
	uint32_t cid_n;
	bool cid_named;		/* one of them names a cache */
	bool deferred;		/* a scratch file for trace_writer_splice() */
	bool spliced;		/* chunks and trailer came from a scratch file */
	char err[512];
};

static int write_all(struct trace_writer *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	int rc = out_write(&w->out, p, len, w->err, sizeof(w->err));

	if (rc)
		w->failed = rc;
	return rc;
}

static int write_header(struct trace_writer *w, const struct trace_meta *m)
{
	size_t clen = m->cmdline ? strlen(m->cmdline) : 0;
	uint8_t *h;

	if (clen > TRACE_CMDLINE_MAX)
		clen = TRACE_CMDLINE_MAX;
	h = calloc(1, TRACE_HDR_FIXED + clen + 4);
	if (!h)
		return -ENOMEM;
	memcpy(h, TRACE_MAGIC, 8);
	put_le16(h + 8, TRACE_FORMAT_MAJOR);
	put_le16(h + 10, TRACE_FORMAT_MINOR);
	put_le32(h + 12, (uint32_t)(TRACE_HDR_FIXED + clen + 4));
	put_le32(h + 16, m->cpus);
	put_le32(h + 20, m->clock_id);
	put_le32(h + 24, m->pid);
	put_le32(h + 28, m->flags);
	put_le64(h + 32, m->start_ns);
	memcpy(h + 40, m->tool, strnlen(m->tool, 31));
	put_le32(h + 72, (uint32_t)clen);
	if (clen)
		memcpy(h + TRACE_HDR_FIXED, m->cmdline, clen);
	put_le32(h + TRACE_HDR_FIXED + clen,
		 trace_crc32c(0, h, TRACE_HDR_FIXED + clen));
	w->hdr = h;
	w->hdr_len = TRACE_HDR_FIXED + clen + 4;
	return write_all(w, h, w->hdr_len);
}

int trace_writer_open(struct trace_writer **wp, const char *path,
		      const struct trace_meta *meta, int level)
{
	struct trace_writer *w;
	int rc = -ENOMEM;

	*wp = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->out.fd = -1;
	w->level = level ? level : 3;
	w->raw = malloc(TRACE_CHUNK_RAW + TRACE_EVENT_MAX);
	w->comp_cap = ZSTD_compressBound(TRACE_CHUNK_RAW + TRACE_EVENT_MAX);
	w->comp = malloc(w->comp_cap);
	w->cctx = ZSTD_createCCtx();
	if (!w->raw || !w->comp || !w->cctx)
		goto out_free;
	rc = out_open(&w->out, path, w->err, sizeof(w->err));
	if (rc) {
		fprintf(stderr, "%s: %s\n", trace_writer_who, w->err);
		goto out_free;
	}
	rc = write_header(w, meta);
	if (rc)
		goto out_abort;
	*wp = w;
	return 0;

out_abort:
	fprintf(stderr, "%s: %s\n", trace_writer_who, w->err);
	out_abort(&w->out);
out_free:
	free(w->hdr);
	ZSTD_freeCCtx(w->cctx);
	free(w->comp);
	free(w->raw);
	free(w);
	return rc;
}

static int write_record(struct trace_writer *w, uint32_t magic, uint32_t entries,
			const uint8_t *raw, size_t len);

/* The records a chunk needs before it (1.2): the cache entries added since
 * the last chunk, then the cache ids of its kmem_cache_alloc events when
 * one names a cache. */
static int flush_cache_records(struct trace_writer *w)
{
	int rc = 0;

	if (w->cac_nnew) {
		rc = write_record(w, TRACE_CACHES_MAGIC, w->cac_nnew, w->cac_new, w->cac_len);
		if (rc)
			return rc;
		w->cac_nnew = 0;
		w->cac_len = 0;
	}
	if (w->cid_named && w->chunk_events)
		rc = write_record(w, TRACE_CACHE_IDS_MAGIC, w->cid_n, w->cid, w->cid_len);
	w->cid_named = false;
	w->cid_n = 0;
	w->cid_len = 0;
	return rc;
}

static int flush_chunk(struct trace_writer *w)
{
	uint8_t h[TRACE_CHUNK_HDR];
	size_t n;
	int rc;

	rc = flush_cache_records(w);
	if (rc)
		return rc;
	if (!w->chunk_events)
		return 0;
	n = ZSTD_compressCCtx(w->cctx, w->comp, w->comp_cap, w->raw,
			      w->raw_len, w->level);
	if (ZSTD_isError(n)) {
		snprintf(w->err, sizeof(w->err), "%s: zstd: %s", w->out.name,
			 ZSTD_getErrorName(n));
		return w->failed = -EIO;
	}
	put_le32(h, TRACE_CHUNK_MAGIC);
	put_le32(h + 4, (uint32_t)n);
	put_le32(h + 8, (uint32_t)w->raw_len);
	put_le32(h + 12, w->chunk_events);
	put_le64(h + 16, w->chunk_first);
	put_le64(h + 24, w->chunk_base);
	put_le32(h + 32, trace_crc32c(0, w->comp, n));
	put_le32(h + 36, trace_crc32c(0, h, 36));
	rc = write_all(w, h, sizeof(h));
	if (!rc)
		rc = write_all(w, w->comp, n);
	if (rc)
		return rc;
	w->nchunks++;
	w->chunk_first += w->chunk_events;
	w->chunk_events = 0;
	w->raw_len = 0;
	w->chunk_base = w->prev_time;
	w->prev_id = 0;
	w->prev_tid = 0;
	w->prev_cpu = 0;
	return 0;
}

int trace_writer_add(struct trace_writer *w, const struct trace_event *ev)
{
	uint8_t *p, *start;
	uint64_t cpu1;
	uint8_t b;
	int rc;

	if (unlikely(w->failed))
		return w->failed;
	if (unlikely(ev->op >= TRACE_OP_NR || ev->time_ns < w->last_time ||
		     ev->id >= TRACE_ID_LIMIT || ev->old_id >= TRACE_ID_LIMIT ||
		     (ev->stack > w->nstacks && !w->deferred) || ev->cache > w->ncaches ||
		     (ev->cache && ev->op != TRACE_OP_CACHE_ALLOC))) {
		snprintf(w->err, sizeof(w->err),
			 "%s: event %llu: bad op, id or time going backwards",
			 w->out.name, (unsigned long long)w->nevents);
		return -EINVAL;
	}
	if (w->raw_len + TRACE_EVENT_MAX > TRACE_CHUNK_RAW) {
		rc = flush_chunk(w);
		if (rc)
			return rc;
	}
	if (ev->op == TRACE_OP_CACHE_ALLOC) {
		if (w->cid_len + 10 > w->cid_cap) {
			size_t cap = w->cid_cap ? 2 * w->cid_cap : 4096;
			uint8_t *n = realloc(w->cid, cap);

			if (!n)
				return -ENOMEM;
			w->cid = n;
			w->cid_cap = cap;
		}
		w->cid_len = (size_t)(put_varint(w->cid + w->cid_len, ev->cache) - w->cid);
		w->cid_n++;
		w->cid_named |= ev->cache != 0;
	}
	cpu1 = ev->cpu == TRACE_CPU_UNKNOWN ? 0 : (uint64_t)ev->cpu + 1;
	start = p = w->raw + w->raw_len;
	b = ev->op;
	if (w->chunk_events && ev->tid == w->prev_tid)
		b |= TRACE_EV_SAME_TID;
	if (w->chunk_events && cpu1 == w->prev_cpu)
		b |= TRACE_EV_SAME_CPU;
	if (ev->stack)
		b |= TRACE_EV_STACK;
	*p++ = b;
	p = put_varint(p, ev->time_ns - w->prev_time);
	if (!(b & TRACE_EV_SAME_TID))
		p = put_varint(p, ev->tid);
	if (!(b & TRACE_EV_SAME_CPU))
		p = put_varint(p, cpu1);
	p = put_varint(p, zigzag((int64_t)(ev->id - w->prev_id)));
	if (ev->op == TRACE_OP_REALLOC)
		p = put_varint(p, zigzag((int64_t)(ev->old_id - ev->id)));
	if (trace_op_has_size(ev->op))
		p = put_varint(p, ev->size);
	if (trace_op_has_align(ev->op))
		p = put_varint(p, ev->align);
	if (ev->stack)
		p = put_varint(p, ev->stack);
	w->raw_len += (size_t)(p - start);
	w->prev_time = ev->time_ns;
	w->prev_id = ev->id;
	w->prev_tid = ev->tid;
	w->prev_cpu = cpu1;
	w->last_time = ev->time_ns;
	w->chunk_events++;
	w->nevents++;
	if (ev->id >= w->id_space)
		w->id_space = ev->id + 1;
	if (ev->old_id >= w->id_space)
		w->id_space = ev->old_id + 1;
	if (ev->tid >= w->nthreads)
		w->nthreads = ev->tid + 1;
	return 0;
}

/* An extension record: header, then @raw compressed as one zstd frame. */
static int write_record(struct trace_writer *w, uint32_t magic, uint32_t entries,
			const uint8_t *raw, size_t len)
{
	uint8_t h[TRACE_REC_HDR];
	size_t cap = ZSTD_compressBound(len), n;
	uint8_t *comp;
	int rc;

	if (len > TRACE_REC_RAW_MAX)
		return -EINVAL;
	comp = malloc(cap);
	if (!comp)
		return -ENOMEM;
	n = ZSTD_compressCCtx(w->cctx, comp, cap, raw, len, w->level);
	if (ZSTD_isError(n)) {
		free(comp);
		snprintf(w->err, sizeof(w->err), "%s: zstd: %s", w->out.name,
			 ZSTD_getErrorName(n));
		return w->failed = -EIO;
	}
	put_rec_hdr(h, magic, comp, n, len, entries);
	rc = write_all(w, h, sizeof(h));
	if (!rc)
		rc = write_all(w, comp, n);
	free(comp);
	return rc;
}

/* The tables (procs, stacks, objects) and a splice come before any event.
 * Return: 0, the writer's error, or -EINVAL after an event. */
static int before_events(const struct trace_writer *w)
{
	if (w->failed)
		return w->failed;
	return w->nevents || w->chunk_events ? -EINVAL : 0;
}

/*
 * The checks every table shares: before the first event, at most @max
 * entries, and not @again (a second table of a kind written once).
 */
static int table_allowed(const struct trace_writer *w, uint32_t n, uint32_t max,
			 bool again)
{
	int rc = before_events(w);

	if (rc)
		return rc;
	return again || n > max ? -EINVAL : 0;
}

/* write_record() of a table the caller encoded into @buf, which it frees. */
static int write_table(struct trace_writer *w, uint32_t magic, uint32_t entries,
		       uint8_t *buf, size_t len)
{
	int rc = write_record(w, magic, entries, buf, len);

	free(buf);
	return rc;
}

int trace_writer_set_procs(struct trace_writer *w, const struct trace_proc *procs,
			   uint32_t n)
{
	uint64_t tid_end = 0;
	uint8_t *buf;
	size_t len;
	int rc;

	rc = table_allowed(w, n, TRACE_PROCS_MAX, w->has_procs || !n);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_proc *t = &procs[i];

		if (t->parent >= (int32_t)i || t->exec_from >= (int32_t)i ||
		    t->parent < -1 || t->exec_from < -1 ||
		    (t->nthreads && t->first_tid < tid_end) ||
		    (uint64_t)t->first_tid + t->nthreads > TRACE_THREADS_MAX ||
		    (t->flags & ~TRACE_PROC_FLAGS) || t->allocs > t->events)
			return -EINVAL;
		if (t->nthreads)
			tid_end = (uint64_t)t->first_tid + t->nthreads;
	}
	rc = trace_procs_encode(procs, n, &buf, &len);
	if (rc)
		return rc;
	rc = write_table(w, TRACE_PROCS_MAGIC, n, buf, len);
	if (!rc)
		w->has_procs = true;
	return rc;
}

/* Encodes entry @i of a table at @p; returns the end of what it wrote. */
typedef uint8_t *(*table_entry_fn)(uint8_t *p, const void *table, uint32_t i);

/*
 * Encodes the @n entries of @table with @put into one buffer of @cap bytes
 * (the caller's bound over all entries) and writes it as a @magic record.
 */
static int encode_table(struct trace_writer *w, uint32_t magic, const void *table,
			uint32_t n, size_t cap, table_entry_fn put)
{
	uint8_t *buf = malloc(cap ? cap : 1), *p;

	if (!buf)
		return -ENOMEM;
	p = buf;
	for (uint32_t i = 0; i < n; i++)
		p = put(p, table, i);
	return write_table(w, magic, n, buf, (size_t)(p - buf));
}

/* A stack: proc, nframes, then each frame as the zigzag delta from the last. */
static uint8_t *put_stack(uint8_t *p, const void *table, uint32_t i)
{
	const struct trace_stack *st = (const struct trace_stack *)table + i;

	return put_frames(put_varint(p, st->proc), st->frames, st->nframes);
}

int trace_writer_set_stacks(struct trace_writer *w, const struct trace_stack *st,
			    uint32_t n)
{
	size_t cap = 0;
	int rc;

	rc = table_allowed(w, n, TRACE_STACKS_MAX, w->nstacks);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < n; i++) {
		if (st[i].nframes > TRACE_STACK_MAX ||
		    (w->has_procs ? 0 : st[i].proc != 0))
			return -EINVAL;
		cap += 10 + 10 + 10 * (size_t)st[i].nframes;
	}
	rc = encode_table(w, TRACE_STACKS_MAGIC, st, n, cap, put_stack);
	if (!rc)
		w->nstacks = n;
	return rc;
}

/* An object: proc, start, length, file offset, then the path's length and bytes. */
static uint8_t *put_object(uint8_t *p, const void *table, uint32_t i)
{
	const struct trace_object *o = (const struct trace_object *)table + i;
	size_t l = strlen(o->path);

	p = put_varint(p, o->proc);
	p = put_varint(p, o->start);
	p = put_varint(p, o->end - o->start);
	p = put_varint(p, o->offset);
	p = put_varint(p, l);
	memcpy(p, o->path, l);
	return p + l;
}

int trace_writer_set_objects(struct trace_writer *w, const struct trace_object *o,
			     uint32_t n)
{
	size_t cap = 0;
	int rc;

	rc = table_allowed(w, n, TRACE_OBJECTS_MAX, false);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < n; i++) {
		if (o[i].end <= o[i].start || !o[i].path ||
		    strlen(o[i].path) > TRACE_PROC_STR_MAX)
			return -EINVAL;
		cap += 50 + strlen(o[i].path);
	}
	return encode_table(w, TRACE_OBJECTS_MAGIC, o, n, cap, put_object);
}

int trace_writer_add_cache(struct trace_writer *w, const char *name, uint64_t size,
			   uint32_t *id)
{
	size_t l = name ? strlen(name) : 0;

	if (w->failed)
		return w->failed;
	if (!l || l > TRACE_CACHE_NAME_MAX || !size || w->ncaches >= TRACE_CACHES_MAX)
		return -EINVAL;
	if (w->cac_len + 20 + l > w->cac_cap) {
		size_t cap = 2 * (w->cac_len + 20 + l) + 256;
		uint8_t *n = realloc(w->cac_new, cap);

		if (!n)
			return -ENOMEM;
		w->cac_new = n;
		w->cac_cap = cap;
	}
	w->cac_len = (size_t)(put_varint(put_varint(w->cac_new + w->cac_len, size), l) -
			      w->cac_new);
	memcpy(w->cac_new + w->cac_len, name, l);
	w->cac_len += l;
	w->cac_nnew++;
	*id = ++w->ncaches;
	return 0;
}

void trace_writer_defer_records(struct trace_writer *w)
{
	w->deferred = true;
}

int trace_writer_splice(struct trace_writer *w, const char *path)
{
	uint8_t h[TRACE_HDR_FIXED], buf[1 << 16];
	ssize_t n;
	int fd, rc = 0;

	rc = before_events(w);
	if (rc)
		return rc;
	if (w->spliced)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* its header (ours, same layout) is skipped: the chunks and the
	 * trailer hold no file offsets, so they move as they are */
	if (read(fd, h, sizeof(h)) != (ssize_t)sizeof(h) || memcmp(h, TRACE_MAGIC, 8) ||
	    lseek(fd, (off_t)get_le32(h + 12), SEEK_SET) < 0) {
		close(fd);
		return -EPROTO;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0 && !rc)
		rc = write_all(w, buf, (size_t)n);
	if (n < 0 && !rc)
		rc = -errno;
	close(fd);
	if (!rc)
		w->spliced = true;
	return rc ? (w->failed = rc) : 0;
}

void trace_writer_set_cpus_pid(struct trace_writer *w, uint32_t cpus, uint32_t pid)
{
	put_le32(w->hdr + 16, cpus);
	put_le32(w->hdr + 24, pid);
	put_le32(w->hdr + w->hdr_len - 4, trace_crc32c(0, w->hdr, w->hdr_len - 4));
	w->hdr_dirty = true;
}

static void writer_free(struct trace_writer *w)
{
	free(w->cac_new);
	free(w->cid);
	free(w->hdr);
	ZSTD_freeCCtx(w->cctx);
	free(w->comp);
	free(w->raw);
	free(w);
}

void trace_writer_abort(struct trace_writer *w)
{
	if (!w)
		return;
	out_abort(&w->out);
	writer_free(w);
}

int trace_writer_close(struct trace_writer *w)
{
	uint8_t t[TRACE_TRAILER];
	int rc;

	rc = w->failed;
	if (!rc && !w->spliced)
		rc = flush_chunk(w);
	if (!rc && !w->spliced) {
		put_le32(t, TRACE_END_MAGIC);
		put_le32(t + 4, 0);
		put_le64(t + 8, w->nevents);
		put_le64(t + 16, w->nchunks);
		put_le64(t + 24, w->id_space);
		put_le64(t + 32, w->last_time);
		put_le32(t + 40, w->nthreads);
		put_le32(t + 44, trace_crc32c(0, t, 44));
		rc = write_all(w, t, sizeof(t));
	}
	/* Fields known only at the end go into the header where it can be
	 * rewritten (a file of our own); a stream keeps "unknown" (0). */
	if (!rc && w->hdr_dirty && w->out.tmp &&
	    pwrite(w->out.fd, w->hdr, w->hdr_len, 0) != (ssize_t)w->hdr_len) {
		rc = -errno;
		snprintf(w->err, sizeof(w->err), "%s: write: %s", w->out.name, strerror(errno));
	}
	if (!rc)
		rc = out_commit(&w->out, w->err, sizeof(w->err));
	else
		out_abort(&w->out);
	if (rc) {
		if (!w->err[0])
			snprintf(w->err, sizeof(w->err), "%s: %s", w->out.name ? w->out.name : "trace",
				 strerror(-rc));
		fprintf(stderr, "%s: %s\n", trace_writer_who, w->err);
	}
	writer_free(w);
	return rc;
}

const char *trace_writer_error(const struct trace_writer *w)
{
	return w->err[0] ? w->err : "no error";
}
