// SPDX-License-Identifier: MIT
/*
 * Pieces of the trace format shared by the reader, the writer and the tools:
 * CRC32C, the op table, and small CLI helpers. No locks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "trace/internal.h"

static const struct {
	const char *name;
	bool alloc, free, size, align;
} ops[TRACE_OP_NR] = {
	[TRACE_OP_MALLOC]		= { "malloc",		true,  false, true,  false },
	[TRACE_OP_FREE]			= { "free",		false, true,  false, false },
	[TRACE_OP_CALLOC]		= { "calloc",		true,  false, true,  false },
	[TRACE_OP_REALLOC]		= { "realloc",		false, false, true,  false },
	[TRACE_OP_MEMALIGN]		= { "memalign",		true,  false, true,  true },
	[TRACE_OP_POSIX_MEMALIGN]	= { "posix_memalign",	true,  false, true,  true },
	[TRACE_OP_ALIGNED_ALLOC]	= { "aligned_alloc",	true,  false, true,  true },
	[TRACE_OP_VALLOC]		= { "valloc",		true,  false, true,  true },
	[TRACE_OP_PVALLOC]		= { "pvalloc",		true,  false, true,  true },
	[TRACE_OP_FREE_SIZED]		= { "free_sized",	false, true,  true,  false },
	[TRACE_OP_FREE_ALIGNED_SIZED]	= { "free_aligned_sized", false, true, true, true },
	[TRACE_OP_KMALLOC]		= { "kmalloc",		true,  false, true,  false },
	[TRACE_OP_KFREE]		= { "kfree",		false, true,  false, false },
	[TRACE_OP_CACHE_ALLOC]		= { "kmem_cache_alloc",	true,  false, true,  false },
	[TRACE_OP_CACHE_FREE]		= { "kmem_cache_free",	false, true,  false, false },
};

const char *trace_op_name(unsigned int op)
{
	return op < TRACE_OP_NR ? ops[op].name : "?";
}

int trace_op_from_name(const char *name)
{
	for (unsigned int i = 0; i < TRACE_OP_NR; i++)
		if (!strcmp(ops[i].name, name))
			return (int)i;
	return -1;
}

bool trace_op_is_alloc(unsigned int op)
{
	return op < TRACE_OP_NR && ops[op].alloc;
}

bool trace_op_is_free(unsigned int op)
{
	return op < TRACE_OP_NR && ops[op].free;
}

bool trace_op_has_size(unsigned int op)
{
	return op < TRACE_OP_NR && ops[op].size;
}

bool trace_op_has_align(unsigned int op)
{
	return op < TRACE_OP_NR && ops[op].align;
}

/* CRC32C (Castagnoli), reflected, byte table; SSE4.2 instruction when present. */
static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & -(c & 1));
		crc_table[i] = c;
	}
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	for (; len; len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

uint32_t trace_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static int mode;	/* 0 unknown, 1 table, 2 hardware */
	const uint8_t *p = buf;

	crc = ~crc;
	if (unlikely(!mode)) {
		crc_init();
#if defined(__x86_64__)
		__builtin_cpu_init();
		mode = __builtin_cpu_supports("sse4.2") ? 2 : 1;
#else
		mode = 1;
#endif
	}
#if defined(__x86_64__)
	if (mode == 2)
		return ~crc32c_hw(crc, p, len);
#endif
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

int cmd_usage(const char *usage)
{
	fprintf(stderr, "usage: %s\n", usage);
	return 2;
}

struct trace_reader *cmd_open_trace(const char *path)
{
	struct trace_reader *r = NULL;
	int rc = trace_reader_open(&r, path);

	if (rc) {
		fprintf(stderr, "uslab: %s\n", r ? trace_reader_error(r) : strerror(-rc));
		trace_reader_close(r);
		return NULL;
	}
	return r;
}

int cmd_read_error(struct trace_reader *r, int rc)
{
	if (rc >= 0)
		return 0;
	fprintf(stderr, "uslab: %s\n", trace_reader_error(r));
	return 1;
}
