// SPDX-License-Identifier: MIT
/*
 * Pieces of the trace format shared by the reader, the writer and the tools:
 * CRC32C, the op table, and small CLI helpers. No locks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
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

/*
 * Keyed hash table, u64 -> u64, for every table a file fills: the
 * importers' address table, the loaders' id and thread maps. Its hash is
 * SipHash-1-3 (the one Rust's HashMap uses against the same attack) under
 * a 128-bit key drawn from getrandom() for each table, so an input cannot
 * choose keys that collide: addresses such as (j << 50) | (i << 4) spread
 * like random ones. Linear probing, load at most 3/4, backward-shift
 * deletion. Single-threaded, no locks.
 */
static inline uint64_t rotl64(uint64_t x, unsigned int b)
{
	return x << b | x >> (64 - b);
}

#define SIPROUND do {							\
	v0 += v1; v1 = rotl64(v1, 13); v1 ^= v0; v0 = rotl64(v0, 32);	\
	v2 += v3; v3 = rotl64(v3, 16); v3 ^= v2;			\
	v0 += v3; v3 = rotl64(v3, 21); v3 ^= v0;			\
	v2 += v1; v1 = rotl64(v1, 17); v1 ^= v2; v2 = rotl64(v2, 32);	\
} while (0)

/* SipHash-1-3 of the 8 bytes of @m (little-endian), under @k. */
static uint64_t siphash13_u64(const uint64_t k[2], uint64_t m)
{
	uint64_t v0 = k[0] ^ 0x736f6d6570736575ull, v1 = k[1] ^ 0x646f72616e646f6dull;
	uint64_t v2 = k[0] ^ 0x6c7967656e657261ull, v3 = k[1] ^ 0x7465646279746573ull;
	const uint64_t b = (uint64_t)8 << 56;	/* length 8, no tail bytes */

	v3 ^= m;
	SIPROUND;
	v0 ^= m;
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

static inline uint64_t hmap_home(const struct hmap *m, uint64_t key)
{
	return siphash13_u64(m->key, key) & m->mask;
}

int hmap_init(struct hmap *m)
{
	memset(m, 0, sizeof(*m));
	if (getrandom(m->key, sizeof(m->key), GRND_NONBLOCK) != sizeof(m->key)) {
		/* No entropy yet (early boot): still unknown to the file. */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		m->key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uintptr_t)m;
		m->key[1] = (uint64_t)ts.tv_sec ^ (uintptr_t)&ts ^ (uint64_t)getpid() << 32;
	}
	m->mask = 63;
	m->slots = calloc(m->mask + 1, sizeof(*m->slots));
	return m->slots ? 0 : -ENOMEM;
}

void hmap_destroy(struct hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->count = 0;
}

uint64_t *hmap_find(const struct hmap *m, uint64_t key)
{
	uint64_t i;

	if (unlikely(key == UINT64_MAX))
		return NULL;
	for (i = hmap_home(m, key); m->slots[i].key; i = (i + 1) & m->mask)
		if (m->slots[i].key == key + 1)
			return &m->slots[i].val;
	return NULL;
}

static int hmap_grow(struct hmap *m)
{
	struct hmap n = *m;
	uint64_t i, j;

	n.mask = 2 * m->mask + 1;
	n.slots = calloc(n.mask + 1, sizeof(*n.slots));
	if (!n.slots)
		return -ENOMEM;
	for (i = 0; i <= m->mask; i++) {
		if (!m->slots[i].key)
			continue;
		for (j = hmap_home(&n, m->slots[i].key - 1); n.slots[j].key; j = (j + 1) & n.mask)
			;
		n.slots[j] = m->slots[i];
	}
	free(m->slots);
	*m = n;
	return 0;
}

int hmap_insert(struct hmap *m, uint64_t key, uint64_t val)
{
	uint64_t i;

	if (key == UINT64_MAX)		/* key + 1 would be the empty mark */
		return -EINVAL;
	if (hmap_find(m, key))
		return -EEXIST;
	if ((m->count + 1) * 4 > (m->mask + 1) * 3 && hmap_grow(m))
		return -ENOMEM;
	for (i = hmap_home(m, key); m->slots[i].key; i = (i + 1) & m->mask)
		;
	m->slots[i].key = key + 1;
	m->slots[i].val = val;
	m->count++;
	return 0;
}

int hmap_remove(struct hmap *m, uint64_t key, uint64_t *val)
{
	uint64_t *v = hmap_find(m, key), i, j;

	if (!v)
		return -ENOENT;
	if (val)
		*val = *v;
	i = (uint64_t)((struct hmap_slot *)((char *)v - offsetof(struct hmap_slot, val)) - m->slots);
	for (j = (i + 1) & m->mask; m->slots[j].key; j = (j + 1) & m->mask) {
		uint64_t home = hmap_home(m, m->slots[j].key - 1);

		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].key = 0;
	m->count--;
	return 0;
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
