/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU magazines: a mechanism that keeps, for each cache and each CPU, a
 * loaded magazine (array of object pointers) and a spare, with a depot of
 * full and empty magazines behind them (Bonwick's magazines, the kernel's
 * sheaves and barn). It knows nothing about slabs: the layer above supplies
 * refill and flush callbacks that move objects in batches.
 *
 * The alloc and free fast paths are each one rseq critical section ending
 * in a single committing store (x86-64); they are inline functions in
 * percpu/fastpath.h, which the slab layer includes (not installed: this
 * header is the self-contained public API). Where rseq cannot be used the
 * fallback mode serves the same API with a lock per CPU; the mode is chosen
 * once per process (pcp_mode()).
 *
 * Built with -DUSLAB_VCPU=1 (libuslab-core-vcpu.a), the same policy runs on
 * lib/cpuclock.h's virtual CPUs and clock, which the caller sets
 * (uslab_vcpu_set(), uslab_vclock_set(); the clock runs the reaper's
 * passes): no rseq, no threads, deterministic.
 *
 * Concurrency:
 *
 *   call                        | concurrent with           | safe?
 *   ----------------------------+---------------------------+------
 *   pcp_alloc / pcp_free        | each other, any thread    | yes
 *   pcp_alloc / pcp_free        | pcp_cache_drain           | yes
 *   pcp_alloc / pcp_free        | pcp_cache_set_tunables    | yes
 *   pcp_alloc / pcp_free        | pcp_reap_all (reaper)     | yes
 *   pcp_alloc / pcp_free        | pcp_cache_destroy         | no
 *   pcp_cache_stats/objects     | anything but destroy      | yes (racy sum)
 *   pcp_fork_*                  | only from pthread_atfork  |
 */
#ifndef USLAB_PERCPU_H
#define USLAB_PERCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The primitive behind the fast paths, chosen once per process. */
enum pcp_mode_id {
	PCP_MODE_OFF,		/* CONFIG_PERCPU_CACHE=n: no magazines */
	PCP_MODE_RSEQ,		/* rseq critical sections, no locks */
	PCP_MODE_FALLBACK,	/* per-CPU lock, CPU from sched_getcpu() */
	PCP_MODE_VCPU,		/* virtual CPUs named by the caller (simulator) */
};

/*
 * Statistics, declared once (X-macro). Per cache per CPU, plain
 * non-atomic increments; compiled away without CONFIG_PERCPU_STATS. The
 * hits are counted by the locked path (fallback mode, the simulator) and,
 * in rseq mode, only with CONFIG_PERCPU_HIT_STATS (docs/percpu.md,
 * "Statistics"); everything else on slow paths.
 */
#define PCP_STAT_LIST(X)						\
	X(ALLOC_HIT,	"alloc_hit")	/* served by the loaded magazine */ \
	X(FREE_HIT,	"free_hit")	/* stored into the loaded magazine */ \
	X(ALLOC_SLOW,	"alloc_slow")	/* alloc took the slow path */	\
	X(FREE_SLOW,	"free_slow")	/* free took the slow path */	\
	X(SWAP,		"swap")		/* loaded and spare exchanged */ \
	X(REFILL,	"refill")	/* batch from the layer above */ \
	X(FLUSH,	"flush")	/* batch back to the layer above */ \
	X(DEPOT_GET,	"depot_get")	/* magazine taken from the depot */ \
	X(DEPOT_PUT,	"depot_put")	/* magazine given to the depot */ \
	X(RSEQ_ABORT,	"rseq_abort")	/* critical section aborted */	\
	X(FALLBACK_OP,	"fallback_op")	/* op done under the CPU lock */ \
	X(DRAIN,	"drain")	/* CPU drained (shrink, resize, reaper) */ \
	X(DIRECT,	"direct")	/* op bypassed magazines */	\
	X(GROW,		"grow")		/* adaptive: a CPU's magazine doubled */ \
	X(SHRINK,	"shrink")	/* adaptive: halved, or given back idle */

enum pcp_stat_item {
#define PCP_STAT_ENUM(name, str) PCP_STAT_##name,
	PCP_STAT_LIST(PCP_STAT_ENUM)
#undef PCP_STAT_ENUM
	NR_PCP_STATS
};

struct pcp_stats {
	uint64_t v[NR_PCP_STATS];
};

/*
 * What the layer above supplies. @refill and @flush may be called with a
 * per-CPU lock and the depot lock of this cache held: they must not call
 * back into pcp_* functions of the same cache.
 */
struct pcp_ops {
	/* Put up to @nr objects in @objs. Return: how many (0 = ENOMEM). */
	unsigned int (*refill)(void *owner, void **objs, unsigned int nr);
	/* Take back @nr objects. */
	void (*flush)(void *owner, void **objs, unsigned int nr);
	/*
	 * Optional: asked by pcp_alloc_slow() and pcp_free_slow() before
	 * they take any lock, with none held (the slab layer's checks for a
	 * signal handler inside the allocator; it may give back work of its
	 * own first). false: the slow path takes no lock and calls neither
	 * hook above; the operation is the caller's.
	 */
	bool (*may_lock)(void *owner);
};

/* One per cache; its layout is private to percpu/ (percpu/fastpath.h). */
struct pcp_cache;

/**
 * pcp_init - choose the mode, find the possible CPUs; idempotent.
 * Context: any thread; every entry point calls it. Never allocates.
 * Return: 0.
 */
int pcp_init(void);

/** pcp_mode - "off", "rseq", "fallback" or "vcpu". Context: any. */
const char *pcp_mode(void);
enum pcp_mode_id pcp_mode_id(void);

/**
 * pcp_nr_cpu_ids - length of the per-CPU arrays: the kernel's own bound on
 * CPU numbers (the size of its cpumask, from sched_getaffinity), at least
 * the possible CPUs of sysfs. No CPU the kernel names reaches it.
 */
unsigned int pcp_nr_cpu_ids(void);

/**
 * pcp_default_limit - magazine size for objects of @size bytes: by object
 * count, CONFIG_PERCPU_MAG_SIZE or when that is 0 120 up to 256 B, 54 up
 * to 1 KiB, 64 above; then bounded in bytes, at most
 * CONFIG_PERCPU_MAG_BYTES / @size objects but at least
 * CONFIG_PERCPU_MAG_MIN (or the count, when that is smaller), and 1.
 * Return: the limit.
 */
unsigned int pcp_default_limit(unsigned int size);
/** pcp_default_batchcount - CONFIG_PERCPU_BATCHCOUNT, or (@limit + 1) / 2. */
unsigned int pcp_default_batchcount(unsigned int limit);
/**
 * pcp_default_depot_limit - full magazines the depot of a cache of @size
 * byte objects keeps by default: CONFIG_PERCPU_DEPOT_LIMIT magazines of
 * the largest kind (CONFIG_PERCPU_MAG_BYTES each) in bytes, as many
 * magazines of the default size as that holds, between
 * CONFIG_PERCPU_DEPOT_LIMIT and four times it; PCP_DEPOT_UNLIMITED when
 * the Kconfig value is -1, 0 when it is 0.
 * Return: the limit.
 */
unsigned int pcp_default_depot_limit(unsigned int size);
/** pcp_cache_default_depot_limit - pcp_default_depot_limit() of @pc's objects. */
unsigned int pcp_cache_default_depot_limit(const struct pcp_cache *pc);

/**
 * pcp_cache_create - per-CPU magazines in front of a cache.
 * @name: copied (truncated to 31 bytes), for messages.
 * @owner: passed to @ops.
 * @ops: refill and flush (must outlive the pcp_cache).
 * @objsize: object size, for the default limit.
 * Context: may sleep; takes the registry lock. Memory from page_alloc.
 * Return: the pcp_cache, or NULL with errno ENOMEM; NULL with errno
 * EOPNOTSUPP in mode "off" (the caller then goes to its own slow path).
 */
struct pcp_cache *pcp_cache_create(const char *name, void *owner,
				   const struct pcp_ops *ops,
				   unsigned int objsize);

/**
 * pcp_cache_bypass - the shared cache that never caches (every fast path
 * misses on it). Its slow paths must not be called: the caller checks
 * pcp_cache_is_bypass() on a miss. Drain, tunables, stats and destroy
 * accept it and do nothing.
 * Return: it, or NULL in mode "off".
 */
struct pcp_cache *pcp_cache_bypass(void);

bool pcp_cache_is_bypass(const struct pcp_cache *pc);

/**
 * pcp_cache_destroy - drain every CPU and the depot into @ops->flush, then
 * free the magazines. Context: no concurrent use of @pc. NULL is ignored.
 */
void pcp_cache_destroy(struct pcp_cache *pc);

/**
 * pcp_cache_drain - flush every CPU's magazines and the whole depot back
 * to the layer above. Remote CPUs are stopped and fenced (membarrier).
 * Context: may sleep; safe while other threads use @pc.
 */
void pcp_cache_drain(struct pcp_cache *pc);

/**
 * pcp_cache_set_tunables - magazine size and batch count.
 * @limit: objects per magazine, 1..4096.
 * @batchcount: objects per refill or flush, 1..@limit.
 * Every magazine of the old size is drained first. A size or batch other
 * than the defaults (pcp_default_limit(), pcp_default_batchcount()) stays
 * as set; with the defaults the cache's magazines may grow while it
 * cycles (docs/percpu.md, "Magazines that grow while a cache cycles").
 * Context: may sleep; safe while other threads use @pc.
 * Return: 0 or -EINVAL.
 */
int pcp_cache_set_tunables(struct pcp_cache *pc, unsigned int limit,
			   unsigned int batchcount);
void pcp_cache_get_tunables(const struct pcp_cache *pc, unsigned int *limit,
			    unsigned int *batchcount);

/**
 * pcp_cache_set_depot_limit - full magazines @pc's depot may keep.
 * @limit: 0 (no depot) .. PCP_DEPOT_UNLIMITED.
 * When the depot holds more full magazines than the new limit, all of its
 * magazines are flushed back to the layer above at once.
 * Context: may sleep; safe while other threads use @pc.
 * Return: 0.
 */
#define PCP_DEPOT_UNLIMITED	(~0u)

/*
 * The reaper's period (ms): Kconfig's, or Kconfig's default where no
 * reaper is built (the simulator's virtual clock still ticks at it). The
 * one fallback: percpu/, the reaper_ms row of <uslab/tunables.h>.
 */
#ifdef CONFIG_PERCPU_REAPER_PERIOD_MS
#define PCP_REAPER_PERIOD_MS	CONFIG_PERCPU_REAPER_PERIOD_MS
#else
#define PCP_REAPER_PERIOD_MS	2000
#endif
/*
 * Adaptive magazines (below): on or off, the bounds in bytes and the
 * per-CPU budget in KiB, Kconfig's or Kconfig's defaults where magazines
 * are not built. The one fallback: percpu/, the adapt rows of
 * <uslab/tunables.h>.
 */
#ifdef CONFIG_PERCPU_ADAPT
#define PCP_ADAPT_DEFAULT	1
#else
#define PCP_ADAPT_DEFAULT	0
#endif
#ifdef CONFIG_PERCPU_ADAPT_MIN_BYTES
#define PCP_ADAPT_MIN_BYTES	CONFIG_PERCPU_ADAPT_MIN_BYTES
#define PCP_ADAPT_MAX_BYTES	CONFIG_PERCPU_ADAPT_MAX_BYTES
#define PCP_ADAPT_BUDGET_KB	CONFIG_PERCPU_ADAPT_BUDGET_KB
#else
#define PCP_ADAPT_MIN_BYTES	4096
#define PCP_ADAPT_MAX_BYTES	32768
#define PCP_ADAPT_BUDGET_KB	4096
#endif
int pcp_cache_set_depot_limit(struct pcp_cache *pc, unsigned int limit);
unsigned int pcp_cache_get_depot_limit(const struct pcp_cache *pc);

/*
 * Adaptive sizing (docs/percpu.md, "Adaptive sizing"): per cache and CPU,
 * magazines grow when slow paths go to the layer above often and shrink
 * when objects sit unused, within bounds in bytes and a per-CPU budget.
 * pcp_adapt_set - on or off (CONFIG_PERCPU_ADAPT by default); takes effect
 * at each CPU's next slow path. pcp_adapt_set_bounds - @min_bytes (first
 * and smallest magazine), @max_bytes (largest), @budget_kb (per CPU, over
 * every cache's two magazines); 0 keeps a value. Return: 0 or -EINVAL.
 * Call both before the caches are busy (options, the simulator's setup).
 */
void pcp_adapt_set(bool on);
bool pcp_adapt_enabled(void);
int pcp_adapt_set_bounds(unsigned long min_bytes, unsigned long max_bytes,
			 unsigned long budget_kb);
void pcp_adapt_get_bounds(unsigned long *min_bytes, unsigned long *max_bytes,
			  unsigned long *budget_kb);
/*
 * pcp_cache_mag_range - smallest and largest magazine size (objects) in
 * force on @pc's CPUs that have one (adaptive), or the fixed limit twice.
 */
void pcp_cache_mag_range(struct pcp_cache *pc, unsigned int *lo,
			 unsigned int *hi);

/*
 * Fallback mode's cache per thread (docs/percpu.md "Modes"): on by
 * default; off, every operation takes the CPU's lock (objects already in
 * thread caches stay there until their thread's next miss, exit or the
 * cache's destroy). pcp_thread_cache_enabled: the process is in fallback
 * mode and it is on.
 */
void pcp_thread_cache_set(bool on);
bool pcp_thread_cache_enabled(void);

/**
 * pcp_cache_stats - sum of the statistics of CPU @cpu, or of all CPUs
 * when @cpu < 0. All zero without CONFIG_PERCPU_STATS.
 * Context: any; lock-free, the sum is not a snapshot.
 */
void pcp_cache_stats(struct pcp_cache *pc, int cpu, struct pcp_stats *st);
/** pcp_stat_name - "alloc_hit", ... for @item. */
const char *pcp_stat_name(enum pcp_stat_item item);

/**
 * pcp_cache_objects - objects held in magazines (every CPU) and the depot.
 * Exact only when nothing else runs on @pc.
 * @depot_full: if not NULL, full magazines in the depot.
 */
unsigned long pcp_cache_objects(struct pcp_cache *pc, unsigned long *depot_full);

/**
 * pcp_page_bytes - bytes of page_alloc memory percpu holds for itself:
 * the caches' blocks (headers, depot, slow[]), magazines and struct
 * pcp_cpu (percpu/mem.c's pages, carved or whole). Not the objects in
 * the magazines: those are the slab layer's. mallinfo2() leaves these
 * bytes out of what the program uses (docs/malloc.md "Introspection").
 */
size_t pcp_page_bytes(void);

/**
 * pcp_reap_all - one reaper pass over every cache: trim each depot to its
 * working set (Bonwick: magazines unused during the last period go back),
 * drain CPUs idle since the last pass. The reaper thread calls it each
 * CONFIG_PERCPU_REAPER_PERIOD_MS; the simulator gets it from the clock.
 * Context: may sleep.
 */
void pcp_reap_all(void);

/** pcp_drain_all - pcp_cache_drain() on every cache. */
void pcp_drain_all(void);

/*
 * pthread_atfork handlers for the malloc layer: prepare takes every
 * per-CPU, depot and registry lock; parent and child release them. The
 * child has no reaper (it is not restarted before exec); the rseq
 * registration of the forking thread survives the fork.
 */
void pcp_fork_prepare(void);
void pcp_fork_parent(void);
void pcp_fork_child(void);

/* Stops the reaper thread (also done at exit). */
void pcp_reaper_stop(void);
/* Was the reaper thread started? */
bool pcp_reaper_running(void);
/*
 * pcp_reaper_set_period - reaper period in ms (10..600000) from its next
 * wait on. Return: 0, -EINVAL, or -EOPNOTSUPP without the reaper.
 */
int pcp_reaper_set_period(unsigned long ms);

/*
 * pcp_vcpu_set_nr - the number of virtual CPUs (lib/cpuclock.h's) before
 * the first cache exists (default 64); libuslab-core-vcpu.a only,
 * elsewhere -EOPNOTSUPP. The CPU and the clock are lib/cpuclock.h's
 * (uslab_vcpu_set, uslab_vclock_set).
 */
int pcp_vcpu_set_nr(unsigned int nr);

/**
 * pcp_alloc_slow - an object from this CPU's magazines, the depot or a
 * refill, under the CPU's lock: the one alloc miss entry (behind the
 * inline pcp_alloc_fast() of percpu/fastpath.h, for layers that link it).
 * Not on a bypass cache.
 * Return: the object, or NULL: the layer above is out of memory, or its
 * may_lock hook said no.
 */
void *pcp_alloc_slow(struct pcp_cache *pc);
/**
 * pcp_free_slow - give @obj to this CPU's magazines (the depot, or a flush
 * to the layer above when they are full), under the lock: the one free
 * miss entry. Not on a bypass cache.
 * Return: true when done; false when the may_lock hook said no (@obj is
 * still the caller's).
 */
bool pcp_free_slow(struct pcp_cache *pc, void *obj);

#ifdef __cplusplus
}
#endif

#endif /* USLAB_PERCPU_H */
