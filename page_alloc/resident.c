// SPDX-License-Identifier: MIT
/*
 * Pages made resident ahead of their first write (page_alloc_populate()) and the
 * question whether one already is (page_alloc_resident(), page_alloc_residency()): the slab layer asks
 * both for the fresh objects of classes whose program writes its blocks
 * (docs/page_alloc.md "Pages populated ahead"). No lock; never calls
 * malloc.
 */
#include <errno.h>
#include <sys/mman.h>
#include "page_alloc/internal.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

/* cleared when the kernel does not know MADV_POPULATE_WRITE */
static int populate_ok = 1;
static unsigned long pages_populated;

bool page_alloc_resident(const void *addr)
{
	unsigned char vec = 0;

	return !page_alloc_residency(addr, PAGE_SIZE, &vec) && (vec & 1);
}

int page_alloc_residency(const void *addr, size_t len, unsigned char *vec)
{
	if (mincore((void *)((uintptr_t)addr & PAGE_MASK), len, vec))
		return -errno;	/* ENOMEM: not all mapped */
	return 0;
}

int page_alloc_populate(void *addr, size_t len)
{
	if (!__atomic_load_n(&populate_ok, __ATOMIC_RELAXED))
		return -EOPNOTSUPP;
	if (madvise(addr, len, MADV_POPULATE_WRITE)) {
		int err = errno;

		if (err == EINVAL)
			__atomic_store_n(&populate_ok, 0, __ATOMIC_RELAXED);
		return -err;
	}
	__atomic_fetch_add(&pages_populated, len >> PAGE_SHIFT, __ATOMIC_RELAXED);
	return 0;
}

unsigned long page_alloc_populated(void)
{
	return __atomic_load_n(&pages_populated, __ATOMIC_RELAXED);
}
