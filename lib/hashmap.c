// SPDX-License-Identifier: MIT
/*
 * lib/hashmap.c: the keyed hash table u64 -> u64 of lib/hashmap.h.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include "lib/compiler.h"
#include "lib/hashmap.h"

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

/*
 * Slot arrays of 2 MiB and more are their own mappings, aligned to 2 MiB and
 * offered to transparent huge pages: every access to a big table is a cache
 * miss, and with 4 KiB pages a TLB miss (a page walk) too. The recorder's
 * collector spent a fifth of its time in those walks on a 30-million-event
 * recording (docs/sim.md, "Collecting").
 */
#define HMAP_HUGE	(2ul << 20)

static struct hmap_slot *slots_alloc(uint64_t n)
{
	size_t len = (size_t)n * sizeof(struct hmap_slot), head, tail;
	uint8_t *p;

	if (n > SIZE_MAX / sizeof(struct hmap_slot) / 2)
		return NULL;
	if (len < HMAP_HUGE)
		return calloc((size_t)n, sizeof(struct hmap_slot));
	p = mmap(NULL, len + HMAP_HUGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	head = (HMAP_HUGE - ((uintptr_t)p & (HMAP_HUGE - 1))) & (HMAP_HUGE - 1);
	tail = HMAP_HUGE - head;
	if (head)
		munmap(p, head);
	munmap(p + head + len, tail);
	p += head;
	madvise(p, len, MADV_HUGEPAGE);	/* a hint: refused is fine */
	return (struct hmap_slot *)p;
}

/* A new table's one slot, empty and never written: the first insert grows
 * the table (3/4 full at most) to slots of its own. */
static struct hmap_slot hmap_empty[1];

static void slots_free(struct hmap_slot *s, uint64_t n)
{
	size_t len = (size_t)n * sizeof(*s);

	if (!s || s == hmap_empty)
		return;
	if (len < HMAP_HUGE)
		free(s);
	else
		munmap(s, len);
}

void hmap_init(struct hmap *m)
{
	memset(m, 0, sizeof(*m));
	if (getrandom(m->key, sizeof(m->key), GRND_NONBLOCK) != sizeof(m->key)) {
		/* No entropy yet (early boot): still unknown to the file. */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		m->key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uintptr_t)m;
		m->key[1] = (uint64_t)ts.tv_sec ^ (uintptr_t)&ts ^ (uint64_t)getpid() << 32;
	}
	m->slots = hmap_empty;
}

void hmap_destroy(struct hmap *m)
{
	slots_free(m->slots, m->mask + 1);
	m->slots = NULL;
	m->count = 0;
}

uint64_t hmap_hash(const struct hmap *m, uint64_t key)
{
	return siphash13_u64(m->key, key);
}

static uint64_t *find_hashed(const struct hmap *m, uint64_t key, uint64_t hash)
{
	uint64_t i;

	for (i = hash & m->mask; m->slots[i].key; i = (i + 1) & m->mask)
		if (m->slots[i].key == key + 1)
			return &m->slots[i].val;
	return NULL;
}

uint64_t *hmap_find(const struct hmap *m, uint64_t key)
{
	if (unlikely(key == UINT64_MAX))
		return NULL;
	return find_hashed(m, key, hmap_hash(m, key));
}

static int hmap_grow(struct hmap *m)
{
	struct hmap n = *m;
	uint64_t i, j;

	n.mask = m->slots == hmap_empty ? 63 : 2 * m->mask + 1;
	n.slots = slots_alloc(n.mask + 1);
	if (!n.slots)
		return -ENOMEM;
	for (i = 0; i <= m->mask; i++) {
		if (!m->slots[i].key)
			continue;
		for (j = hmap_home(&n, m->slots[i].key - 1); n.slots[j].key; j = (j + 1) & n.mask)
			;
		n.slots[j] = m->slots[i];
	}
	slots_free(m->slots, m->mask + 1);
	*m = n;
	return 0;
}

void hmap_prefetch(const struct hmap *m, uint64_t hash)
{
	__builtin_prefetch(&m->slots[hash & m->mask], 1);
}

/* One probe sequence: it meets the key, or ends at the slot it goes in. */
int hmap_insert_hashed(struct hmap *m, uint64_t key, uint64_t hash, uint64_t val)
{
	uint64_t i;

	if (key == UINT64_MAX)		/* key + 1 would be the empty mark */
		return -EINVAL;
	if ((m->count + 1) * 4 > (m->mask + 1) * 3 && hmap_grow(m))
		return -ENOMEM;
	for (i = hash & m->mask; m->slots[i].key; i = (i + 1) & m->mask)
		if (m->slots[i].key == key + 1)
			return -EEXIST;
	m->slots[i].key = key + 1;
	m->slots[i].val = val;
	m->count++;
	return 0;
}

int hmap_insert(struct hmap *m, uint64_t key, uint64_t val)
{
	return hmap_insert_hashed(m, key, hmap_hash(m, key), val);
}

/* Backward-shift deletion: no tombstones, probe sequences stay short. */
int hmap_remove_hashed(struct hmap *m, uint64_t key, uint64_t hash, uint64_t *val)
{
	uint64_t *v = key == UINT64_MAX ? NULL : find_hashed(m, key, hash), i, j;

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

int hmap_remove(struct hmap *m, uint64_t key, uint64_t *val)
{
	return hmap_remove_hashed(m, key, hmap_hash(m, key), val);
}
