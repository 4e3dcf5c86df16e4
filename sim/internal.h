/* SPDX-License-Identifier: MIT */
/*
 * sim/ private declarations: trace format internals, the recorder's raw
 * stream, importers, and the `uslab` subcommands. Grouped by defining file.
 */
#ifndef USLAB_SIM_INTERNAL_H
#define USLAB_SIM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "uslab/trace.h"

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
/* Trace tids of all processes together: the bound report uses too. */
#define TRACE_THREADS_MAX	(1u << 20)

/* sim/trace_common.c */
uint32_t trace_crc32c(uint32_t crc, const void *buf, size_t len);
/* sim/trace_write.c: header fields only known at the end (imports): the
 * header is rewritten in place by trace_writer_close(). */
void trace_writer_set_cpus_pid(struct trace_writer *w, uint32_t cpus, uint32_t pid);
/* sim/trace_common.c: the process table's payload (docs/trace-format.md).
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

/* ---- sim/outfile.c: output files that never clobber (docs/sim.md).
 * out_open: "-" is standard output; a regular file or new name gets a
 * temporary beside it, renamed at out_commit; a symlink is followed; a FIFO,
 * device or socket is written in place; a directory is an error. On error
 * @err holds "PATH: what" and -errno is returned. */
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
};
int out_open(struct out_file *o, const char *path, char *err, size_t len);
int out_write(struct out_file *o, const void *buf, size_t n, char *err, size_t len);
int out_commit(struct out_file *o, char *err, size_t len);
void out_abort(struct out_file *o);
/* Before a long run: would out_open(@path) work? Same messages. */
int out_check(const char *path, char *err, size_t len);

/* ---- sim/symbolize.c: a frame's function and source line (elfutils libdw). */
struct symbolizer;
struct sym_info {
	char func[256];
	char file[512];
	int line;		/* 0: unknown */
};
struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);
/* @off: the byte offset in the file @path of the address (for a return
 * address, one byte before it). Return: 0, or -1 when nothing is known. */
int symbolize(struct symbolizer *s, const char *path, uint64_t off, struct sym_info *out);
/* sim/report_callsite.c: `uslab report --sort callsite[,size] [--children]` */
struct trace_reader;
int report_callsites(struct trace_reader *r, const char *path, bool by_size,
		     bool children, unsigned int rows);

/* ---- sim/import_common.c: address -> dense id, ids reused after free;
 * bounded line reading. */

struct idmap;

struct idmap *idmap_new(void);
void idmap_free(struct idmap *m);
/* New object at @addr: its id (never 0). Return: 0, -EEXIST, -ENOMEM. */
int idmap_insert(struct idmap *m, uint64_t addr, uint64_t *id);
/* The id of the live object at @addr. Return: 0, or -ENOENT. */
int idmap_lookup(const struct idmap *m, uint64_t addr, uint64_t *id);
/* Object at @addr freed: its id. Return: 0, or -ENOENT when not live. */
int idmap_remove(struct idmap *m, uint64_t addr, uint64_t *id);
/* idmap_remove() in two steps, so a realloc's new object cannot take the
 * old one's id: detach, insert the new object, then release the old id. */
int idmap_detach(struct idmap *m, uint64_t addr, uint64_t *id);
int idmap_release_id(struct idmap *m, uint64_t id);
/* Put a detached object back under its id (a realloc that failed). */
int idmap_attach(struct idmap *m, uint64_t addr, uint64_t id);
uint64_t idmap_id_space(const struct idmap *m);
int import_read_line(FILE *in, char *buf, size_t cap, size_t *lenp);

/* ---- Importers (sim/import_*.c). Each parses text from @in and hands every
 * event to @emit; a parse error is reported as "NAME:LINE: what" in @err. */

typedef int (*trace_emit_fn)(void *ctx, const struct trace_event *ev);

struct import_result {
	uint64_t lines;
	uint64_t events;
	uint64_t skipped;	/* lines that are not allocator events */
	uint32_t cpus;		/* highest CPU seen + 1 */
	uint32_t pid;
	char err[512];
};

/* sim/import_mtrace.c */
int import_mtrace(FILE *in, const char *name, trace_emit_fn emit, void *ctx,
		  struct import_result *res);
int import_verr(struct import_result *res, const char *name, uint64_t line,
		const char *fmt, va_list ap);
/* sim/import_perf.c */
int import_perf(FILE *in, const char *name, trace_emit_fn emit, void *ctx,
		struct import_result *res);

/* ---- Recorder raw stream (sim/record_preload.c -> sim/record_collect.c).
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
/* `record -g`: a call stack the thread has not used before, defined before
 * the first event that refers to it: op byte, varint local id, varint frame
 * count, frames as zigzag deltas. Not an event: no time, no CPU. */
#define REC_OP_STACK		30u
#define REC_SAME_CPU		0x80u
#define REC_HAS_STACK		0x40u	/* event: varint local stack id + 1 last */
#define REC_OP_MASK		0x3fu
#define REC_STACK_MAX		64u	/* frames kept per call stack */
#define REC_STACK_BYTES		(16u + 10u * REC_STACK_MAX)
#define REC_ENV_STACKS		"USLAB_RECORD_STACKS"
#define REC_MAPS_SUFFIX		".maps"	/* executable mappings at start, exit */

struct rec_event {
	uint64_t time;		/* CLOCK_MONOTONIC ns */
	uint64_t size;
	uint64_t addr;		/* object allocated or freed; realloc: result */
	uint64_t old_addr;	/* realloc: the pointer passed in */
	uint32_t align;
	uint16_t cpu;		/* 0xffff: unknown */
	uint8_t op;
	uint8_t pad;
	uint32_t stack;		/* event: local stack id + 1, 0 none;
				 * REC_OP_STACK: the id it defines */
	uint32_t nframes;	/* REC_OP_STACK: frames[] */
	uint64_t *frames;	/* REC_OP_STACK: REC_STACK_MAX slots */
};

struct rec_block {
	uint32_t magic;
	uint32_t tid;
	uint32_t count;		/* records: events and stack definitions */
	uint32_t bytes;
	uint64_t time;		/* of its first event; UINT64_MAX: none */
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

	if (e->op == REC_OP_STACK) {
		uint64_t prev = 0;

		*p++ = (uint8_t)REC_OP_STACK;
		p = put_varint(p, e->stack);
		p = put_varint(p, e->nframes);
		for (uint32_t i = 0; i < e->nframes; i++) {
			p = put_varint(p, zigzag((int64_t)(e->frames[i] - prev)));
			prev = e->frames[i];
		}
		return (size_t)(p - buf);
	}
	*p++ = (uint8_t)(e->op | (same ? REC_SAME_CPU : 0) | (e->stack ? REC_HAS_STACK : 0));
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
	if (e->stack)
		p = put_varint(p, e->stack);
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
	bool has_stack;

	if (p >= end)
		return -1;
	e->op = *p & REC_OP_MASK;
	e->stack = 0;
	if (e->op == REC_OP_STACK) {
		uint64_t prev = 0, n;

		if (*p++ != REC_OP_STACK || get_varint(&p, end, &v) || !v || v > UINT32_MAX ||
		    get_varint(&p, end, &n) || n > REC_STACK_MAX || !e->frames)
			return -1;
		e->stack = (uint32_t)v;
		e->nframes = (uint32_t)n;
		for (uint32_t i = 0; i < e->nframes; i++) {
			if (get_varint(&p, end, &v))
				return -1;
			prev += (uint64_t)unzigzag(v);
			e->frames[i] = prev;
		}
		*pp = p;
		return 0;
	}
	if ((*p & REC_SAME_CPU) && !st->started)
		return -1;
	if (e->op >= TRACE_OP_NR && e->op != REC_OP_REALLOC_OLD)
		return -1;
	has_stack = *p & REC_HAS_STACK;
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
	if (has_stack) {
		if (get_varint(&p, end, &v) || !v || v > UINT32_MAX)
			return -1;
		e->stack = (uint32_t)v;
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
/* $USLAB_RECORD_DIR/notes: one line per exec the recorder cannot follow,
 * "static PID PATH" or "noenv PID PATH", appended with one write(2). */
#define REC_NOTES		"notes"
#define REC_LIB_NAME		"libuslab-record.so"

/*
 * Is the file open at @fd a statically linked ELF program (no PT_INTERP, so
 * no dynamic loader and no LD_PRELOAD)? Shared by the recorder (at exec) and
 * `uslab record` (for CMD itself). Return: 1 static, 0 dynamic or not ELF.
 */
static inline int rec_elf_is_static(int fd)
{
	unsigned char e[64], ph[56];
	uint64_t phoff;
	uint16_t phnum, phentsize, type;

	if (pread(fd, e, sizeof(e), 0) != (ssize_t)sizeof(e) ||
	    memcmp(e, "\177ELF", 4) || e[4] != 2 /* ELFCLASS64 */ ||
	    e[5] != 1 /* little-endian */)
		return 0;
	type = get_le16(e + 16);
	if (type != 2 && type != 3)	/* ET_EXEC, ET_DYN */
		return 0;
	phoff = get_le64(e + 32);
	phentsize = get_le16(e + 54);
	phnum = get_le16(e + 56);
	if (phentsize < sizeof(ph) || phnum == 0 || phnum > 4096)
		return 0;
	for (uint16_t i = 0; i < phnum; i++) {
		if (pread(fd, ph, sizeof(ph), (off_t)(phoff + (uint64_t)i * phentsize)) !=
		    (ssize_t)sizeof(ph))
			return 0;
		if (get_le32(ph) == 3)	/* PT_INTERP */
			return 0;
	}
	/* ET_DYN without an interpreter is a shared library or static-pie;
	 * one with an entry point is run as a program. */
	return type == 2 || get_le64(e + 24) != 0;
}

/* ---- Subcommands of the `uslab` CLI (tools/uslab.c holds the table).
 * Each gets argv[0] = its own name; returns the exit status. */

/* sim/script.c */
int cmd_script(int argc, char **argv);
/* sim/report.c */
int cmd_report(int argc, char **argv);
/* sim/record_collect.c */
int cmd_record(int argc, char **argv);
/* sim/import_cmd.c */
int cmd_import(int argc, char **argv);

/* Shared CLI helpers (sim/trace_common.c): the conventions of every
 * subcommand (docs/sim.md, "Command-line conventions"). */
/* Prints usage of a subcommand to stderr, returns 2 (the usage exit code). */
int cmd_usage(const char *usage);
/* -h/--help: usage on stdout; returns 0 (1 when stdout cannot be written). */
int cmd_help(const char *usage);
/* getopt returned '?' (opterr is 0): one line naming the unknown option or
 * the missing value, then the usage, on stderr. Returns 2. */
int cmd_opt_error(const char *who, const char *usage, const char *shortopts,
		  char **argv);
/* A decimal integer in [min, max], else one line naming @opt. Return 0/2. */
int cmd_parse_u64(const char *who, const char *opt, const char *arg,
		  uint64_t min, uint64_t max, uint64_t *out);
/* Flush stdout; on a write error (full disk, closed pipe) say so. Return 0/1. */
int cmd_check_stdout(const char *who);
/* The process a reader works on (--pid, --comm), one setting per run. */
struct cmd_select {
	uint32_t pid;
	const char *comm;
	bool quiet;		/* do not say which process was chosen */
};
extern struct cmd_select cmd_select;
/* --pid N / --comm NAME into cmd_select. Return: 0, or 2 after a message. */
int cmd_parse_select(const char *who, int opt, const char *arg);
#define CMD_SELECT_OPTS	{ "pid", required_argument, NULL, 0x100 },	\
			{ "comm", required_argument, NULL, 0x101 }
#define CMD_OPT_PID	0x100
#define CMD_OPT_COMM	0x101
/*
 * Opens @path ("-": standard input) for reading, and selects the process of
 * cmd_select (by default the one with the most allocations), saying which
 * on stderr when the trace has several. Prints any error; NULL on failure.
 */
struct trace_reader *cmd_open_trace(const char *path);
struct trace_reader *cmd_open_trace_as(const char *who, const char *path);
/* Reads to the end; on error prints it and returns 1. */
int cmd_read_error(struct trace_reader *r, int rc);

/* ---- Replay, simulation, tuning, generators (sim/replay*.c, simulate*.c,
 * tune*.c, calibrate*.c, gen*.c, plot*.c). */

struct kmem_cache;

/* One event as the simulator and the tuner run it: 32 bytes, decoded before
 * any timing starts. */
struct sim_ev {
	uint64_t time_ns;
	uint64_t size;
	uint32_t id, old_id;
	uint32_t tid;
	uint16_t cpu;		/* already folded onto sim_trace.cpus */
	uint8_t op;
	uint8_t align_shift;	/* log2 of the alignment, 0 = none */
};
static_assert(sizeof(struct sim_ev) == 32, "compact event");

struct trace_reader;

/* A decoded trace in memory (sim_trace_load), or a stream (sim_trace_open). */
struct sim_trace {
	struct sim_ev *ev;
	size_t n, cap;			/* stream: n = events (trailer), 0 unknown */
	struct trace_reader *r;		/* stream: the reader */
	const char *path;
	uint64_t id_space;
	uint32_t nthreads;
	unsigned int cpus;	/* simulated CPUs */
	unsigned int rec_cpus;	/* the recording's, 0 = unknown */
	bool no_clock;		/* time_ns is the event index (mtrace imports) */
	char *cmdline;
};

/* sim/simulate_load.c */
int sim_trace_load(struct sim_trace *t, const char *path, unsigned int cpus,
		   const char *who);
void sim_trace_free(struct sim_trace *t);
/* Stream: header and trailer now, events chunk by chunk in sim_run(). */
int sim_trace_open(struct sim_trace *t, const char *path, unsigned int cpus,
		   const char *who);
/* Next events of a stream into @buf. Return: count, 0 at the end, -errno. */
long sim_trace_read(struct sim_trace *t, struct sim_ev *buf, size_t max,
		    const char *who);

#define SIM_MAX_CLASSES		32
#define SIM_CLASS_NONE		0xff
#define SIM_CLASS_TABLE		((CONFIG_KMALLOC_MAX_CACHE_SIZE / 8) + 2)
#define SIM_DEFAULT		(-2L)	/* depot_limit: the library's default */

struct sim_config {
	unsigned int cpus;
	int mag_size;			/* every kmalloc cache; -1 = default */
	struct {
		char name[32];		/* kmalloc-64 or 64 */
		int mag;
	} class_mag[SIM_MAX_CLASSES];
	unsigned int nr_class_mag;
	int batch;			/* -1 = default */
	long depot_limit;		/* SIM_DEFAULT, -1 = unlimited, or N */
	uint64_t sample_every;		/* events between memory samples */
	bool per_class;			/* per-class overhead at each sample */
};

/* What the layers counted for one cache over the run. */
struct sim_cache_counts {
	uint64_t allocs, frees;		/* counted by the simulator */
	uint64_t alloc_hits, free_hits;
	uint64_t alloc_slow, free_slow;
	uint64_t refills, flushes, swaps;
	uint64_t depot_gets, depot_puts;
	uint64_t drains, direct;
	unsigned int mag_size, batch;
};

struct sim_class_result {
	struct kmem_cache *cache;
	char name[32];
	unsigned int objsize;
	struct sim_cache_counts c;
	uint64_t slab_bytes_peak;
	int64_t ovh_peak;		/* slab bytes - live bytes of the class */
	int64_t ovh_sum;		/* over samples, for the mean */
};

struct sim_sample {
	uint64_t time_ns;
	uint64_t events;
	uint64_t held;			/* page_alloc bytes_allocated */
	uint64_t resident_free;		/* page_alloc bytes_free_resident */
	uint64_t live;			/* requested bytes of live objects */
};

struct sim_result {
	uint64_t events, allocs, frees, reallocs, failed, enomem;
	uint64_t bad_event;		/* index, op and id of a bad event */
	unsigned int bad_op, bad_id;
	double seconds;			/* simulation loop only, wall */
	double cpu_seconds;		/* the same, CPU time of the thread */
	uint64_t page_allocs, page_frees, splits, merges;
	uint64_t held_peak, live_peak, live_end;
	int64_t ovh_peak;
	uint64_t held_sum, live_sum;	/* over samples */
	unsigned int nr_cls;
	struct sim_class_result cls[SIM_MAX_CLASSES];
	struct sim_sample *samples;
	size_t nr_samples, cap_samples;
	size_t nr_cls_samples;		/* samples with per-class figures */
};

/* sim/simulate.c */
void sim_config_init(struct sim_config *cfg);
int sim_parse_mag_size(struct sim_config *cfg, const char *arg);
/* @opt: 'm' --mag-size, 'b' --batch, 'd' --depot-limit. Return: 0/-EINVAL. */
int sim_parse_tunable(struct sim_config *cfg, int opt, const char *arg);
void sim_print_config(FILE *f, const struct sim_config *cfg, unsigned int cpus);
/* Run @t once through the library (a stream is read to its end, chunk by
 * chunk); once per process (forked for more). */
int sim_run(struct sim_trace *t, const struct sim_config *cfg,
	    struct sim_result *res);
void sim_result_free(struct sim_result *res);
double sim_mean_overhead(const struct sim_result *res);
int cmd_sim(int argc, char **argv);

/* sim/simulate_pcp.c: the simulator's view of the slab and percpu layers. */
const char *sim_pcp_engine(void);
/* Before anything allocates: @cpus virtual CPUs. Return: 0 or -errno. */
int sim_pcp_init(unsigned int cpus);
int sim_pcp_apply(const struct sim_config *cfg, struct sim_result *res);
void sim_pcp_set_cpu(unsigned int cpu, uint64_t time_ns);
void sim_pcp_collect(struct sim_result *res);
/* Bytes of slabs per class (slabinfo's num_slabs * pagesperslab). */
void sim_slab_bytes(const struct sim_result *res, uint64_t *bytes);

/* sim/calibrate_model.c: the slow-path cost model. */
struct sim_cost_model {
	double hit_ns;			/* magazine hit, alloc or free */
	double refill_ns;		/* one refill from the slab layer, fixed part */
	double flush_ns;		/* one flush to the slab layer, fixed part */
	double refill_obj_ns;		/* ... and per object of its batch */
	double flush_obj_ns;
	double depot_ns;		/* one depot get or put */
	double page_ns;			/* one page_alloc block alloc or free */
	bool calibrated;		/* read from a calibration file */
	char source[256];		/* the file, or "built-in default" */
};
void sim_cost_model_load(struct sim_cost_model *m);
/* Where the calibration lives. Return: 0, -ENOENT, -ENAMETOOLONG. */
int sim_calibration_path(char *buf, size_t len);
double sim_cost(const struct sim_cost_model *m, const struct sim_result *res);
double sim_class_cost(const struct sim_cost_model *m, const struct sim_cache_counts *c);
/* sim/calibrate.c */
int cmd_calibrate(int argc, char **argv);

/* sim/plot.c */
struct plot_point {
	double x, y;
	int kind;			/* 0 swept, 1 frontier, 2 recommended, 3 defaults */
};
int plot_svg(const char *path, const char *title, const char *xlabel,
	     const char *ylabel, const struct plot_point *pts, size_t n);

/* sim/tune.c */
int cmd_tune(int argc, char **argv);
/* sim/replay.c */
int cmd_replay(int argc, char **argv);
/* sim/gen.c */
int cmd_gen(int argc, char **argv);

#endif /* USLAB_SIM_INTERNAL_H */
