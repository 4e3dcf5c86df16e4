// SPDX-License-Identifier: MIT
/*
 * trace_forge: writes hostile but well-formed traces for the tests. Events
 * come from stdin, one a line, "OP TID CPU ID OLD_ID SIZE ALIGN [REPEAT]"
 * (OP by name, CPU -1 = unknown, the time is the event's index), through
 * the real writer; then trailer fields may be overwritten, with the
 * trailer's checksum recomputed so that only the reader's and the
 * consumers' own bounds stand between the file and them.
 *
 *   trace_forge OUT [--cpus N] [--events N] [--chunks N] [--id-space N]
 *               [--threads N]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/internal.h"

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
			" [--id-space N] [--threads N] < events\n");
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
	while (fgets(line, sizeof(line), stdin)) {
		struct trace_event ev = { 0 };
		long long cpu;
		uint64_t rep = 1;
		int n, o;

		n = sscanf(line, "%63s %" SCNu32 " %lld %" SCNu64 " %" SCNu64 " %" SCNu64
			   " %" SCNu64 " %" SCNu64, op, &ev.tid, &cpu, &ev.id, &ev.old_id,
			   &ev.size, &ev.align, &rep);
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
	if (patch_trailer(argv[1], argc - 2, argv + 2)) {
		fprintf(stderr, "trace_forge: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}
