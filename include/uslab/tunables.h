/* SPDX-License-Identifier: MIT */
/*
 * The library's tunables: one row each, in one list. A row says the name,
 * how its value is parsed, the bounds, the default, where it applies and
 * its help line. Every front end reads these rows and hands on parsed
 * values, never text: USLAB_OPTIONS (malloc/options.c, which splits an
 * item once into name, cache and value), slabinfo writes
 * (slab/slabinfo.c), `uslab sim` and `uslab tune` (sim/, tools/uslab/),
 * and the cache settings themselves (slab/settings.c).
 *
 * The parsers (slab/settings.c) take the parts already split:
 * uslab_tunable_parse() a value of one row, kmem_cache_setting_make() a
 * cache setting from a row, a cache name and a value.
 */
#ifndef USLAB_TUNABLES_H
#define USLAB_TUNABLES_H

#include <stdbool.h>
#include <stddef.h>
#include "uslab/api.h"
#include "uslab/percpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a row's value is read. */
enum uslab_tunable_kind {
	USLAB_TK_NUM,		/* a decimal in [min, max] */
	USLAB_TK_OFF_OR_NUM,	/* 0 (off) or a decimal in [min, max] */
	USLAB_TK_FLAG,		/* nothing, 1/0, y/n, yes/no, on/off, true/false */
	USLAB_TK_DEBUG,		/* slab_debug letters F Z P U, '-' (none) */
	USLAB_TK_FAULT,		/* a fault spec P[:I[:T[:S]]], its layer parses it */
};

/* Where a row's value goes. */
enum uslab_tunable_scope {
	USLAB_TS_CACHE,		/* a kmem_cache setting, per cache or every kmalloc cache */
	USLAB_TS_PERCPU,	/* percpu/: the reaper, adaptive magazines */
	USLAB_TS_PAGE_ALLOC,	/* page_alloc/: trim, limit, fault injection */
	USLAB_TS_SLAB,		/* slab/: fault injection */
	USLAB_TS_MALLOC,	/* malloc/: what the library does at start and exit */
};

/*
 * X(id, name, kind, scope, min, max, default, help). The cache rows come
 * first, in enum kmem_cache_tunable's order. A default of 0 for mag_size
 * means "by object size" (percpu's table), for batch half a magazine; for
 * depot_limit USLAB_DEPOT_BY_SIZE "by size" as well.
 */
/* depot_limit's default: by object size (never a value a row accepts). */
#define USLAB_DEPOT_BY_SIZE	(-2L)
/* Kconfig's magazine size and batch where magazines are built; 0: by size. */
#ifdef CONFIG_PERCPU_MAG_SIZE
#define USLAB_MAG_SIZE_DEFAULT	CONFIG_PERCPU_MAG_SIZE
#define USLAB_BATCH_DEFAULT	CONFIG_PERCPU_BATCHCOUNT
#else
#define USLAB_MAG_SIZE_DEFAULT	0
#define USLAB_BATCH_DEFAULT	0
#endif

#define USLAB_TUNABLES(X)						\
	X(MAG_SIZE, mag_size, NUM, CACHE, 0, 4096, USLAB_MAG_SIZE_DEFAULT,			\
	  "objects per per-CPU magazine (0 = by object size, Kconfig PERCPU_MAG_SIZE); "\
	  "mag_size.<cache>=N for one cache, named before or after it exists: "\
	  "mag_size.kmalloc-64=32, by size mag_size.64=32, or a kmem_cache_create "\
	  "name mag_size.conn_cache=64")				\
	X(BATCH, batch, NUM, CACHE, 0, 4096, USLAB_BATCH_DEFAULT,				\
	  "objects moved per refill or flush (0 = half a magazine); "	\
	  "batch.<cache>=N for one cache")				\
	X(DEPOT_LIMIT, depot_limit, NUM, CACHE, -1, 65536, USLAB_DEPOT_BY_SIZE,	\
	  "full magazines each kmalloc cache's depot keeps (-1 = unlimited; "\
	  "default by size, Kconfig PERCPU_DEPOT_LIMIT x PERCPU_MAG_BYTES); "\
	  "depot_limit.<cache>=N for one cache")			\
	X(SLAB_DEBUG, slab_debug, DEBUG, CACHE, 0, 0, 0,		\
	  "the kernel's slab_debug: F checks, Z red zones, P poisoning, U call "\
	  "sites, - off; alone = FZPU for every cache; slab_debug=FZPU,kmalloc-64,"\
	  "conn_cache for those caches (kmalloc-* a prefix), blocks separated by "\
	  "';' (slab_debug='P,kmalloc-*;-,kmalloc-8'), or slab_debug.<cache>=FZ; "\
	  "debug caches have no magazines (docs/slab.md)")		\
	X(REAPER_MS, reaper_ms, OFF_OR_NUM, PERCPU, 10, 600000, PCP_REAPER_PERIOD_MS,\
	  "period of the background reaper that trims depots and idle CPUs "\
	  "(0 = no reaper and no page decay thread, as `uslab sim --no-reaper`)")\
	X(ADAPT, adapt, NUM, PERCPU, 0, 1, PCP_ADAPT_DEFAULT,		\
	  "1 = magazines size themselves per cache and CPU (grow on refills and "\
	  "flushes, paid by caches with unused objects, within adapt_min.."\
	  "adapt_max bytes and adapt_budget_kb per CPU; Kconfig PERCPU_ADAPT); 0 = fixed sizes "\
	  "(mag_size)")							\
	X(ADAPT_MIN, adapt_min, NUM, PERCPU, 8, 1L << 30, PCP_ADAPT_MIN_BYTES,	\
	  "adaptive: smallest magazine a shrink leaves, bytes of objects (at "\
	  "least one object, never above the cache's fixed size, where each "\
	  "CPU starts)")						\
	X(ADAPT_MAX, adapt_max, NUM, PERCPU, 8, 1L << 30, PCP_ADAPT_MAX_BYTES,	\
	  "adaptive: largest magazine, bytes of objects (at most 4096 objects; "\
	  "never below the cache's fixed size)")\
	X(ADAPT_BUDGET_KB, adapt_budget_kb, NUM, PERCPU, 16, 1L << 30, PCP_ADAPT_BUDGET_KB,\
	  "adaptive: KiB of growth beyond the fixed sizes one CPU's magazines "\
	  "may hold over all caches")\
	X(TCACHE, tcache, FLAG, PERCPU, 0, 1, 1,			\
	  "fallback mode (no rseq: valgrind, seccomp, CONFIG_PERCPU_RSEQ=n): a "\
	  "cache per thread in front of the per-CPU locked path; 0 = every "\
	  "operation takes the CPU's lock (docs/percpu.md \"Modes\")")	\
	X(TRIM, trim, NUM, PAGE_ALLOC, 0, 1L << 40, CONFIG_PAGE_ALLOC_RESIDENT_FREE_KB,\
	  "KiB of free pages kept resident before the rest goes back to the OS")\
	X(LIMIT_MB, limit_mb, NUM, PAGE_ALLOC, 0, 1L << 30, CONFIG_PAGE_ALLOC_LIMIT_MB,\
	  "cap on memory held, MiB (0 = none); beyond it malloc fails with ENOMEM")\
	X(STATS, stats, FLAG, MALLOC, 0, 1, 0,				\
	  "print slabinfo, buddyinfo, the per-cache counters (allocs, frees, hit%, refills, flushes, depot) and malloc counters on stderr at exit")\
	X(STATS_SHM, stats_shm, FLAG, MALLOC, 0, 1, 0,			\
	  "serve live statistics to `uslab slabinfo -p PID` and `uslab top -p PID` "\
	  "(/dev/shm/uslab.PID and one sleeping thread)")		\
	X(DEBUG, debug, FLAG, MALLOC, 0, 1, 0,				\
	  "poison, red zones (from the size asked) and free checks on every "\
	  "malloc size class: slab_debug=FZP,kmalloc-*")		\
	X(FAIL_SLAB, fail_slab, FAULT, SLAB, 0, 0, 0,			\
	  "failslab: probability%[:interval[:times[:space]]] of slab allocations "\
	  "to fail with ENOMEM")					\
	X(FAIL_PAGE, fail_page, FAULT, PAGE_ALLOC, 0, 0, 0,		\
	  "fail_page_alloc: probability%[:interval[:times[:space]]] of page "\
	  "allocations to fail with ENOMEM")				\
	X(HELP, help, FLAG, MALLOC, 0, 1, 0, "print this table on stderr")

#define USLAB_TUNABLE_ID(id, name, kind, scope, min, max, def, help)	\
	USLAB_OPT_##id,
enum uslab_tunable_id {
	USLAB_TUNABLES(USLAB_TUNABLE_ID)
	USLAB_NR_TUNABLES
};
#undef USLAB_TUNABLE_ID

struct uslab_tunable {
	const char *name;
	enum uslab_tunable_kind kind;
	enum uslab_tunable_scope scope;
	long min, max;
	long def;
	const char *help;
};

/* The rows, indexed by enum uslab_tunable_id (slab/settings.c). */
extern const struct uslab_tunable uslab_tunables[USLAB_NR_TUNABLES];

/* The row called @name (@len bytes), or NULL. */
const struct uslab_tunable *uslab_tunable_find(const char *name, size_t len);

/**
 * uslab_tunable_parse - @val, the value part of an item of row @t (NULL:
 * the item had no '='), into @out. Flags without a value are 1; slab_debug
 * without one is FZPU; a fault spec is not parsed here (-EINVAL: its layer's
 * setter takes the text).
 * Return: 0, -EINVAL (malformed or missing) or -ERANGE.
 */
int uslab_tunable_parse(const struct uslab_tunable *t, const char *val, long *out);

/*
 * An item "name[.cache][=value]" cut in place into its parts (the one
 * place that splits one): @cache and @val are NULL when absent.
 */
void uslab_tunable_split(char *item, char **name, char **cache, char **val);

#ifdef __cplusplus
}
#endif

#endif /* USLAB_TUNABLES_H */
