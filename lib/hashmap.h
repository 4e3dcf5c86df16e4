/* SPDX-License-Identifier: MIT */
/*
 * A keyed hash table u64 -> u64 for tables an input fills: the trace
 * importers' address table, the loaders' id and thread maps, report's and
 * the recorder's tables. Single-threaded, no locks; allocates (calloc, or
 * mmap for big slot arrays), so it is the tools' and never the allocator's.
 */
#ifndef USLAB_LIB_HASHMAP_H
#define USLAB_LIB_HASHMAP_H

#include <stdint.h>

/* SipHash-1-3 under a random key per table, so a file cannot aim keys at
 * one bucket. Memory follows the keys inserted. Every key but UINT64_MAX. */
struct hmap_slot {
	uint64_t key;		/* key + 1; 0 = empty */
	uint64_t val;
};
struct hmap {
	struct hmap_slot *slots;
	uint64_t mask, count;
	uint64_t key[2];
};
void hmap_init(struct hmap *m);	/* empty: slots come with the first insert */
void hmap_destroy(struct hmap *m);
uint64_t *hmap_find(const struct hmap *m, uint64_t key);	/* NULL: absent */
/*
 * For a caller that knows its keys early (the recorder's collector decodes
 * ahead): hash once, start loading the slot (a table larger than the caches
 * makes every access a miss), and use the hash when the key's turn comes.
 * @hash must be hmap_hash(m, key) of the same table (it survives growth).
 */
uint64_t hmap_hash(const struct hmap *m, uint64_t key);
void hmap_prefetch(const struct hmap *m, uint64_t hash);
int hmap_insert_hashed(struct hmap *m, uint64_t key, uint64_t hash, uint64_t val);
int hmap_remove_hashed(struct hmap *m, uint64_t key, uint64_t hash, uint64_t *val);
int hmap_insert(struct hmap *m, uint64_t key, uint64_t val);	/* -EEXIST, -ENOMEM */
int hmap_remove(struct hmap *m, uint64_t key, uint64_t *val);	/* -ENOENT */

#endif /* USLAB_LIB_HASHMAP_H */
