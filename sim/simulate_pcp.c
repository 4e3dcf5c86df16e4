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
#include "uslab/page_alloc.h"
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "sim/internal.h"

const char *sim_pcp_engine(void)
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

void sim_pcp_set_cpu(unsigned int cpu, uint64_t time_ns)
{
	pcp_vcpu_set((int)cpu);
	pcp_vclock_set(time_ns);
}

int sim_pcp_init(unsigned int cpus)
{
	int err;

	pcp_init();
	if (pcp_mode_id() != PCP_MODE_VCPU)
		return 0;
	err = pcp_vcpu_set_nr(cpus);
	return err == -EOPNOTSUPP ? 0 : err;
}

/* "kmalloc-64" or "64" names the class of @cr. */
static bool class_matches(const char *n, const struct sim_class_result *cr)
{
	char *end;
	unsigned long sz = strtoul(n, &end, 10);

	return !strcmp(n, cr->name) || (!*end && end != n && sz == cr->objsize);
}

/* The magazine size asked for @cr: per-class setting, else the uniform one. */
static int class_mag(const struct sim_config *cfg, const struct sim_class_result *cr)
{
	unsigned int i;

	for (i = 0; i < cfg->nr_class_mag; i++)
		if (class_matches(cfg->class_mag[i].name, cr))
			return cfg->class_mag[i].mag;
	return cfg->mag_size;
}

int sim_pcp_apply(const struct sim_config *cfg, struct sim_result *res)
{
	unsigned int c, i;

	/* Every per-class name must match a cache: typos fail loudly. */
	for (i = 0; i < cfg->nr_class_mag; i++) {
		for (c = 0; c < res->nr_cls; c++)
			if (class_matches(cfg->class_mag[i].name, &res->cls[c]))
				break;
		if (c == res->nr_cls) {
			fprintf(stderr, "uslab sim: no kmalloc cache '%s'\n", cfg->class_mag[i].name);
			return -ENOENT;
		}
	}
	for (c = 0; c < res->nr_cls; c++) {
		struct sim_class_result *cr = &res->cls[c];
		struct pcp_cache *pc = kmem_cache_pcp(cr->cache);
		int mag = class_mag(cfg, cr);
		unsigned int limit, batch;
		int err;

		if (!pc)
			continue;	/* no magazines (nocache build) */
		pcp_cache_get_tunables(pc, &limit, &batch);
		if (mag > 0)
			limit = (unsigned int)mag;
		if (cfg->batch > 0)
			batch = (unsigned int)cfg->batch;
		else if (mag > 0)
			batch = pcp_default_batchcount(limit);
		if (batch > limit)
			batch = limit;
		err = kmem_cache_set_tunables(cr->cache, limit, batch, 0);
		if (err)
			return err;
		if (cfg->depot_limit != SIM_DEFAULT) {
			err = pcp_cache_set_depot_limit(pc, cfg->depot_limit < 0 ?
							PCP_DEPOT_UNLIMITED :
							(unsigned int)cfg->depot_limit);
			if (err)
				return err;
		}
	}
	return 0;
}

void sim_pcp_collect(struct sim_result *res)
{
	struct page_alloc_stats ps;
	unsigned int c, o;

	for (c = 0; c < res->nr_cls; c++) {
		struct sim_class_result *cr = &res->cls[c];
		struct pcp_cache *pc = kmem_cache_pcp(cr->cache);
		struct pcp_stats st;

		if (!pc)
			continue;
		pcp_cache_stats(pc, -1, &st);
		cr->c.alloc_hits = st.v[PCP_STAT_ALLOC_HIT];
		cr->c.free_hits = st.v[PCP_STAT_FREE_HIT];
		cr->c.alloc_slow = st.v[PCP_STAT_ALLOC_SLOW];
		cr->c.free_slow = st.v[PCP_STAT_FREE_SLOW];
		cr->c.refills = st.v[PCP_STAT_REFILL];
		cr->c.flushes = st.v[PCP_STAT_FLUSH];
		cr->c.swaps = st.v[PCP_STAT_SWAP];
		cr->c.depot_gets = st.v[PCP_STAT_DEPOT_GET];
		cr->c.depot_puts = st.v[PCP_STAT_DEPOT_PUT];
		cr->c.drains = st.v[PCP_STAT_DRAIN];
		cr->c.direct = st.v[PCP_STAT_DIRECT];
		pcp_cache_get_tunables(pc, &cr->c.mag_size, &cr->c.batch);
	}
	page_alloc_get_stats(&ps);
	for (o = 0; o < NR_PAGE_ORDERS; o++) {
		res->page_allocs += ps.allocs[o];
		res->page_frees += ps.frees[o];
	}
	res->splits = ps.splits;
	res->merges = ps.merges;
}

/*
 * sim_slab_bytes - slab memory per class from slabinfo (2.1): num_slabs *
 * pagesperslab pages. The text is the layer's public report; parsing it
 * keeps the simulator off slab/'s private structures.
 */
void sim_slab_bytes(const struct sim_result *res, uint64_t *bytes)
{
	static char buf[1 << 16];
	char *line, *save = NULL;
	unsigned int c;

	for (c = 0; c < res->nr_cls; c++)
		bytes[c] = 0;
	slabinfo_show(buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		unsigned long active, num, objsize, perslab, pages, aslabs, nslabs;

		if (sscanf(line, "%63s %lu %lu %lu %lu %lu : tunables %*u %*u %*u : slabdata %lu %lu",
			   name, &active, &num, &objsize, &perslab, &pages, &aslabs, &nslabs) != 8)
			continue;
		for (c = 0; c < res->nr_cls; c++)
			if (!strcmp(name, res->cls[c].name)) {
				bytes[c] = (uint64_t)nslabs * pages * PAGE_SIZE;
				break;
			}
	}
}
