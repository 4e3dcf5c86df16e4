// SPDX-License-Identifier: MIT
/*
 * The simulator's view of the layers below: applying tunables, naming the
 * virtual CPU and clock, reading the counters back. Everything goes through
 * the layers' public APIs (slab.h, percpu.h, page_alloc.h), so the numbers
 * are the library's own.
 *
 * In the uslab binary these calls land in libuslab-core-vcpu.a (percpu
 * built with USLAB_VCPU=1): pcp_vcpu_set() names the CPU, pcp_vclock_set()
 * advances the clock that drives the reaper.
 *
 * No locks of our own: the simulator is one thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "uslab/malloc.h"
#include "uslab/page_alloc.h"
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "sim/internal.h"

const char *sim_layers_engine(void)
{
	switch (pcp_mode_id()) {
	case PCP_MODE_VCPU:
		return "page_alloc + slab + percpu magazines on virtual CPUs (libuslab-core-vcpu)";
	case PCP_MODE_OFF:
		return "page_alloc + slab, no per-CPU magazines (CONFIG_PERCPU_CACHE=n)";
	default:
		return "page_alloc + slab + percpu magazines on the real CPU (not the vcpu build: "
		       "results depend on where this thread runs)";
	}
}

void sim_layers_set_cpu(unsigned int cpu, uint64_t time_ns)
{
	pcp_vcpu_set((int)cpu);
	pcp_vclock_set(time_ns);
}

int sim_layers_init(unsigned int cpus, bool no_reaper)
{
	int err;

	pcp_init();
	/* as USLAB_OPTIONS=reaper_ms=0 in a real run */
	if (no_reaper)
		pcp_reaper_set_period(0);
	if (pcp_mode_id() != PCP_MODE_VCPU)
		return 0;
	err = pcp_vcpu_set_nr(cpus);
	return err == -EOPNOTSUPP ? 0 : err;
}

/*
 * One setting for slab/, made from the parsed value: the same settings and
 * the same resolution at cache creation as the library's USLAB_OPTIONS.
 * A build without magazines has nothing to set (-EOPNOTSUPP): not an error.
 */
static int sim_setting(struct sim_result *res, enum kmem_cache_tunable what,
		       const char *name, long v)
{
	struct kmem_cache_setting set;
	int err;

	err = kmem_cache_setting_make(&set, what, name, name ? strlen(name) : 0, v);
	if (err == -EOPNOTSUPP)
		return 0;
	if (err) {
		snprintf(res->err, sizeof(res->err), "bad setting %s%s%s=%ld",
			 uslab_tunables[what].name, name ? "." : "", name ? name : "", v);
		return err;
	}
	return kmem_cache_setting_add(&set);
}

/**
 * sim_layers_settings - hand @cfg's tunables to slab/ before any cache exists,
 * so that each cache gets them at creation as the preloaded library's do.
 * A setting slab/ refuses is said in @res->err.
 */
int sim_layers_settings(const struct sim_config *cfg, struct sim_result *res)
{
	unsigned int i;
	int err = 0;

	kmem_cache_settings_clear();
	if (cfg->mag_size >= 0)
		err = sim_setting(res, KMEM_TUNE_MAG_SIZE, NULL, cfg->mag_size);
	for (i = 0; !err && i < cfg->nr_class_mag; i++)
		err = sim_setting(res, KMEM_TUNE_MAG_SIZE, cfg->class_mag[i].name,
				  cfg->class_mag[i].mag);
	if (!err && cfg->batch >= 0)
		err = sim_setting(res, KMEM_TUNE_BATCH, NULL, cfg->batch);
	if (!err && cfg->depot_limit != SIM_DEFAULT)
		err = sim_setting(res, KMEM_TUNE_DEPOT_LIMIT, NULL, cfg->depot_limit);
	/* as USLAB_OPTIONS=adapt=,adapt_min=,adapt_max=,adapt_budget_kb= */
	if (!err && (cfg->adapt_min || cfg->adapt_max || cfg->adapt_budget_kb))
		err = pcp_adapt_set_bounds((unsigned long)cfg->adapt_min,
					   (unsigned long)cfg->adapt_max,
					   (unsigned long)cfg->adapt_budget_kb);
	if (!err && cfg->adapt >= 0)
		pcp_adapt_set(cfg->adapt == 1);
	return err;
}

/*
 * sim_class_named - whether @n names a kmalloc class: a byte size the
 * classes serve (64) or a cache name of slab's one table, kmalloc_info[]
 * (kmalloc-64). The one check of a CLASS in --mag-size CLASS=N: at option
 * parse time (sim_parse_mag_size) and again when the run starts.
 */
bool sim_class_named(const char *n)
{
	unsigned int i;
	long size;

	if (!kmem_cache_parse_long(n, 1, KMALLOC_MAX_CACHE_SIZE, &size))
		return true;	/* a size: the parser finds its class */
	for_each_kmalloc_class(i)
		if (!strcmp(n, kmalloc_info[i].name))
			return true;
	return false;
}

/* Every per-class name must name a kmalloc class (typos fail loudly; the
 * command line has refused them already, this guards other callers). */
int sim_layers_apply(const struct sim_config *cfg, struct sim_result *res)
{
	unsigned int i;

	for (i = 0; i < cfg->nr_class_mag; i++) {
		const char *n = cfg->class_mag[i].name;

		if (!sim_class_named(n)) {
			snprintf(res->err, sizeof(res->err),
				 "--mag-size: no kmalloc cache '%s'", n);
			return -ENOENT;
		}
	}
	return 0;
}

/* The cache of class @cr, once the run has created it. */
static struct kmem_cache *sim_class_cache(struct sim_class_result *cr)
{
	if (!cr->cache)
		cr->cache = kmem_cache_find(cr->name);
	return cr->cache;
}

bool sim_layers_mag_sizes(struct sim_result *res, uint16_t *mag)
{
	unsigned int c, lo, hi;

	if (!pcp_adapt_enabled())
		return false;
	for (c = 0; c < res->nr_cls && c < SIM_MAX_CLASSES; c++) {
		struct pcp_cache *pc;

		mag[c] = 0;
		if (!sim_class_cache(&res->cls[c]))
			continue;
		pc = kmem_cache_pcp(res->cls[c].cache);
		if (!pc)
			continue;
		pcp_cache_mag_range(pc, &lo, &hi);
		mag[c] = (uint16_t)min_t(unsigned int, hi, UINT16_MAX);
	}
	return true;
}

/* The library's counters of one cache (slab/'s statistics call). */
static void sim_collect_one(struct sim_class_result *cr)
{
	struct kmem_cache_stats st;

	memset(&st, 0, sizeof(st));
	snprintf(st.name, sizeof(st.name), "%s", cr->name);
	st.object_size = cr->objsize;
	if (sim_class_cache(cr))
		kmem_cache_get_stats(cr->cache, &st);
	if (cr->has_before)	/* the run's own counts, as `uslab replay` */
		kmem_cache_stats_sub(&st, &cr->before);
	cr->c.allocs = st.allocs;
	cr->c.frees = st.frees;
	cr->c.alloc_hits = st.alloc_hits;
	cr->c.free_hits = st.free_hits;
	cr->c.alloc_slow = st.alloc_slow;
	cr->c.free_slow = st.free_slow;
	cr->c.refills = st.refills;
	cr->c.flushes = st.flushes;
	cr->c.swaps = st.swaps;
	cr->c.depot_gets = st.depot_gets;
	cr->c.depot_puts = st.depot_puts;
	cr->c.drains = st.drains;
	cr->c.direct = st.direct;
	cr->c.mag_size = st.limit;
	cr->c.batch = st.batchcount;
	cr->slab_bytes_peak = st.slab_bytes_peak;
	cr->stats = st;
}

/* The library's counters of every class and named cache. */
void sim_layers_collect(struct sim_result *res)
{
	struct page_alloc_stats ps;
	unsigned int c, o;

	for (c = 0; c < res->nr_cls; c++)
		sim_collect_one(&res->cls[c]);
	for (c = 0; c < res->nr_named; c++)
		if (res->named[c].cache)	/* made: never by a name alone */
			sim_collect_one(&res->named[c]);
	/* page_alloc's counters of the run: less what the caches' set-up did */
	page_alloc_get_stats(&ps);
	if (ps.bytes_allocated_peak > res->held_peak)
		res->held_peak = ps.bytes_allocated_peak;
	for (o = 0; o < NR_PAGE_ORDERS; o++) {
		ps.allocs[o] -= res->pages_start.allocs[o];
		ps.frees[o] -= res->pages_start.frees[o];
		res->page_allocs += ps.allocs[o];
		res->page_frees += ps.frees[o];
	}
	ps.splits -= res->pages_start.splits;
	ps.merges -= res->pages_start.merges;
	ps.pages_fresh -= res->pages_start.pages_fresh;
	/* the peak counts blocks on per-CPU page lists; bytes_allocated not */
	ps.bytes_allocated_peak -= res->pages_start.bytes_allocated +
				   res->pages_start.bytes_pagelists;
	res->splits = ps.splits;
	res->merges = ps.merges;
	res->pages = ps;
}

/*
 * sim_layers_hold - before the run, --held's objects: allocated through the
 * library's malloc on CPU 0 and never freed, as a real replay's own live
 * objects are when its timed run starts (glibc's DTV of its worker thread,
 * in kmalloc-384). They count as out where the library looks at what a
 * class has out (a refill takes at most that, slab_pcp_refill()). Then,
 * as `uslab replay` does (tools/uslab/replay-stats.c): every magazine
 * drained, the counters taken to subtract, the peaks restarted.
 * Return: 0 or -ENOMEM.
 */
int sim_layers_hold(const struct sim_config *cfg, struct sim_result *res)
{
	unsigned int i, c;
	long k;

	if (!cfg->nr_held)
		return 0;
	sim_layers_set_cpu(0, 0);
	for (i = 0; i < cfg->nr_held; i++) {
		for (k = 0; k < cfg->held[i].n; k++) {
			if (!uslab_malloc(kmalloc_info[cfg->held[i].cls].size)) {
				snprintf(res->err, sizeof(res->err), "--held: out of memory");
				return -ENOMEM;
			}
		}
	}
	kmem_cache_shrink_all();
	for (c = 0; c < res->nr_cls; c++) {
		struct sim_class_result *cr = &res->cls[c];

		if (!sim_class_cache(cr))
			continue;
		kmem_cache_get_stats(cr->cache, &cr->before);
		cr->has_before = true;
	}
	kmem_cache_stats_reset_peak();
	return 0;
}

/*
 * sim_layers_mark_start - page_alloc's counters when the run starts (caches
 * created, nothing allocated), so that the page line counts the run only,
 * as `uslab replay` with stats does; the peak restarts from here.
 */
void sim_layers_mark_start(struct sim_result *res)
{
	page_alloc_get_stats(&res->pages_start);
	page_alloc_reset_peak();
}

/** sim_slab_bytes - bytes of slabs per class now (slab/'s statistics call). */
void sim_slab_bytes(struct sim_result *res, uint64_t *bytes)
{
	unsigned int c;

	for (c = 0; c < res->nr_cls; c++) {
		struct kmem_cache_stats st;

		bytes[c] = 0;
		if (!sim_class_cache(&res->cls[c]))
			continue;
		kmem_cache_get_stats(res->cls[c].cache, &st);
		bytes[c] = st.slab_bytes;
	}
}
