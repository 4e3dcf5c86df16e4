/* SPDX-License-Identifier: MIT */
/*
 * tools/record/ private declarations: the raw stream between the preloaded
 * recorder (tools/record/preload.c, libc only, never uslab) and the collector
 * (tools/record/collect.c) that turns it into a trace.
 */
#ifndef USLAB_TOOLS_RECORD_H
#define USLAB_TOOLS_RECORD_H

#include <string.h>
#include <unistd.h>
#include "trace/trace.h"

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
/* The first half of a realloc: @addr (the old pointer) is given up; its
 * size: the block's usable size under `record -p`, else 0. */
#define REC_OP_REALLOC_OLD	31u
/* `record -p`: a free with the block's usable size (the block may be one
 * allocated before the recorder came: collect.c makes it "alive at
 * attach"). Raw files only: the trace has TRACE_OP_FREE. */
#define REC_OP_FREE_USABLE	29u
/* `record -p`, uslab's kernel API: a kfree (size: ksize()) and a
 * kmem_cache_free (size: kmem_cache_size(), old_addr: the cache) of a block
 * that may predate the attach. Raw files only: the trace has
 * TRACE_OP_KFREE / TRACE_OP_CACHE_FREE. */
#define REC_OP_KFREE_USABLE	28u
#define REC_OP_CFREE_USABLE	27u
/* kmem_cache_alloc's raw event carries the cache's address in old_addr;
 * the recorder names each cache it meets once, in the side file
 * raw.<pid>.<n>.caches: "TIME ADDR SIZE NAME\n" (decimal; NAME to the end
 * of the line), appended with one write(2). A cache destroyed and another
 * made at the same address: the line with the latest TIME <= the event's. */
#define REC_CACHES_SUFFIX	".caches"
/* Does the op's raw record carry old_addr? */
#define REC_HAS_OLD(op)	((op) == TRACE_OP_REALLOC || (op) == TRACE_OP_CACHE_ALLOC ||	\
			 (op) == REC_OP_CFREE_USABLE)
/* `record -g`: a call stack the thread has not used before, defined before
 * the first event that refers to it: op byte, varint local id, varint frame
 * count, frames as zigzag deltas. Not an event: no time, no CPU. */
#define REC_OP_STACK		30u
#define REC_SAME_CPU		0x80u
#define REC_HAS_STACK		0x40u	/* event: varint local stack id + 1 last */
#define REC_OP_MASK		0x3fu
#define REC_STACK_MAX		256u	/* frames per stack, the cut mark included */
#define REC_STACK_DEPTH		64u	/* record -g's default --max-stack */
#define REC_STACK_BYTES		(16u + 10u * REC_STACK_MAX)
#define REC_ENV_STACKS		"USLAB_RECORD_STACKS"	/* the depth, 1..255 */
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
			 1u << TRACE_OP_KMALLOC | 1u << TRACE_OP_CACHE_ALLOC |		\
			 1u << REC_OP_FREE_USABLE | 1u << REC_OP_REALLOC_OLD |		\
			 1u << REC_OP_KFREE_USABLE | 1u << REC_OP_CFREE_USABLE)
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
		*p++ = (uint8_t)REC_OP_STACK;
		p = put_frames(put_varint(p, e->stack), e->frames, e->nframes);
		return (size_t)(p - buf);
	}
	*p++ = (uint8_t)(e->op | (same ? REC_SAME_CPU : 0) | (e->stack ? REC_HAS_STACK : 0));
	p = put_varint(p, e->time - st->time);
	if (!same)
		p = put_varint(p, e->cpu);
	p = put_varint(p, zigzag((int64_t)(e->addr - st->addr)));
	if (REC_HAS_OLD(e->op))
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
	if (e->op >= TRACE_OP_NR && e->op != REC_OP_REALLOC_OLD && e->op != REC_OP_FREE_USABLE &&
	    e->op != REC_OP_KFREE_USABLE && e->op != REC_OP_CFREE_USABLE)
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
	if (REC_HAS_OLD(e->op)) {
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

/* `uslab record -p`: libuslab-record.so's entry points, called through gdb
 * once it is dlopen'd into the running process (tools/record/preload.c),
 * and its GOT redirection (tools/record/got.c). */
#define REC_ATTACH_FN		"uslab_record_attach"
#define REC_DETACH_FN		"uslab_record_detach"
long uslab_record_attach(const char *dir, unsigned int depth);
int uslab_record_detach(void);
long rec_got_patch(const char *const *names, void *const *fns, unsigned int n,
		   const uintptr_t *skip, unsigned int nskip);
void rec_got_restore(void);

/* Written once per process image as raw.<pid>.<n>.meta (text, key=value). */
#define REC_META_SUFFIX		".meta"
/* $USLAB_RECORD_DIR/notes: one line per exec the recorder cannot follow,
 * "static PID PATH" or "noenv PID PATH", appended with one write(2); and
 * "ownmalloc PID PATH" from a process whose malloc is PATH's, not ours
 * ("ownmalloc-p" attached: the program PATH defines malloc itself). */
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


/* ---- The collector (tools/record/collect.c), run by `uslab record`
 * (tools/uslab/builtin-record.c) after the command exits. */

#include <limits.h>
#include <sys/types.h>

struct record_opts {
	const char *dir;		/* the raw files */
	const char *out;		/* the trace */
	char **argv;			/* the command */
	pid_t root;			/* its pid */
	uint64_t root_start;		/* CLOCK_MONOTONIC ns when it started */
	bool root_static;		/* CMD could not be preloaded */
	bool run;			/* CMD ran (exit status not 127) */
	int level;			/* zstd level, 0 default */
	const unsigned int *running;	/* pids still running at its exit */
	size_t nrunning;
};

struct record_result {
	uint64_t events, dropped, fixups;
	uint64_t alive_at_attach;	/* record -p: blocks from before attach */
	uint32_t threads;
	size_t nprocs;
	char chosen[512];		/* the default process of the tools and
					 * why (trace_pick_proc), "" for none */
	uint32_t nstacks, nobjects;	/* record -g */
	uint64_t nframes;
};

/*
 * Every raw file (and note) in @o->dir into one trace @o->out: the process
 * table, the call stacks, the events of every process merged by time.
 * Warnings (static programs, cleared LD_PRELOAD) go to stderr.
 * Return: 0, or -errno (reported on stderr; no trace left behind).
 */
int record_collect(const struct record_opts *o, struct record_result *res);
/* Remove @dir and the files in it. Async-signal-safe. */
void record_remove_dir(const char *dir);

#endif /* USLAB_TOOLS_RECORD_H */
