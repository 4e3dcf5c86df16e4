// SPDX-License-Identifier: MIT
/*
 * lib/grow.c: an array that grows zeroed, up to a bound (lib/grow.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow.h"

int grow_array(void **p, uint64_t *n, uint64_t need, size_t elem, uint64_t limit)
{
	uint64_t cap = *n ? *n : 1024;
	void *np;

	if (need <= *n)
		return 0;
	if (need > limit)
		return -E2BIG;
	while (cap < need)
		cap *= 2;
	if (cap > limit)
		cap = limit;
	np = realloc(*p, cap * elem);
	if (!np)
		return -ENOMEM;
	memset((char *)np + *n * elem, 0, (cap - *n) * elem);
	*p = np;
	*n = cap;
	return 0;
}
