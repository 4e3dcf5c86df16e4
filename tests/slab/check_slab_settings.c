// SPDX-License-Identifier: MIT
/*
 * Check suite for slab/settings.c and slab/stats.c through the public API:
 * settings named before their cache exists are applied at creation (by
 * kmem_cache_create name, by kmalloc name, by size), a setting naming one
 * cache beats one for every kmalloc cache whatever the order, defaults come
 * from one place, slabinfo writes are settings too, the parser's errors,
 * the report of settings that named no cache, and the statistics call
 * counting exactly the operations done.
 *
 * Each test runs in its own process (CK_FORK), so settings start empty.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "uslab/page_alloc.h"
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "tests/suite.h"

/* Builds where caches have magazines at all (not nocache, not debug). */
static bool have_magazines(void)
{
	return IS_ENABLED(CONFIG_PERCPU_CACHE) && !IS_ENABLED(CONFIG_SLAB_DEBUG_ON);
}

static void tunables(struct kmem_cache *s, unsigned int *limit, unsigned int *batch)
{
	struct kmem_cache_stats st;

	kmem_cache_get_stats(s, &st);
	*limit = st.limit;
	*batch = st.batchcount;
}

TEST(settings, test_named_before_created)
{
	unsigned int limit, batch;
	struct kmem_cache *s;

	if (!have_magazines()) {
		ck_assert_int_eq(kmem_cache_setting("mag_size.conn_cache=64"), -EOPNOTSUPP);
		return;
	}
	ck_assert_int_eq(kmem_cache_setting("mag_size.conn_cache=64"), 0);
	ck_assert_int_eq(kmem_cache_setting("depot_limit.conn_cache=3"), 0);
	ck_assert_ptr_null(kmem_cache_find("conn_cache"));
	s = kmem_cache_create("conn_cache", 200, 0, 0, NULL);
	ck_assert_ptr_nonnull(s);
	tunables(s, &limit, &batch);
	ck_assert_uint_eq(limit, 64);
	ck_assert_uint_eq(batch, pcp_default_batchcount(64));
	ck_assert_uint_eq(pcp_cache_get_depot_limit(kmem_cache_pcp(s)), 3);
	ck_assert_uint_eq(kmem_cache_settings_unmatched(NULL, 0), 0);

	/* a later setting applies to the live cache at once */
	ck_assert_int_eq(kmem_cache_setting("batch.conn_cache=5"), 0);
	tunables(s, &limit, &batch);
	ck_assert_uint_eq(limit, 64);
	ck_assert_uint_eq(batch, 5);
	kmem_cache_destroy(s);
}
END_TEST

TEST(settings, test_kmalloc_by_name_and_size)
{
	unsigned int limit, batch;
	void *p;

	if (!have_magazines())
		return;
	/* specific first, general after: the specific one still wins */
	ck_assert_int_eq(kmem_cache_setting("mag_size.kmalloc-256=7"), 0);
	ck_assert_int_eq(kmem_cache_setting("mag_size.100=9"), 0);	/* kmalloc-128 */
	ck_assert_int_eq(kmem_cache_setting("mag_size=24"), 0);
	ck_assert_int_eq(kmem_cache_setting("batch=6"), 0);
	p = kmalloc(200, GFP_KERNEL);	/* creates kmalloc-256 if need be */
	ck_assert_ptr_nonnull(p);
	kfree(p);
	tunables(kmalloc_slab(256), &limit, &batch);
	ck_assert_uint_eq(limit, 7);
	ck_assert_uint_eq(batch, 6);
	tunables(kmalloc_slab(100), &limit, &batch);
	ck_assert_uint_eq(limit, 9);
	ck_assert_uint_eq(batch, 6);
	tunables(kmalloc_slab(64), &limit, &batch);
	ck_assert_uint_eq(limit, 24);
	ck_assert_uint_eq(batch, 6);
	/* batch never above the magazine */
	ck_assert_int_eq(kmem_cache_setting("mag_size.kmalloc-1k=4"), 0);
	tunables(kmalloc_slab(1000), &limit, &batch);
	ck_assert_uint_eq(limit, 4);
	ck_assert_uint_eq(batch, 4);
	/* 0 is the default, from the one table */
	ck_assert_int_eq(kmem_cache_setting("mag_size.kmalloc-1k=0"), 0);
	ck_assert_int_eq(kmem_cache_setting("batch=0"), 0);
	tunables(kmalloc_slab(1000), &limit, &batch);
	ck_assert_uint_eq(limit, 24);	/* mag_size=24 for every kmalloc cache */
	ck_assert_uint_eq(batch, pcp_default_batchcount(24));
	ck_assert_uint_eq(kmem_cache_settings_unmatched(NULL, 0), 0);
}
END_TEST

TEST(settings, test_parse_errors)
{
	struct kmem_cache_setting set;
	char buf[128];

	ck_assert_int_eq(kmem_cache_setting_parse("bogus=1", &set), -ENOENT);
	ck_assert_int_eq(kmem_cache_setting_parse("trim=1", &set), -ENOENT);
	if (!have_magazines()) {
		ck_assert_int_eq(kmem_cache_setting_parse("mag_size=4", &set), -EOPNOTSUPP);
		return;
	}
	ck_assert_int_eq(kmem_cache_setting_parse("mag_size=abc", &set), -EINVAL);
	ck_assert_int_eq(kmem_cache_setting_parse("mag_size", &set), -EINVAL);
	ck_assert_int_eq(kmem_cache_setting_parse("mag_size.=3", &set), -EINVAL);
	ck_assert_int_eq(kmem_cache_setting_parse("mag_size=4097", &set), -ERANGE);
	ck_assert_int_eq(kmem_cache_setting_parse("mag_size=-1", &set), -ERANGE);
	ck_assert_int_eq(kmem_cache_setting_parse("mag_size.0=3", &set), -ERANGE);
	ck_assert_int_eq(kmem_cache_setting_parse("mag_size.99999999=3", &set), -ERANGE);
	ck_assert_int_eq(kmem_cache_setting_parse("depot_limit=-2", &set), -ERANGE);
	ck_assert_int_eq(kmem_cache_setting_parse("depot_limit=-1", &set), 0);
	ck_assert_int_eq(set.what, KMEM_TUNE_DEPOT_LIMIT);
	ck_assert_int_eq(set.value, -1);
	ck_assert_int_eq(kmem_cache_setting_parse("mag_size.64=32", &set), 0);
	ck_assert_str_eq(set.cache, "kmalloc-64");
	ck_assert_str_eq(kmem_cache_setting_str(&set, buf, sizeof(buf)), "mag_size.64=32");
	ck_assert_int_eq(kmem_cache_setting_parse("mag_size.65=32", &set), 0);
	ck_assert_str_eq(set.cache, kmalloc_info[kmalloc_index(65)].name);
	ck_assert_str_ne(set.cache, "kmalloc-64");
}
END_TEST

/*
 * One table of tunables (issue 21, item 2): the cache rows are
 * enum kmem_cache_tunable's, their bounds are the ones the text parser and
 * the parts parser apply, and a setting made from parsed parts equals the
 * one parsed from its text.
 */
TEST(settings, test_tunables_table_is_the_parsers_bounds)
{
	const struct uslab_tunable *mag = &uslab_tunables[KMEM_TUNE_MAG_SIZE];
	struct kmem_cache_setting a, b;
	char item[64], name[] = "mag_size.kmalloc-64=32", *nm, *cache, *val;
	long v;

	ck_assert_str_eq(uslab_tunables[KMEM_TUNE_MAG_SIZE].name, "mag_size");
	ck_assert_str_eq(uslab_tunables[KMEM_TUNE_BATCH].name, "batch");
	ck_assert_str_eq(uslab_tunables[KMEM_TUNE_DEPOT_LIMIT].name, "depot_limit");
	ck_assert_str_eq(uslab_tunables[KMEM_TUNE_DEBUG].name, "slab_debug");
	ck_assert_ptr_eq(uslab_tunable_find("batch", 5), &uslab_tunables[KMEM_TUNE_BATCH]);
	ck_assert_ptr_null(uslab_tunable_find("batc", 4));
	ck_assert_int_eq(uslab_tunable_parse(mag, "4096", &v), 0);
	ck_assert_int_eq(v, mag->max);
	snprintf(item, sizeof(item), "%ld", mag->max + 1);
	ck_assert_int_eq(uslab_tunable_parse(mag, item, &v), -ERANGE);
	ck_assert_int_eq(uslab_tunable_parse(mag, NULL, &v), -EINVAL);
	ck_assert_int_eq(uslab_tunable_parse(&uslab_tunables[USLAB_OPT_STATS], NULL, &v), 0);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(uslab_tunable_parse(&uslab_tunables[USLAB_OPT_STATS], "off", &v), 0);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(uslab_tunable_parse(&uslab_tunables[USLAB_OPT_REAPER_MS], "0", &v), 0);
	ck_assert_int_eq(uslab_tunable_parse(&uslab_tunables[USLAB_OPT_REAPER_MS], "5", &v),
			 -ERANGE);
	ck_assert_int_eq(uslab_tunables[USLAB_OPT_REAPER_MS].def, PCP_REAPER_PERIOD_MS);
	uslab_tunable_split(name, &nm, &cache, &val);
	ck_assert_str_eq(nm, "mag_size");
	ck_assert_str_eq(cache, "kmalloc-64");
	ck_assert_str_eq(val, "32");
	if (!have_magazines())
		return;
	ck_assert_int_eq(kmem_cache_setting_make(&a, KMEM_TUNE_MAG_SIZE, "64", 2, 32), 0);
	ck_assert_int_eq(kmem_cache_setting_parse("mag_size.64=32", &b), 0);
	ck_assert_mem_eq(&a, &b, sizeof(a));
	ck_assert_int_eq(kmem_cache_setting_make(&a, KMEM_TUNE_MAG_SIZE, NULL, 0, mag->max + 1),
			 -ERANGE);
	ck_assert_int_eq(kmem_cache_setting_make(&a, KMEM_TUNE_DEPOT_LIMIT, NULL, 0, -1), 0);
	ck_assert_int_eq(kmem_cache_setting_make(&a, KMEM_TUNE_DEPOT_LIMIT, NULL, 0,
						 USLAB_DEPOT_BY_SIZE), -ERANGE);
}
END_TEST

static volatile int storing;

static void *store_settings(void *arg)
{
	struct kmem_cache_setting set;

	(void)arg;
	memset(&set, 0, sizeof(set));
	set.what = KMEM_TUNE_DEBUG;	/* kept in order: every store takes the lock */
	strcpy(set.cache, "fork_store");
	while (storing) {
		kmem_cache_settings_clear();
		kmem_cache_setting_add(&set);
	}
	return NULL;
}

/*
 * settings_lock across fork(): a child forked while another thread holds
 * it must still store a setting (the fork handlers take it and the child
 * re-makes it). Before, the child could find it held forever.
 */
TEST(settings, test_settings_lock_survives_fork)
{
	pthread_t th;
	int hung = 0;

	storing = 1;
	ck_assert_int_eq(pthread_create(&th, NULL, store_settings, NULL), 0);
	for (int i = 0; i < 200 && !hung; i++) {
		int st;
		pid_t pid;

		slab_fork_prepare();	/* malloc/init.c's atfork handlers */
		pid = fork();
		if (!pid) {
			slab_fork_child();
			alarm(2);	/* a held lock: killed by SIGALRM */
			kmem_cache_settings_unmatched(NULL, 0);
			_exit(0);
		}
		slab_fork_parent();
		ck_assert_int_gt(pid, 0);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		hung = !WIFEXITED(st) || WEXITSTATUS(st);
	}
	storing = 0;
	pthread_join(th, NULL);
	ck_assert_msg(!hung, "a fork child found settings_lock held");
}
END_TEST

TEST(settings, test_unmatched_report)
{
	char buf[256];

	if (!have_magazines())
		return;
	ck_assert_int_eq(kmem_cache_setting("mag_size.nosuch=3"), 0);
	ck_assert_int_eq(kmem_cache_setting("batch.other=2"), 0);
	ck_assert_int_eq(kmem_cache_setting("mag_size=16"), 0);	/* general: never */
	ck_assert_uint_eq(kmem_cache_settings_unmatched(buf, sizeof(buf)), 2);
	ck_assert_str_eq(buf, "mag_size.nosuch=3, batch.other=2");
	kmem_cache_destroy(kmem_cache_create("other", 32, 0, 0, NULL));
	ck_assert_uint_eq(kmem_cache_settings_unmatched(buf, sizeof(buf)), 1);
	ck_assert_str_eq(buf, "mag_size.nosuch=3");
}
END_TEST

TEST(settings, test_slabinfo_write_is_a_setting)
{
	unsigned int limit, batch;
	struct kmem_cache *s;

	if (!have_magazines())
		return;
	s = kmem_cache_create("sw_cache", 64, 0, 0, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(slabinfo_write("sw_cache 40 10 0"), 0);
	tunables(s, &limit, &batch);
	ck_assert_uint_eq(limit, 40);
	ck_assert_uint_eq(batch, 10);
	/* a general setting afterwards does not undo it (not kmalloc anyway) */
	ck_assert_int_eq(kmem_cache_setting("mag_size.sw_cache=50"), 0);
	tunables(s, &limit, &batch);
	ck_assert_uint_eq(limit, 50);
	ck_assert_uint_eq(batch, 10);
	/* repeated writes replace, never fill the table */
	for (int i = 0; i < 200; i++)
		ck_assert_int_eq(slabinfo_write("sw_cache 40 10 0"), 0);
	kmem_cache_destroy(s);
}
END_TEST

TEST(settings, test_stats_count_operations)
{
	enum { N = 1000 };
	struct kmem_cache_stats st, before;
	struct page_alloc_stats ps;
	struct kmem_cache *s;
	static void *objs[N];
	char row[256];
	size_t n;

	s = kmem_cache_create("stats_cache", 48, 0, 0, NULL);
	ck_assert_ptr_nonnull(s);
	kmem_cache_get_stats(s, &before);
	for (int i = 0; i < N; i++)
		ck_assert_ptr_nonnull(objs[i] = kmem_cache_alloc(s, GFP_KERNEL));
	for (int i = 0; i < N; i++)
		kmem_cache_free(s, objs[i]);
	kmem_cache_get_stats(s, &st);
	kmem_cache_stats_sub(&st, &before);
	ck_assert_str_eq(st.name, "stats_cache");
	ck_assert_uint_eq(st.object_size, 48);
	ck_assert_uint_ge(st.nr_slabs_peak, (N + st.objects_per_slab - 1) / st.objects_per_slab);
	ck_assert_uint_eq(st.slab_bytes_peak,
			  st.nr_slabs_peak * st.pages_per_slab * PAGE_SIZE);
	if (st.flags & KMEM_CACHE_STATS_COUNTED) {
		ck_assert_uint_eq(st.allocs, N);
		ck_assert_uint_eq(st.frees, N);
	}
	if ((st.flags & KMEM_CACHE_STATS_MAGAZINES) &&
	    (st.flags & KMEM_CACHE_STATS_COUNTED) && kmem_cache_stats_enabled()) {
		ck_assert_uint_eq(st.alloc_hits + st.alloc_slow, N);
		ck_assert_uint_eq(st.free_hits + st.free_slow, N);
		ck_assert_uint_gt(st.refills, 0);
		ck_assert_uint_gt(st.alloc_hits, 0);
	}
	n = kmem_cache_stats_row(&st, row, sizeof(row));
	ck_assert_uint_eq(n, strlen(row));
	ck_assert_ptr_nonnull(strstr(row, "  stats_cache "));
	ck_assert(kmem_cache_stats_all(NULL, 0) >= 2);	/* kmem_cache and ours */
	page_alloc_get_stats(&ps);
	ck_assert_uint_ge(ps.bytes_allocated_peak, ps.bytes_allocated);
	ck_assert_uint_ge(ps.bytes_allocated_peak, st.slab_bytes_peak);
	page_alloc_reset_peak();
	page_alloc_get_stats(&ps);
	/* the peak counts blocks on per-CPU page lists, bytes_allocated not */
	ck_assert_uint_ge(ps.bytes_allocated_peak, ps.bytes_allocated);
	ck_assert_uint_le(ps.bytes_allocated_peak, ps.bytes_allocated + ps.bytes_pagelists);
	kmem_cache_destroy(s);
}
END_TEST

static const struct test_case cases[] = {
	{ .name = "settings" },
};

int main(void)
{
	/* settings are process-wide: every test starts from none */
	return test_run_suite_fork(test_suite("slab_settings", cases, ARRAY_SIZE(cases)),
				   CK_FORK);
}
