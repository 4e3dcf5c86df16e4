// SPDX-License-Identifier: MIT
/*
 * faults SEED OPS: a randomized malloc workload for fault injection
 * (tests/malloc/test_malloc_faults.sh runs it preloaded, with USLAB_OPTIONS
 * fail_slab=... and fail_page=... bounded by their times field).
 *
 * Phase 0 warms up (OPS operations: caches and magazines come into
 * being, which uslab then keeps). Phase 1, OPS random operations on 2048 slots (malloc, calloc, realloc,
 * posix_memalign, free; 1 B .. 1 MiB): every block is filled with a
 * pattern and checked before it is freed or moved; every failure must be
 * NULL with errno ENOMEM, a failed realloc must leave the old block
 * intact, a failed posix_memalign must return ENOMEM and leave errno
 * alone. Phase 2: free everything and trim; the bytes uslab holds for
 * blocks (mallinfo2 uordblks) must equal those before phase 1 (nothing
 * leaked by a failure path). Phase 3: once injection has run out
 * (times), OPS more operations must not fail at all, and the balance
 * must hold again.
 *
 * Prints "failures N" (phases 0 and 1) and exits 0, or names the broken rule
 * and exits 1.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/testutil.h"

#define SLOTS	2048
/*
 * Magazine memory uslab keeps after a trim varies by a page with the
 * history (seen without any injection: 151552 or 155648 bytes after the
 * same phase), more since classes up to 256 KiB are cached per CPU and
 * per-CPU page lists hold pages (12288 bytes seen): the balance allows 16
 * pages. A failure path that leaked would pin a slab page or a large block
 * per failure, and each run has hundreds of failures.
 */
#define SLACK	65536

static unsigned char *slot[SLOTS];
static size_t slot_size[SLOTS];
static unsigned char slot_fill[SLOTS];
static uint64_t rng;

static uint64_t xrnd(void)
{
	return xorshift64(&rng);
}

static size_t rnd_size(void)
{
	unsigned int r = (unsigned int)(xrnd() % 100);

	if (r < 70)
		return 1 + xrnd() % 512;
	if (r < 95)
		return 1 + xrnd() % 32768;
	return 1 + xrnd() % (1 << 20);
}

static int fail(const char *what, size_t size)
{
	fprintf(stderr, "faults: %s (size %zu, errno %d)\n", what, size, errno);
	exit(1);
}

static void fill(int i, unsigned char c)
{
	slot_fill[i] = c;
	memset(slot[i], c, slot_size[i]);
}

static void check(int i)
{
	for (size_t k = 0; k < slot_size[i]; k++)
		if (slot[i][k] != slot_fill[i])
			fail("block contents changed", slot_size[i]);
}

static void release(int i)
{
	if (!slot[i])
		return;
	check(i);
	free(slot[i]);
	slot[i] = NULL;
}

/* One random operation on a random slot. Return: 1 if it failed cleanly. */
static int step(void)
{
	int i = (int)(xrnd() % SLOTS), op = (int)(xrnd() % 5);
	size_t size = rnd_size();
	unsigned char c = (unsigned char)(1 + xrnd() % 255);
	void *p = NULL;
	int r;

	if (op == 4 || (slot[i] && op != 2)) {
		release(i);
		return 0;
	}
	errno = 0;
	switch (op) {
	case 0:
		p = malloc(size);
		break;
	case 1:
		p = calloc(1, size);
		if (p)
			for (size_t k = 0; k < size; k++)
				if (((unsigned char *)p)[k])
					fail("calloc block not zero", size);
		break;
	case 2:
		p = realloc(slot[i], size);
		if (!p) {
			if (errno != ENOMEM)
				fail("realloc failed without ENOMEM", size);
			if (slot[i])
				check(i);	/* the old block is intact */
			return 1;
		}
		if (slot[i]) {
			size_t keep = size < slot_size[i] ? size : slot_size[i];

			for (size_t k = 0; k < keep; k++)
				if (((unsigned char *)p)[k] != slot_fill[i])
					fail("realloc lost contents", size);
		}
		slot[i] = NULL;
		break;
	case 3:
		r = posix_memalign(&p, (size_t)16 << (xrnd() % 10), size);
		if (r) {
			if (r != ENOMEM || errno != 0)
				fail("posix_memalign failed without ENOMEM", size);
			return 1;
		}
		break;
	}
	if (!p) {
		if (errno != ENOMEM)
			fail("allocation failed without ENOMEM", size);
		return 1;
	}
	slot[i] = p;
	slot_size[i] = size;
	fill(i, c);
	return 0;
}

static size_t held(void)
{
	int i;

	for (i = 0; i < SLOTS; i++)
		release(i);
	malloc_trim(0);
	return mallinfo2().uordblks;
}

int main(int argc, char **argv)
{
	long ops = argc > 2 ? atol(argv[2]) : 100000, n, failures = 0, late = 0;
	size_t before, after;

	rng = (argc > 1 ? strtoull(argv[1], NULL, 10) : 1) * 2654435761u + 1;
	/* warm-up: every class's cache and magazines exist afterwards */
	for (n = 0; n < ops; n++)
		failures += step();
	before = held();
	for (n = 0; n < ops; n++)
		failures += step();
	after = held();
	if (after > before + SLACK) {
		fprintf(stderr, "faults: %zu bytes held after phase 1, %zu after phase 0\n",
			after, before);
		return 1;
	}
	for (n = 0; n < ops; n++)
		late += step();
	if (late)
		fail("allocations still fail after injection ran out", 0);
	after = held();
	if (after > before + SLACK) {
		fprintf(stderr, "faults: %zu bytes held after phase 3, %zu before\n",
			after, before);
		return 1;
	}
	printf("failures %ld\n", failures);
	return 0;
}
