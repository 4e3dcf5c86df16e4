// SPDX-License-Identifier: MIT
/*
 * The collector: turns the raw files the preloaded recorder wrote into
 * traces, one per process image. The per-thread blocks are merged by time
 * (one cursor per thread holding one 32 KiB block, so memory is bounded by
 * the thread count and the live objects, not the trace length), addresses
 * become dense ids in that order, and the events go through the streaming
 * trace writer. Each file is written as FILE.tmp and renamed.
 *
 * Used by `uslab record` (tools/uslab/builtin-record.c). May use trace/ and
 * lib/; nothing of the allocator. No locks: single-threaded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tools/record/record.h"

#define MAX_RAW_TID	(1u << 24)

struct cursor {
	uint64_t *blocks;	/* file offsets of each block's first event */
	uint32_t *counts;
	uint32_t *bytes;
	size_t nblocks, cap;
	size_t bi;		/* next block to load */
	uint8_t *buf;		/* the loaded block */
	const uint8_t *p, *end;
	uint32_t left;		/* events left in it */
	struct rec_state st;
	struct rec_event cur;	/* the cursor's current event */
	uint32_t raw_tid;
	uint32_t out_tid;	/* dense, in order of first event; -1 = none */
	uint64_t pending_old;	/* id given up by REC_OP_REALLOC_OLD */
};


struct merge {
	int fd;
	const char *name;
	struct cursor *cur;	/* one per raw tid met, in order of first block */
	uint32_t ncur, cur_cap;
	struct hmap tids;	/* raw tid -> index in cur[] */
	struct cursor **heap;
	uint32_t nheap;
	struct idmap *ids;	/* live address -> dense id */
	struct trace_writer *w;
	struct record_image *im;
};

static int add_block(struct cursor *c, uint64_t off, uint32_t count,
		     uint32_t bytes)
{
	if (c->nblocks == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		uint64_t *b = realloc(c->blocks, cap * sizeof(*b));
		uint32_t *n;

		if (!b)
			return -ENOMEM;
		c->blocks = b;
		n = realloc(c->counts, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->counts = n;
		n = realloc(c->bytes, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->bytes = n;
		c->cap = cap;
	}
	c->blocks[c->nblocks] = off;
	c->bytes[c->nblocks] = bytes;
	c->counts[c->nblocks++] = count;
	return 0;
}

/* Pass 1: index every block by thread; returns the earliest time seen. */
static int index_raw(struct merge *m, uint64_t *tmin)
{
	struct rec_block h;
	struct rec_event first;
	struct rec_state st;
	uint8_t head[REC_EVENT_MAX];
	const uint8_t *p;
	uint64_t off = 0, *v;
	ssize_t n;

	*tmin = UINT64_MAX;
	for (;;) {
		n = pread(m->fd, &h, sizeof(h), (off_t)off);
		if (n == 0)
			return 0;
		memset(&st, 0, sizeof(st));
		p = head;
		if (n != sizeof(h) || h.magic != REC_BLOCK_MAGIC ||
		    h.count == 0 || h.bytes > REC_BLOCK_BYTES || h.bytes < h.count ||
		    h.tid >= MAX_RAW_TID ||
		    pread(m->fd, head, min_t(uint32_t, h.bytes, sizeof(head)),
			  (off_t)(off + sizeof(h))) != min_t(uint32_t, h.bytes, sizeof(head)) ||
		    rec_decode(&p, head + min_t(uint32_t, h.bytes, sizeof(head)), &st, &first)) {
			fprintf(stderr, "uslab record: %s: byte offset %" PRIu64
				": expected a raw block header (the recorder was cut off?); "
				"keeping the events before it\n", m->name, off);
			return 0;
		}
		/* Memory follows the threads met, not the numbers they carry. */
		v = hmap_find(&m->tids, h.tid);
		if (!v) {
			if (m->ncur == m->cur_cap) {
				uint32_t cap = m->cur_cap ? 2 * m->cur_cap : 16;
				struct cursor *c = realloc(m->cur, cap * sizeof(*c));

				if (!c)
					return -ENOMEM;
				m->cur = c;
				m->cur_cap = cap;
			}
			memset(&m->cur[m->ncur], 0, sizeof(m->cur[0]));
			m->cur[m->ncur].raw_tid = h.tid;
			m->cur[m->ncur].out_tid = UINT32_MAX;
			if (hmap_insert(&m->tids, h.tid, m->ncur))
				return -ENOMEM;
			v = hmap_find(&m->tids, h.tid);
			m->ncur++;
		}
		if (add_block(&m->cur[*v], off + sizeof(h), h.count, h.bytes))
			return -ENOMEM;
		if (first.time < *tmin)
			*tmin = first.time;
		off += sizeof(h) + h.bytes;
	}
}

/* Step @c to its thread's next event. Return: false when it has none. */
static bool cursor_next(struct merge *m, struct cursor *c)
{
	while (!c->left) {
		uint32_t len;

		if (c->bi == c->nblocks)
			return false;
		if (!c->buf) {
			c->buf = malloc(REC_BLOCK_BYTES);
			if (!c->buf)
				return false;
		}
		len = c->bytes[c->bi];
		if (pread(m->fd, c->buf, len, (off_t)c->blocks[c->bi]) != (ssize_t)len)
			return false;
		c->p = c->buf;
		c->end = c->buf + len;
		c->left = c->counts[c->bi++];
		memset(&c->st, 0, sizeof(c->st));
	}
	if (rec_decode(&c->p, c->end, &c->st, &c->cur)) {
		fprintf(stderr, "uslab record: %s: byte offset %" PRIu64
			": damaged raw event; skipping the rest of the block\n",
			m->name, c->blocks[c->bi - 1] + (uint64_t)(c->p - c->buf));
		c->left = 0;
		return cursor_next(m, c);
	}
	c->left--;
	return true;
}

/* Heap order: time, then frees before allocations, then thread. */
static bool before(const struct cursor *a, const struct cursor *b)
{
	const struct rec_event *x = &a->cur, *y = &b->cur;
	bool xf, yf;

	if (x->time != y->time)
		return x->time < y->time;
	xf = trace_op_is_free(x->op) || x->op == REC_OP_REALLOC_OLD;
	yf = trace_op_is_free(y->op) || y->op == REC_OP_REALLOC_OLD;
	if (xf != yf)
		return xf;
	return a->raw_tid < b->raw_tid;
}

static void sift_down(struct merge *m, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, s = i;
		struct cursor *t;

		if (l < m->nheap && before(m->heap[l], m->heap[s]))
			s = l;
		if (r < m->nheap && before(m->heap[r], m->heap[s]))
			s = r;
		if (s == i)
			return;
		t = m->heap[i];
		m->heap[i] = m->heap[s];
		m->heap[s] = t;
		i = s;
	}
}

static int put(struct merge *m, struct trace_event *ev)
{
	m->im->events++;
	return trace_writer_add(m->w, ev);
}

/*
 * A new object at @addr. If the address is still live its free was lost
 * (a thread killed with a full buffer): the trace gets that free first, so
 * it keeps its promise that ids are freed before they are reused.
 */
static int new_id(struct merge *m, struct trace_event *ev, uint64_t addr)
{
	uint64_t old;
	int rc = idmap_insert(m->ids, addr, &ev->id);

	if (rc == -EINVAL) {	/* not an address a real allocator returns */
		ev->id = 0;
		return 0;
	}
	if (rc != -EEXIST)
		return rc;
	rc = idmap_remove(m->ids, addr, &old);
	if (!rc) {
		struct trace_event f = *ev;

		f.op = TRACE_OP_FREE;
		f.id = old;
		f.old_id = f.size = f.align = 0;
		m->im->fixups++;
		rc = put(m, &f);
	}
	return rc ? rc : idmap_insert(m->ids, addr, &ev->id);
}

/*
 * One raw record, in merged time order, to zero or more trace events. Frees
 * of addresses never seen allocated (before the recorder started, or in the
 * parent of a forked child) are dropped and counted.
 */
static int translate(struct merge *m, struct cursor *c,
		     const struct rec_event *r, struct trace_event *ev)
{
	uint64_t id;
	int rc;

	if (r->op == REC_OP_REALLOC_OLD) {
		if (idmap_detach(m->ids, r->addr, &c->pending_old))
			c->pending_old = 0;
		return 0;
	}
	if (r->op >= TRACE_OP_NR)
		return -EPROTO;
	ev->op = r->op;
	ev->size = r->size;
	ev->align = r->align;
	ev->id = ev->old_id = 0;
	if (trace_op_is_free(r->op)) {
		if (r->addr && idmap_remove(m->ids, r->addr, &ev->id)) {
			m->im->dropped++;
			return 0;
		}
		return put(m, ev);
	}
	if (r->op != TRACE_OP_REALLOC) {
		rc = r->addr ? new_id(m, ev, r->addr) : 0;
		return rc ? rc : put(m, ev);
	}
	id = r->old_addr ? c->pending_old : 0;
	c->pending_old = 0;
	if (r->old_addr && !id)
		m->im->dropped++;	/* realloc of an object we never saw */
	ev->old_id = id;
	if (r->addr) {
		rc = new_id(m, ev, r->addr);
		if (!rc)
			rc = put(m, ev);
		if (!rc && id)
			rc = idmap_release_id(m->ids, id);
		return rc;
	}
	rc = put(m, ev);
	if (rc || !id)
		return rc;
	/* Failed: the old object lives on under its id; (p, 0): freed. */
	if (r->size && idmap_attach(m->ids, r->old_addr, id) == 0)
		return 0;
	return idmap_release_id(m->ids, id);
}

struct raw_meta {
	uint64_t mono, real;
	unsigned int pid;
	char cmdline[4096];
};

static void read_meta(const char *raw, struct raw_meta *rm)
{
	char path[sizeof(((struct record_image *)0)->raw) + sizeof(REC_META_SUFFIX)];
	char buf[8192];
	ssize_t n;
	int fd;
	char *p, *end;

	memset(rm, 0, sizeof(*rm));
	snprintf(path, sizeof(path), "%s%s", raw, REC_META_SUFFIX);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	end = buf + n;
	for (p = buf; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!strncmp(p, "cmdline=", 8)) {
			/* NUL-separated arguments up to the last newline */
			char *q = p + 8, *stop = end;
			size_t o = 0;

			while (stop > q && stop[-1] == '\n')
				stop--;
			for (; q < stop && o + 1 < sizeof(rm->cmdline); q++)
				rm->cmdline[o++] = *q ? *q : ' ';
			while (o && rm->cmdline[o - 1] == ' ')
				o--;
			rm->cmdline[o] = 0;
			break;
		}
		if (!strncmp(p, "mono=", 5))
			rm->mono = strtoull(p + 5, NULL, 10);
		else if (!strncmp(p, "real=", 5))
			rm->real = strtoull(p + 5, NULL, 10);
		else if (!strncmp(p, "pid=", 4))
			rm->pid = (unsigned int)strtoul(p + 4, NULL, 10);
		if (!nl)
			break;
		p = nl + 1;
	}
}

int record_convert(struct record_image *im, int level)
{
	struct merge m = { .name = im->raw, .im = im };
	struct trace_meta meta = { 0 };
	struct trace_writer *w = NULL;
	struct raw_meta rm;
	uint64_t tmin, last = 0;
	uint32_t next_tid = 0;
	int rc;

	if (hmap_init(&m.tids))
		return -ENOMEM;
	m.fd = open(im->raw, O_RDONLY | O_CLOEXEC);
	if (m.fd < 0) {
		rc = -errno;
		fprintf(stderr, "uslab record: %s: %s\n", im->raw, strerror(errno));
		hmap_destroy(&m.tids);
		return rc;
	}
	rc = index_raw(&m, &tmin);
	if (rc)
		goto out;
	read_meta(im->raw, &rm);
	if (tmin == UINT64_MAX || (rm.mono && rm.mono < tmin))
		tmin = rm.mono;
	meta.cpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	meta.clock_id = CLOCK_MONOTONIC;
	meta.pid = im->pid;
	meta.start_ns = rm.real && rm.mono >= tmin ? rm.real - (rm.mono - tmin) : 0;
	strcpy(meta.tool, "uslab record");
	meta.cmdline = rm.cmdline;
	rc = trace_writer_open(&w, im->out, &meta, level);
	if (rc) {
		fprintf(stderr, "uslab record: %s.tmp: %s\n", im->out, strerror(-rc));
		goto out;
	}
	m.w = w;
	m.ids = idmap_new();
	m.heap = calloc(m.ncur ? m.ncur : 1, sizeof(*m.heap));
	if (!m.heap || !m.ids) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < m.ncur; i++)
		if (cursor_next(&m, &m.cur[i]))
			m.heap[m.nheap++] = &m.cur[i];
	for (uint32_t i = m.nheap / 2; i-- > 0;)
		sift_down(&m, i);
	while (m.nheap) {
		struct cursor *c = m.heap[0];
		const struct rec_event *r = &c->cur;
		struct trace_event ev;

		if (c->out_tid == UINT32_MAX)
			c->out_tid = next_tid++;
		ev.time_ns = r->time >= tmin ? r->time - tmin : 0;
		if (ev.time_ns < last)
			ev.time_ns = last;
		last = ev.time_ns;
		ev.tid = c->out_tid;
		ev.cpu = r->cpu == 0xffff ? TRACE_CPU_UNKNOWN : r->cpu;
		rc = translate(&m, c, r, &ev);
		if (rc < 0) {
			fprintf(stderr, "uslab record: %s: %s\n", im->out,
				rc == -EINVAL ? trace_writer_error(w) :
				rc == -EPROTO ? "raw record with an unknown op" : strerror(-rc));
			goto out;
		}
		rc = 0;
		if (!cursor_next(&m, c))
			m.heap[0] = m.heap[--m.nheap];
		sift_down(&m, 0);
	}
	im->threads = next_tid;
	rc = trace_writer_close(w);
	w = NULL;
	im->written = !rc;
out:
	if (w)
		trace_writer_abort(w);
	for (uint32_t i = 0; i < m.ncur; i++) {
		free(m.cur[i].blocks);
		free(m.cur[i].counts);
		free(m.cur[i].bytes);
		free(m.cur[i].buf);
	}
	free(m.cur);
	hmap_destroy(&m.tids);
	free(m.heap);
	idmap_free(m.ids);
	close(m.fd);
	return rc;
}

static int cmp_image(const void *a, const void *b)
{
	const struct record_image *x = a, *y = b;

	if (x->root != y->root)
		return x->root ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

void record_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX];

	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* Every raw.<pid>.<n> in @dir, the root image first. */
struct record_image *record_list_images(const char *dir, const char *out,
					pid_t root, size_t *nimg)
{
	struct record_image *img = NULL, *im;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	unsigned int pid, gen;
	char tail;

	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		if (sscanf(de->d_name, "raw.%u.%u%c", &pid, &gen, &tail) != 2)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			im = realloc(img, cap * sizeof(*img));
			if (!im)
				break;
			img = im;
		}
		im = &img[n++];
		memset(im, 0, sizeof(*im));
		im->pid = pid;
		im->gen = gen;
		im->root = pid == (unsigned int)root && gen == 0;
		snprintf(im->raw, sizeof(im->raw), "%s/%s", dir, de->d_name);
		if (im->root)
			snprintf(im->out, sizeof(im->out), "%s", out);
		else if (gen)
			snprintf(im->out, sizeof(im->out), "%s.%u.%u", out, pid, gen);
		else
			snprintf(im->out, sizeof(im->out), "%s.%u", out, pid);
	}
	closedir(d);
	if (n)
		qsort(img, n, sizeof(*img), cmp_image);
	*nimg = n;
	return img;
}
