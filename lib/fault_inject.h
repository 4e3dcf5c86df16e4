/* SPDX-License-Identifier: MIT */
/*
 * Fault injection, as the kernel's lib/fault-inject.c behind failslab and
 * fail_page_alloc: a layer keeps one struct fault_attr and asks
 * should_fail() at its allocation entry point; a true answer makes that
 * allocation fail exactly as a real shortage would (NULL, errno ENOMEM).
 *
 *   probability  percent of eligible calls that fail (0..100)
 *   interval     only every interval-th call is eligible (1: each)
 *   times        failures left; -1 without limit; 0 stops injection
 *   space        bytes allowed through before failures may start
 *
 * Set from one string "probability[:interval[:times[:space]]]" (the
 * kernel's debugfs files in one item of USLAB_OPTIONS). The random
 * choice is a hash of a call counter: the same program with the same
 * options fails at the same calls when it runs single-threaded.
 *
 * Concurrency: should_fail() may run on any thread at once; the counters
 * are atomic, and @times never goes below 0.
 */
#ifndef USLAB_LIB_FAULT_INJECT_H
#define USLAB_LIB_FAULT_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/compiler.h"

struct fault_attr {
	bool enabled;		/* set by fault_attr_parse; read unlocked */
	unsigned int probability;
	unsigned long interval;
	long times;
	long space;
	unsigned long calls;	/* eligible calls seen */
	unsigned long injected;	/* failures injected */
};

/**
 * fault_attr_parse - configure @a from "P[:I[:T[:S]]]".
 * Return: 0, or -EINVAL naming nothing (the caller names the option).
 * Context: before the layer runs (USLAB_OPTIONS, from the constructor).
 */
int fault_attr_parse(struct fault_attr *a, const char *spec);

bool __should_fail(struct fault_attr *a, size_t size);

/* One load and a predictable branch when injection is off. */
static __always_inline bool should_fail(struct fault_attr *a, size_t size)
{
	if (likely(!__atomic_load_n(&a->enabled, __ATOMIC_RELAXED)))
		return false;
	return __should_fail(a, size);
}

#endif /* USLAB_LIB_FAULT_INJECT_H */
