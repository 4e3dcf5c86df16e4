/* SPDX-License-Identifier: MIT */
/*
 * An array that grows as an input fills it (the tools' tables of threads,
 * caches, live objects): doubling, the new entries zeroed, never beyond a
 * bound the caller sets from what the input may hold. Allocates: the
 * tools' part of lib/ (lib-tools-objs), never the allocator's.
 */
#ifndef USLAB_LIB_GROW_H
#define USLAB_LIB_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Grow *@p (*@n elements of @elem bytes, the new ones zeroed) to hold
 * @need, doubling from 1024, never beyond @limit.
 * Return: 0, -E2BIG past @limit, -ENOMEM. */
int grow_array(void **p, uint64_t *n, uint64_t need, size_t elem, uint64_t limit);

#endif /* USLAB_LIB_GROW_H */
