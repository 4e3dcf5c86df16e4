/* SPDX-License-Identifier: MIT */
/*
 * trace/ private declarations: the on-disk layout, byte and varint helpers,
 * the address -> id map and the importers. Shared by trace/, and by the
 * layers above that write or read traces (tools/, sim/, fuzz/, tests/).
 * trace/ knows nothing about the allocator: it includes lib/ and libc only.
 */
#ifndef USLAB_TRACE_INTERNAL_H
#define USLAB_TRACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
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
#define TRACE_EVENT_MAX		64u		/* worst-case encoded event */

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

/* trace/trace_common.c */
uint32_t trace_crc32c(uint32_t crc, const void *buf, size_t len);

/* Keyed hash table u64 -> u64 for tables an input fills (addresses, ids,
 * thread numbers): SipHash-1-3 under a random key per table, so a file
 * cannot aim keys at one bucket. Memory follows the keys inserted. Every
 * key but UINT64_MAX. */
struct hmap_slot {
	uint64_t key;		/* key + 1; 0 = empty */
	uint64_t val;
};
struct hmap {
	struct hmap_slot *slots;
	uint64_t mask, count;
	uint64_t key[2];
};
int hmap_init(struct hmap *m);			/* 0 or -ENOMEM */
void hmap_destroy(struct hmap *m);
uint64_t *hmap_find(const struct hmap *m, uint64_t key);	/* NULL: absent */
int hmap_insert(struct hmap *m, uint64_t key, uint64_t val);	/* -EEXIST, -ENOMEM */
int hmap_remove(struct hmap *m, uint64_t key, uint64_t *val);	/* -ENOENT */
/* trace/trace_write.c: header fields only known at the end (imports): the
 * header is rewritten in place by trace_writer_close(). */
void trace_writer_set_cpus_pid(struct trace_writer *w, uint32_t cpus, uint32_t pid);

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

/* ---- trace/import_common.c: address -> dense id, ids reused after free;
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

/* ---- Importers (trace/import_*.c). Each parses text from @in and hands every
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

/* trace/import_mtrace.c */
int import_mtrace(FILE *in, const char *name, trace_emit_fn emit, void *ctx,
		  struct import_result *res);
int import_verr(struct import_result *res, const char *name, uint64_t line,
		const char *fmt, va_list ap);
/* trace/import_perf.c */
int import_perf(FILE *in, const char *name, trace_emit_fn emit, void *ctx,
		struct import_result *res);

/* Shared CLI helpers (trace/trace_common.c; the CLI's, kept here until the commands all live in tools/uslab/). */
/* Prints usage of a subcommand to stderr, returns 2 (the usage exit code). */
int cmd_usage(const char *usage);
/* Opens @path for reading, printing the error; NULL on failure. */
struct trace_reader *cmd_open_trace(const char *path);
/* Reads to the end; on error prints it and returns 1. */
int cmd_read_error(struct trace_reader *r, int rc);


#endif /* USLAB_TRACE_INTERNAL_H */
