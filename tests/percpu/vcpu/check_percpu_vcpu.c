// SPDX-License-Identifier: MIT
/*
 * The simulator's library (libuslab-core-vcpu.a, built with USLAB_VCPU=1):
 * virtual CPUs named by the caller and a virtual clock. Two runs of the
 * same operation sequence must give identical statistics (per cache, per
 * CPU, slab and page counts); a different sequence must not.
 *
 * Each run happens in a fresh child process (fork before the allocator is
 * touched) and sends its numbers back through a pipe.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/cpuclock.h"
#include "uslab/page_alloc.h"
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "slab/internal.h"
#include "tests/suite.h"

#define NR_VCPUS	8
#define MAX_LIVE	4096

struct result {
	uint64_t stat[2][NR_VCPUS][NR_PCP_STATS];
	uint64_t cached[2], slabs[2], inuse[2], depot_full[2];
	uint64_t bytes_allocated;
	int magazines;		/* the caches have magazines (not bypassed) */
	char mode[16];
};

static void run_sequence(unsigned int seed, struct result *res)
{
	static void *live[MAX_LIVE];
	static struct kmem_cache *owner[MAX_LIVE];
	struct kmem_cache *cache[2];
	struct page_alloc_stats pst;
	unsigned int nlive = 0, step, i, c;
	uint64_t now = 0;

	memset(res, 0, sizeof(*res));
	ck_assert_int_eq(pcp_vcpu_set_nr(NR_VCPUS), 0);
	cache[0] = kmem_cache_create("vc-small", 48, 0, 0, NULL);
	cache[1] = kmem_cache_create("vc-big", 700, 0, 0, NULL);
	ck_assert_ptr_nonnull(cache[0]);
	ck_assert_ptr_nonnull(cache[1]);
	ck_assert_int_eq(kmem_cache_set_tunables(cache[1], 12, 4, 0), 0);

	for (step = 0; step < 60000; step++) {
		unsigned int r = (unsigned int)rand_r(&seed);

		ck_assert_int_eq(uslab_vcpu_set((int)(r % NR_VCPUS)), 0);
		if (((r >> 4) % 3) && nlive < MAX_LIVE) {
			struct kmem_cache *s = cache[(r >> 8) & 1];

			live[nlive] = kmem_cache_alloc(s, GFP_KERNEL);
			ck_assert_ptr_nonnull(live[nlive]);
			owner[nlive++] = s;
		} else if (nlive) {
			unsigned int k = (r >> 9) % nlive;

			kmem_cache_free(owner[k], live[k]);
			live[k] = live[--nlive];
			owner[k] = owner[nlive];
		}
		/* phases: a burst, then quiet periods the reaper trims */
		now += (step / 5000) % 2 ? 2000000 : 20000;
		ck_assert_int_eq(uslab_vclock_set(now), 0);
	}
	ck_assert_int_eq(uslab_vclock_set(now + 3ull * 10000000000ull), 0);

	for (c = 0; c < 2; c++) {
		struct pcp_stats st;
		unsigned long full;

		res->slabs[c] = cache[c]->nr_slabs;
		res->inuse[c] = cache[c]->nr_inuse;
		if (!IS_ENABLED(CONFIG_PERCPU_CACHE)) {
			ck_assert_ptr_null(cache[c]->pcp);
			continue;
		}
		ck_assert_ptr_nonnull(cache[c]->pcp);
		/* SLAB_DEBUG_ON (debug preset): every cache bypasses them */
		res->magazines = !pcp_cache_is_bypass(cache[c]->pcp);
		for (i = 0; i < NR_VCPUS; i++) {
			pcp_cache_stats(cache[c]->pcp, (int)i, &st);
			memcpy(res->stat[c][i], st.v, sizeof(st.v));
		}
		res->cached[c] = pcp_cache_objects(cache[c]->pcp, &full);
		res->depot_full[c] = full;
		/* conservation: slab layer's inuse = live + cached */
		ck_assert_uint_eq(res->inuse[c], res->cached[c] +
				  ({ unsigned int n = 0, j;
				     for (j = 0; j < nlive; j++)
					     n += owner[j] == cache[c];
				     n; }));
	}
	page_alloc_get_stats(&pst);
	res->bytes_allocated = pst.bytes_allocated;
	snprintf(res->mode, sizeof(res->mode), "%s", pcp_mode());
}

/* Run in a child; Return: 0 and *res, or -1. */
static int run_in_child(unsigned int seed, struct result *res)
{
	int fds[2], status;
	pid_t pid;
	ssize_t n, got = 0;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static struct result r;

		close(fds[0]);
		run_sequence(seed, &r);
		if (write(fds[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], (char *)res + got, sizeof(*res) - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	       got == (ssize_t)sizeof(*res) ? 0 : -1;
}

TEST(core, test_vcpu_mode_and_api)
{
	ck_assert_str_eq(pcp_mode(), IS_ENABLED(CONFIG_PERCPU_CACHE) ? "vcpu" : "off");
	ck_assert_int_eq(uslab_vcpu_set(-1), -EINVAL);
	ck_assert_int_eq(uslab_vcpu_set((int)pcp_nr_cpu_ids()), -EINVAL);
	ck_assert_int_eq(uslab_vcpu_set(0), 0);
	ck_assert_int_eq(uslab_vclock_set(100), 0);
	ck_assert_int_eq(uslab_vclock_set(50), -EINVAL);	/* never backwards */
	ck_assert(!pcp_reaper_running());
}
END_TEST

TEST(core, test_vcpu_deterministic)
{
	static struct result a, b, other;
	uint64_t hits = 0, refills = 0, depot = 0, drains = 0;
	unsigned int i, c;

	ck_assert_int_eq(run_in_child(42, &a), 0);
	ck_assert_int_eq(run_in_child(42, &b), 0);
	ck_assert_msg(!memcmp(&a, &b, sizeof(a)),
		      "two runs of the same sequence gave different statistics");
	if (!IS_ENABLED(CONFIG_PERCPU_CACHE)) {
		ck_assert_str_eq(a.mode, "off");
		return;
	}
	ck_assert_str_eq(a.mode, "vcpu");
	for (c = 0; c < 2; c++) {
		for (i = 0; i < NR_VCPUS; i++) {
			hits += a.stat[c][i][PCP_STAT_ALLOC_HIT];
			refills += a.stat[c][i][PCP_STAT_REFILL];
			depot += a.stat[c][i][PCP_STAT_DEPOT_GET];
			drains += a.stat[c][i][PCP_STAT_DRAIN];
		}
	}
	/* the sequence exercises every part of the policy */
	if (IS_ENABLED(CONFIG_PERCPU_STATS) && a.magazines) {
		ck_assert_uint_gt(hits, 1000);
		ck_assert_uint_gt(refills, 0);
		/* a depot limit of 0 (nocache_defconfig): no magazine from it */
		if (CONFIG_PERCPU_DEPOT_LIMIT)
			ck_assert_uint_gt(depot, 0);
		else
			ck_assert_uint_eq(depot, 0);
		if (IS_ENABLED(CONFIG_PERCPU_REAPER))
			ck_assert_uint_gt(drains, 0);	/* idle CPUs drained by the clock */
	}
	/* every CPU saw work: the virtual CPU really selects the magazines */
	for (i = 0; IS_ENABLED(CONFIG_PERCPU_STATS) && a.magazines && i < NR_VCPUS; i++)
		ck_assert_uint_gt(a.stat[0][i][PCP_STAT_ALLOC_SLOW] +
				  a.stat[0][i][PCP_STAT_ALLOC_HIT], 0);
	/* and the comparison can fail: another sequence differs */
	ck_assert_int_eq(run_in_child(43, &other), 0);
	ck_assert(memcmp(&a, &other, sizeof(a)) != 0);
}
END_TEST

static const struct test_case cases[] = {
	{ .name = "core", .timeout = 120 },
};

int main(void)
{
	return test_run_suite(test_suite("percpu_vcpu", cases, ARRAY_SIZE(cases)));
}
