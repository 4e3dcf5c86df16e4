// SPDX-License-Identifier: MIT
/*
 * Streaming trace writer: buffers one chunk of encoded events, compresses it
 * with zstd and appends it to PATH.tmp; close() writes the trailer and
 * renames PATH.tmp to PATH. No locks: one writer, one thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include "trace/internal.h"

struct trace_writer {
	int fd;
	int failed;		/* -errno once a write failed */
	int level;
	char *path;
	char *tmp;
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
	char err[512];
};

static int write_all(struct trace_writer *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			w->failed = -errno;
			snprintf(w->err, sizeof(w->err), "%s: write: %s", w->tmp,
				 strerror(errno));
			return w->failed;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
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
	put_le32(h + 28, 0);
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
	w->fd = -1;
	w->level = level ? level : 3;
	w->path = strdup(path);
	w->tmp = malloc(strlen(path) + 5);
	w->raw = malloc(TRACE_CHUNK_RAW + TRACE_EVENT_MAX);
	w->comp_cap = ZSTD_compressBound(TRACE_CHUNK_RAW + TRACE_EVENT_MAX);
	w->comp = malloc(w->comp_cap);
	w->cctx = ZSTD_createCCtx();
	if (!w->path || !w->tmp || !w->raw || !w->comp || !w->cctx)
		goto out_free;
	sprintf(w->tmp, "%s.tmp", path);
	w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		rc = -errno;
		goto out_free;
	}
	rc = write_header(w, meta);
	if (rc)
		goto out_unlink;
	*wp = w;
	return 0;

out_unlink:
	close(w->fd);
	unlink(w->tmp);
	w->fd = -1;
out_free:
	free(w->hdr);
	ZSTD_freeCCtx(w->cctx);
	free(w->comp);
	free(w->raw);
	free(w->tmp);
	free(w->path);
	free(w);
	return rc;
}

static int flush_chunk(struct trace_writer *w)
{
	uint8_t h[TRACE_CHUNK_HDR];
	size_t n;
	int rc;

	if (!w->chunk_events)
		return 0;
	n = ZSTD_compressCCtx(w->cctx, w->comp, w->comp_cap, w->raw,
			      w->raw_len, w->level);
	if (ZSTD_isError(n)) {
		snprintf(w->err, sizeof(w->err), "%s: zstd: %s", w->tmp,
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
		     ev->id >= TRACE_ID_LIMIT || ev->old_id >= TRACE_ID_LIMIT)) {
		snprintf(w->err, sizeof(w->err),
			 "%s: event %llu: bad op, id or time going backwards",
			 w->tmp, (unsigned long long)w->nevents);
		return -EINVAL;
	}
	if (w->raw_len + TRACE_EVENT_MAX > TRACE_CHUNK_RAW) {
		rc = flush_chunk(w);
		if (rc)
			return rc;
	}
	cpu1 = ev->cpu == TRACE_CPU_UNKNOWN ? 0 : (uint64_t)ev->cpu + 1;
	start = p = w->raw + w->raw_len;
	b = ev->op;
	if (w->chunk_events && ev->tid == w->prev_tid)
		b |= TRACE_EV_SAME_TID;
	if (w->chunk_events && cpu1 == w->prev_cpu)
		b |= TRACE_EV_SAME_CPU;
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

void trace_writer_set_cpus_pid(struct trace_writer *w, uint32_t cpus, uint32_t pid)
{
	put_le32(w->hdr + 16, cpus);
	put_le32(w->hdr + 24, pid);
	put_le32(w->hdr + w->hdr_len - 4, trace_crc32c(0, w->hdr, w->hdr_len - 4));
	w->hdr_dirty = true;
}

static void writer_free(struct trace_writer *w)
{
	free(w->hdr);
	ZSTD_freeCCtx(w->cctx);
	free(w->comp);
	free(w->raw);
	free(w->tmp);
	free(w->path);
	free(w);
}

void trace_writer_abort(struct trace_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	unlink(w->tmp);
	writer_free(w);
}

int trace_writer_close(struct trace_writer *w)
{
	uint8_t t[TRACE_TRAILER];
	int rc;

	rc = w->failed;
	if (!rc)
		rc = flush_chunk(w);
	if (!rc) {
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
	if (!rc && w->hdr_dirty &&
	    pwrite(w->fd, w->hdr, w->hdr_len, 0) != (ssize_t)w->hdr_len)
		rc = -errno;
	if (!rc && close(w->fd) < 0)
		rc = -errno;
	w->fd = -1;
	if (!rc && rename(w->tmp, w->path) < 0)
		rc = -errno;
	if (rc) {
		unlink(w->tmp);
		if (!w->err[0])
			snprintf(w->err, sizeof(w->err), "%s: %s", w->path,
				 strerror(-rc));
		fprintf(stderr, "uslab: %s\n", w->err);
	}
	writer_free(w);
	return rc;
}

const char *trace_writer_error(const struct trace_writer *w)
{
	return w->err[0] ? w->err : "no error";
}
