// SPDX-License-Identifier: MIT
/*
 * lib/hashmap.c, the keyed hash table u64 -> u64: against a model, across
 * growths (into the mmap'd slot arrays of big tables too), and its keys.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "lib/hashmap.h"
#include "tests/suite.h"
#include "tests/testutil.h"

/*
 * The keyed hash table against a plain array: random inserts, removes and
 * finds (through the plain calls and the *_hashed ones with the hash taken
 * early, as the collector does), across growths, checked after every step
 * and in full every 1000. Seeded, reproducible.
 */
/* check's ck_assert writes to a pipe each time it passes: in a loop of a
 * million steps, assert only on failure */
#define MODEL_CHECK(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

TEST_LOOP(hashmap, hmap_model, 0, 3)
{
	enum { NKEYS = 6000 };
	static uint64_t val[NKEYS];
	static bool live[NKEYS];
	struct hmap m;
	uint64_t count = 0, v, *p;

	memset(live, 0, sizeof(live));
	uint64_t seed = 0x5eed0000u + (uint64_t)_i;
	hmap_init(&m);
	for (int step = 0; step < 200000; step++) {
		uint32_t i = (uint32_t)(rnd(&seed) % NKEYS);
		/* addresses 16 apart in two far-apart regions */
		uint64_t key = (i & 1 ? (uint64_t)1 << 47 : 0x10000) + (uint64_t)(i >> 1) * 16;
		uint64_t h = hmap_hash(&m, key);
		bool hashed = rnd(&seed) & 1;
		int rc;

		switch (rnd(&seed) % 3) {
		case 0:
			v = rnd(&seed);
			rc = hashed ? hmap_insert_hashed(&m, key, h, v) : hmap_insert(&m, key, v);
			MODEL_CHECK(rc == (live[i] ? -EEXIST : 0), "insert %" PRIu64 ": rc %d", key, rc);
			if (!live[i]) {
				live[i] = true;
				val[i] = v;
				count++;
			}
			break;
		case 1:
			rc = hashed ? hmap_remove_hashed(&m, key, h, &v) : hmap_remove(&m, key, &v);
			MODEL_CHECK(rc == (live[i] ? 0 : -ENOENT), "remove %" PRIu64 ": rc %d", key, rc);
			if (live[i]) {
				MODEL_CHECK(v == val[i], "remove %" PRIu64 ": value", key);
				live[i] = false;
				count--;
			}
			break;
		default:
			hmap_prefetch(&m, h);
			p = hmap_find(&m, key);
			MODEL_CHECK(live[i] ? p && *p == val[i] : !p, "find %" PRIu64, key);
		}
		MODEL_CHECK(m.count == count, "count %" PRIu64 ", expected %" PRIu64, m.count, count);
		if (step % 1000 == 0)
			for (uint32_t k = 0; k < NKEYS; k++) {
				uint64_t kk = (k & 1 ? (uint64_t)1 << 47 : 0x10000) + (uint64_t)(k >> 1) * 16;
				p = hmap_find(&m, kk);
				MODEL_CHECK(live[k] ? p && *p == val[k] : !p, "step %d: key %" PRIu64, step, kk);
			}
	}
	ck_assert_int_eq(hmap_insert(&m, UINT64_MAX, 1), -EINVAL);
	ck_assert_ptr_null(hmap_find(&m, UINT64_MAX));
	ck_assert_int_eq(hmap_remove(&m, UINT64_MAX, &v), -ENOENT);
	hmap_destroy(&m);
}
END_TEST

/*
 * A table past 2 MiB of slots (its own mapping, lib/hashmap.c HMAP_HUGE):
 * every key found after the growths, then every key removed, down to none.
 */
TEST(hashmap, hmap_huge_table)
{
	enum { NKEYS = 200000 };	/* 2^18 slots of 16 bytes: 4 MiB */
	struct hmap m;
	uint64_t v, *p;

	hmap_init(&m);
	for (uint64_t k = 0; k < NKEYS; k++)
		MODEL_CHECK(!hmap_insert(&m, k << 12, k), "insert %" PRIu64, k);
	ck_assert_uint_ge((m.mask + 1) * sizeof(struct hmap_slot), 2u << 20);
	for (uint64_t k = 0; k < NKEYS; k++) {
		p = hmap_find(&m, k << 12);
		MODEL_CHECK(p && *p == k, "find %" PRIu64, k);
	}
	ck_assert_ptr_null(hmap_find(&m, (uint64_t)NKEYS << 12));
	for (uint64_t k = 0; k < NKEYS; k++) {
		MODEL_CHECK(!hmap_remove(&m, k << 12, &v) && v == k, "remove %" PRIu64, k);
	}
	ck_assert_uint_eq(m.count, 0);
	ck_assert_ptr_null(hmap_find(&m, 0));
	hmap_destroy(&m);
}
END_TEST

/* Each table draws its own key: the same key lands on other hashes, so a
 * file cannot aim at one table's buckets by knowing another's. */
TEST(hashmap, hmap_keys_differ)
{
	struct hmap a, b;
	int same = 0;

	hmap_init(&a);
	hmap_init(&b);
	ck_assert(a.key[0] != b.key[0] || a.key[1] != b.key[1]);
	for (uint64_t k = 0; k < 64; k++)
		same += hmap_hash(&a, k) == hmap_hash(&b, k);
	ck_assert_int_lt(same, 2);
	hmap_destroy(&a);
	hmap_destroy(&b);
}
END_TEST

/* A new table cannot fail and holds no slots of its own: it answers
 * find, remove and prefetch, is destroyed without an insert, and a hash
 * taken before the first insert (the recorder's collector hashes ahead)
 * still finds the key after the table grew. */
TEST(hashmap, hmap_empty_table)
{
	struct hmap m;
	uint64_t h, v;

	hmap_init(&m);
	h = hmap_hash(&m, 42);
	ck_assert_ptr_null(hmap_find(&m, 42));
	ck_assert_int_eq(hmap_remove(&m, 42, &v), -ENOENT);
	hmap_prefetch(&m, h);
	ck_assert_uint_eq(m.count, 0);
	ck_assert_int_eq(hmap_insert_hashed(&m, 42, h, 7), 0);
	for (uint64_t k = 100; k < 200; k++)
		ck_assert_int_eq(hmap_insert(&m, k, k), 0);
	ck_assert_uint_eq(*hmap_find(&m, 42), 7);
	ck_assert_int_eq(hmap_remove_hashed(&m, 42, h, &v), 0);
	ck_assert_uint_eq(v, 7);
	hmap_destroy(&m);
	hmap_init(&m);
	hmap_destroy(&m);
}
END_TEST

static const struct test_case cases[] = {
	{ .name = "hashmap", .timeout = 120 },
};

int main(void)
{
	return test_run_suite(test_suite("hashmap", cases, ARRAY_SIZE(cases)));
}
