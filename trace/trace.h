/* SPDX-License-Identifier: MIT */
/*
 * The trace library's interface to the folders above (sim/, tools/): the
 * on-disk layout, byte and varint helpers, the address -> id map, the
 * importers' entries, output files. uslab/trace.h has the reader and the
 * writer. trace/ knows nothing about the allocator: it includes lib/ and
 * libc only. What only trace/'s own files share is in trace/internal.h.
 */
#ifndef USLAB_TRACE_TRACE_H
#define USLAB_TRACE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "lib/hashmap.h"
#include <assert.h>
#include "uslab/trace.h"

/*
 * What begins the writer's own messages on stderr ("uslab: FILE: ..."): the
 * command that runs it sets its name ("uslab import"), so a message names
 * the command that says it. Not thread-safe: set once, at start.
 */
extern const char *trace_writer_who;

/* ---- On-disk layout (docs/trace-format.md); all integers little-endian. */

#define TRACE_MAGIC		"USLABTRC"	/* 8 bytes, file header */
#define TRACE_CHUNK_MAGIC	0x4b484355u	/* "UCHK" */
#define TRACE_END_MAGIC		0x444e4555u	/* "UEND" */
#define TRACE_HDR_FIXED		76u		/* header bytes before cmdline */
#define TRACE_CMDLINE_MAX	65536u
#define TRACE_CHUNK_HDR		40u
#define TRACE_TRAILER		48u
#define TRACE_CHUNK_RAW		(1u << 20)	/* writer's chunk target */
#define TRACE_CHUNK_RAW_MAX	(8u << 20)	/* largest chunk a reader accepts */
#define TRACE_EVENT_MIN		3u		/* op byte, time, id */
#define TRACE_EVENT_MAX		80u		/* worst-case encoded event (with a stack id) */

/* Event byte 0: op in bits 0-4, flags above. */
#define TRACE_EV_OP_MASK	0x1fu
#define TRACE_EV_SAME_TID	0x20u
#define TRACE_EV_SAME_CPU	0x40u
#define TRACE_EV_RESERVED	0x80u

#define TRACE_ID_LIMIT		((uint64_t)1 << 63)
/* CPUs the tools accept: Linux's largest NR_CPUS (x86 MAXSMP), which is
 * also the percpu layer's virtual-CPU limit. Importers refuse CPU numbers
 * at or above it; sim and tune refuse a larger header CPU count or --cpus. */
#define TRACE_MAX_CPUS		8192u

/*
 * The malloc-family call an allocating event stands for: one mapping of
 * trace ops to calls, made through @f: the library's own uslab_* calls in
 * the simulator (sim/simulate.c), the process's malloc in replay
 * (tools/uslab/builtin-replay.c). Inlined with a constant @f, every call is
 * direct. Alignment below a pointer's is a pointer's (posix_memalign's
 * minimum); malloc for every other op (kmalloc, kmem_cache_alloc of perf
 * imports).
 */
struct malloc_family {
	void *(*malloc)(size_t size);
	void *(*calloc)(size_t n, size_t size);
	void *(*memalign)(size_t align, size_t size);
	int (*posix_memalign)(void **p, size_t align, size_t size);
	void *(*aligned_alloc)(size_t align, size_t size);
	void *(*valloc)(size_t size);
	void *(*pvalloc)(size_t size);
};

static __always_inline void *trace_op_alloc(const struct malloc_family *f, unsigned int op,
					    size_t size, unsigned int align_shift)
{
	size_t align = align_shift ? (size_t)1 << align_shift : sizeof(void *);
	void *p = NULL;

	switch (op) {
	case TRACE_OP_CALLOC:
		return f->calloc(1, size);
	case TRACE_OP_MEMALIGN:
		return f->memalign(align, size);
	case TRACE_OP_POSIX_MEMALIGN:
		if (align < sizeof(void *))
			align = sizeof(void *);
		return f->posix_memalign(&p, align, size) ? NULL : p;
	case TRACE_OP_ALIGNED_ALLOC:
		return f->aligned_alloc(align, size);
	case TRACE_OP_VALLOC:
		return f->valloc(size);
	case TRACE_OP_PVALLOC:
		return f->pvalloc(size);
	default:
		return f->malloc(size);
	}
}

/*
 * What @ev does to the objects a reader follows (report and its views):
 * TRACE_OBJ_ENDS with the object ended in *@ends (a free's, NULL too; a
 * realloc's old object when it moved or realloc(p, 0) freed it), and
 * TRACE_OBJ_MAKES when it makes one (a realloc that failed, id 0 with a
 * size, makes and ends nothing). Ended first, then made.
 */
#define TRACE_OBJ_ENDS		1u
#define TRACE_OBJ_MAKES		2u
static inline unsigned int trace_event_objects(const struct trace_event *ev, uint64_t *ends)
{
	unsigned int what = 0;

	*ends = 0;
	if (trace_op_is_free(ev->op)) {
		*ends = ev->id;
		return TRACE_OBJ_ENDS;
	}
	if (ev->op != TRACE_OP_REALLOC)
		return TRACE_OBJ_MAKES;
	if (ev->old_id && (ev->id || !ev->size)) {
		*ends = ev->old_id;
		what |= TRACE_OBJ_ENDS;
	}
	if (ev->id || ev->size)
		what |= TRACE_OBJ_MAKES;
	return what;
}

/* Extension records (format 1.1): a 24-byte header (magic, stored size,
 * decoded size, entries, payload CRC, header CRC), then a zstd frame. */
#define TRACE_REC_HDR		24u
#define TRACE_REC_RAW_MAX	(64u << 20)	/* largest decoded record */
#define TRACE_PROCS_MAGIC	0x43525055u	/* "UPRC": process table */
#define TRACE_PROCS_MAX		65536u		/* process images in a trace */
#define TRACE_STACKS_MAGIC	0x4b545355u	/* "USTK": call stacks */
#define TRACE_OBJECTS_MAGIC	0x50414d55u	/* "UMAP": mapped objects */
#define TRACE_STACKS_MAX	(1u << 24)
#define TRACE_OBJECTS_MAX	(1u << 20)
#define TRACE_EV_STACK		0x80u	/* 1.1: varint stack id after the rest */
/* 1.2: named caches. UCAC: entries appended to the cache table (varint
 * object size, varint name length, the name), each record before the
 * first chunk naming them; UCID: right before a chunk, one varint cache id
 * (0 = none) per kmem_cache_alloc event of that chunk, in order. A 1.1
 * reader skips both (unknown record kinds) and reads the events as before. */
#define TRACE_CACHES_MAGIC	0x43414355u	/* "UCAC" */
#define TRACE_CACHE_IDS_MAGIC	0x44494355u	/* "UCID" */
/* Trace tids of all processes together: the bound report uses too. */
#define TRACE_THREADS_MAX	(1u << 20)

/* trace/trace_common.c */
uint32_t trace_crc32c(uint32_t crc, const void *buf, size_t len);

/* trace/trace_write.c: header fields only known at the end (imports): the
 * header is rewritten in place by trace_writer_close(). */
void trace_writer_set_cpus_pid(struct trace_writer *w, uint32_t cpus, uint32_t pid);
/* Records known only after the events (the recorder's process table with
 * each process's counts): write the events to a scratch writer marked
 * deferred (its events may name stacks it does not define), then open the
 * real one, set its records and splice the scratch file's chunks and
 * trailer after them; trace_writer_close() then adds nothing. */
void trace_writer_defer_records(struct trace_writer *w);
int trace_writer_splice(struct trace_writer *w, const char *scratch_path);
/* trace/trace_common.c: the process table's payload (docs/trace-format.md).
 * encode: @buf gets malloc'd bytes. decode: every field bounded by @len;
 * on error @err names the entry and field. Return: 0 or -EINVAL/-ENOMEM. */
int trace_procs_encode(const struct trace_proc *p, uint32_t n, uint8_t **buf,
		       size_t *len);
int trace_procs_decode(const uint8_t *buf, size_t len, uint32_t n,
		       struct trace_proc **procs, char *err, size_t errlen);
void trace_procs_free(struct trace_proc *p, uint32_t n);

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/* LEB128: at most 10 bytes for 64 bits. */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/*
 * Decode one varint from [*pp, end). Return: 0, or -1 when it runs past
 * @end or is longer than 10 bytes / overflows 64 bits.
 */
static inline int get_varint(const uint8_t **pp, const uint8_t *end,
			     uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	unsigned int shift = 0;

	for (;;) {
		uint8_t b;

		if (unlikely(p >= end || shift > 63))
			return -1;
		b = *p++;
		if (unlikely(shift == 63 && (b & 0x7e)))
			return -1;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
	}
	*pp = p;
	*v = r;
	return 0;
}

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/*
 * A record's header, TRACE_REC_HDR bytes at @h: @magic, the compressed
 * size @clen of @comp, the raw size @len, @entries, the payload's CRC32C
 * and then the header's own (the writer's, and the fuzzers' forger's).
 */
static inline void put_rec_hdr(uint8_t *h, uint32_t magic, const uint8_t *comp,
			       size_t clen, size_t len, uint32_t entries)
{
	put_le32(h, magic);
	put_le32(h + 4, (uint32_t)clen);
	put_le32(h + 8, (uint32_t)len);
	put_le32(h + 12, entries);
	put_le32(h + 16, trace_crc32c(0, comp, clen));
	put_le32(h + 20, trace_crc32c(0, h, 20));
}

/*
 * A call stack as written in a trace's stack table and in the recorder's
 * spool: @n, then each frame as the zigzag delta from the one before (the
 * first from 0). At most 10 + 10 x @n bytes.
 */
static inline uint8_t *put_frames(uint8_t *p, const uint64_t *frames, uint32_t n)
{
	uint64_t prev = 0;

	p = put_varint(p, n);
	for (uint32_t k = 0; k < n; k++) {
		p = put_varint(p, zigzag((int64_t)(frames[k] - prev)));
		prev = frames[k];
	}
	return p;
}

/* ---- trace/decode.c: the one decoder from a trace's events to the
 * 32-byte events the simulator, the tuner and the replayer run. */

/* One event as it is run: decoded before any timing starts. */
struct trace_dense_ev {
	uint64_t time_ns;
	uint64_t size;
	uint32_t id;		/* dense, 0 = NULL */
	union {
		uint32_t old_id;	/* realloc: the object passed in */
		uint32_t cache;		/* kmem_cache_alloc: the trace's cache id
					 * (0 = none; the consumer maps it) */
	};
	uint32_t tid;
	uint16_t cpu;		/* folded onto the decoder's CPU count */
	uint8_t op;
	uint8_t align_shift;	/* log2 of the alignment rounded up, 0 = none */
};
static_assert(sizeof(struct trace_dense_ev) == 32, "compact event");

/* How trace ids become dense ones. */
enum trace_dense_ids {
	/* one per trace id, at first sight (the simulator: its per-object
	 * arrays follow the ids the file really holds); the trace id of each
	 * is kept for messages (trace_decoder_trace_id) */
	TRACE_DENSE_BY_ID,
	/* one per object lifetime (the replayer's slots): an id allocated
	 * again gets a new one, a free names its object's, realloc in place
	 * keeps it */
	TRACE_DENSE_BY_LIFETIME,
};

struct trace_decoder {
	struct trace_reader *r;
	enum trace_dense_ids mode;
	unsigned int cpus;	/* CPUs folded onto, >= 1 */
	uint64_t id_space;	/* dense ids in use + 1 */
	uint32_t nthreads;	/* highest tid met + 1 */
	struct hmap ids;	/* trace id -> dense id */
	uint64_t *trace_id;	/* by id: dense id -> trace id */
	uint64_t trace_id_cap;
};

/* Decode @r's events; @cpus: fold CPUs (an unknown CPU: the tid) onto as
 * many, 0 = 1. */
void trace_decoder_init(struct trace_decoder *d, struct trace_reader *r,
		       enum trace_dense_ids ids, unsigned int cpus);
/* The next event into @e. Return: 1, 0 at the end, -errno: the reader's
 * error (trace_reader_error(), naming the byte offset), or -ENOMEM. */
int trace_decode_next(struct trace_decoder *d, struct trace_dense_ev *e);
/* The trace's own id of dense id @id (TRACE_DENSE_BY_ID), as messages
 * name it. */
uint64_t trace_decoder_trace_id(const struct trace_decoder *d, uint32_t id);
/* Frees the tables; not the reader. */
void trace_decoder_destroy(struct trace_decoder *d);
/* Events of @event_bytes a whole-trace decode may hold: a quarter of
 * physical memory or of the address-space limit (USLAB_EVENT_BUDGET, a
 * smaller number, for the tests). */
uint64_t trace_event_budget(size_t event_bytes);
/* Refuses the event just read: more than @budget to hold, said as @who's.
 * Return: -EPROTO. */
int trace_decoder_over_budget(struct trace_decoder *d, uint64_t budget, const char *who);

/* ---- trace/outfile.c: output files that never clobber (docs/sim.md).
 * out_open: "-" is standard output; a regular file or new name gets a
 * temporary beside it, renamed at out_commit; a symlink is followed; a FIFO,
 * device or socket is written in place; a directory is an error. On error
 * @err holds "PATH: what" and -errno is returned. A fatal signal at the
 * default action unlinks the open temporaries before the process dies. */
struct out_file {
	int fd;
	bool in_place;		/* no temporary: FIFO, device, socket, stdout */
	bool is_stdout;
	bool seekable;
	bool keep_mode;
	unsigned int mode;
	char *name;		/* as given, for messages */
	char *final;		/* renamed onto at commit */
	char *tmp;		/* NULL when in place */
	int tmp_slot;		/* for the fatal-signal unlink; -1 none */
};
int out_open(struct out_file *o, const char *path, char *err, size_t len);
int out_write(struct out_file *o, const void *buf, size_t n, char *err, size_t len);
int out_commit(struct out_file *o, char *err, size_t len);
void out_abort(struct out_file *o);
/* Catch the fatal signals now (not only from the first temporary on), and
 * call @hook (async-signal-safe, may be NULL) from the handler before the
 * temporaries are unlinked: `record` removes its raw folder so. */
void out_catch_fatal(void (*hook)(void));
/* Before a long run: would out_open(@path) work? Same messages. */
int out_check(const char *path, char *err, size_t len);

/* ---- trace/import_common.c: address -> dense id, ids reused after free;
 * bounded line reading. */

struct idmap;

struct idmap *idmap_new(void);
void idmap_free(struct idmap *m);
/* New object at @addr: its id (never 0). Return: 0, -EEXIST, -ENOMEM. */
int idmap_insert(struct idmap *m, uint64_t addr, uint64_t *id);
/* The id of the live object at @addr. Return: 0, or -ENOENT. */
int idmap_lookup(const struct idmap *m, uint64_t addr, uint64_t *id);
/* The same with hmap_hash() computed once (see hmap_prefetch()). */
uint64_t idmap_hash(const struct idmap *m, uint64_t addr);
void idmap_prefetch(const struct idmap *m, uint64_t hash);
int idmap_insert_hashed(struct idmap *m, uint64_t addr, uint64_t hash, uint64_t *id);
int idmap_remove_hashed(struct idmap *m, uint64_t addr, uint64_t hash, uint64_t *id);
int idmap_detach_hashed(struct idmap *m, uint64_t addr, uint64_t hash, uint64_t *id);
/* Object at @addr freed: its id. Return: 0, or -ENOENT when not live. */
int idmap_remove(struct idmap *m, uint64_t addr, uint64_t *id);
/* idmap_remove() in two steps, so a realloc's new object cannot take the
 * old one's id: detach, insert the new object, then release the old id. */
int idmap_detach(struct idmap *m, uint64_t addr, uint64_t *id);
int idmap_release_id(struct idmap *m, uint64_t id);
/* Put a detached object back under its id (a realloc that failed). */
int idmap_attach(struct idmap *m, uint64_t addr, uint64_t id);
uint64_t idmap_id_space(const struct idmap *m);

/* ---- Importers (trace/import_*.c). Each parses text from @in and hands every
 * event to @emit; a parse error is reported as "NAME:LINE: what" in @err. */

typedef int (*trace_emit_fn)(void *ctx, const struct trace_event *ev);

/*
 * Where an importer's output goes: @emit each event; @cache (perf: may be
 * NULL, names then dropped) a named cache the next events name, returning
 * its id; @task (may be NULL) each task at its first event: its dense
 * thread number, pid (0 unknown: no pid column) and comm; @cache_of (may
 * be NULL) names the cache of an earlier kmem_cache_alloc, event @event
 * (its index among the events emitted), that carried no name= (kernels
 * whose kmem_cache_alloc does not print it) once its kmem_cache_free did.
 * The callbacks return 0 or -errno (-EINVAL: refused, said as the input's
 * error).
 */
struct import_sink {
	trace_emit_fn emit;
	int (*cache)(void *ctx, const char *name, uint64_t size, uint32_t *id);
	int (*cache_of)(void *ctx, uint64_t event, uint32_t cache);
	int (*task)(void *ctx, uint32_t tid, uint64_t pid, uint64_t task, const char *comm);
	void *ctx;
};

struct import_result {
	uint64_t lines;
	uint64_t events;
	uint64_t skipped;	/* lines that are not allocator events */
	/* why: frees of objects allocated before the input began, and the
	 * other events by name (the first IMPORT_SKIP_KINDS names; the rest
	 * counted in skipped_kinds_more) */
	uint64_t skipped_early;
#define IMPORT_SKIP_KINDS	8
	struct { char name[48]; uint64_t n, first_line; } skipped_kinds[IMPORT_SKIP_KINDS];
	uint32_t nskipped_kinds;
	uint64_t skipped_kinds_more;
	uint64_t first_early;	/* line of the first of skipped_early, 0 none */
	uint32_t cpus;		/* highest CPU seen + 1 */
	uint32_t pid;
	char err[512];
};

/* trace/import_mtrace.c */
int import_mtrace(FILE *in, const char *name, const struct import_sink *sink,
		  struct import_result *res);
/* trace/import_perf.c */
int import_perf(FILE *in, const char *name, const struct import_sink *sink,
		struct import_result *res);

/* A recorded string (command line, task name) for a terminal or a table
 * row: control characters and backslashes escaped (\n, \t, \r, \\, \xNN).
 * trace_printable() fills @buf (truncated to fit) and returns it. */
void trace_fput_printable(FILE *f, const char *s);
const char *trace_printable(const char *s, char *buf, size_t len);
/* The reader's error is a file that ended early (trace_read.c). */
bool trace_reader_truncated(const struct trace_reader *r);

#endif /* USLAB_TRACE_TRACE_H */
