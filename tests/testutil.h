/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the tests (libc only, so the integration tests of
 * tests/malloc/ may include it too): a seed that can be set from the
 * environment to repeat a randomized run, a small seedable generator, the
 * process's RSS.
 */
#ifndef USLAB_TESTS_TESTUTIL_H
#define USLAB_TESTS_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/*
 * The seed of a randomized test: $@env if set, else time ^ pid. Printed
 * once so that a failing run can be repeated.
 */
static inline unsigned long test_seed_from_env(const char *env, const char *suite)
{
	static unsigned long seed;
	const char *val;

	if (seed)
		return seed;
	val = getenv(env);
	seed = val ? strtoul(val, NULL, 0) :
		     (unsigned long)time(NULL) ^ (unsigned long)getpid();
	if (!seed)
		seed = 1;
	fprintf(stderr, "%s: seed %lu (set %s to repeat)\n", suite, seed, env);
	return seed;
}

/* The resident set of this process in bytes (/proc/self/statm, through
 * stdio: the allocator under test serves it), 0 if unreadable. */
static inline size_t test_rss_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	fclose(f);
	return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* Marsaglia's xorshift64 (13, 7, 17): the generator whose sequences the
 * trace and malloc tests' seeds name; per caller state, never 0. */
static inline uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* xorshift64*: small, seedable, per caller state */
static inline uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

#endif /* USLAB_TESTS_TESTUTIL_H */
