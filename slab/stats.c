// SPDX-License-Identifier: MIT
/*
 * Statistics as calls: per-cache counters in a struct (kmem_cache_stats),
 * for the tools that need numbers rather than text (the simulator, the
 * replayer's before/after, the exit report, live views), and the one
 * formatter of the per-cache table that `uslab sim` and USLAB_OPTIONS=stats
 * both print.
 *
 * The counters are the per-CPU layer's (hits, slow paths, refills, flushes,
 * depot traffic: compiled away without CONFIG_PERCPU_STATS) and the slab
 * layer's own (slabs, objects, and for caches without magazines the calls
 * into the slab layer, which are then one per object).
 *
 * Locking: the cache list is walked under RCU; each cache's slab counters
 * are read under its lock, the per-CPU ones lock-free (a racy sum while
 * other threads run, exact when nothing else does). Nothing here allocates.
 */
#include <errno.h>
#include <string.h>
#include <urcu/urcu-memb.h>
#include <urcu/rculist.h>
#include "slab/internal.h"

/** kmem_cache_stats_enabled - are the per-CPU counters compiled in? */
__visible bool kmem_cache_stats_enabled(void)
{
	/* without magazines, the slab layer's own call counts are the counters */
	return IS_ENABLED(CONFIG_STATS) &&
	       (IS_ENABLED(CONFIG_PERCPU_STATS) || !IS_ENABLED(CONFIG_PERCPU_CACHE));
}

/*
 * The counters of struct kmem_cache_stats that the per-CPU layer keeps, each
 * with the pcp_stat_item it is (include/uslab/percpu.h): copied by
 * kmem_cache_get_stats(), subtracted by kmem_cache_stats_sub().
 */
#define KMEM_CACHE_PCP_FIELDS(X)						\
	X(alloc_hits, ALLOC_HIT) X(free_hits, FREE_HIT) X(alloc_slow, ALLOC_SLOW)	\
	X(free_slow, FREE_SLOW) X(refills, REFILL) X(flushes, FLUSH) X(swaps, SWAP)	\
	X(depot_gets, DEPOT_GET) X(depot_puts, DEPOT_PUT) X(rseq_aborts, RSEQ_ABORT)	\
	X(fallback_ops, FALLBACK_OP) X(drains, DRAIN) X(direct, DIRECT)	\
	X(grows, GROW) X(shrinks, SHRINK)

/**
 * kmem_cache_get_stats - the counters of @s into @st.
 * Context: thread-safe; takes @s's lock briefly. Never allocates.
 */
__visible void kmem_cache_get_stats(struct kmem_cache *s, struct kmem_cache_stats *st)
{
	struct pcp_cache *pc = kmem_cache_pcp(s);
	unsigned long cached = 0;

	memset(st, 0, sizeof(*st));
	memcpy(st->name, s->name, sizeof(st->name));
	st->name[sizeof(st->name) - 1] = '\0';
	st->object_size = s->object_size;
	st->size = s->size;
	st->objects_per_slab = s->objects;
	st->pages_per_slab = 1U << s->order;
	if (s->flags & __SLAB_KMALLOC)
		st->flags |= KMEM_CACHE_STATS_KMALLOC;
	if (pc) {
		struct pcp_stats ps;
		unsigned int limit, batch;

		st->flags |= KMEM_CACHE_STATS_MAGAZINES;
		pcp_cache_get_tunables(pc, &limit, &batch);
		st->limit = limit;
		st->batchcount = batch;
		st->depot_limit = pcp_cache_get_depot_limit(pc);
		pcp_cache_mag_range(pc, &st->mag_lo, &st->mag_hi);
		if (pcp_adapt_enabled())
			st->flags |= KMEM_CACHE_STATS_ADAPTIVE;
		cached = pcp_cache_objects(pc, NULL);
		pcp_cache_stats(pc, -1, &ps);
#define COPY(field, item) st->field = ps.v[PCP_STAT_##item];
		KMEM_CACHE_PCP_FIELDS(COPY)
#undef COPY
		st->allocs = st->alloc_hits + st->alloc_slow;
		st->frees = st->free_hits + st->free_slow;
		/* rseq-mode hits: only with CONFIG_PERCPU_HIT_STATS */
		if (IS_ENABLED(CONFIG_PERCPU_STATS) &&
		    (IS_ENABLED(CONFIG_PERCPU_HIT_STATS) ||
		     pcp_mode_id() != PCP_MODE_RSEQ))
			st->flags |= KMEM_CACHE_STATS_COUNTED;
	}
	slab_lock(s);
	if (!pc) {
		/* no magazines: every operation is one call of the slab layer */
		st->allocs = s->alloc_calls;
		st->frees = s->free_calls;
		st->flags |= KMEM_CACHE_STATS_COUNTED;
	}
	st->shared = s->shared;
	st->num_objs = (uint64_t)s->nr_slabs * s->objects;
	st->active_objs = s->nr_inuse > cached ? s->nr_inuse - cached : 0;
	st->cached_objs = cached;
	st->nr_slabs = s->nr_slabs;
	st->nr_slabs_peak = s->nr_slabs_peak;
	slab_unlock(s);
	st->slab_bytes = st->nr_slabs * st->pages_per_slab * PAGE_SIZE;
	st->slab_bytes_peak = st->nr_slabs_peak * st->pages_per_slab * PAGE_SIZE;
}

/**
 * kmem_cache_stats_all - the counters of every cache, in slabinfo's order.
 * @st: room for @max entries (may be NULL when @max is 0).
 * Context: thread-safe, while caches come and go (RCU walk). Never
 * allocates.
 * Return: the number of caches; entries beyond @max are not written.
 */
__visible size_t kmem_cache_stats_all(struct kmem_cache_stats *st, size_t max)
{
	struct kmem_cache *s;
	size_t n = 0;

	slab_init();
	slab_rcu_read_lock();
	cds_list_for_each_entry_rcu(s, &slab_caches, list) {
		if (n < max)
			kmem_cache_get_stats(s, &st[n]);
		n++;
	}
	slab_rcu_read_unlock();
	return n;
}

/**
 * kmem_cache_stats_reset_peak - restart every cache's slab high-water mark
 * (nr_slabs_peak) from its slabs now, as page_alloc_reset_peak() does for
 * pages: for a tool that measures one phase.
 */
__visible void kmem_cache_stats_reset_peak(void)
{
	struct kmem_cache *s;

	slab_init();
	slab_rcu_read_lock();
	cds_list_for_each_entry_rcu(s, &slab_caches, list) {
		slab_lock(s);
		s->nr_slabs_peak = s->nr_slabs;
		slab_unlock(s);
	}
	slab_rcu_read_unlock();
}

/**
 * kmem_cache_stats_sub - @after less @before, counter by counter (the
 * operations of one phase); the slab peaks become the growth above what
 * @before held (restart them with kmem_cache_stats_reset_peak() when the
 * phase begins); sizes and tunables stay @after's.
 */
__visible void kmem_cache_stats_sub(struct kmem_cache_stats *after,
			  const struct kmem_cache_stats *before)
{
#define SUB(field, item) after->field -= before->field;
	SUB(allocs, -) SUB(frees, -)
	KMEM_CACHE_PCP_FIELDS(SUB)
#undef SUB
	after->nr_slabs_peak = after->nr_slabs_peak > before->nr_slabs ?
			       after->nr_slabs_peak - before->nr_slabs : 0;
	after->slab_bytes_peak = after->slab_bytes_peak > before->slab_bytes ?
				 after->slab_bytes_peak - before->slab_bytes : 0;
}

/* ------------------------------------------------------------------ */
/* The table: one formatter for `uslab sim` and USLAB_OPTIONS=stats. */

/** kmem_cache_stats_header - the column line of the per-cache table. */
__visible size_t kmem_cache_stats_header(char *buf, size_t len)
{
	return kmem_cache_stats_header_adaptive(pcp_adapt_enabled(), buf, len);
}

/*
 * The header of rows made elsewhere (`uslab replay`: the preloaded
 * library's rows, whose adapt setting is not this copy's): @adaptive,
 * their KMEM_CACHE_STATS_ADAPTIVE, says whether they have the grow and
 * shrink columns.
 */
__visible size_t kmem_cache_stats_header_adaptive(bool adaptive, char *buf, size_t len)
{
	size_t pos = 0;

	uslab_bufprintf(buf, len, &pos,
			"  %-16s %7s %6s %11s %11s %7s %9s %9s %9s %9s %10s\n",
			"cache", "object", "mag", "allocs", "frees", "hit%",
			"refills", "flushes", "depot_get", "depot_put",
			"peak_slabKiB");
	/* adaptive: how often the magazines changed size (the mag column
	 * gives the sizes in force, lo-hi over the CPUs) */
	if (adaptive) {
		pos -= pos ? 1 : 0;
		uslab_bufprintf(buf, len, &pos, " %6s %6s\n", "grow", "shrink");
	}
	return pos;
}

static double hit_pct(uint64_t hits, uint64_t ops)
{
	return ops ? 100.0 * (double)hits / (double)ops : 0.0;
}

/** kmem_cache_stats_row - one cache's line of the table. */
__visible size_t kmem_cache_stats_row(const struct kmem_cache_stats *st, char *buf,
			    size_t len)
{
	uint64_t ops = st->allocs + st->frees;
	size_t pos = 0;
	char mag[24];
	size_t mpos = 0;

	if ((st->flags & KMEM_CACHE_STATS_ADAPTIVE) && st->mag_lo != st->mag_hi)
		uslab_bufprintf(mag, sizeof(mag), &mpos, "%u-%u", st->mag_lo, st->mag_hi);
	else
		uslab_bufprintf(mag, sizeof(mag), &mpos, "%u", (st->flags & KMEM_CACHE_STATS_ADAPTIVE) ?
			 st->mag_hi : st->limit);

	if (!(st->flags & KMEM_CACHE_STATS_COUNTED)) {
		/* rseq-mode hits are not counted (CONFIG_PERCPU_HIT_STATS) */
		uslab_bufprintf(buf, len, &pos,
				"  %-16s %7u %6s %11s %11s %7s %9llu %9llu %9llu %9llu %10.1f\n",
				st->name, st->object_size, mag, "-", "-", "-",
				(unsigned long long)st->refills,
				(unsigned long long)st->flushes,
				(unsigned long long)st->depot_gets,
				(unsigned long long)st->depot_puts,
				(double)st->slab_bytes_peak / 1024.0);
		goto adaptive;
	}
	uslab_bufprintf(buf, len, &pos,
			"  %-16s %7u %6s %11llu %11llu %7.2f %9llu %9llu %9llu %9llu %10.1f\n",
			st->name, st->object_size, mag,
			(unsigned long long)st->allocs, (unsigned long long)st->frees,
			hit_pct(st->alloc_hits + st->free_hits, ops),
			(unsigned long long)st->refills, (unsigned long long)st->flushes,
			(unsigned long long)st->depot_gets,
			(unsigned long long)st->depot_puts,
			(double)st->slab_bytes_peak / 1024.0);
adaptive:
	if (st->flags & KMEM_CACHE_STATS_ADAPTIVE) {
		pos -= pos ? 1 : 0;
		uslab_bufprintf(buf, len, &pos, " %6llu %6llu\n",
				(unsigned long long)st->grows,
				(unsigned long long)st->shrinks);
	}
	return pos;
}

/**
 * kmem_cache_stats_total - the "all caches" line: allocs under allocs,
 * frees under frees, hit% of both together.
 */
__visible size_t kmem_cache_stats_total(uint64_t allocs, uint64_t frees, uint64_t hits,
					char *buf, size_t len)
{
	size_t pos = 0;

	uslab_bufprintf(buf, len, &pos, "  %-16s %7s %6s %11llu %11llu %7.2f\n",
			"all caches", "", "", (unsigned long long)allocs,
			(unsigned long long)frees, hit_pct(hits, allocs + frees));
	return pos;
}

/**
 * kmem_cache_stats_page_line - the page allocator's lines under the table:
 * block allocations and frees, splits, merges, pages handed out fresh
 * (each faults at its first touch), the peak held; then the per-CPU page
 * lists' share: blocks from and to the lists, batches refilled and
 * drained, and what they hold now.
 */
__visible size_t kmem_cache_stats_page_line(const struct page_alloc_stats *ps, char *buf,
				  size_t len)
{
	unsigned long long allocs = 0, frees = 0;
	size_t pos = 0;

	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++) {
		allocs += ps->allocs[o];
		frees += ps->frees[o];
	}
	uslab_bufprintf(buf, len, &pos,
			"page allocator: %llu block allocations, %llu frees, %lu splits, "
			"%lu merges, %lu pages fresh, peak held %.1f KiB\n",
			allocs, frees, ps->splits, ps->merges, ps->pages_fresh,
			(double)ps->bytes_allocated_peak / 1024.0);
	uslab_bufprintf(buf, len, &pos,
			"page lists: %lu allocations, %lu frees, %lu refills, "
			"%lu drains, %.1f KiB on the lists\n",
			ps->pagelist_allocs, ps->pagelist_frees, ps->pagelist_refills,
			ps->pagelist_drains, (double)ps->bytes_pagelists / 1024.0);
	return pos;
}

/** kmem_cache_stats_shown - does the table show this cache? (any activity) */
__visible bool kmem_cache_stats_shown(const struct kmem_cache_stats *st)
{
	return st->allocs || st->frees || st->slab_bytes_peak;
}

/**
 * kmem_cache_stats_write_fd - the per-cache table of every cache that saw
 * any use, the "all caches" line and the page allocator's line, to @fd;
 * without counters (CONFIG_PERCPU_STATS=n), a line saying so in their
 * place.
 * Context: thread-safe; never allocates (one cache at a time on the stack).
 * Return: 0 or -errno from write(2).
 */
__visible int kmem_cache_stats_write_fd(int fd)
{
	struct kmem_cache_stats st;
	struct page_alloc_stats ps;
	struct kmem_cache *s;
	struct kmem_cache_stats_sum sum = { 0 };
	char line[512];
	size_t n;
	int err;

	slab_init();
	if (!kmem_cache_stats_enabled()) {
		n = 0;
		uslab_bufprintf(line, sizeof(line), &n,
				"per cache: statistics are compiled out of this build "
				"(CONFIG_STATS or CONFIG_PERCPU_STATS is off)\n");
		return uslab_write_all(fd, line, n);
	}
	n = 0;
	uslab_bufprintf(line, sizeof(line), &n,
			"per cache (magazine = per-CPU loaded+spare, depot behind them):\n");
	n += kmem_cache_stats_header(line + n, sizeof(line) - n);
	err = uslab_write_all(fd, line, n);
	slab_rcu_read_lock();
	cds_list_for_each_entry_rcu(s, &slab_caches, list) {
		if (err)
			break;
		kmem_cache_get_stats(s, &st);
		if (!kmem_cache_stats_shown(&st))
			continue;
		kmem_cache_stats_sum_add(&sum, &st);
		n = kmem_cache_stats_row(&st, line, sizeof(line));
		err = uslab_write_all(fd, line, n);
	}
	slab_rcu_read_unlock();
	if (err)
		return err;
	n = kmem_cache_stats_total(sum.allocs, sum.frees, sum.hits, line, sizeof(line));
	page_alloc_get_stats(&ps);
	n += kmem_cache_stats_page_line(&ps, line + n, sizeof(line) - n);
	return uslab_write_all(fd, line, n);
}
