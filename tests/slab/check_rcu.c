// SPDX-License-Identifier: MIT
/*
 * Check suite for slab/'s RCU: readers of a SLAB_TYPESAFE_BY_RCU cache never
 * see their object's slab unmapped or retyped while other threads free and
 * shrink; kfree_rcu() frees only after a grace period; slabinfo walks the
 * cache list while other threads create and destroy caches.
 *
 * White-box: reads struct kmem_cache and struct page to see what is freed.
 */
#define _LGPL_SOURCE	/* URCU_TLS(urcu_memb_reader).registered */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <urcu/urcu-memb.h>
#include "slab/internal.h"
#include "tests/suite.h"

/* Objects handed out by @s's slab layer and not sitting in a magazine. */
static unsigned long live_objects(struct kmem_cache *s)
{
	unsigned long cached = s->pcp ? pcp_cache_objects(s->pcp, NULL) : 0;

	return READ_ONCE(s->nr_inuse) - cached;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------ */
/* SLAB_TYPESAFE_BY_RCU */

#define TS_MAGIC	0x7e57ab1eUL
#define TS_SLOTS	64
#define TS_READERS	2
#define TS_WRITERS	2
#define TS_WRITER_OPS	40000

struct ts_obj {
	unsigned long magic;	/* set by the ctor, never changed */
	unsigned long seq;
	char pad[48];
};

static struct kmem_cache *ts_cache;
static struct ts_obj *ts_slot[TS_SLOTS];
static int ts_stop;
static unsigned long ts_reads;

static void ts_ctor(void *p)
{
	struct ts_obj *o = p;

	o->magic = TS_MAGIC;
	o->seq = 0;
}

static void *ts_reader(void *arg)
{
	unsigned long reads = 0, i = (unsigned long)arg;

	urcu_memb_register_thread();
	while (!__atomic_load_n(&ts_stop, __ATOMIC_ACQUIRE)) {
		struct ts_obj *o;
		struct page *slab;
		int k;

		urcu_memb_read_lock();
		o = __atomic_load_n(&ts_slot[i++ % TS_SLOTS], __ATOMIC_ACQUIRE);
		if (o) {
			/*
			 * The object may be freed and reused meanwhile, but its
			 * memory stays a mapped ts_obj of this cache until we
			 * leave the read-side section.
			 */
			for (k = 0; k < 50; k++) {
				ck_assert_uint_eq(READ_ONCE(o->magic), TS_MAGIC);
				(void)READ_ONCE(o->seq);
			}
			slab = compound_head(virt_to_page(o));
			ck_assert(PageFlag(slab, PG_slab));
			ck_assert_ptr_eq(slab->slab_cache, ts_cache);
			ck_assert_uint_eq(READ_ONCE(o->magic), TS_MAGIC);
			reads++;
		}
		urcu_memb_read_unlock();
	}
	urcu_memb_unregister_thread();
	__atomic_fetch_add(&ts_reads, reads, __ATOMIC_RELAXED);
	return NULL;
}

static void *ts_writer(void *arg)
{
	unsigned long seed = (unsigned long)arg * 7919 + 1, i;

	for (i = 0; i < TS_WRITER_OPS; i++) {
		struct ts_obj *o = kmem_cache_alloc(ts_cache, GFP_KERNEL), *old;

		ck_assert_ptr_nonnull(o);
		ck_assert_uint_eq(o->magic, TS_MAGIC);
		o->seq = i;
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		old = __atomic_exchange_n(&ts_slot[(seed >> 33) % TS_SLOTS], o,
					  __ATOMIC_ACQ_REL);
		/* Freed at once, no grace period: TYPESAFE_BY_RCU allows it. */
		if (old)
			kmem_cache_free(ts_cache, old);
		/* Bursts of frees that empty whole slabs, then give them back. */
		if (i % 2000 == 1999) {
			unsigned int k;

			for (k = 0; k < TS_SLOTS; k++) {
				old = __atomic_exchange_n(&ts_slot[k], NULL,
							  __ATOMIC_ACQ_REL);
				if (old)
					kmem_cache_free(ts_cache, old);
			}
			kmem_cache_shrink(ts_cache);
			page_alloc_trim();
		}
	}
	return NULL;
}

TEST(rcu, test_typesafe_by_rcu_reader)
{
	pthread_t r[TS_READERS], w[TS_WRITERS];
	struct page_alloc_stats st;
	unsigned long i, frees0, discarded;
	unsigned int order;
	struct ts_obj *old;

	/* Every free block goes back to the OS at once: reading an unmapped
	 * (zeroed) slab would show a wrong magic. */
	page_alloc_set_resident_free(0);
	ts_cache = kmem_cache_create("ts-rcu", sizeof(struct ts_obj), 0,
				     SLAB_TYPESAFE_BY_RCU, ts_ctor);
	ck_assert_ptr_nonnull(ts_cache);
	page_alloc_get_stats(&st);
	frees0 = st.frees[ts_cache->order];
	for (i = 0; i < TS_READERS; i++)
		pthread_create(&r[i], NULL, ts_reader, (void *)(i * 17));
	for (i = 0; i < TS_WRITERS; i++)
		pthread_create(&w[i], NULL, ts_writer, (void *)i);
	for (i = 0; i < TS_WRITERS; i++)
		pthread_join(w[i], NULL);
	__atomic_store_n(&ts_stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < TS_READERS; i++)
		pthread_join(r[i], NULL);
	ck_assert_uint_gt(ts_reads, 0);
	/* Slabs really went back to page_alloc during the run. */
	ck_assert_uint_gt(ts_cache->slabs_freed, 0);

	for (i = 0; i < TS_SLOTS; i++) {
		old = ts_slot[i];
		if (old)
			kmem_cache_free(ts_cache, old);
		ts_slot[i] = NULL;
	}
	ck_assert_int_eq(kmem_cache_shrink(ts_cache), 0);
	discarded = ts_cache->slabs_freed;
	order = ts_cache->order;
	kmem_cache_destroy(ts_cache);
	/* destroy waited for the grace periods: every slab is back. */
	page_alloc_get_stats(&st);
	ck_assert_uint_ge(st.frees[order] - frees0, discarded);
}
END_TEST

/* A slab given back waits for readers: pinned by one read-side section. */
TEST(rcu, test_typesafe_slab_waits_for_reader)
{
	struct kmem_cache *s;
	struct ts_obj *o;
	struct page *slab;

	page_alloc_set_resident_free(0);
	s = kmem_cache_create("ts-pin", sizeof(struct ts_obj), 0,
			      SLAB_TYPESAFE_BY_RCU, ts_ctor);
	o = kmem_cache_alloc(s, GFP_KERNEL);
	slab = compound_head(virt_to_page(o));

	urcu_memb_register_thread();
	urcu_memb_read_lock();
	kmem_cache_free(s, o);
	ck_assert_int_eq(kmem_cache_shrink(s), 0);
	ck_assert(PageFlag(slab, PG_rcu));
	sleep_ms(50);
	/* Still ours: no grace period can end while we are inside. */
	ck_assert(PageFlag(slab, PG_slab) && PageFlag(slab, PG_rcu));
	ck_assert_ptr_eq(slab->slab_cache, s);
	ck_assert_uint_eq(READ_ONCE(o->magic), TS_MAGIC);
	urcu_memb_read_unlock();

	urcu_memb_barrier();
	/* Back in page_alloc: neither a slab nor waiting any more. */
	ck_assert(!PageFlag(slab, PG_slab) && !PageFlag(slab, PG_rcu));
	urcu_memb_unregister_thread();
	kmem_cache_destroy(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* kfree_rcu */

struct rcu_thing {
	unsigned long a;
	struct rcu_head rcu;	/* not at offset 0 on purpose */
	unsigned long b;
};

TEST(rcu, test_kfree_rcu_grace_period)
{
	struct kmem_cache *k = kmalloc_slab(sizeof(struct rcu_thing));
	struct rcu_thing *t[100];
	struct page_alloc_stats st;
	struct rcu_thing *big;
	unsigned long before, big_frees;
	unsigned int order = (unsigned int)__builtin_ctzl(((size_t)1 << 20) >> PAGE_SHIFT);
	int i;

	for (i = 0; i < 100; i++) {
		t[i] = kmalloc(sizeof(struct rcu_thing), GFP_KERNEL);
		t[i]->a = t[i]->b = (unsigned long)i;
	}
	big = kmalloc((size_t)1 << 20, GFP_KERNEL);	/* a page block */
	ck_assert_ptr_nonnull(big);
	before = live_objects(k);
	page_alloc_get_stats(&st);
	/* The big block's own order's frees, not the bytes held: a thread
	 * that first runs on another CPU meanwhile (liburcu's, under load)
	 * takes that CPU's pages for itself (8 KiB seen beside another make
	 * check), and the bytes would miss the block's return by that. */
	big_frees = st.frees[order];

	urcu_memb_register_thread();
	urcu_memb_read_lock();
	for (i = 0; i < 100; i++)
		kfree_rcu(t[i], rcu);
	kfree_rcu(big, rcu);
	sleep_ms(50);
	/* Not before a grace period: we are still inside a reader. */
	ck_assert_uint_eq(live_objects(k), before);
	page_alloc_get_stats(&st);
	ck_assert_uint_eq(st.frees[order], big_frees);
	for (i = 0; i < 100; i++)
		ck_assert_uint_eq(t[i]->b, (unsigned long)i);
	urcu_memb_read_unlock();

	/* Yes after the barrier. */
	kfree_rcu_barrier();
	ck_assert_uint_eq(live_objects(k), before - 100);
	page_alloc_get_stats(&st);
	ck_assert_uint_ge(st.frees[order], big_frees + 1);
	urcu_memb_unregister_thread();

	/* The single-argument form waits inline. */
	t[0] = kmalloc(sizeof(struct rcu_thing), GFP_KERNEL);
	before = live_objects(k);
	kvfree_rcu_mightsleep(t[0]);
	ck_assert_uint_eq(live_objects(k), before - 1);
}
END_TEST

/* kfree_rcu on objects of a cache, then destroy: destroy waits for them. */
TEST(rcu, test_kfree_rcu_then_destroy)
{
	struct kmem_cache *s = kmem_cache_create("rcu-things",
						 sizeof(struct rcu_thing), 0, 0, NULL);
	int fds[2];
	char buf[256];
	ssize_t n;
	int i;

	for (i = 0; i < 50; i++) {
		struct rcu_thing *t = kmem_cache_alloc(s, GFP_KERNEL);

		kfree_rcu(t, rcu);
	}
	ck_assert_int_eq(pipe(fds), 0);
	uslab_log_set_fd(fds[1]);
	kmem_cache_destroy(s);	/* must not report live objects */
	uslab_log_set_fd(2);
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf));
	ck_assert_int_le(n, 0);
	ck_assert_ptr_null(kmem_cache_find("rcu-things"));
}
END_TEST

/*
 * The library's own RCU paths (a SLAB_TYPESAFE_BY_RCU slab given back,
 * kfree_rcu, the barrier, slabinfo's RCU walk) on a thread the program has
 * not registered leave it unregistered: the program may register it
 * afterwards (liburcu asserts a thread registers once; the debug build,
 * where every free reaches the slabs, aborted test_malloc_install's app).
 */
TEST(rcu, test_library_rcu_leaves_thread_unregistered)
{
	struct kmem_cache *s = kmem_cache_create("rcu-unreg",
						 sizeof(struct rcu_thing), 0,
						 SLAB_TYPESAFE_BY_RCU, NULL);
	struct rcu_thing *t[64];
	char buf[1 << 14];
	int i;

	ck_assert(!URCU_TLS(urcu_memb_reader).registered);
	for (i = 0; i < 64; i++)
		t[i] = kmem_cache_alloc(s, GFP_KERNEL);
	for (i = 0; i < 64; i++)
		kmem_cache_free(s, t[i]);
	kmem_cache_shrink(s);		/* slabs go back through call_rcu */
	ck_assert(!URCU_TLS(urcu_memb_reader).registered);
	t[0] = kmalloc(sizeof(struct rcu_thing), GFP_KERNEL);
	kfree_rcu(t[0], rcu);
	ck_assert(!URCU_TLS(urcu_memb_reader).registered);
	kfree_rcu_barrier();
	ck_assert(!URCU_TLS(urcu_memb_reader).registered);
	ck_assert_int_gt(slabinfo_show(buf, sizeof(buf)), 0);
	ck_assert(!URCU_TLS(urcu_memb_reader).registered);

	urcu_memb_register_thread();	/* aborted here before */
	urcu_memb_read_lock();
	ck_assert_int_gt(slabinfo_show(buf, sizeof(buf)), 0);
	urcu_memb_read_unlock();
	t[0] = kmalloc(sizeof(struct rcu_thing), GFP_KERNEL);
	kfree_rcu(t[0], rcu);
	ck_assert(URCU_TLS(urcu_memb_reader).registered);	/* still the program's */
	urcu_memb_unregister_thread();
	kfree_rcu_barrier();
	kmem_cache_destroy(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* slabinfo while caches come and go */

#define CD_THREADS	2
#define CD_ROUNDS	1500

static int cd_stop;

static void *cd_churn(void *arg)
{
	unsigned long id = (unsigned long)arg;
	char name[32];
	int i;

	for (i = 0; i < CD_ROUNDS; i++) {
		struct kmem_cache *s;
		void *o[3];
		int j;

		snprintf(name, sizeof(name), "churn-%lu-%d", id, i);
		s = kmem_cache_create(name, 32 + (unsigned int)(i % 200), 0,
				      i % 3 == 0 ? SLAB_TYPESAFE_BY_RCU : 0, NULL);
		ck_assert_ptr_nonnull(s);
		for (j = 0; j < 3; j++)
			o[j] = kmem_cache_alloc(s, GFP_KERNEL);
		for (j = 0; j < 3; j++)
			kmem_cache_free(s, o[j]);
		kmem_cache_destroy(s);
	}
	return NULL;
}

static void *cd_reader(void *arg)
{
	static char buf[1 << 16];
	unsigned long walks = 0;

	while (!__atomic_load_n(&cd_stop, __ATOMIC_ACQUIRE) || walks < 10) {
		char *line, *save = NULL;
		int nl = 0;

		slabinfo_show(buf, sizeof(buf));
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save), nl++) {
			char name[64];
			unsigned long v[9];

			if (nl == 0) {
				ck_assert_str_eq(line, "slabinfo - version: 2.1");
				continue;
			}
			if (line[0] == '#')
				continue;
			ck_assert_int_eq(sscanf(line, "%63s %lu %lu %lu %lu %lu : tunables "
						"%*u %*u %*u : slabdata %lu %lu %lu",
						name, &v[0], &v[1], &v[2], &v[3],
						&v[4], &v[5], &v[6], &v[7]), 9);
			ck_assert_uint_le(v[0], v[1]);	/* active <= num */
			ck_assert_uint_le(v[5], v[6]);
		}
		ck_assert_int_ge(nl, 3);
		walks++;
	}
	return (void *)walks;
}

TEST(rcu, test_slabinfo_during_churn)
{
	pthread_t c[CD_THREADS], r;
	void *walks;
	unsigned long i;
	char buf[128];

	pthread_create(&r, NULL, cd_reader, NULL);
	for (i = 0; i < CD_THREADS; i++)
		pthread_create(&c[i], NULL, cd_churn, (void *)i);
	for (i = 0; i < CD_THREADS; i++)
		pthread_join(c[i], NULL);
	__atomic_store_n(&cd_stop, 1, __ATOMIC_RELEASE);
	pthread_join(r, &walks);
	ck_assert_uint_ge((unsigned long)walks, 10);
	/* No churn cache is left behind. */
	slabinfo_show(buf, sizeof(buf));
	for (i = 0; i < CD_THREADS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "churn-%lu-%d", i, CD_ROUNDS - 1);
		ck_assert_ptr_null(kmem_cache_find(name));
	}
}
END_TEST

TEST_SUITE_MAIN("slab-rcu", "rcu", 120)
