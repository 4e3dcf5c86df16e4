// SPDX-License-Identifier: MIT
/*
 * trace_forge: writes hostile but well-formed traces for the tests. Events
 * come from stdin, one a line, "OP TID CPU ID OLD_ID SIZE ALIGN [REPEAT
 * [STACK]]" (OP by name, CPU -1 = unknown, the time is the event's index),
 * through the real writer; then trailer fields may be overwritten, with the
 * trailer's checksum recomputed so that only the reader's and the
 * consumers' own bounds stand between the file and them.
 *
 *   trace_forge OUT [--cpus N] [--events N] [--chunks N] [--id-space N]
 *               [--threads N] [--stack 'PROC FRAME...']...
 *               [--object 'PROC START SIZE OFFSET PATH']...
 *               [--record 'MAGIC ENTRIES REPEAT TOKEN...']...
 *
 * --stack and --object give the writer its stack and object tables (stack
 * ids count from 1 in the order given). --record splices a raw extension
 * record right after the header, its checksums and zstd frame right and
 * its decoded bytes anything: the TOKENs, REPEAT times over. A token is
 * vN (a varint), zN (a zigzag varint of a signed N), sTEXT (a varint
 * length and the bytes; \xNN escapes), each optionally *K (K times).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "trace/internal.h"

struct buf {
	uint8_t *b;
	size_t len, cap;
};

static void put(struct buf *o, const void *p, size_t len)
{
	if (o->len + len > o->cap) {
		o->cap = (o->len + len) * 2 + 4096;
		o->b = realloc(o->b, o->cap);
		if (!o->b) {
			perror("trace_forge");
			exit(1);
		}
	}
	memcpy(o->b + o->len, p, len);
	o->len += len;
}

/* One token of --record (see the top) appended to @o. */
static void put_token(struct buf *o, const char *tok)
{
	uint8_t v[16], s[256];
	const char *star = strrchr(tok, '*');
	unsigned long k = star && tok[0] != 's' ? strtoul(star + 1, NULL, 0) : 1;
	size_t n = 0;

	switch (tok[0]) {
	case 'v':
		n = (size_t)(put_varint(v, strtoull(tok + 1, NULL, 0)) - v);
		break;
	case 'z':
		n = (size_t)(put_varint(v, zigzag(strtoll(tok + 1, NULL, 0))) - v);
		break;
	case 's':
		for (const char *p = tok + 1; *p && n < sizeof(s); p++) {
			unsigned int x;

			if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &x) == 1) {
				s[n++] = (uint8_t)x;
				p += 3;
			} else {
				s[n++] = (uint8_t)*p;
			}
		}
		put(o, v, (size_t)(put_varint(v, n) - v));
		put(o, s, n);
		return;
	default:
		fprintf(stderr, "trace_forge: bad token '%s'\n", tok);
		exit(2);
	}
	while (k--)
		put(o, v, n);
}

/* --record 'MAGIC ENTRIES REPEAT TOKEN...': the record, framed, into @o. */
static void put_record(struct buf *o, const char *spec)
{
	char magic[5] = "", *copy = strdup(spec), *save, *tok;
	unsigned long n = 0, rep = 0;
	struct buf raw = { 0 };
	uint8_t h[TRACE_REC_HDR], *comp;
	size_t clen;

	if (!copy || sscanf(spec, "%4s %lu %lu", magic, &n, &rep) != 3) {
		fprintf(stderr, "trace_forge: bad --record '%s'\n", spec);
		exit(2);
	}
	for (unsigned long r = 0; r < rep; r++) {
		strcpy(copy, spec);
		tok = strtok_r(copy, " ", &save);
		for (int skip = 0; tok; tok = strtok_r(NULL, " ", &save))
			if (++skip > 3)
				put_token(&raw, tok);
	}
	comp = malloc(ZSTD_compressBound(raw.len));
	clen = ZSTD_compress(comp, ZSTD_compressBound(raw.len), raw.b, raw.len, 3);
	if (!comp || ZSTD_isError(clen)) {
		fprintf(stderr, "trace_forge: zstd failed\n");
		exit(1);
	}
	memcpy(h, magic, 4);
	put_le32(h + 4, (uint32_t)clen);
	put_le32(h + 8, (uint32_t)raw.len);
	put_le32(h + 12, (uint32_t)n);
	put_le32(h + 16, trace_crc32c(0, comp, clen));
	put_le32(h + 20, trace_crc32c(0, h, 20));
	put(o, h, sizeof(h));
	put(o, comp, clen);
	free(comp);
	free(raw.b);
	free(copy);
}

/* The --record options' records, spliced into @path after its header. */
static int splice_records(const char *path, int argc, char **argv)
{
	struct buf file = { 0 }, out = { 0 };
	uint8_t chunk[65536];
	size_t n, hsize;
	FILE *f = fopen(path, "rb");
	int any = 0;

	for (int i = 0; i + 1 < argc; i += 2)
		any |= !strcmp(argv[i], "--record");
	if (!any)
		return f ? fclose(f) : -1;
	if (!f)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		put(&file, chunk, n);
	fclose(f);
	hsize = get_le32(file.b + 12);
	put(&out, file.b, hsize);
	for (int i = 0; i + 1 < argc; i += 2)
		if (!strcmp(argv[i], "--record"))
			put_record(&out, argv[i + 1]);
	put(&out, file.b + hsize, file.len - hsize);
	f = fopen(path, "wb");
	if (!f || fwrite(out.b, 1, out.len, f) != out.len || fclose(f))
		return -1;
	free(file.b);
	free(out.b);
	return 0;
}

/* --stack and --object into the writer's tables. */
static int set_tables(struct trace_writer *w, int argc, char **argv)
{
	struct trace_stack st[64];
	struct trace_object ob[64];
	static uint64_t frames[64][TRACE_STACK_MAX];
	static char paths[64][4096];
	uint32_t ns = 0, no = 0;
	int rc = 0;

	for (int i = 0; i + 1 < argc; i += 2) {
		char *p = argv[i + 1], *e;

		if (!strcmp(argv[i], "--stack") && ns < 64) {
			st[ns] = (struct trace_stack){ .proc = (uint32_t)strtoul(p, &e, 0),
						       .frames = frames[ns] };
			while (st[ns].nframes < TRACE_STACK_MAX && *(p = e) &&
			       (frames[ns][st[ns].nframes] = strtoull(p, &e, 0), e != p))
				st[ns].nframes++;
			ns++;
		} else if (!strcmp(argv[i], "--object") && no < 64) {
			unsigned long long start, size, off;
			unsigned int proc;

			if (sscanf(p, "%u %lli %lli %lli %4095[^\n]", &proc, &start, &size, &off,
				   paths[no]) != 5)
				return -EINVAL;
			ob[no] = (struct trace_object){ .proc = proc, .start = start,
				.end = start + size, .offset = off, .path = paths[no] };
			no++;
		}
	}
	if (ns)
		rc = trace_writer_set_stacks(w, st, ns);
	if (!rc && no)
		rc = trace_writer_set_objects(w, ob, no);
	return rc;
}

static int patch_trailer(const char *path, int argc, char **argv)
{
	FILE *f = fopen(path, "r+b");
	uint8_t t[TRACE_TRAILER];

	if (!f || fseek(f, -(long)TRACE_TRAILER, SEEK_END) ||
	    fread(t, 1, sizeof(t), f) != sizeof(t))
		return -1;
	for (int i = 0; i + 1 < argc; i += 2) {
		uint64_t v = strtoull(argv[i + 1], NULL, 0);

		if (!strcmp(argv[i], "--events"))
			put_le64(t + 8, v);
		else if (!strcmp(argv[i], "--chunks"))
			put_le64(t + 16, v);
		else if (!strcmp(argv[i], "--id-space"))
			put_le64(t + 24, v);
		else if (!strcmp(argv[i], "--threads"))
			put_le32(t + 40, (uint32_t)v);
	}
	put_le32(t + 44, trace_crc32c(0, t, 44));
	if (fseek(f, -(long)TRACE_TRAILER, SEEK_END) || fwrite(t, 1, sizeof(t), f) != sizeof(t))
		return -1;
	return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct trace_meta m = { .clock_id = TRACE_CLOCK_NONE, .cmdline = "forged" };
	struct trace_writer *w;
	char line[512], op[64];
	uint64_t t = 0;
	int i;

	if (argc < 2 || argc % 2) {
		fprintf(stderr, "usage: trace_forge OUT [--cpus N] [--events N] [--chunks N]"
			" [--id-space N] [--threads N] [--stack S] [--object O] [--record R]"
			" < events\n");
		return 2;
	}
	for (i = 2; i + 1 < argc; i += 2)
		if (!strcmp(argv[i], "--cpus"))
			m.cpus = (uint32_t)strtoul(argv[i + 1], NULL, 0);
	strcpy(m.tool, "trace_forge");
	if (trace_writer_open(&w, argv[1], &m, 1)) {
		fprintf(stderr, "trace_forge: %s\n", trace_writer_error(w));
		return 1;
	}
	if (set_tables(w, argc - 2, argv + 2)) {
		fprintf(stderr, "trace_forge: bad --stack or --object: %s\n", trace_writer_error(w));
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		struct trace_event ev = { 0 };
		long long cpu;
		uint64_t rep = 1;
		int n, o;

		n = sscanf(line, "%63s %" SCNu32 " %lld %" SCNu64 " %" SCNu64 " %" SCNu64
			   " %" SCNu64 " %" SCNu64 " %" SCNu32, op, &ev.tid, &cpu, &ev.id,
			   &ev.old_id, &ev.size, &ev.align, &rep, &ev.stack);
		if (n <= 0 || op[0] == '#')
			continue;
		o = trace_op_from_name(op);
		if (n < 7 || o < 0) {
			fprintf(stderr, "trace_forge: bad line: %s", line);
			return 1;
		}
		ev.op = (uint8_t)o;
		ev.cpu = cpu < 0 ? TRACE_CPU_UNKNOWN : (uint32_t)cpu;
		while (rep--) {
			ev.time_ns = t++;
			if (trace_writer_add(w, &ev)) {
				fprintf(stderr, "trace_forge: %s\n", trace_writer_error(w));
				return 1;
			}
		}
	}
	if (trace_writer_close(w)) {
		fprintf(stderr, "trace_forge: %s\n", trace_writer_error(w));
		return 1;
	}
	if (patch_trailer(argv[1], argc - 2, argv + 2) ||
	    splice_records(argv[1], argc - 2, argv + 2)) {
		fprintf(stderr, "trace_forge: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}
