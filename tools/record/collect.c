// SPDX-License-Identifier: MIT
/*
 * The collector of `uslab record` (the command is tools/uslab/builtin-
 * record.c): after CMD exits, every raw file its processes left (one per
 * process image) and the notes about the ones the recorder could not enter
 * become one trace. Each image's per-thread blocks are indexed, then all
 * threads of all images are merged by time (one cursor per thread holding
 * one 32 KiB block, so memory is bounded by the thread count and the live
 * objects, not the trace length); addresses become dense ids in that order
 * (per image: the same address in two processes is two objects); the
 * process table, the call stacks (-g) and the mapped objects precede the
 * events: the merge writes a scratch trace while it counts each image's
 * events, and the trace is its records followed by the scratch file's
 * chunks (trace_writer_splice). No locks: single-threaded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tools/record/record.h"

#define MAX_RAW_TID	(1u << 24)

struct image;

/*
 * Events a cursor decodes ahead of the merge. The id map is larger than the
 * caches on any long recording (an access is a miss: half the collector's
 * time was spent waiting on them), so each event's slot is prefetched when
 * it is decoded, LOOKAHEAD / 2 to LOOKAHEAD events before it is used.
 */
#define LOOKAHEAD	16u

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
	uint64_t cur_hash;	/* its address's idmap_hash() */
	struct rec_event ring[LOOKAHEAD];	/* decoded after it */
	uint64_t rhash[LOOKAHEAD];
	uint32_t rhead, nring;
	uint32_t raw_tid;
	uint32_t out_tid;	/* trace tid; -1 = none */
	uint64_t first_time;	/* of its first event */
	uint64_t pending_old;	/* id given up by REC_OP_REALLOC_OLD */
	struct image *im;
	uint32_t *smap;		/* local stack id -> trace stack id */
	uint32_t nsmap;
	uint64_t frames[REC_STACK_MAX];	/* a stack definition being read */
};

struct raw_meta {
	uint64_t mono, real;
	unsigned int pid, ppid;
	bool attach;		/* `record -p`: recorded from a running process */
	char comm[17];
	char exe[PATH_MAX];
	char cmdline[4096];
};

/* One process image: a raw file, or a note about one we could not record. */
struct image {
	char raw[PATH_MAX + 320];
	unsigned int gen;
	int fd;
	struct raw_meta rm;
	struct cursor *cur;	/* one per raw thread met (index_raw) */
	uint32_t ncur, cur_cap;
	uint64_t tmin;		/* first event, UINT64_MAX: none */
	uint64_t start;		/* CLOCK_MONOTONIC ns */
	uint32_t index;		/* in the process table */
	int parent, exec_from;
	uint32_t first_tid, threads;
	uint32_t flags;
	uint64_t events, allocs, dropped, fixups;
	/* `record -p`: blocks allocated before attach, met freed: written as
	 * allocated at time 0 (found by the counting pass) */
	struct pre_block { uint64_t addr, size, cache; uint8_t op; } *pre;
	uint64_t npre, pre_cap;
	struct hmap pre_seen;	/* address -> 1 */
	bool pre_init;
	/* uslab's kernel API: the caches met, from raw.<pid>.<n>.caches */
	struct rec_cache { uint64_t time, addr, size; uint32_t id; char *name; } *caches;
	size_t ncaches;
};

struct merge {
	struct image *img;
	size_t nimg;
	struct cursor **heap;
	uint32_t nheap;
	struct idmap *ids;	/* live (image, address) -> dense id */
	struct trace_writer *w;	/* NULL: the counting pass */
	uint64_t tmin;
	struct image *im;	/* the image of the event being translated */
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

/* Pass 1: index every block of @im by thread, up to the file's size now
 * (a process still running keeps appending: both passes see the same). */
static int index_raw_blocks(struct image *im, struct hmap *tids);

static int index_raw(struct image *im)
{
	struct hmap tids;	/* raw tid -> index in im->cur[] */
	int rc;

	hmap_init(&tids);
	rc = 0;
	for (uint32_t i = 0; i < im->ncur && !rc; i++)
		rc = hmap_insert(&tids, im->cur[i].raw_tid, i);
	if (!rc)
		rc = index_raw_blocks(im, &tids);
	hmap_destroy(&tids);
	return rc;
}

/*
 * The cursor of raw thread @tid: memory follows the threads met, not the
 * numbers they carry (a raw file is input: a tid near MAX_RAW_TID must not
 * size an array). Return: the cursor, or NULL without memory.
 */
static struct cursor *raw_cursor(struct image *im, struct hmap *tids, uint32_t tid)
{
	uint64_t *v = hmap_find(tids, tid);
	struct cursor *c;

	if (v)
		return &im->cur[*v];
	if (im->ncur == im->cur_cap) {
		uint32_t cap = im->cur_cap ? 2 * im->cur_cap : 16;

		c = realloc(im->cur, cap * sizeof(*c));
		if (!c)
			return NULL;
		im->cur = c;
		im->cur_cap = cap;
	}
	c = im->cur;
	memset(&c[im->ncur], 0, sizeof(*c));
	c[im->ncur].raw_tid = tid;
	c[im->ncur].out_tid = UINT32_MAX;
	c[im->ncur].first_time = UINT64_MAX;
	if (hmap_insert(tids, tid, im->ncur))
		return NULL;
	return &im->cur[im->ncur++];
}

static int index_raw_blocks(struct image *im, struct hmap *tids)
{
	struct rec_block h;
	struct cursor *cur;
	uint64_t off = 0;
	struct stat sb;
	ssize_t n;

	im->tmin = UINT64_MAX;
	if (fstat(im->fd, &sb))
		return -errno;
	for (;;) {
		if (off + sizeof(h) > (uint64_t)sb.st_size)
			n = off == (uint64_t)sb.st_size ? 0 : -1;
		else
			n = pread(im->fd, &h, sizeof(h), (off_t)off);
		if (n == 0)
			return 0;
		/* the file ends inside the header, or inside a block whose
		 * header is sound */
		if (off + sizeof(h) > (uint64_t)sb.st_size ||
		    (n == sizeof(h) && h.magic == REC_BLOCK_MAGIC &&
		     h.count != 0 && h.bytes <= REC_BLOCK_BYTES && h.bytes >= h.count &&
		     h.tid < MAX_RAW_TID &&
		     off + sizeof(h) + h.bytes > (uint64_t)sb.st_size)) {
			/*
			 * The file's last block, cut short: a process that
			 * ends (exit_group) while another of its threads is in
			 * write(2) stops that write between two pages of the
			 * file, so a thread still allocating during exit can
			 * leave its last block part-written. Nothing follows it
			 * (every writer is being killed); its events are that
			 * thread's last.
			 */
			if (!(im->flags & TRACE_PROC_RUNNING))
				fprintf(stderr, "uslab record: %s: byte offset %" PRIu64
					": the last block is cut short (%" PRIu64 " bytes of "
					"it; the process ended while a thread wrote it): "
					"keeping the events before it\n", im->raw, off,
					(uint64_t)sb.st_size - off);
			return 0;
		}
		if (n != sizeof(h) || h.magic != REC_BLOCK_MAGIC ||
		    h.count == 0 || h.bytes > REC_BLOCK_BYTES || h.bytes < h.count ||
		    h.tid >= MAX_RAW_TID) {
			if (!(im->flags & TRACE_PROC_RUNNING))
				fprintf(stderr, "uslab record: %s: byte offset %" PRIu64
					": expected a raw block header (the recorder was cut off?); "
					"keeping the events before it\n", im->raw, off);
			return 0;
		}
		cur = raw_cursor(im, tids, h.tid);
		if (!cur)
			return -ENOMEM;
		cur->im = im;
		if (add_block(cur, off + sizeof(h), h.count, h.bytes))
			return -ENOMEM;
		if (h.time < cur->first_time)
			cur->first_time = h.time;
		if (h.time < im->tmin)
			im->tmin = h.time;
		off += sizeof(h) + h.bytes;
	}
}

/* ---- Call stacks (record -g): one table for the whole trace ------------ */

struct gstack {
	uint32_t image, nframes;
	uint64_t off;		/* first frame in stack_frames */
	uint64_t hash;
};

static struct gstack *stacks;
static uint32_t nstacks, stacks_cap;
static uint64_t *stack_frames;
static uint64_t nframes_all, frames_cap;
static uint32_t *stack_slots;	/* open addressing: index + 1 */
static uint32_t stack_mask;

static uint64_t stack_hash(uint32_t image, const uint64_t *f, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)image << 32) ^ n;

	for (uint32_t i = 0; i < n; i++) {
		h ^= f[i];
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	return h;
}

/* The trace-wide id (1-based) of @image's stack @f: the same frames in the
 * same process image are one stack, whichever thread met them. */
static uint32_t stack_intern(uint32_t image, const uint64_t *f, uint32_t n)
{
	uint64_t h = stack_hash(image, f, n);
	uint32_t i;

	if ((nstacks + 1) * 2 > stack_mask) {
		uint32_t cap = stack_mask ? (stack_mask + 1) * 2 : 4096;
		uint32_t *s = calloc(cap, sizeof(*s));

		if (!s)
			return 0;
		for (uint32_t k = 0; k < nstacks; k++) {
			for (i = (uint32_t)stacks[k].hash & (cap - 1); s[i]; i = (i + 1) & (cap - 1))
				;
			s[i] = k + 1;
		}
		free(stack_slots);
		stack_slots = s;
		stack_mask = cap - 1;
	}
	for (i = (uint32_t)h & stack_mask; stack_slots[i]; i = (i + 1) & stack_mask) {
		const struct gstack *g = &stacks[stack_slots[i] - 1];

		if (g->hash == h && g->image == image && g->nframes == n &&
		    !memcmp(stack_frames + g->off, f, n * sizeof(*f)))
			return stack_slots[i];
	}
	if (nstacks == stacks_cap) {
		uint32_t cap = stacks_cap ? stacks_cap * 2 : 1024;
		struct gstack *g = realloc(stacks, cap * sizeof(*g));

		if (!g)
			return 0;
		stacks = g;
		stacks_cap = cap;
	}
	if (nframes_all + n > frames_cap) {
		uint64_t cap = frames_cap ? frames_cap * 2 : 16384;
		uint64_t *fr;

		while (cap < nframes_all + n)
			cap *= 2;
		fr = realloc(stack_frames, cap * sizeof(*fr));
		if (!fr)
			return 0;
		stack_frames = fr;
		frames_cap = cap;
	}
	memcpy(stack_frames + nframes_all, f, n * sizeof(*f));
	stacks[nstacks] = (struct gstack){ .image = image, .nframes = n,
					   .off = nframes_all, .hash = h };
	nframes_all += n;
	stack_slots[i] = ++nstacks;
	return nstacks;
}

/* The executable mappings of every image (raw.<pid>.<n>.maps), for
 * symbolizing the stacks at report time. */
static struct trace_object *objects;
static uint32_t nobjects, objects_cap;

static void read_maps(const struct image *im)
{
	char path[PATH_MAX + 400], line[PATH_MAX + 200];
	uint32_t first = nobjects;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", im->raw, REC_MAPS_SUFFIX);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], *file = strchr(line, '/');
		bool dup = false;
		int used = 0;

		if (!file || sscanf(line, "%llx-%llx %7s %llx %n", &lo, &hi, perms, &off, &used) < 4 ||
		    hi <= lo)
			continue;
		file[strcspn(file, "\n")] = 0;
		for (uint32_t i = first; i < nobjects && !dup; i++)
			dup = objects[i].start == lo && objects[i].end == hi &&
			      !strcmp(objects[i].path, file);
		if (dup)
			continue;
		if (nobjects == objects_cap) {
			uint32_t cap = objects_cap ? objects_cap * 2 : 64;
			struct trace_object *o = realloc(objects, cap * sizeof(*o));

			if (!o)
				break;
			objects = o;
			objects_cap = cap;
		}
		objects[nobjects] = (struct trace_object){
			.proc = im->index, .start = lo, .end = hi, .offset = off,
			.path = strdup(file),
		};
		if (objects[nobjects].path)
			nobjects++;
	}
	fclose(f);
}

/* A stack definition met by a cursor: its local id now names a trace id. */
static void cursor_define(struct cursor *c, const struct rec_event *d)
{
	uint32_t gid = stack_intern(c->im->index, d->frames, d->nframes);

	if (d->stack >= c->nsmap) {
		uint32_t n = max_t(uint32_t, d->stack + 1, c->nsmap * 2);
		uint32_t *s = realloc(c->smap, n * sizeof(*s));

		if (!s)
			return;		/* its events go without a stack */
		memset(s + c->nsmap, 0, (n - c->nsmap) * sizeof(*s));
		c->smap = s;
		c->nsmap = n;
	}
	c->smap[d->stack] = gid;
}

/* Addresses of different processes are different objects: the id map's key
 * carries the image in the bits above user space (x86-64 and arm64 user
 * addresses are below 2^48). */
static uint64_t image_key(uint32_t index, uint64_t addr)
{
	return addr ^ ((uint64_t)index << 48);
}

/* Decode into the ring until it is full or the thread has no more events;
 * stack definitions are taken in on the way (they precede their events). */
static void cursor_fill(struct cursor *c, const struct idmap *ids)
{
	while (c->nring < LOOKAHEAD) {
		uint32_t at = (c->rhead + c->nring) % LOOKAHEAD;
		struct rec_event *e = &c->ring[at];

		while (!c->left) {
			uint32_t len;

			if (c->bi == c->nblocks)
				return;
			if (!c->buf) {
				c->buf = malloc(REC_BLOCK_BYTES);
				if (!c->buf)
					return;
			}
			len = c->bytes[c->bi];
			if (pread(c->im->fd, c->buf, len, (off_t)c->blocks[c->bi]) != (ssize_t)len)
				return;
			c->p = c->buf;
			c->end = c->buf + len;
			c->left = c->counts[c->bi++];
			memset(&c->st, 0, sizeof(c->st));
		}
		e->frames = c->frames;
		if (rec_decode(&c->p, c->end, &c->st, e)) {
			fprintf(stderr, "uslab record: %s: byte offset %" PRIu64
				": damaged raw event; skipping the rest of the block\n",
				c->im->raw, c->blocks[c->bi - 1] + (uint64_t)(c->p - c->buf));
			c->left = 0;
			continue;
		}
		c->left--;
		if (e->op == REC_OP_STACK) {	/* not an event: define, go on */
			cursor_define(c, e);
			continue;
		}
		if (e->addr) {
			c->rhash[at] = idmap_hash(ids, image_key(c->im->index, e->addr));
			idmap_prefetch(ids, c->rhash[at]);
		}
		c->nring++;
	}
}

/* Step @c to its thread's next event. Return: false when it has none. */
static bool cursor_next(struct cursor *c, const struct idmap *ids)
{
	if (c->nring <= LOOKAHEAD / 2)
		cursor_fill(c, ids);
	if (!c->nring)
		return false;
	c->cur = c->ring[c->rhead];
	c->cur_hash = c->rhash[c->rhead];
	c->rhead = (c->rhead + 1) % LOOKAHEAD;
	c->nring--;
	return true;
}

static bool rec_is_free(unsigned int op)
{
	return trace_op_is_free(op) || op == REC_OP_REALLOC_OLD || op == REC_OP_FREE_USABLE ||
	       op == REC_OP_KFREE_USABLE || op == REC_OP_CFREE_USABLE;
}

/* Heap order: time, then frees before allocations, then image, thread. */
static bool before(const struct cursor *a, const struct cursor *b)
{
	const struct rec_event *x = &a->cur, *y = &b->cur;
	bool xf, yf;

	if (x->time != y->time)
		return x->time < y->time;
	xf = rec_is_free(x->op);
	yf = rec_is_free(y->op);
	if (xf != yf)
		return xf;
	if (a->im != b->im)
		return a->im->index < b->im->index;
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
	if (trace_op_is_alloc(ev->op) || ev->op == TRACE_OP_REALLOC)
		m->im->allocs++;
	return m->w ? trace_writer_add(m->w, ev) : 0;
}

static uint64_t key(const struct merge *m, uint64_t addr)
{
	return image_key(m->im->index, addr);
}

/*
 * A new object at @addr. If the address is still live its free was lost
 * (a thread killed with a full buffer): the trace gets that free first, so
 * it keeps its promise that ids are freed before they are reused.
 */
static int new_id(struct merge *m, struct trace_event *ev, uint64_t addr, uint64_t hash)
{
	uint64_t old, k = key(m, addr);
	int rc = idmap_insert_hashed(m->ids, k, hash, &ev->id);

	if (rc == -EINVAL) {	/* not an address a real allocator returns */
		ev->id = 0;
		return 0;
	}
	if (rc != -EEXIST)
		return rc;
	rc = idmap_remove_hashed(m->ids, k, hash, &old);
	if (!rc) {
		struct trace_event f = *ev;

		f.op = TRACE_OP_FREE;
		f.stack = 0;
		f.cache = 0;
		f.id = old;
		f.old_id = f.size = f.align = 0;
		m->im->fixups++;
		rc = put(m, &f);
	}
	return rc ? rc : idmap_insert_hashed(m->ids, k, hash, &ev->id);
}

/*
 * `record -p`, the counting pass: a free (or realloc) of @addr the trace
 * never saw allocated, in an attached image, is a block alive at attach
 * (when the allocator told its size): kept, to be written as allocated at
 * time 0 by the writing pass, so its free is matched.
 */
static int pre_block(struct merge *m, uint64_t addr, uint64_t size, bool is_free,
		     uint8_t op, uint64_t cache)
{
	struct image *im = m->im;
	uint64_t n;
	int rc;

	if (m->w || !im->rm.attach || !addr || !size)
		return 0;
	if (!im->pre_init) {
		hmap_init(&im->pre_seen);
		im->pre_init = true;
	}
	if (hmap_find(&im->pre_seen, addr))
		return 0;
	rc = hmap_insert(&im->pre_seen, addr, 1);
	if (rc)
		return rc;
	n = im->pre_cap;
	if (im->npre == n) {
		struct pre_block *p = realloc(im->pre, (n ? n * 2 : 256) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		im->pre = p;
		im->pre_cap = n ? n * 2 : 256;
	}
	im->pre[im->npre++] = (struct pre_block){ .addr = addr, .size = size, .op = op,
						  .cache = cache };
	/* as put() counts what the writing pass writes: the allocation, and
	 * the free it then matches (a realloc is written either way) */
	im->events += 1 + is_free;
	im->allocs++;
	return 0;
}

/*
 * The trace's cache id of the kmem_cache at @addr in this image at @time:
 * its latest naming line at or before @time (the first one if none is),
 * added to the writer at first use; 0 when the image never named it or
 * in the counting pass. Return: 0 or -errno from the writer.
 */
static int cache_id(struct merge *m, uint64_t addr, uint64_t time, uint32_t *id)
{
	struct image *im = m->im;
	struct rec_cache *best = NULL;

	*id = 0;
	if (!m->w)
		return 0;
	for (size_t i = 0; i < im->ncaches; i++) {
		struct rec_cache *c = &im->caches[i];

		if (c->addr != addr)
			continue;
		if (!best || (c->time <= time && (best->time > time || c->time >= best->time)))
			best = c;
	}
	if (!best)
		return 0;
	if (!best->id) {
		/* one trace id per (name, size), whichever image named it */
		for (size_t i = 0; i < m->nimg && !best->id; i++)
			for (size_t k = 0; k < m->img[i].ncaches; k++) {
				struct rec_cache *o = &m->img[i].caches[k];

				if (o->id && o->size == best->size && !strcmp(o->name, best->name)) {
					best->id = o->id;
					break;
				}
			}
		if (!best->id) {
			int rc = trace_writer_add_cache(m->w, best->name, best->size, &best->id);

			if (rc == -EINVAL)	/* the table is full: its kmalloc class */
				return 0;
			if (rc)
				return rc;
		}
	}
	*id = best->id;
	return 0;
}

/*
 * raw.<pid>.<n>.caches (REC_CACHES_SUFFIX): the caches the recorder met.
 * A damaged or missing line names nothing (those allocations stay in their
 * kmalloc class); names past TRACE_CACHE_NAME_MAX bytes are cut.
 */
static int read_caches(struct image *im)
{
	char path[PATH_MAX + 400];
	FILE *f;
	char line[512];
	size_t cap = 0;

	snprintf(path, sizeof(path), "%s%s", im->raw, REC_CACHES_SUFFIX);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long t, a, sz;
		int name_at = 0;
		char *name, *nl;

		if (sscanf(line, "%llu %llu %llu %n", &t, &a, &sz, &name_at) != 3 || !name_at ||
		    !sz)
			continue;
		name = line + name_at;
		nl = strchr(name, '\n');
		if (nl)
			*nl = 0;
		if (!*name)
			continue;
		if (strlen(name) > TRACE_CACHE_NAME_MAX)
			name[TRACE_CACHE_NAME_MAX] = 0;
		if (im->ncaches == cap) {
			size_t n = cap ? cap * 2 : 16;
			struct rec_cache *c = realloc(im->caches, n * sizeof(*c));

			if (!c) {
				fclose(f);
				return -ENOMEM;
			}
			im->caches = c;
			cap = n;
		}
		name = strdup(name);
		if (!name) {
			fclose(f);
			return -ENOMEM;
		}
		im->caches[im->ncaches++] = (struct rec_cache){ .time = t, .addr = a, .size = sz,
							       .name = name };
	}
	fclose(f);
	return 0;
}

/* The writing pass: the blocks alive at attach, allocated at time 0. */
static int put_pre_blocks(struct merge *m)
{
	for (size_t i = 0; i < m->nimg; i++) {
		struct image *im = &m->img[i];

		m->im = im;
		for (uint64_t k = 0; k < im->npre; k++) {
			struct trace_event ev = {
				.op = im->pre[k].op, .size = im->pre[k].size,
				.tid = im->first_tid, .cpu = TRACE_CPU_UNKNOWN,
			};
			uint64_t k2 = key(m, im->pre[k].addr);
			int rc = 0;

			if (ev.op == TRACE_OP_CACHE_ALLOC)
				rc = cache_id(m, im->pre[k].cache, 0, &ev.cache);
			if (!rc)
				rc = new_id(m, &ev, im->pre[k].addr, idmap_hash(m->ids, k2));

			if (!rc)
				rc = put(m, &ev);
			if (rc)
				return rc;
		}
	}
	return 0;
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
		if (idmap_detach_hashed(m->ids, key(m, r->addr), c->cur_hash, &c->pending_old)) {
			c->pending_old = 0;
			return pre_block(m, r->addr, r->size, false, TRACE_OP_MALLOC, 0);
		}
		return 0;
	}
	if (r->op == REC_OP_FREE_USABLE || r->op == REC_OP_KFREE_USABLE ||
	    r->op == REC_OP_CFREE_USABLE) {	/* record -p: a free, sized */
		static const uint8_t as[][2] = {
			{ TRACE_OP_FREE, TRACE_OP_MALLOC },
			{ TRACE_OP_KFREE, TRACE_OP_KMALLOC },
			{ TRACE_OP_CACHE_FREE, TRACE_OP_CACHE_ALLOC },
		};
		unsigned int k = r->op == REC_OP_FREE_USABLE ? 0 : r->op == REC_OP_KFREE_USABLE ? 1 : 2;

		ev->op = as[k][0];
		ev->stack = 0;
		ev->size = ev->align = 0;
		ev->id = ev->old_id = 0;
		ev->cache = 0;
		if (r->addr && idmap_remove_hashed(m->ids, key(m, r->addr), c->cur_hash, &ev->id)) {
			m->im->dropped++;
			return pre_block(m, r->addr, r->size, true, as[k][1], r->old_addr);
		}
		return put(m, ev);
	}
	if (r->op >= TRACE_OP_NR)
		return -EPROTO;
	ev->op = r->op;
	ev->stack = r->stack && r->stack < c->nsmap ? c->smap[r->stack] : 0;
	ev->size = r->size;
	ev->align = r->align;
	ev->id = ev->old_id = 0;
	ev->cache = 0;
	if (r->op == TRACE_OP_CACHE_ALLOC) {
		rc = cache_id(m, r->old_addr, r->time, &ev->cache);
		if (rc)
			return rc;
	}
	if (trace_op_is_free(r->op)) {
		if (r->addr && idmap_remove_hashed(m->ids, key(m, r->addr), c->cur_hash, &ev->id)) {
			m->im->dropped++;
			return 0;
		}
		return put(m, ev);
	}
	if (r->op != TRACE_OP_REALLOC) {
		rc = r->addr ? new_id(m, ev, r->addr, c->cur_hash) : 0;
		return rc ? rc : put(m, ev);
	}
	id = r->old_addr ? c->pending_old : 0;
	c->pending_old = 0;
	if (r->old_addr && !id)
		m->im->dropped++;	/* realloc of an object we never saw */
	ev->old_id = id;
	if (r->addr) {
		rc = new_id(m, ev, r->addr, c->cur_hash);
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
	if (r->size && idmap_attach(m->ids, key(m, r->old_addr), id) == 0)
		return 0;
	return idmap_release_id(m->ids, id);
}

static void copy_field(char *dst, size_t cap, const char *src, const char *end)
{
	size_t n = min_t(size_t, (size_t)(end - src), cap - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

static void read_meta(const char *raw, struct raw_meta *rm)
{
	char path[PATH_MAX + 400], buf[8192];
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
		if (!nl)
			nl = end;
		if (!strncmp(p, "mono=", 5))
			rm->mono = strtoull(p + 5, NULL, 10);
		else if (!strncmp(p, "real=", 5))
			rm->real = strtoull(p + 5, NULL, 10);
		else if (!strncmp(p, "pid=", 4))
			rm->pid = (unsigned int)strtoul(p + 4, NULL, 10);
		else if (!strncmp(p, "ppid=", 5))
			rm->ppid = (unsigned int)strtoul(p + 5, NULL, 10);
		else if (!strncmp(p, "attach=1", 8))
			rm->attach = true;
		else if (!strncmp(p, "comm=", 5))
			copy_field(rm->comm, sizeof(rm->comm), p + 5, nl);
		else if (!strncmp(p, "exe=", 4))
			copy_field(rm->exe, sizeof(rm->exe), p + 4, nl);
		p = nl + 1;
	}
}

static const char *base_name(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

static int cmp_image(const void *a, const void *b)
{
	const struct image *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rm.pid != y->rm.pid)
		return x->rm.pid < y->rm.pid ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

static int cmp_cursor_time(const void *a, const void *b)
{
	const struct cursor *x = *(struct cursor *const *)a, *y = *(struct cursor *const *)b;

	if (x->first_time != y->first_time)
		return x->first_time < y->first_time ? -1 : 1;
	return x->raw_tid < y->raw_tid ? -1 : x->raw_tid > y->raw_tid;
}

/* Syscalls only, no opendir (it mallocs): `uslab record` calls it from a
 * fatal signal's handler too. The folder is flat. */
void record_remove_dir(const char *dir)
{
	char buf[4096] __attribute__((aligned(8)));
	long n;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
				unsigned short reclen;
				const char *name = buf + off + 19;

				memcpy(&reclen, buf + off + 16, sizeof(reclen));
				if (name[0] != '.')
					unlinkat(fd, name, 0);
				off += reclen;
			}
		}
		close(fd);
	}
	rmdir(dir);
}

static struct image *add_image(struct image **img, size_t *n, size_t *cap)
{
	struct image *im;

	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;

		im = realloc(*img, c * sizeof(*im));
		if (!im)
			return NULL;
		*img = im;
		*cap = c;
	}
	im = &(*img)[(*n)++];
	memset(im, 0, sizeof(*im));
	im->fd = -1;
	im->tmin = UINT64_MAX;
	im->parent = im->exec_from = -1;
	return im;
}

/* An image the recorder never ran in, from what is known about it. */
static struct image *add_unrecorded(struct image **img, size_t *n, size_t *cap,
				    unsigned int pid, unsigned int ppid,
				    uint64_t start, const char *path)
{
	struct image *im = add_image(img, n, cap);

	if (!im)
		return NULL;
	im->rm.pid = pid;
	im->rm.ppid = ppid;
	im->start = im->rm.mono = start;
	im->flags = TRACE_PROC_UNRECORDED;
	im->gen = UINT32_MAX;
	snprintf(im->rm.comm, sizeof(im->rm.comm), "%.15s", base_name(path));
	snprintf(im->rm.exe, sizeof(im->rm.exe), "%s", path);
	snprintf(im->rm.cmdline, sizeof(im->rm.cmdline), "%s", path);
	return im;
}

/*
 * $dir/notes: execs the recorder could not follow. Each is an image in the
 * table (flagged unrecorded) and one warning line.
 */
/*
 * A process still running when CMD exited whose recorder had not opened a
 * raw file (it had only just started, or a program the recorder cannot
 * enter forked it): an entry all the same, flagged, with no events, from
 * what /proc says of it now.
 */
static int add_running(struct image **img, size_t *n, unsigned int pid, uint64_t floor)
{
	char path[64], buf[1024], *lp, *rp;
	unsigned long long start = 0;
	unsigned int ppid = 0;
	struct image *im;
	size_t cap = *n;
	ssize_t len;
	FILE *f;
	int fd;

	for (size_t i = 0; i < *n; i++)
		if ((*img)[i].rm.pid == pid)
			return 0;
	im = add_image(img, n, &cap);
	if (!im)
		return -ENOMEM;
	im->rm.pid = pid;
	im->flags = TRACE_PROC_RUNNING;
	im->gen = UINT32_MAX;
	strcpy(im->rm.comm, "?");
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f)) {
		lp = strchr(buf, '(');
		rp = strrchr(buf, ')');
		if (lp && rp > lp)
			snprintf(im->rm.comm, sizeof(im->rm.comm), "%.*s",
				 (int)min_t(ptrdiff_t, rp - lp - 1, 16), lp + 1);
		/* state, ppid, 17 fields, starttime (clock ticks since boot) */
		if (rp && sscanf(rp + 1, " %*c %u %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u"
				 " %*d %*d %*d %*d %*d %*d %llu", &ppid, &start) != 2)
			start = 0;
	}
	if (f)
		fclose(f);
	im->rm.ppid = ppid;
	start = start * 1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK);
	im->start = im->rm.mono = start > floor ? start : floor;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	len = readlink(path, im->rm.exe, sizeof(im->rm.exe) - 1);
	im->rm.exe[len > 0 ? len : 0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, im->rm.cmdline, sizeof(im->rm.cmdline) - 1) : -1;
	if (fd >= 0)
		close(fd);
	len = len > 0 ? len : 0;
	while (len > 0 && !im->rm.cmdline[len - 1])
		len--;
	for (ssize_t i = 0; i < len; i++)
		if (!im->rm.cmdline[i])
			im->rm.cmdline[i] = ' ';
	im->rm.cmdline[len] = 0;
	return 0;
}

static int read_notes(const char *dir, struct image **img, size_t *n, size_t *cap,
		      bool quiet)
{
	char path[PATH_MAX + 16], line[PATH_MAX + 128], kind[16], file[PATH_MAX];
	unsigned int pid, ppid;
	unsigned long long mono;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, REC_NOTES);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%15s %u %u %llu %4095[^\n]", kind, &pid, &ppid,
			   &mono, file) != 5)
			continue;
		if (!strcmp(kind, "ownmalloc")) {	/* recorded, but not its malloc */
			fprintf(stderr, "uslab record: warning: pid %u runs on the malloc of %s, "
				"found before the recorder's: the calls it serves are not recorded\n",
				pid, file);
			continue;
		}
		if (!strcmp(kind, "ownmalloc-p")) {
			fprintf(stderr, "uslab record: warning: pid %u defines malloc itself (%s): "
				"its own calls of it pass no GOT slot and are not recorded, "
				"the other objects' calls are\n", pid, file);
			continue;
		}
		if (!add_unrecorded(img, n, cap, pid, ppid, mono, file)) {
			fclose(f);
			return -ENOMEM;
		}
		if (!strcmp(kind, "static"))
			fprintf(stderr, "uslab record: warning: %s (pid %u) is statically linked: "
				"LD_PRELOAD cannot reach it, its allocations are not recorded\n",
				file, pid);
		else
			fprintf(stderr, "uslab record: warning: %s (pid %u) was started without "
				"LD_PRELOAD or " REC_ENV_DIR ": its allocations are not recorded\n",
				file, pid);
	}
	fclose(f);
	return 0;
}

/* Every raw.<pid>.<n> in @dir, plus the notes. */
static int list_images(const char *dir, struct image **imgp, size_t *nimg,
		       bool quiet)
{
	struct image *img = NULL, *im;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	unsigned int pid, gen;
	char tail;
	int rc = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (sscanf(de->d_name, "raw.%u.%u%c", &pid, &gen, &tail) != 2)
			continue;
		im = add_image(&img, &n, &cap);
		if (!im) {
			rc = -ENOMEM;
			break;
		}
		im->gen = gen;
		snprintf(im->raw, sizeof(im->raw), "%s/%s", dir, de->d_name);
		read_meta(im->raw, &im->rm);
		im->rm.pid = pid;
		im->start = im->rm.mono;
	}
	closedir(d);
	if (!rc)
		rc = read_notes(dir, &img, &n, &cap, quiet);
	*imgp = img;
	*nimg = n;
	return rc;
}

static void reset_cursors(struct merge *m)
{
	for (size_t i = 0; i < m->nimg; i++) {
		struct image *im = &m->img[i];

		im->events = im->allocs = im->dropped = im->fixups = 0;
		for (uint32_t t = 0; t < im->ncur; t++) {
			struct cursor *c = &im->cur[t];

			c->bi = 0;
			c->left = 0;
			c->rhead = c->nring = 0;
			c->pending_old = 0;
		}
	}
}

/* One merge of every image's threads by time, through the writer or (no
 * writer) only counting each image's events. */
static int merge_all(struct merge *m)
{
	uint64_t last = 0;
	uint32_t ncur = 0;
	int rc = 0;

	reset_cursors(m);
	idmap_free(m->ids);
	m->ids = idmap_new();
	for (size_t i = 0; i < m->nimg; i++)
		ncur += m->img[i].ncur;
	free(m->heap);
	m->heap = calloc(ncur ? ncur : 1, sizeof(*m->heap));
	if (!m->heap || !m->ids)
		return -ENOMEM;
	m->nheap = 0;
	for (size_t i = 0; i < m->nimg; i++)
		for (uint32_t t = 0; t < m->img[i].ncur; t++)
			if (cursor_next(&m->img[i].cur[t], m->ids))
				m->heap[m->nheap++] = &m->img[i].cur[t];
	for (uint32_t i = m->nheap / 2; i-- > 0;)
		sift_down(m, i);
	if (m->w) {
		rc = put_pre_blocks(m);
		if (rc)
			return rc;
	}
	while (m->nheap) {
		struct cursor *c = m->heap[0];
		const struct rec_event *r = &c->cur;
		struct trace_event ev = { .cache = 0 };

		m->im = c->im;
		ev.time_ns = r->time >= m->tmin ? r->time - m->tmin : 0;
		if (ev.time_ns < last)
			ev.time_ns = last;
		last = ev.time_ns;
		ev.tid = c->out_tid;
		ev.cpu = r->cpu == 0xffff ? TRACE_CPU_UNKNOWN : r->cpu;
		rc = translate(m, c, r, &ev);
		if (rc < 0) {
			fprintf(stderr, "uslab record: %s: %s\n", c->im->raw,
				rc == -EINVAL && m->w ? trace_writer_error(m->w) :
				rc == -EPROTO ? "raw record with an unknown op" : strerror(-rc));
			return rc;
		}
		rc = 0;
		if (!cursor_next(c, m->ids))
			m->heap[0] = m->heap[--m->nheap];
		sift_down(m, 0);
	}
	return 0;
}

/* Table order, parents, exec chains and trace tids of every image. */
static int link_images(struct merge *m)
{
	uint32_t next_tid = 0;

	qsort(m->img, m->nimg, sizeof(*m->img), cmp_image);
	m->tmin = UINT64_MAX;
	for (size_t i = 0; i < m->nimg; i++) {
		struct image *im = &m->img[i];

		im->index = (uint32_t)i;
		for (uint32_t t = 0; t < im->ncur; t++)
			im->cur[t].im = im;	/* the sort moved the images */
		if (im->tmin < m->tmin)
			m->tmin = im->tmin;
		if (im->start && im->start < m->tmin)
			m->tmin = im->start;
	}
	for (size_t i = 0; i < m->nimg; i++) {
		struct image *im = &m->img[i];
		struct cursor **order;
		uint32_t k = 0;

		/* The latest earlier image of the same pid exec'd into this
		 * one (not for a first image: a fork child starts at gen 0);
		 * the latest earlier image of the parent pid forked it. */
		for (size_t j = i; j-- > 0;) {
			if (m->img[j].rm.pid == im->rm.pid && im->gen && im->exec_from < 0 &&
			    im->parent < 0)
				im->exec_from = (int)j;
			if (m->img[j].rm.pid == im->rm.ppid && im->parent < 0 &&
			    im->exec_from < 0)
				im->parent = (int)j;
		}
		if (im->exec_from >= 0)
			im->parent = -1;
		order = calloc(im->ncur ? im->ncur : 1, sizeof(*order));
		if (!order)
			return -ENOMEM;
		for (uint32_t t = 0; t < im->ncur; t++)
			if (im->cur[t].nblocks)
				order[k++] = &im->cur[t];
		qsort(order, k, sizeof(*order), cmp_cursor_time);
		im->first_tid = next_tid;
		for (uint32_t t = 0; t < k; t++)
			order[t]->out_tid = next_tid++;
		im->threads = k;
		free(order);
		if (next_tid > TRACE_THREADS_MAX)
			return -E2BIG;
	}
	if (m->tmin == UINT64_MAX)
		m->tmin = 0;
	return 0;
}

/*
 * One merge into a scratch trace in the raw directory (counting each image's
 * events on the way), then @out: header, process table, stacks, objects,
 * and the scratch file's chunks and trailer spliced after them.
 */
static int write_trace(struct merge *m, const char *dir, const char *out, char **argv,
		       pid_t root, int level)
{
	struct trace_meta meta = { 0 };
	struct trace_proc *procs;
	char cmd[4096] = "", scratch[PATH_MAX + 32];
	size_t o = 0;
	int rc;

	for (int i = 0; argv[i] && o + 2 < sizeof(cmd); i++)
		o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, "%s%s", i ? " " : "", argv[i]);
	meta.cpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	meta.clock_id = CLOCK_MONOTONIC;
	meta.pid = (uint32_t)root;
	strcpy(meta.tool, "uslab record");
	meta.cmdline = cmd;
	for (size_t i = 0; i < m->nimg; i++) {
		const struct raw_meta *rm = &m->img[i].rm;

		if (rm->real && rm->mono >= m->tmin) {
			meta.start_ns = rm->real - (rm->mono - m->tmin);
			break;
		}
	}
	/* `record -p`: a counting pass first finds the blocks alive at
	 * attach, which the writing pass puts first (pre_block) */
	for (size_t i = 0; i < m->nimg; i++)
		if (m->img[i].rm.attach) {
			m->w = NULL;
			rc = merge_all(m);
			if (rc)
				return rc;
			break;
		}
	snprintf(scratch, sizeof(scratch), "%s/events.ustr", dir);
	rc = trace_writer_open(&m->w, scratch, &meta, level);
	if (rc) {
		m->w = NULL;
		return rc;
	}
	trace_writer_defer_records(m->w);
	rc = merge_all(m);
	if (rc) {
		trace_writer_abort(m->w);
		m->w = NULL;
		return rc;
	}
	rc = trace_writer_close(m->w);
	m->w = NULL;
	if (rc)
		return rc;
	procs = calloc(m->nimg ? m->nimg : 1, sizeof(*procs));
	if (!procs)
		return -ENOMEM;
	for (size_t i = 0; i < m->nimg; i++) {
		struct image *im = &m->img[i];
		struct trace_proc *t = &procs[i];

		t->pid = im->rm.pid;
		t->ppid = im->rm.ppid;
		t->parent = im->parent;
		t->exec_from = im->exec_from;
		t->first_tid = im->first_tid;
		t->nthreads = im->threads;
		t->flags = im->flags;
		t->start_ns = im->start > m->tmin ? im->start - m->tmin : 0;
		t->events = im->events;
		t->allocs = im->allocs;
		snprintf(t->comm, sizeof(t->comm), "%s", im->rm.comm);
		t->exe = im->rm.exe;
		t->cmdline = im->rm.cmdline;
	}
	rc = trace_writer_open(&m->w, out, &meta, level);
	if (rc) {		/* the writer said why */
		m->w = NULL;
		free(procs);
		return rc;
	}
	rc = m->nimg ? trace_writer_set_procs(m->w, procs, (uint32_t)m->nimg) : 0;
	free(procs);
	if (!rc && nstacks) {
		struct trace_stack *ts = calloc(nstacks, sizeof(*ts));

		for (uint32_t i = 0; i < nstacks && ts; i++)
			ts[i] = (struct trace_stack){ .proc = stacks[i].image,
				.nframes = stacks[i].nframes,
				.frames = stack_frames + stacks[i].off };
		rc = ts ? trace_writer_set_stacks(m->w, ts, nstacks) : -ENOMEM;
		free(ts);
		for (size_t i = 0; i < m->nimg && !rc; i++)
			read_maps(&m->img[i]);
		if (!rc)
			rc = trace_writer_set_objects(m->w, objects, nobjects);
	}
	if (rc) {
		fprintf(stderr, "uslab record: %s: process table: %s\n", out,
			rc == -EINVAL ? "bad entry" : strerror(-rc));
		goto out_abort;
	}
	rc = trace_writer_splice(m->w, scratch);
	if (rc) {
		fprintf(stderr, "uslab record: %s: %s\n", out, strerror(-rc));
		goto out_abort;
	}
	rc = trace_writer_close(m->w);
	m->w = NULL;
	return rc;
out_abort:
	trace_writer_abort(m->w);
	m->w = NULL;
	return rc;
}

/* Which process the tools will read by default, in their words. */
static void say_default(const struct merge *m, pid_t root, char *why, size_t len)
{
	struct trace_meta meta = { .pid = (uint32_t)root };
	struct trace_proc *procs = calloc(m->nimg ? m->nimg : 1, sizeof(*procs));

	why[0] = 0;
	if (!procs)
		return;
	for (size_t i = 0; i < m->nimg; i++) {
		const struct image *im = &m->img[i];

		procs[i] = (struct trace_proc){ .pid = im->rm.pid, .parent = im->parent,
			.exec_from = im->exec_from, .flags = im->flags,
			.events = im->events, .allocs = im->allocs };
		snprintf(procs[i].comm, sizeof(procs[i].comm), "%s", im->rm.comm);
	}
	meta.nprocs = (uint32_t)m->nimg;
	meta.procs = procs;
	if (trace_pick_proc(&meta, 0, NULL, why, len) < 0)
		why[0] = 0;
	free(procs);
}

int record_collect(const struct record_opts *o, struct record_result *res)
{
	struct merge m = { 0 };
	int rc;

	memset(res, 0, sizeof(*res));
	rc = list_images(o->dir, &m.img, &m.nimg, false);
	if (!rc) {
		bool have_root = false;

		for (size_t i = 0; i < m.nimg; i++)
			have_root |= m.img[i].rm.pid == (unsigned int)o->root &&
				     !(m.img[i].flags & TRACE_PROC_UNRECORDED);
		/* CMD's own process made no call (or could not be recorded):
		 * it is still a process of the run. */
		if (!have_root && o->run) {
			struct image *im;
			size_t cap = m.nimg;

			im = add_unrecorded(&m.img, &m.nimg, &cap, (unsigned int)o->root,
					    (unsigned int)getpid(), o->root_start, o->argv[0]);
			if (!im)
				rc = -ENOMEM;
			else if (!o->root_static)
				im->flags = 0;	/* it ran, and allocated nothing */
		}
		for (size_t k = 0; k < o->nrunning && !rc; k++)
			rc = add_running(&m.img, &m.nimg, o->running[k], o->root_start);
	}
	for (size_t i = 0; i < m.nimg && !rc; i++) {
		struct image *im = &m.img[i];

		for (size_t k = 0; k < o->nrunning; k++)
			if (o->running[k] == im->rm.pid)
				im->flags |= TRACE_PROC_RUNNING;
		if (!im->raw[0])
			continue;
		im->fd = open(im->raw, O_RDONLY | O_CLOEXEC);
		if (im->fd < 0) {
			rc = -errno;
			fprintf(stderr, "uslab record: %s: %s\n", im->raw, strerror(errno));
			break;
		}
		rc = index_raw(im);
		if (!rc)
			rc = read_caches(im);
	}
	if (!rc && o->run) {
		rc = link_images(&m);
		if (!rc)
			rc = write_trace(&m, o->dir, o->out, o->argv, o->root, o->level);
	}
	for (size_t i = 0; i < m.nimg; i++) {
		struct image *im = &m.img[i];

		res->events += im->events;
		res->dropped += im->dropped;
		res->fixups += im->fixups;
		res->threads += im->threads;
		res->alive_at_attach += im->npre;
	}
	res->nprocs = m.nimg;
	if (!rc && o->run)
		say_default(&m, o->root, res->chosen, sizeof(res->chosen));
	res->nstacks = nstacks;
	res->nframes = nframes_all;
	res->nobjects = nobjects;
	for (size_t i = 0; i < m.nimg; i++) {
		struct image *im = &m.img[i];

		for (uint32_t t = 0; t < im->ncur; t++) {
			free(im->cur[t].blocks);
			free(im->cur[t].counts);
			free(im->cur[t].bytes);
			free(im->cur[t].buf);
			free(im->cur[t].smap);
		}
		free(im->cur);
		free(im->pre);
		for (size_t k = 0; k < im->ncaches; k++)
			free(im->caches[k].name);
		free(im->caches);
		if (im->pre_init)
			hmap_destroy(&im->pre_seen);
		if (im->fd >= 0)
			close(im->fd);
	}
	free(m.img);
	free(m.heap);
	idmap_free(m.ids);
	for (uint32_t i = 0; i < nobjects; i++)
		free((char *)objects[i].path);
	free(objects);
	free(stacks);
	free(stack_frames);
	free(stack_slots);
	objects = NULL;
	stacks = NULL;
	stack_frames = NULL;
	stack_slots = NULL;
	nobjects = objects_cap = nstacks = stacks_cap = stack_mask = 0;
	nframes_all = frames_cap = 0;
	return rc;
}
