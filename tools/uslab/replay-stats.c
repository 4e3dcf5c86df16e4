// SPDX-License-Identifier: MIT
/*
 * `uslab replay --allocator uslab` with USLAB_OPTIONS=stats: the per-cache
 * table of the replayed events only, as `uslab sim` prints it. The
 * replayer's own allocations (bookkeeping, libc's buffers, thread start-up)
 * are kept out by taking the library's counters (slab/'s statistics call,
 * found in the preloaded libuslab.so) just before the timed run and just
 * after it, and subtracting. Before the first snapshot every kmalloc class
 * is made and every magazine drained (kmem_cache_shrink_all(), which also
 * empties the per-CPU page lists), so the run starts, as a simulation
 * does, with every class made, empty magazines, an empty depot and empty
 * page lists.
 *
 * The page allocator's peak is the peak held during the run above what was
 * held when it started (page_alloc_reset_peak() at the start), which is
 * what `uslab sim` reports for its own run.
 *
 * Under another allocator, or without `stats`, nothing of this runs.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "uslab/page_alloc.h"
#include "uslab/slab.h"
#include "tools/uslab/builtin.h"

struct rp_stats_fns {
	size_t (*all)(struct kmem_cache_stats *, size_t);
	void (*shrink_all)(void);
	void (*pa_get)(struct page_alloc_stats *);
	void (*pa_reset_peak)(void);
	void (*reset_peak)(void);
};

static struct rp_stats_fns rp_fns;
static struct kmem_cache_stats rp_before[RP_STATS_MAX_CACHES];
static struct kmem_cache_stats rp_after[RP_STATS_MAX_CACHES];
static size_t rp_nbefore;
static struct page_alloc_stats rp_pa0, rp_pa1;
static size_t rp_nafter;
static bool rp_stats_on;

/*
 * Did USLAB_OPTIONS ask for `stats`? The preloaded library parsed it once,
 * at its start: ask it (uslab_option()), never read the text again.
 */
static bool options_want_stats(void)
{
	long (*option)(const char *) =
		(long (*)(const char *))dlsym(RTLD_DEFAULT, "uslab_option");

	return option && option("stats") > 0;
}

/**
 * rp_stats_begin - before the timed run: drain, snapshot, restart peaks.
 * Return: true when the table will be printed.
 */
bool rp_stats_begin(void)
{
	unsigned int i;

	rp_stats_on = false;
	if (!options_want_stats())
		return false;
	rp_fns.all = (size_t (*)(struct kmem_cache_stats *, size_t))dlsym(RTLD_DEFAULT, "kmem_cache_stats_all");
	rp_fns.shrink_all = (void (*)(void))dlsym(RTLD_DEFAULT, "kmem_cache_shrink_all");
	rp_fns.pa_get = (void (*)(struct page_alloc_stats *))dlsym(RTLD_DEFAULT, "page_alloc_get_stats");
	rp_fns.pa_reset_peak = (void (*)(void))dlsym(RTLD_DEFAULT, "page_alloc_reset_peak");
	rp_fns.reset_peak = (void (*)(void))dlsym(RTLD_DEFAULT, "kmem_cache_stats_reset_peak");
	if (!rp_fns.all || !rp_fns.shrink_all || !rp_fns.pa_get ||
	    !rp_fns.pa_reset_peak || !rp_fns.reset_peak)
		return false;	/* not libuslab, or one without the calls */
	/* every kmalloc class made, so that none is first made (its per-CPU
	 * structures' pages counted) inside the run: `uslab sim` starts so */
	for_each_kmalloc_class(i) {
		void *volatile p = malloc(kmalloc_info[i].size);	/* kept: not elided */

		free(p);
	}
	rp_fns.shrink_all();
	rp_nbefore = rp_fns.all(rp_before, RP_STATS_MAX_CACHES);
	if (rp_nbefore > RP_STATS_MAX_CACHES)
		rp_nbefore = RP_STATS_MAX_CACHES;
	rp_fns.pa_get(&rp_pa0);
	rp_fns.pa_reset_peak();
	rp_fns.reset_peak();
	rp_stats_on = true;
	return true;
}

static const struct kmem_cache_stats *find_before(const char *name)
{
	for (size_t i = 0; i < rp_nbefore; i++)
		if (!strcmp(rp_before[i].name, name))
			return &rp_before[i];
	return NULL;
}

/**
 * rp_stats_snapshot - right after the timed run, before the replayer
 * allocates anything again: the counters to subtract from.
 */
void rp_stats_snapshot(void)
{
	if (!rp_stats_on)
		return;
	rp_nafter = rp_fns.all(rp_after, RP_STATS_MAX_CACHES);
	if (rp_nafter > RP_STATS_MAX_CACHES)
		rp_nafter = RP_STATS_MAX_CACHES;
	rp_fns.pa_get(&rp_pa1);
}

/**
 * rp_stats_end - the table of the run's own counts (kmalloc caches only:
 * the ones the replayed calls reach) on @f.
 */
void rp_stats_end(FILE *f)
{
	struct page_alloc_stats pa = rp_pa1;
	struct kmem_cache_stats_sum sum = { 0 };
	char line[512];
	size_t n = rp_nafter, i;
	bool adaptive = false;

	if (!rp_stats_on)
		return;
	fprintf(f, "\nreplayed events only (library counters after the run less before it):\n");
	/*
	 * the library's rows have the grow and shrink columns when its
	 * magazines adapt (USLAB_OPTIONS adapt=, its Kconfig default), not
	 * when this program's own copy would (an adaptive build printed them
	 * in the header of rows without them with adapt=0, and none over
	 * rows with them with adapt=1 in the others)
	 */
	for (i = 0; i < n && !adaptive; i++)
		adaptive = rp_after[i].flags & KMEM_CACHE_STATS_ADAPTIVE;
	kmem_cache_stats_header_adaptive(adaptive, line, sizeof(line));
	fputs(line, f);
	for (i = 0; i < n; i++) {
		struct kmem_cache_stats *st = &rp_after[i];
		const struct kmem_cache_stats *b = find_before(st->name);

		if (!(st->flags & KMEM_CACHE_STATS_KMALLOC))
			continue;
		if (b)
			kmem_cache_stats_sub(st, b);
		if (!st->allocs && !st->frees)
			continue;
		kmem_cache_stats_sum_add(&sum, st);
		kmem_cache_stats_row(st, line, sizeof(line));
		fputs(line, f);
	}
	kmem_cache_stats_total(sum.allocs, sum.frees, sum.hits, line, sizeof(line));
	fputs(line, f);
	/* objects out when the run started: the replayer's own (a worker's
	 * glibc DTV); `uslab sim --held` makes the same start */
	fputs("held by the replayer at the start:", f);
	for (i = 0; i < rp_nbefore; i++) {
		const struct kmem_cache_stats *b = &rp_before[i];

		if ((b->flags & KMEM_CACHE_STATS_KMALLOC) && b->active_objs > b->cached_objs)
			fprintf(f, " --held %s=%" PRIu64, b->name, b->active_objs - b->cached_objs);
	}
	fputc('\n', f);
	page_alloc_stats_sub(&pa, &rp_pa0);
	fputc('\n', f);
	kmem_cache_stats_page_line(&pa, line, sizeof(line));
	fputs(line, f);
}
