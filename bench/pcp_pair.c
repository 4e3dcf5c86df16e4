// SPDX-License-Identifier: MIT
/*
 * pcp_pair: the cost of one kmem_cache_alloc + kmem_cache_free pair on the
 * hit path (and of kmalloc + kfree), in ns per pair, pinned to one CPU.
 * `make bench-pcp` runs it on this build and on the nocache preset built
 * alongside, interleaved, and counts the hit path's instructions.
 *
 *   pcp_pair [-n PAIRS] [-r ROUNDS] [-q]
 *
 * -q prints only "<mode> <ns per pair>" for kmem_cache (for scripts and
 * for callgrind, which counts the instructions of the fallback path).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "uslab/percpu.h"
#include "uslab/slab.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *volatile sink;

static double run_cache(struct kmem_cache *s, long pairs)
{
	double t0 = now_ns();
	long i;

	for (i = 0; i < pairs; i++) {
		void *p = kmem_cache_alloc(s, GFP_KERNEL);

		sink = p;
		kmem_cache_free(s, p);
	}
	return (now_ns() - t0) / (double)pairs;
}

static double run_kmalloc(long pairs)
{
	double t0 = now_ns();
	long i;

	for (i = 0; i < pairs; i++) {
		void *p = kmalloc(64, GFP_KERNEL);

		sink = p;
		kfree(p);
	}
	return (now_ns() - t0) / (double)pairs;
}

int main(int argc, char **argv)
{
	long pairs = 20000000;
	int rounds = 5, quiet = 0, opt, r;
	double best_cache = 1e30, best_kmalloc = 1e30, t;
	struct kmem_cache *s;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "n:r:q")) != -1) {
		switch (opt) {
		case 'n':
			pairs = atol(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-n PAIRS] [-r ROUNDS] [-q]\n", argv[0]);
			return 2;
		}
	}
	if (pairs < 1 || rounds < 1) {
		fprintf(stderr, "pcp_pair: -n and -r must be positive\n");
		return 2;
	}
	/* one CPU: every pair hits the same magazine */
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &set);
	sched_setaffinity(0, sizeof(set), &set);

	s = kmem_cache_create("pcp-pair", 64, 0, 0, NULL);
	if (!s) {
		perror("kmem_cache_create");
		return 1;
	}
	run_cache(s, 100000);		/* warm: magazines loaded (fixed, so
					 * that runs differ by PAIRS only) */
	run_kmalloc(100000);
	for (r = 0; r < rounds; r++) {
		t = run_cache(s, pairs);
		if (t < best_cache)
			best_cache = t;
		if (quiet)
			continue;
		t = run_kmalloc(pairs);
		if (t < best_kmalloc)
			best_kmalloc = t;
	}
	if (quiet) {
		printf("%s %.2f\n", pcp_mode(), best_cache);
	} else {
		printf("percpu mode %s, %ld pairs x %d rounds, best round:\n",
		       pcp_mode(), pairs, rounds);
		printf("  kmem_cache_alloc + kmem_cache_free (64 B): %6.2f ns/pair\n",
		       best_cache);
		printf("  kmalloc(64) + kfree:                       %6.2f ns/pair\n",
		       best_kmalloc);
	}
	kmem_cache_destroy(s);
	return 0;
}
