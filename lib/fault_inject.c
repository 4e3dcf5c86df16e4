// SPDX-License-Identifier: MIT
/*
 * Fault injection (lib/fault_inject.h). No locks: atomic counters only.
 * Never allocates, never logs (called from allocation entry points).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include "lib/fault_inject.h"

/* A decimal number, with a leading '-' only where @neg_ok; ends at ':'. */
static int parse_field(const char **s, long *out, bool neg_ok)
{
	const char *p = *s;
	bool neg = false;
	long v = 0;

	if (*p == '-' && neg_ok)
		neg = true, p++;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (LONG_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (*p - '0');
	}
	if (*p && *p != ':')
		return -EINVAL;
	*s = *p ? p + 1 : p;
	*out = neg ? -v : v;
	return 0;
}

int fault_attr_parse(struct fault_attr *a, const char *spec)
{
	long f[4] = { 0, 1, -1, 0 };	/* probability, interval, times, space */
	const char *s = spec;
	int i;

	if (!s || !*s)
		return -EINVAL;
	for (i = 0; i < 4 && *s; i++)
		if (parse_field(&s, &f[i], i == 2))
			return -EINVAL;
	if (*s || f[0] > 100 || f[1] < 1 || f[2] < -1)
		return -EINVAL;
	a->probability = (unsigned int)f[0];
	a->interval = (unsigned long)f[1];
	a->times = f[2];
	a->space = f[3];
	a->calls = 0;
	a->injected = 0;
	__atomic_store_n(&a->enabled, f[0] > 0 && f[2] != 0, __ATOMIC_RELEASE);
	return 0;
}

/* splitmix64: a well-mixed value for the n-th call. */
static uint64_t fault_hash(uint64_t n)
{
	uint64_t z = n * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

bool __should_fail(struct fault_attr *a, size_t size)
{
	unsigned long n;
	long left, room;

	/* the first @space bytes pass */
	room = __atomic_load_n(&a->space, __ATOMIC_RELAXED);
	while (room > 0) {
		if (__atomic_compare_exchange_n(&a->space, &room,
						room > (long)size ? room - (long)size : 0,
						false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return false;
	}
	n = __atomic_add_fetch(&a->calls, 1, __ATOMIC_RELAXED);
	if (a->interval > 1 && n % a->interval)
		return false;
	if (a->probability < 100 && fault_hash(n) % 100 >= a->probability)
		return false;
	left = __atomic_load_n(&a->times, __ATOMIC_RELAXED);
	do {
		if (left == 0)
			return false;
		if (left < 0)
			break;
	} while (!__atomic_compare_exchange_n(&a->times, &left, left - 1, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	if (left == 1)
		__atomic_store_n(&a->enabled, false, __ATOMIC_RELAXED);
	__atomic_add_fetch(&a->injected, 1, __ATOMIC_RELAXED);
	return true;
}
