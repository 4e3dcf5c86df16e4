// SPDX-License-Identifier: MIT
/*
 * The magazine and depot policy, written once for every primitive: rseq
 * sections (library), a lock per CPU (fallback) and virtual CPUs
 * (simulator). Only prim_pop/prim_push/prim_swap differ between them.
 *
 * Per cache, per CPU: a loaded magazine (the fast paths pop and push on
 * it) and a spare. Alloc on an empty loaded magazine: swap with a spare
 * that has objects, else take a full magazine from the depot (the empty
 * one becomes the spare, the old spare goes to the depot's empties), else
 * refill a batch from the layer above. Free on a full loaded magazine:
 * swap with a spare that has room, else put the full spare in the depot
 * and load an empty magazine, else (depot at its limit) flush a batch to
 * the layer above. The depot keeps Bonwick's working set: magazines not
 * needed during a whole reaper period go back.
 *
 * Locks, outermost first (never two of the same kind at once, except
 * pcp_fork_prepare, which takes every CPU lock in CPU order); the whole
 * library's order, with slab_mutex above these and fork's order, is in
 * docs/locking.md:
 *
 *   pcp_tc_lock         fallback mode's thread caches (percpu/tcache.c, where
 *                       its rules are): above every lock here
 *   pcp_registry_lock   the list of caches: walks (reaper pass, drain all,
 *                       fork) and removal; creation pushes lock-free: a
 *                       cache may be created (under slab_mutex) by a malloc
 *                       made from a flush inside a walk that holds it
 *   pcp_cache->lock     lazy pcp_cpu allocation, tunables, drain of all CPUs
 *   pcp_cpu->lock       the CPU's slow paths and remote drains; the spare;
 *                       the loaded magazine; the header's begin and end
 *                       (closed while a swap or a remote drain works)
 *   pcp_depot->lock     the depot's lists and working-set marks
 *   (layer above)       ops->refill and ops->flush take the slab lock
 *   pcp_mem_lock        magazine memory; page_alloc's lock inside it
 *
 * The fast paths take no lock: they only move the header's cur inside an
 * rseq section on their CPU. Whoever loads another magazine first closes
 * the header in an rseq section on that CPU (slow path), or closes it and
 * fences the CPU with membarrier (remote), then opens it on the new one.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include "lib/log.h"
#include "lib/sigsafe.h"
#include "uslab/page_alloc.h"
#include "percpu/internal.h"

static void *pcp_empty_slots[1];
struct pcp_mag pcp_empty_mag = { .count = 0, .size = 0, .objs = pcp_empty_slots };

pthread_mutex_t pcp_registry_lock = PTHREAD_MUTEX_INITIALIZER;
struct pcp_cache *pcp_registry;

static const char *const pcp_stat_names[] = {
#define PCP_STAT_NAME(name, str) [PCP_STAT_##name] = str,
	PCP_STAT_LIST(PCP_STAT_NAME)
#undef PCP_STAT_NAME
};

const char *pcp_stat_name(enum pcp_stat_item item)
{
	return item < NR_PCP_STATS ? pcp_stat_names[item] : "?";
}

static __always_inline void pcp_stat(struct pcp_cpu *c, enum pcp_stat_item i)
{
	if (IS_ENABLED(CONFIG_PERCPU_STATS))
		c->stat[i]++;
}

/* ------------------------------------------------------------------ */
/* Defaults and tunables */

/*
 * Small objects (the table's 120 row, up to 256 B): a magazine holds at
 * least PCP_MAG_SMALL_BYTES of them (up to PCP_MAG_SMALL_MAX objects),
 * not 120, so that a burst of small
 * blocks costs one slow path per PCP_MAG_SMALL_BYTES / 2 rather than per
 * 60 objects (sh8bench: 466,000 refills of kmalloc-16 in a run, each a
 * cache-lock round trip; docs/percpu.md, "Tunables and defaults").
 */
#define PCP_MAG_SMALL_BYTES	16384u
#define PCP_MAG_SMALL_MAX	1024u

/* The old SLAB's enable_cpucache() count by size up to 1 KiB, 64 above. */
static unsigned int pcp_table_limit(unsigned int size)
{
	if (size > 1024)
		return 64;
	if (size > 256)
		return 54;
	return 120;
}

/*
 * Objects by size (the table above, more for small objects, or
 * CONFIG_PERCPU_MAG_SIZE), then the byte bound: a magazine holds at most
 * CONFIG_PERCPU_MAG_BYTES of objects, but never fewer than
 * CONFIG_PERCPU_MAG_MIN (nor more than the count). The floor is for the
 * large classes: how far one class's working set moves is a number of
 * blocks, whatever their size, and magazines of 1-3 blocks of 64-256 KiB
 * went to the depot on one operation in ten of mtmalloc's ring of 32
 * blocks (issue 18; docs/percpu.md, "Tunables and defaults"). The two
 * magazines one CPU keeps per cache stay within
 * 2 * max(CONFIG_PERCPU_MAG_BYTES, CONFIG_PERCPU_MAG_MIN * size) bytes.
 */
unsigned int pcp_default_limit(unsigned int size)
{
	unsigned int objs, cap, floor;

	if (CONFIG_PERCPU_MAG_SIZE > 0) {
		objs = CONFIG_PERCPU_MAG_SIZE;
	} else {
		objs = pcp_table_limit(size);
		if (size && size <= 256 && PCP_MAG_SMALL_BYTES / size > objs)
			objs = min_t(unsigned int, PCP_MAG_SMALL_BYTES / size,
				     PCP_MAG_SMALL_MAX);
	}
	cap = size ? CONFIG_PERCPU_MAG_BYTES / size : objs;
	floor = min_t(unsigned int, objs, CONFIG_PERCPU_MAG_MIN);
	return max_t(unsigned int, 1,
		     max_t(unsigned int, floor, min_t(unsigned int, objs, cap)));
}

unsigned int pcp_default_batchcount(unsigned int limit)
{
	if (CONFIG_PERCPU_BATCHCOUNT > 0)
		return min_t(unsigned int, CONFIG_PERCPU_BATCHCOUNT, limit);
	return (limit + 1) / 2;
}

/*
 * In bytes rather than magazines: the Kconfig count was sized for the
 * largest magazines (CONFIG_PERCPU_MAG_BYTES of large objects); a depot of
 * small objects' magazines (120 * 64 B) held 16 of them, 120 KiB, and
 * producer/consumer traffic between CPUs overflowed it to the slab layer
 * (xmalloc-test: 33,000 flushes and refills per class in a second; with
 * 64: +35% operations per second, RSS no higher).
 */
unsigned int pcp_default_depot_limit(unsigned int size)
{
	uint64_t lim = CONFIG_PERCPU_DEPOT_LIMIT, per, n, table, bytes;

	if (CONFIG_PERCPU_DEPOT_LIMIT < 0)
		return PCP_DEPOT_UNLIMITED;
	per = (uint64_t)pcp_default_limit(size) * (size ? size : 1);
	/* counted in magazines of the table's size... */
	table = CONFIG_PERCPU_MAG_SIZE > 0 ? per :
		(uint64_t)max_t(unsigned int, 1,
				min_t(unsigned int, pcp_table_limit(size),
				      size ? CONFIG_PERCPU_MAG_BYTES / size : 1)) *
		(size ? size : 1);
	n = lim * (uint64_t)CONFIG_PERCPU_MAG_BYTES / table;
	n = min_t(uint64_t, max_t(uint64_t, n, lim), 4 * lim);
	/* ...so that the larger magazines of small objects keep the same
	 * bytes in the depot, in fewer magazines (rounded up) */
	bytes = n * table;
	return (unsigned int)((bytes + per - 1) / per);
}

unsigned int pcp_cache_default_depot_limit(const struct pcp_cache *pc)
{
	return pcp_default_depot_limit(pc->objsize);
}

/* ------------------------------------------------------------------ */
/* Adaptive sizing (docs/percpu.md, "Adaptive sizing") */

static void mag_free(struct pcp_mag *m);
static void adapt_shed_locked(struct pcp_cache *pc, struct pcp_cpu *c);
static void pcp_mag_grow(struct pcp_cache *pc);

/* Slow paths per window; ask to grow when half went to the layer above. */
#define PCP_ADAPT_WINDOW	16u
/* Windows in a row with objects unused before a cache gives room. */
#define PCP_ADAPT_QUIET		2u
/*
 * Slow paths per window of a CPU whose bounds leave it one size (its start
 * is both its floor and its upper bound: the one-object magazines of the
 * 128-256 KiB classes): nothing to decide, so its windows end this seldom
 * (a bounds change reaches it within as many slow paths, or at a drain).
 */
#define PCP_ADAPT_ONE_SIZE_WINDOW	65536u

bool pcp_adapt_on = PCP_ADAPT_DEFAULT;
static unsigned long adapt_min_bytes = PCP_ADAPT_MIN_BYTES;
static unsigned long adapt_max_bytes = PCP_ADAPT_MAX_BYTES;
static unsigned long adapt_budget = PCP_ADAPT_BUDGET_KB * 1024ul;
/* Bumped by each change of the bounds: a CPU's copy of them is stale. */
static unsigned int adapt_gen = 1;
/*
 * Each CPU's accounts, over every cache (one struct, so that the CPUs a
 * process runs on touch one page of them, not three):
 * @used: bytes of growth beyond the start sizes (the adapt_budget bound);
 * @room: bytes of capacity its caches gave up below their start sizes and
 *   no cache has taken yet. A cache starting on a CPU brings its two
 *   magazines at the fixed size (its base); growth is paid out of the room
 *   only, so the CPU's magazines never hold more than the fixed sizes of
 *   the caches it uses would (tcmalloc moves capacity between size classes
 *   the same way). Signed: a single cache's drain takes back what it gave,
 *   which others may hold; no growth until that is paid back;
 * @want: bytes of growth a cache of the CPU asked for and did not get;
 * @wanter: which (its per-CPU state; compared, never followed): a cache
 *   does not shrink to pay for its own growth.
 */
static struct {
	unsigned long used;
	long room;
	unsigned long want;
	const struct pcp_cpu *wanter;
} adapt_acct[PCP_MAX_CPU_IDS];

void pcp_adapt_set(bool on)
{
	WRITE_ONCE(pcp_adapt_on, on);
}

bool pcp_adapt_enabled(void)
{
	return READ_ONCE(pcp_adapt_on);
}

int pcp_adapt_set_bounds(unsigned long min_bytes, unsigned long max_bytes,
			 unsigned long budget_kb)
{
	unsigned long lo = min_bytes ? min_bytes : adapt_min_bytes;
	unsigned long hi = max_bytes ? max_bytes : adapt_max_bytes;

	if (lo > hi || hi > (1ul << 30) ||
	    (budget_kb && budget_kb > (1ul << 30)))
		return -EINVAL;
	WRITE_ONCE(adapt_min_bytes, lo);
	WRITE_ONCE(adapt_max_bytes, hi);
	if (budget_kb)
		WRITE_ONCE(adapt_budget, budget_kb * 1024ul);
	__atomic_add_fetch(&adapt_gen, 1, __ATOMIC_RELAXED);
	return 0;
}

void pcp_adapt_get_bounds(unsigned long *min_bytes, unsigned long *max_bytes,
			  unsigned long *budget_kb)
{
	*min_bytes = READ_ONCE(adapt_min_bytes);
	*max_bytes = READ_ONCE(adapt_max_bytes);
	*budget_kb = READ_ONCE(adapt_budget) / 1024;
}

/* A cache's bounds in objects: [1, PCP_MAX_LIMIT], lo <= hi. */
static unsigned int adapt_objs(const struct pcp_cache *pc, unsigned long bytes)
{
	unsigned long n = bytes / (pc->objsize ? pc->objsize : 1);

	return (unsigned int)max_t(unsigned long, 1,
				   min_t(unsigned long, n, PCP_MAX_LIMIT));
}

static unsigned int adapt_lo(const struct pcp_cache *pc)
{
	return adapt_objs(pc, READ_ONCE(adapt_min_bytes));
}

static unsigned int adapt_start(const struct pcp_cache *pc);

/* The smallest size a shrink leaves: adapt_min, never above the start. */
static unsigned int adapt_floor(const struct pcp_cache *pc)
{
	return min_t(unsigned int, adapt_lo(pc), adapt_start(pc));
}

/*
 * The upper bound: adapt_max's objects, and never fewer than the cache's
 * fixed size (8 objects of 32 KiB by default, where 32 KiB of bytes
 * allowed one: one-object magazines sent every other operation of
 * glibc_thread's and mt's large classes to the depot).
 */
static unsigned int adapt_hi(const struct pcp_cache *pc)
{
	unsigned int hi = adapt_objs(pc, READ_ONCE(adapt_max_bytes));

	return max_t(unsigned int, hi, READ_ONCE(pc->limit));
}

/*
 * The size a CPU starts at (and goes back to when idle or drained): the
 * cache's fixed size (its limit: the default by object size, or
 * mag_size), so that until a resize adaptive and fixed magazines are the
 * same, also where adapt_min is above it (a mag_size or preset below 4 KiB
 * of objects: kv_item's 40-byte objects at mag_size 64 started at 102, and
 * slabinfo -w showed 102). Starting at adapt_min made the
 * random-replacement rows (glibc_thread, alloc_test, mt) run on magazines
 * a fraction of the fixed size for good: their slow paths are mostly swaps
 * with the spare, never half misses, so nothing grew them (speed against
 * the fixed defaults 0.45-0.74, docs/percpu.md, "Adaptive sizing").
 */
static unsigned int adapt_start(const struct pcp_cache *pc)
{
	return max_t(unsigned int, 1, READ_ONCE(pc->limit));
}

/*
 * What two magazines of @size objects hold beyond two at the start size,
 * in bytes: the budget bounds growth, not the start (the fixed defaults'
 * sizes of every cache summed pass 4 MiB on their own).
 */
static unsigned long adapt_bytes(const struct pcp_cache *pc, unsigned int size)
{
	unsigned int start = adapt_start(pc);

	if (size <= start)
		return 0;
	return 2ul * (size - start) * (pc->objsize ? pc->objsize : 1);
}

/* Two magazines of @size objects of @pc, in bytes. */
static unsigned long adapt_cap_bytes(const struct pcp_cache *pc,
				     unsigned int size)
{
	return 2ul * size * (pc->objsize ? pc->objsize : 1);
}

/*
 * Move CPU @c of @pc to @size objects, in the CPU's budget account and its
 * room (what it gives up below the start goes in, growth comes out).
 */
static void adapt_account(struct pcp_cache *pc, struct pcp_cpu *c,
			  unsigned int size)
{
	unsigned long *used = &adapt_acct[c->cpu].used, bytes = adapt_bytes(pc, size);
	unsigned long cap = adapt_cap_bytes(pc, size);

	__atomic_sub_fetch(used, c->acct, __ATOMIC_RELAXED);
	__atomic_add_fetch(used, bytes, __ATOMIC_RELAXED);
	__atomic_add_fetch(&adapt_acct[c->cpu].room, (long)c->cap - (long)cap,
			   __ATOMIC_RELAXED);
	c->acct = bytes;
	c->cap = cap;
	c->size = size;
}

/* Take @need bytes out of CPU @cpu's room, if it has them. */
static bool adapt_room_take(int cpu, unsigned long need)
{
	long room = __atomic_load_n(&adapt_acct[cpu].room, __ATOMIC_RELAXED);

	do {
		if (room < (long)need)
			return false;
	} while (!__atomic_compare_exchange_n(&adapt_acct[cpu].room, &room,
					      room - (long)need, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

/* @bytes of a pending growth request of CPU @cpu met (taken or given). */
static void adapt_want_met(int cpu, unsigned long bytes)
{
	unsigned long w = __atomic_load_n(&adapt_acct[cpu].want, __ATOMIC_RELAXED);

	__atomic_store_n(&adapt_acct[cpu].want, w > bytes ? w - bytes : 0,
			 __ATOMIC_RELAXED);
}

/*
 * First use of CPU @c of @pc (adaptive), or the first after a drain: the
 * start size; its two fixed-size magazines come with it (room unchanged).
 * Out of line: once per CPU and cache. The window (its marks and count)
 * starts with the CPU (pcp_get_cpu) or the drain (adapt_reset_locked).
 */
/*
 * CPU @c's copy of @pc's bounds in objects (a window's end reads them: two
 * divisions by the object size a window were most of what a window cost).
 * Taken again after a bounds change (adapt_gen) or a drain (a new limit
 * drains every CPU).
 */
static void adapt_cpu_bounds(struct pcp_cache *pc, struct pcp_cpu *c)
{
	c->hi = (uint16_t)adapt_hi(pc);
	c->floor = (uint16_t)adapt_floor(pc);
	c->gen = READ_ONCE(adapt_gen);
}

static __slowpath void adapt_cpu_init(struct pcp_cache *pc,
				      struct pcp_cpu *c)
{
	adapt_cpu_bounds(pc, c);
	c->base = c->cap = adapt_cap_bytes(pc, adapt_start(pc));
	adapt_account(pc, c, adapt_start(pc));
}

/*
 * The size a new magazine of CPU @c gets: the cache's fixed limit, or
 * (adaptive) the CPU's own size, which starts at the fixed size.
 */
static inline unsigned int cpu_mag_size(struct pcp_cache *pc, struct pcp_cpu *c)
{
	if (!READ_ONCE(pcp_adapt_on))
		return READ_ONCE(pc->limit);
	if (unlikely(!c->size))
		adapt_cpu_init(pc, c);
	return c->size;
}

/*
 * Objects per refill or flush: the cache's batch, also on an adaptive CPU
 * at the start size (the same as fixed until a resize); at another size
 * half the magazine.
 */
static unsigned int cpu_batch(struct pcp_cache *pc, struct pcp_cpu *c)
{
	unsigned int size;

	if (!READ_ONCE(pcp_adapt_on))
		return READ_ONCE(pc->batchcount);
	size = cpu_mag_size(pc, c);
	if (size == adapt_start(pc))
		return READ_ONCE(pc->batchcount);
	return (size + 1) / 2;
}

/*
 * Whether the depot keeps @m: a fixed-size cache only its limit's
 * magazines (a resize replaces them); adaptive, any size (a CPU that
 * wants another size replaces an empty one when it takes it).
 */
static bool mag_depot_size_ok(const struct pcp_cache *pc,
			      const struct pcp_mag *m)
{
	return READ_ONCE(pcp_adapt_on) || m->size == READ_ONCE(pc->limit);
}

/*
 * A slow path of CPU @c took a lock beyond its own: a trip to the layer
 * above (refill, flush) or to the depot (get, put). Bonwick's contention
 * signal, tcmalloc's miss; a swap with the spare is not one.
 */
static inline void adapt_miss(struct pcp_cpu *c)
{
	if (!IS_ENABLED(CONFIG_PERCPU_STATS) && READ_ONCE(pcp_adapt_on))
		c->misses++;
}

/*
 * Trips so far: with PERCPU_STATS the four counters each trip bumps anyway
 * (a slow path pays nothing more for adapting), else adapt_miss()'s count.
 */
static inline uint64_t adapt_misses(const struct pcp_cpu *c)
{
	if (!IS_ENABLED(CONFIG_PERCPU_STATS))
		return c->misses;
	return c->stat[PCP_STAT_REFILL] + c->stat[PCP_STAT_FLUSH] +
	       c->stat[PCP_STAT_DEPOT_GET] + c->stat[PCP_STAT_DEPOT_PUT];
}

/* A new window of CPU @c: its count, its misses' start, its low-water mark. */
static void adapt_window_start(struct pcp_cpu *c)
{
	c->win_left = PCP_ADAPT_WINDOW;
	c->miss_snap = adapt_misses(c);
	c->win_low = ~0ull;
}

/*
 * One slow path of CPU @c (an alloc on an empty or a free on a full loaded
 * magazine), @held objects in its magazines at that moment. Every
 * PCP_ADAPT_WINDOW slow paths: when half or more went to the layer above
 * and the CPU ran short (held less than half a magazine at one of them),
 * the magazine doubles, within the cache's upper bound, the CPU's budget
 * of growth and its room (paid by other caches' shrinks; when the room is
 * short the CPU records what was wanted). Else, after PCP_ADAPT_QUIET
 * windows in a row with half a magazine or more held at every slow path
 * (jemalloc's low-water mark: objects it never needed) and few misses,
 * while another cache of the CPU wants room, the cache shrinks by what is
 * wanted (at most half, not below the floor) and gives the difference.
 * Counted on the slow path only, in the same order in every mode, so that
 * the simulator takes the same decisions as a real run.
 * adapt_window() is the window's end (every PCP_ADAPT_WINDOW-th slow path).
 * Return: true when the CPU shrank and must shed its spare (the caller
 * does it: adapt_shed_locked).
 */
static noinline bool adapt_window(struct pcp_cache *pc,
				  struct pcp_cpu *c)
{
	unsigned int size = cpu_mag_size(pc, c), hi, want;
	unsigned long need, per;
	bool unused, missed, drain = false;

	if (c->win_low < c->low)	/* the reaper's mark, window by window */
		c->low = c->win_low;
	if (unlikely(c->gen != READ_ONCE(adapt_gen)))
		adapt_cpu_bounds(pc, c);
	hi = c->hi;
	if (hi <= size && size <= c->floor) {
		c->win_quiet = 0;
		adapt_window_start(c);
		c->win_left = PCP_ADAPT_ONE_SIZE_WINDOW;
		return false;
	}
	want = min_t(unsigned int, 2 * size, hi);
	unused = c->win_low >= (size + 1) / 2;
	missed = 2 * (adapt_misses(c) - c->miss_snap) >= PCP_ADAPT_WINDOW;
	c->win_quiet = unused && !missed ? c->win_quiet + 1 : 0;
	if (!unused && missed && want > size &&
	    __atomic_load_n(&adapt_acct[c->cpu].used, __ATOMIC_RELAXED) -
	    c->acct + adapt_bytes(pc, want) <= READ_ONCE(adapt_budget)) {
		need = adapt_cap_bytes(pc, want) - c->cap;
		if (adapt_room_take(c->cpu, need)) {
			c->cap += need;	/* paid out of the room already */
			adapt_account(pc, c, want);
			adapt_want_met(c->cpu, need);
			pcp_stat(c, PCP_STAT_GROW);
			pcp_probe(pcp_resize, pc->name, want, (want + 1) / 2);
		} else if (need > __atomic_load_n(&adapt_acct[c->cpu].want,
						  __ATOMIC_RELAXED)) {
			__atomic_store_n(&adapt_acct[c->cpu].want, need,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&adapt_acct[c->cpu].wanter, c,
					 __ATOMIC_RELAXED);
		}
	} else if (c->win_quiet >= PCP_ADAPT_QUIET && size > c->floor &&
		   __atomic_load_n(&adapt_acct[c->cpu].want, __ATOMIC_RELAXED) &&
		   __atomic_load_n(&adapt_acct[c->cpu].wanter,
				   __ATOMIC_RELAXED) != c) {
		/* what is wanted, at most half of it, not below the floor */
		per = adapt_cap_bytes(pc, 1);
		need = __atomic_load_n(&adapt_acct[c->cpu].want, __ATOMIC_RELAXED);
		need = (need + per - 1) / per;
		want = size - (unsigned int)min_t(unsigned long, need, size / 2);
		want = max_t(unsigned int, c->floor, want);
		adapt_want_met(c->cpu, c->cap - adapt_cap_bytes(pc, want));
		adapt_account(pc, c, want);
		pcp_stat(c, PCP_STAT_SHRINK);
		pcp_probe(pcp_resize, pc->name, want, (want + 1) / 2);
		c->win_quiet = 0;
		drain = true;
	}
	adapt_window_start(c);
	return drain;
}

/*
 * What every slow path pays (inline, a few instructions; the rest once a
 * window, out of line): the window's low-water mark and its count. The
 * reaper's mark (c->low) is folded in at the window's end and read with
 * the open window's (adapt_reap_locked), not kept on every slow path: on
 * rows whose every operation is a slow path (mt_256k) the bookkeeping
 * cost 3-8% of CPU time (docs/percpu.md, "Adaptive sizing").
 */
static inline bool adapt_slow(struct pcp_cache *pc, struct pcp_cpu *c,
			      uint64_t held)
{
	if (!READ_ONCE(pcp_adapt_on))
		return false;
	if (held < c->win_low)
		c->win_low = held;
	if (likely(--c->win_left))
		return false;
	return adapt_window(pc, c);
}

/*
 * CPU @c of its cache stops wanting room (a drain starts it over at the
 * start size; a destroy frees it): the CPU's record of what it asked for
 * goes with it, or the other caches of the CPU went on shrinking to pay
 * for growth nobody would take, and a pcp_cpu allocated later at the
 * same address was taken for the wanter. Another cache's wish stored
 * between the load and the stores is lost; it asks again at its next
 * window.
 */
static void adapt_forget_want(struct pcp_cpu *c)
{
	if (__atomic_load_n(&adapt_acct[c->cpu].wanter, __ATOMIC_RELAXED) != c)
		return;
	__atomic_store_n(&adapt_acct[c->cpu].want, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&adapt_acct[c->cpu].wanter, NULL, __ATOMIC_RELAXED);
}

/*
 * A drain of the whole cache (kmem_cache_shrink, a resize): CPU @c gives
 * its growth back and starts over at the start size, as a new CPU
 * does (so a real run drained before its timed part starts where the
 * simulator starts).
 */
static void adapt_reset_locked(struct pcp_cache *pc, struct pcp_cpu *c)
{
	adapt_forget_want(c);
	if (!c->size)
		return;
	if (c->size > adapt_start(pc))
		pcp_stat(c, PCP_STAT_SHRINK);
	__atomic_sub_fetch(&adapt_acct[c->cpu].used, c->acct, __ATOMIC_RELAXED);
	/* what it gave below its base goes back with it */
	__atomic_add_fetch(&adapt_acct[c->cpu].room, (long)c->cap - (long)c->base,
			   __ATOMIC_RELAXED);
	c->acct = c->cap = c->base = 0;
	c->size = 0;
	c->low = ~0ull;
	c->win_quiet = 0;
	adapt_window_start(c);
}

/*
 * An empty magazine @m CPU @c may load, or NULL: replaced when it is
 * smaller than the CPU's size (adaptive), so that growth takes effect. A
 * larger one is kept: between CPUs of different sizes (producer and
 * consumer), replacing both ways freed and made a magazine at every
 * exchange; the reaper's drain and the depot's trim bring sizes back.
 * Except on a CPU below its start size: it gave that capacity to other
 * caches, and the depot's empties of the start size would take it back.
 */
static inline struct pcp_mag *mag_fit(struct pcp_cache *pc, struct pcp_cpu *c,
				      struct pcp_mag *m)
{
	unsigned int size;

	if (!m || !READ_ONCE(pcp_adapt_on))
		return m;
	size = cpu_mag_size(pc, c);
	if (likely(m->size == size))
		return m;
	if (m->size < size || size < adapt_start(pc)) {
		mag_free(m);
		m = NULL;
	}
	return m;
}

/* ------------------------------------------------------------------ */
/* Magazines */

static size_t mag_bytes(uint64_t size)
{
	return size * sizeof(void *);
}

/*
 * The header and the slots apart: slots of a power of two bytes then fill
 * their block, and a full magazine of 1024 pointers writes 2 pages, not 3
 * (pcp_mem_alloc rounds up to a power of two; the 32-byte header in front
 * spilled into the next page). Only the header is zeroed: the slots are
 * written before they are read.
 */
static struct pcp_mag *mag_new(unsigned int size)
{
	struct pcp_mag *m = pcp_mem_alloc(sizeof(*m), sizeof(*m));

	if (!m)
		return NULL;
	m->objs = pcp_mem_alloc(mag_bytes(size), 0);
	if (!m->objs) {
		pcp_mem_free(m, sizeof(*m));
		return NULL;
	}
	m->size = size;
	return m;
}

static void mag_free(struct pcp_mag *m)
{
	if (m && mag_is_real(m)) {
		pcp_mem_free(m->objs, mag_bytes(m->size));
		pcp_mem_free(m, sizeof(*m));
	}
}

/* Give a private magazine's objects back to the layer above. */
static void mag_flush(struct pcp_cache *pc, struct pcp_mag *m)
{
	if (mag_is_real(m) && m->count) {
		pc->ops->flush(pc->owner, m->objs, (unsigned int)m->count);
		m->count = 0;
	}
}

/* ------------------------------------------------------------------ */
/* Depot */

/* Every percpu lock is held inside a sigsafe section (lib/sigsafe.h). */
static void depot_lock(struct pcp_depot *d)
{
	sigsafe_enter();
	pthread_mutex_lock(&d->lock);
}

static void depot_unlock(struct pcp_depot *d)
{
	pthread_mutex_unlock(&d->lock);
	sigsafe_exit();
}

/*
 * A depot that grows while its cache cycles through the layer above
 * (docs/percpu.md, "A depot that grows while a cache cycles"). A refill
 * that finds full magazines flushed at the depot's limit since the last
 * refill fetches back what the depot could have kept: sh8bench's ring
 * frees 240,000 16-byte blocks at each wrap and allocates as many again,
 * and a depot of 8 magazines of kmalloc-16 sent 26,000 magazines a run to
 * the slab layer and back, two threads waiting on its lock. So the limit
 * grows by what was flushed, up to PERCPU_DEPOT_GROW_KB of objects a
 * cache; the reaper halves the growth after a period without any. A
 * depot cannot raise its cache's peak of objects out of the slab layer
 * (a refill comes only when it holds no full magazine); what it holds
 * back is only from other caches.
 */
/* The depot's limit in force: pc->depot_limit and what it grew by. */
static uint64_t depot_limit_now(const struct pcp_cache *pc,
				const struct pcp_depot *d)
{
	unsigned int lim = READ_ONCE(pc->depot_limit);

	if (lim == PCP_DEPOT_UNLIMITED)
		return lim;
	return (uint64_t)lim + READ_ONCE(d->grow);
}

/* Empty magazines the depot keeps: as many as full ones, and two more. */
static uint64_t depot_empty_cap(const struct pcp_cache *pc,
				const struct pcp_depot *d)
{
	return depot_limit_now(pc, d) + 2;
}

/* Full magazines the depot may grow by: PERCPU_DEPOT_GROW_KB of objects
 * and the magazines' slots (a pointer each: a magazine of 1024 16-byte
 * objects is 16 KiB of objects and 8 KiB of slots) in magazines of the
 * cache's size, less its own limit. */
static unsigned long depot_grow_max(const struct pcp_cache *pc)
{
	uint64_t per = (uint64_t)READ_ONCE(pc->limit) *
		       (pc->objsize + sizeof(void *));
	uint64_t n = (uint64_t)PCP_DEPOT_GROW_KB * 1024 / per;
	unsigned int lim = READ_ONCE(pc->depot_limit);

	/* no depot (0) and no limit stay as they are */
	if (!lim || lim == PCP_DEPOT_UNLIMITED || n <= lim)
		return 0;
	return (unsigned long)(n - lim);
}

/*
 * Magazines that grow while a cache cycles (docs/percpu.md): what the
 * grown caches' two magazines a CPU hold beyond their base sizes, in
 * bytes, summed over all caches (the same on every CPU: a cache's size is
 * the same on all of them); PCP_MAG_GROW_KB bounds it.
 */
static unsigned long pcp_mag_grown;

/* A grown magazine: PCP_MAG_GROW_BYTES of objects, at most PCP_MAX_LIMIT. */
static unsigned int mag_grow_size(const struct pcp_cache *pc)
{
	unsigned long n = PCP_MAG_GROW_BYTES / (pc->objsize ? pc->objsize : 1);

	return (unsigned int)max_t(unsigned long, 1,
				   min_t(unsigned long, n, PCP_MAX_LIMIT));
}

/* What two magazines of @to objects hold beyond two of @from, in bytes. */
static unsigned long mag_grow_bytes(const struct pcp_cache *pc,
				    unsigned int from, unsigned int to)
{
	return to > from ? 2ul * (to - from) * (pc->objsize ? pc->objsize : 1) : 0;
}

/*
 * Under the depot lock, from a refill: full magazines were flushed at the
 * limit since the last refill while the depot was at its cap, or more of
 * them than the cap holds (its bursts do not fit even the grown depot). Ask for magazines of
 * mag_grow_size(), once, when the budget has room; pcp_mag_grow() does it
 * after the CPU's lock is dropped (a resize drains every CPU).
 */
static void mag_grow_ask_locked(struct pcp_cache *pc, struct pcp_depot *d)
{
	unsigned int lim = READ_ONCE(pc->depot_limit), size = mag_grow_size(pc);

	if (!PCP_MAG_GROW_KB || !PCP_DEPOT_GROW_KB || d->mag_pinned ||
	    d->mag_base || d->mag_want || READ_ONCE(pcp_adapt_on) || !lim ||
	    lim == PCP_DEPOT_UNLIMITED || size <= READ_ONCE(pc->limit))
		return;
	if (__atomic_load_n(&pcp_mag_grown, __ATOMIC_RELAXED) +
	    mag_grow_bytes(pc, READ_ONCE(pc->limit), size) >
	    (unsigned long)PCP_MAG_GROW_KB * 1024)
		return;
	WRITE_ONCE(d->mag_want, size);
}

/* A full magazine is flushed for want of room in the depot (free path). */
static void depot_note_flush(struct pcp_depot *d)
{
	if (!READ_ONCE(d->pinned))
		__atomic_add_fetch(&d->flushed, 1, __ATOMIC_RELAXED);
}

/*
 * A refill (the depot had no full magazine): when full magazines were
 * flushed at the limit since the last one, the cache is cycling; the
 * limit grows by as many, up to depot_grow_max().
 */
static void depot_grow_on_refill(struct pcp_cache *pc)
{
	struct pcp_depot *d = pc->depot;
	unsigned long n, max;

	if (likely(!READ_ONCE(d->flushed)))
		return;
	n = __atomic_exchange_n(&d->flushed, 0, __ATOMIC_RELAXED);
	if (!n)
		return;
	depot_lock(d);
	max = depot_grow_max(pc);
	d->mag_quiet = 0;
	/* at the cap, or one burst flushed more than the cap holds */
	if (!d->pinned && (d->grow >= max ||
			   n >= READ_ONCE(pc->depot_limit) + max))
		mag_grow_ask_locked(pc, d);
	if (!d->pinned && d->grow < max) {
		WRITE_ONCE(d->grow, min_t(unsigned long, d->grow + n, max));
		d->grew = true;
		pcp_probe(pcp_depot_grow, pc->name, n, d->grow);
	}
	depot_unlock(d);
}

/*
 * The depot keeps each CPU's magazines apart (docs/percpu.md, "The depot
 * keeps each CPU's magazines apart"): a magazine put by CPU @cpu goes on
 * that CPU's stack of its kind, and CPU @cpu takes from its own stacks
 * first, from another CPU's only when its own is empty: a magazine's
 * blocks and slots are lines in the cache of the CPU that filled or
 * emptied it.
 */
static struct pcp_mag **depot_top(struct pcp_cache *pc, bool full, unsigned int cpu)
{
	struct pcp_cpu *c = __atomic_load_n(&pc->slow[cpu], __ATOMIC_ACQUIRE);

	if (!c)
		return NULL;
	return full ? &c->depot_full : &c->depot_empty;
}

/* Put @m on CPU @cpu's stack of its kind (@full), counted; the CPU has a
 * struct pcp_cpu (it is the one a slow path or a drain runs for). */
static void depot_push_locked(struct pcp_cache *pc, bool full, int cpu,
			      struct pcp_mag *m)
{
	struct pcp_depot *d = pc->depot;
	struct pcp_mag **top = depot_top(pc, full, (unsigned int)cpu);

	m->cpu = (uint64_t)cpu;
	m->next = *top;
	*top = m;
	if (full) {
		/* the counts are peeked at without the lock (depot_exchange) */
		WRITE_ONCE(d->nr_full, d->nr_full + 1);
		d->full_objs += m->count;
	} else {
		WRITE_ONCE(d->nr_empty, d->nr_empty + 1);
	}
}

/*
 * Take a magazine of the kind @full asks for: CPU @cpu's newest, else
 * (or for @cpu -1) the newest of the CPU where the last such take from
 * another CPU found one, looking on from there: a producer CPU that
 * always takes its consumer CPU's finds them at once. The stack's
 * low-water mark follows (Bonwick's working set). NULL when the depot
 * holds none.
 */
static struct pcp_mag *depot_pop_locked(struct pcp_cache *pc, bool full, int cpu)
{
	struct pcp_depot *d = pc->depot;
	unsigned long *nr = full ? &d->nr_full : &d->nr_empty;
	unsigned long *min = full ? &d->min_full : &d->min_empty;
	struct pcp_mag **top = NULL, *m;
	unsigned int at;

	if (!*nr)
		return NULL;
	if (cpu >= 0)
		top = depot_top(pc, full, (unsigned int)cpu);
	if (!top || !*top) {
		at = d->steal[full];
		for (unsigned int i = 0; i < pcp_nr_cpus; i++) {
			if (at >= pcp_nr_cpus)
				at = 0;
			top = depot_top(pc, full, at);
			if (top && *top)
				break;
			at++;
		}
		d->steal[full] = at;
	}
	m = *top;
	*top = m->next;
	WRITE_ONCE(*nr, *nr - 1);
	if (*nr < *min)
		*min = *nr;
	if (full)
		d->full_objs -= m->count;
	return m;
}

/* An empty magazine from the depot for CPU @cpu, or NULL. */
static struct pcp_mag *depot_get_empty(struct pcp_cache *pc, int cpu)
{
	struct pcp_depot *d = pc->depot;
	struct pcp_mag *m;

	if (!READ_ONCE(d->nr_empty))
		return NULL;	/* depot_exchange(): a look before the lock */
	depot_lock(d);
	m = depot_pop_locked(pc, false, cpu);
	depot_unlock(d);
	return m;
}

/* A private magazine of CPU @cpu is no longer needed: keep it empty in
 * the depot, on that CPU's stack. */
static void mag_release(struct pcp_cache *pc, int cpu, struct pcp_mag *m)
{
	struct pcp_depot *d = pc->depot;
	bool kept;

	if (!m || !mag_is_real(m))
		return;
	mag_flush(pc, m);
	depot_lock(d);
	/* as many empties as full ones may come back, and two to spare */
	kept = mag_depot_size_ok(pc, m) && d->nr_empty < depot_empty_cap(pc, d);
	if (kept)
		depot_push_locked(pc, false, cpu, m);
	depot_unlock(d);
	if (!kept)
		mag_free(m);
}

/*
 * Whether the depot, under its lock, is at its limit for the full @give:
 * depot_limit magazines; adaptive, depot_limit magazines of the cache's
 * fixed size in objects, whatever the sizes of the magazines (counted in
 * magazines, a depot of 64 grown 512-object magazines of 64-byte objects
 * held 2 MiB where the fixed sizes' held 480 KiB: peak RSS +4.5% on the
 * bundled default trace).
 */
static bool depot_at_limit(const struct pcp_cache *pc,
			   const struct pcp_depot *d, const struct pcp_mag *give)
{
	if (!READ_ONCE(pcp_adapt_on))
		return d->nr_full >= depot_limit_now(pc, d);
	return d->full_objs + give->count >
	       depot_limit_now(pc, d) * READ_ONCE(pc->limit);
}

/* depot_at_limit() from outside the depot lock (depot_exchange()'s look). */
static bool depot_looks_at_limit(const struct pcp_cache *pc,
				 const struct pcp_depot *d,
				 const struct pcp_mag *give)
{
	if (!READ_ONCE(pcp_adapt_on))
		return READ_ONCE(d->nr_full) >= depot_limit_now(pc, d);
	return READ_ONCE(d->full_objs) + give->count >
	       depot_limit_now(pc, d) * READ_ONCE(pc->limit);
}

/*
 * Bonwick's exchange, under one depot lock, for CPU @cpu: take a magazine
 * of the kind @full asks for and, when there was one, leave @give (NULL, or a private
 * magazine of the other kind: empty when taking a full one, full when
 * taking an empty one) in its place. A full @give goes in only below the
 * depot's limit (else nothing is exchanged and *@taken_give stays false);
 * an empty one beyond the empties' cap is freed after the lock is dropped.
 * Return: the magazine taken, or NULL (then @give stays the caller's,
 * except a full @give, which the depot took when *@taken_give).
 */
static struct pcp_mag *depot_exchange(struct pcp_cache *pc, int cpu, bool full,
				      struct pcp_mag *give, bool *taken_give)
{
	struct pcp_depot *d = pc->depot;
	struct pcp_mag *m, *drop = NULL;

	*taken_give = false;
	/*
	 * A look before the lock: a depot with nothing to give (a growing
	 * heap: every refill asked it for a full magazine first) or at its
	 * limit for @give (a shrinking one: every flush offered it one) is
	 * not locked at all. A stale look only misses an exchange or takes
	 * the lock for nothing; the decision is made under the lock. A full
	 * @give refused at the limit is flushed by the caller: counted for
	 * the depot's growth (depot_grow_on_refill()).
	 */
	if (!full && give) {
		if (!mag_depot_size_ok(pc, give))
			return NULL;
		if (depot_looks_at_limit(pc, d, give)) {
			depot_note_flush(d);
			return NULL;
		}
	} else if (full ? !READ_ONCE(d->nr_full) : !READ_ONCE(d->nr_empty)) {
		return NULL;
	}
	depot_lock(d);
	if (!full && give) {
		/* a full magazine in, then an empty one (if any) out */
		if (!mag_depot_size_ok(pc, give) || depot_at_limit(pc, d, give)) {
			depot_unlock(d);
			depot_note_flush(d);
			return NULL;
		}
		depot_push_locked(pc, true, cpu, give);
		*taken_give = true;
		m = depot_pop_locked(pc, false, cpu);
		depot_unlock(d);
		return m;
	}
	m = depot_pop_locked(pc, full, cpu);
	if (m) {
		if (give) {	/* an empty magazine for the full one */
			if (mag_depot_size_ok(pc, give) &&
			    d->nr_empty < depot_empty_cap(pc, d)) {
				depot_push_locked(pc, false, cpu, give);
			} else {
				drop = give;
			}
			*taken_give = true;
		}
	}
	depot_unlock(d);
	mag_free(drop);
	return m;
}

/* Free a list of private magazines (flushing their objects). */
static void mag_list_free(struct pcp_cache *pc, struct pcp_mag *m)
{
	while (m) {
		struct pcp_mag *next = m->next;

		mag_flush(pc, m);
		mag_free(m);
		m = next;
	}
}

/* Take every magazine out of the depot; Return: the list. */
static struct pcp_mag *depot_take_all_locked(struct pcp_cache *pc)
{
	struct pcp_depot *d = pc->depot;
	struct pcp_mag *list = NULL, *m;

	for (unsigned int cpu = 0; cpu < pcp_nr_cpus; cpu++) {
		for (int full = 0; full < 2; full++) {
			struct pcp_mag **top = depot_top(pc, full, cpu);

			while (top && (m = *top)) {
				*top = m->next;
				m->next = list;
				list = m;
			}
		}
	}
	WRITE_ONCE(d->nr_full, 0);
	WRITE_ONCE(d->nr_empty, 0);
	d->min_full = d->min_empty = 0;
	d->full_objs = 0;
	/* a drain or a resize starts the depot over at its limit */
	WRITE_ONCE(d->grow, 0);
	d->grew = false;
	__atomic_store_n(&d->flushed, 0, __ATOMIC_RELAXED);
	return list;
}

/*
 * Bonwick's working-set trim: the lowest number of full (and empty)
 * magazines seen in the depot since the last trim were not needed for a
 * whole period; give exactly that many back. A limit that did not grow
 * during the period gives back half its growth, and what the depot holds
 * beyond the limit then in force goes back too.
 */
static void depot_trim(struct pcp_cache *pc)
{
	struct pcp_depot *d = pc->depot;
	struct pcp_mag *out = NULL, *m;
	unsigned long n, nf, ne;
	uint64_t lim;

	depot_lock(d);
	if (!d->grew)
		WRITE_ONCE(d->grow, d->grow / 2);
	d->grew = false;
	__atomic_store_n(&d->flushed, 0, __ATOMIC_RELAXED);
	lim = depot_limit_now(pc, d);
	if (d->nr_full > lim && d->nr_full - lim > d->min_full)
		d->min_full = (unsigned long)(d->nr_full - lim);
	if (d->nr_empty > lim + 2 && d->nr_empty - (lim + 2) > d->min_empty)
		d->min_empty = (unsigned long)(d->nr_empty - (lim + 2));
	nf = d->min_full;
	ne = d->min_empty;
	for (n = nf; n && (m = depot_pop_locked(pc, true, -1)); n--) {
		m->next = out;
		out = m;
	}
	for (n = ne; n && (m = depot_pop_locked(pc, false, -1)); n--) {
		m->next = out;
		out = m;
	}
	pcp_probe(pcp_trim, pc->name, nf, ne);
	d->min_full = d->nr_full;
	d->min_empty = d->nr_empty;
	depot_unlock(d);
	mag_list_free(pc, out);
}

/* ------------------------------------------------------------------ */
/* CPUs */

static void pcp_cpu_lock(struct pcp_cpu *c)
{
	sigsafe_enter();
	owned_lock(&c->lock, "pcp_cpu lock");
}

static void pcp_cpu_unlock(struct pcp_cpu *c)
{
	owned_unlock(&c->lock, "pcp_cpu lock");
	sigsafe_exit();
}

static void pcp_assert_cpu_locked(struct pcp_cpu *c)
{
	owned_assert_held(&c->lock, "pcp_cpu lock");
}

static struct pcp_cpu *pcp_get_cpu(struct pcp_cache *pc, int cpu)
{
	struct pcp_cpu *c = __atomic_load_n(&pc->slow[cpu], __ATOMIC_ACQUIRE);

	if (likely(c))
		return c;
	sigsafe_enter();
	pthread_mutex_lock(&pc->lock);
	c = pc->slow[cpu];
	if (!c) {
		c = pcp_mem_alloc(sizeof(*c), sizeof(*c));
		if (c) {
			c->mag = &pcp_empty_mag;
			c->cpu = cpu;
			c->low = ~0ull;
			adapt_window_start(c);
			owned_init(&c->lock);
			/* the header stays zero (both fast paths miss) until
			 * the first slow path loads a magazine */
			__atomic_store_n(&pc->slow[cpu], c, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&pc->lock);
	sigsafe_exit();
	return c;
}

/* ------------------------------------------------------------------ */
/* The header and the three primitives: rseq sections, or plain C under
 * the CPU lock (fallback and vcpu modes, whose fast paths never read a
 * real CPU's header). */

static struct pcp_hdr *cpu_hdr(struct pcp_cache *pc, const struct pcp_cpu *c)
{
	return pcp_hdr(pc, c->cpu);
}

/* Objects in the loaded magazine: its count lives in the header. */
static uint64_t loaded_count(struct pcp_cache *pc, const struct pcp_cpu *c)
{
	if (!mag_is_real(c->mag))
		return 0;
	return (uint64_t)(READ_ONCE(cpu_hdr(pc, c)->cur) - c->mag->objs);
}

/*
 * Point a closed (or never used) header at @m: cur first, then end
 * (frees may push from here on), then begin (allocs may pop). Each state
 * on the way misses or serves correctly, so plain stores do, from any CPU.
 */
static void hdr_open(struct pcp_hdr *h, struct pcp_mag *m)
{
	WRITE_ONCE(h->cur, m->objs + m->count);
	__atomic_store_n(&h->end, m->objs + m->size, __ATOMIC_RELEASE);
	__atomic_store_n(&h->begin, m->objs, __ATOMIC_RELEASE);
}

/* Close a header from anywhere (the caller then fences the CPU). */
static void hdr_close_remote(struct pcp_hdr *h)
{
	__atomic_store_n(&h->end, NULL, __ATOMIC_SEQ_CST);
	__atomic_store_n(&h->begin, (void **)~0UL, __ATOMIC_SEQ_CST);
}

/*
 * Stop the CPU's fast paths: close its header, then fence the CPU, so
 * that no section that read the open header can still commit. Fast paths
 * that start now miss and wait for c->lock in the slow path.
 */
static void pcp_stop_cpu_locked(struct pcp_cache *pc, struct pcp_cpu *c)
{
	pcp_assert_cpu_locked(c);
	hdr_close_remote(cpu_hdr(pc, c));
	pcp_fence_cpu(c->cpu);
}

static long prim_pop(struct pcp_cache *pc, struct pcp_cpu *c, int cpu,
		     void **out, unsigned long n)
{
	struct pcp_hdr *h = cpu_hdr(pc, c);
	long k;

	if (pcp_mode_cur != PCP_MODE_RSEQ) {
		if (h->cur <= h->begin)
			return 0;
		k = (long)min_t(uint64_t, n, (uint64_t)(h->cur - h->begin));
		h->cur -= k;
		memcpy(out, h->cur, (size_t)k * sizeof(void *));
		return k;
	}
	while ((k = pcp_rseq_pop(h, cpu, out, n)) == -2)
		pcp_stat(c, PCP_STAT_RSEQ_ABORT);
	return k;
}

static long prim_push(struct pcp_cache *pc, struct pcp_cpu *c, int cpu,
		      void *const *in, unsigned long n)
{
	struct pcp_hdr *h = cpu_hdr(pc, c);
	long k;

	if (pcp_mode_cur != PCP_MODE_RSEQ) {
		if (h->cur >= h->end)
			return 0;
		k = (long)min_t(uint64_t, n, (uint64_t)(h->end - h->cur));
		memcpy(h->cur, in, (size_t)k * sizeof(void *));
		h->cur += k;
		return k;
	}
	while ((k = pcp_rseq_push(h, cpu, in, n)) == -2)
		pcp_stat(c, PCP_STAT_RSEQ_ABORT);
	return k;
}

/*
 * Load @m on the CPU: close the header on the CPU (rseq) or under the
 * lock, write the old magazine's count back, open the header on @m.
 * Return: 0, or -1 when no longer on @cpu (nothing changed but a header
 * left refusing frees, which the next slow path of that CPU reopens).
 */
static long prim_swap(struct pcp_cache *pc, struct pcp_cpu *c, int cpu,
		      struct pcp_mag *m)
{
	struct pcp_hdr *h = cpu_hdr(pc, c);
	long cur;

	if (pcp_mode_cur != PCP_MODE_RSEQ) {
		h->end = NULL;
		cur = (long)h->cur;
		h->begin = (void **)~0UL;
	} else {
		while ((cur = pcp_rseq_close(h, cpu)) == -2)
			pcp_stat(c, PCP_STAT_RSEQ_ABORT);
		if (cur == -1)
			return -1;
	}
	if (mag_is_real(c->mag))
		c->mag->count = (uint64_t)((void **)cur - c->mag->objs);
	c->mag = m;
	hdr_open(h, m);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Slow paths */

static void *pcp_direct_alloc(struct pcp_cache *pc)
{
	void *obj;

	__atomic_add_fetch(&pc->nr_direct, 1, __ATOMIC_RELAXED);
	return pc->ops->refill(pc->owner, &obj, 1) ? obj : NULL;
}

static void pcp_direct_free(struct pcp_cache *pc, void *obj)
{
	__atomic_add_fetch(&pc->nr_direct, 1, __ATOMIC_RELAXED);
	pc->ops->flush(pc->owner, &obj, 1);
}

/* An empty magazine of this CPU's size: the depot's, else a new one; NULL
 * without memory. */
static struct pcp_mag *mag_get_empty(struct pcp_cache *pc, struct pcp_cpu *c)
{
	struct pcp_mag *nm = mag_fit(pc, c, depot_get_empty(pc, c->cpu));

	return nm ? nm : mag_new(cpu_mag_size(pc, c));
}

/* Loaded magazine is the empty sentinel: load a real, empty one. */
static int pcp_load_empty_locked(struct pcp_cache *pc, struct pcp_cpu *c,
				 int cpu)
{
	struct pcp_mag *nm = c->spare;

	if (nm && nm->count == 0 && (!READ_ONCE(pcp_adapt_on) ||
				     nm->size >= cpu_mag_size(pc, c))) {
		if (prim_swap(pc, c, cpu, nm))
			return -EAGAIN;
		c->spare = NULL;
		return 0;
	}
	nm = mag_get_empty(pc, c);
	if (!nm)
		return -ENOMEM;
	if (prim_swap(pc, c, cpu, nm)) {
		mag_release(pc, c->cpu, nm);
		return -EAGAIN;
	}
	return 0;
}

/* A refill: one batch from the layer above into @nm's slots from @at on
 * (one call, one hold of the slab lock), counted. Return: objects got. */
static unsigned int mag_fill_batch(struct pcp_cache *pc, struct pcp_cpu *c, int cpu,
				   struct pcp_mag *nm, unsigned int at)
{
	unsigned int want = (unsigned int)min_t(uint64_t, cpu_batch(pc, c), nm->size - at);

	depot_grow_on_refill(pc);
	pcp_stat(c, PCP_STAT_REFILL);
	pcp_probe(pcp_refill, pc->name, cpu, want);
	return pc->ops->refill(pc->owner, nm->objs + at, want);
}

/*
 * The loaded magazine @m is empty, the spare empty or absent, the depot
 * has no full one: fill a private magazine (the spare, an empty one from
 * the depot, or a new one) with one batch from the layer above, in one
 * call (one hold of the slab lock: slab_alloc_bulk()), keep one object
 * for us and load the rest; @m becomes the spare.
 * Return: 0 with *objp set (NULL: out of memory), -EAGAIN to retry.
 */
static int pcp_refill_locked(struct pcp_cache *pc, struct pcp_cpu *c, int cpu,
			     struct pcp_mag *m, void **objp)
{
	struct pcp_mag *nm = c->spare;
	unsigned int got;

	*objp = NULL;
	c->spare = NULL;
	if (nm && READ_ONCE(pcp_adapt_on))
		nm = mag_fit(pc, c, nm);	/* empty here */
	if (!nm)
		nm = mag_get_empty(pc, c);
	if (!nm)
		return 0;	/* no memory for a magazine: the slab layer serves */
	adapt_miss(c);
	got = mag_fill_batch(pc, c, cpu, nm, 0);
	if (!got) {
		c->spare = nm;
		return 0;
	}
	*objp = nm->objs[--got];
	nm->count = got;
	if (prim_swap(pc, c, cpu, nm)) {
		/* migrated: the batch stays this CPU's spare, the object ours */
		c->spare = nm;
		return 0;
	}
	c->spare = m;
	return 0;
}

/*
 * A free on CPU @c, which holds nothing of the class: its first, or its
 * first since a drain (the loaded magazine is none, no spare). Such a
 * block is often a neighbour of blocks that other CPUs hold and write: a
 * thread frees a block another thread allocated (Hoard's cache-scratch:
 * the main thread's adjacent blocks, one handed to each thread). Loaded
 * on top, it is the block this CPU hands out next, again and again, and
 * two CPUs then write one cache line (scratch_t2 at 0.31 of mimalloc,
 * docs/benchmarks.md "cache-scratch"). So it goes to the bottom of a
 * magazine filled on top of it with one batch from the layer above, as an
 * alloc miss's refill: the CPU hands out the batch first.
 * Return: 0 when @obj is placed, 1 to take the ordinary way (no memory for
 * a magazine, or one of a single slot).
 */
static int pcp_first_free_locked(struct pcp_cache *pc, struct pcp_cpu *c, int cpu,
				 void *obj)
{
	struct pcp_mag *nm = mag_get_empty(pc, c);

	if (!nm)
		return 1;
	if (nm->size < 2) {
		mag_release(pc, c->cpu, nm);
		return 1;
	}
	nm->objs[0] = obj;
	nm->count = 1 + mag_fill_batch(pc, c, cpu, nm, 1);
	if (prim_swap(pc, c, cpu, nm))
		c->spare = nm;	/* migrated: this CPU's spare, the object in it */
	return 0;
}

/*
 * Objects a split moves: half the loaded magazine, at most PCP_SPLIT_MAX
 * (the large classes' 8-25-object magazines move 4-12; a small class's
 * 1024 would copy 512 pointers where a walk across the boundary needs a
 * few dozen operations of room).
 */
#define PCP_SPLIT_MAX	16u

static unsigned long mag_split_n(const struct pcp_mag *m)
{
	return min_t(uint64_t, m->size / 2, PCP_SPLIT_MAX);
}

/*
 * The fast paths of CPU @c missed the other way from the last miss for
 * the second time in a row, with the spare full (alloc) or empty (free):
 * the loaded and spare magazines sit at their boundary (one full, one
 * empty), where a swap leaves the loaded magazine one operation from a
 * miss the other way, and a program whose count of blocks walks across
 * it (mtmalloc's ring: 34,700 swaps in 500,000 iterations of `mt 1
 * 500000 65536`, pinned) takes the CPU lock and two rseq sections per
 * step. Leave the loaded magazine with objects and room instead: the top
 * of the full magazine into the empty one, which is (or, on a free miss,
 * becomes) the loaded one, so that it holds the blocks freed last. A
 * burst in one direction and its first turn swap whole magazines as
 * before: no copy, one slow path per magazine (Bonwick's loaded and
 * previous pair). docs/percpu.md, "At the boundary" (also with adapt=1:
 * without it the adaptive preset kept the swaps and lost 17-25% on the
 * mt rows).
 * Return: > 0 when done, 0 when it did not apply, -1 when no longer on
 * @cpu.
 */
static long mag_split_locked(struct pcp_cache *pc, struct pcp_cpu *c, int cpu,
			     struct pcp_mag *m, bool fill)
{
	struct pcp_mag *sp = c->spare;
	unsigned int dir = fill ? PCP_MISS_ALLOC : PCP_MISS_FREE;
	unsigned long n;
	long k;

	/* the third miss in a row each the other way from the last: a walk
	 * across the boundary, not the turn of a run (sh6bench's bursts:
	 * splitting at every turn made 26% more slow paths) */
	if (c->last_miss != PCP_MISS_NONE && c->last_miss != dir)
		c->flips = c->flips < 2 ? c->flips + 1 : 2;
	else
		c->flips = 0;
	c->last_miss = dir;
	if (c->flips < 2 || !sp || !mag_is_real(m) || m->size < 2)
		return 0;
	if (fill ? sp->count != sp->size : sp->count != 0)
		return 0;
	if (!fill) {
		/*
		 * free missed: loaded full, the spare empty. Load the empty
		 * one and fill it from the top of the full one, as an alloc
		 * miss does: the loaded magazine then holds the blocks freed
		 * last (popping them out of the full one instead left the
		 * older ones to be handed out first: sh6bench_t2 7% more CPU)
		 */
		if (prim_swap(pc, c, cpu, sp))
			return -1;
		c->spare = m;
		sp = m;
		m = c->mag;
	}
	/* the loaded magazine empty, the spare full: its top half in */
	n = min_t(uint64_t, sp->count, mag_split_n(m));
	k = prim_push(pc, c, cpu, &sp->objs[sp->count - n], n);
	if (k < 0)
		return fill ? k : -1;
	/* the first k of the n went in: close the gap they left */
	memmove(&sp->objs[sp->count - n], &sp->objs[sp->count - n + (unsigned long)k],
		(n - (unsigned long)k) * sizeof(void *));
	sp->count -= (uint64_t)k;
	pcp_stat(c, PCP_STAT_SWAP);
	return fill ? k : 1;
}

/*
 * The first slow path of an operation on CPU @c (@fill: an alloc): the
 * adaptive policy's window (a shrink sheds the spare) and the split at
 * the loaded/spare boundary, each of which may leave the loaded magazine
 * able to serve. @held: objects the CPU holds, for the low-water mark.
 * Return: > 0 to try the loaded magazine again, 0 to go on, < 0 when no
 * longer on @cpu.
 */
static long first_slow_locked(struct pcp_cache *pc, struct pcp_cpu *c, int cpu,
			      struct pcp_mag *m, bool fill, uint64_t held)
{
	if (adapt_slow(pc, c, held)) {
		adapt_shed_locked(pc, c);
		return 1;
	}
	return mag_split_locked(pc, c, cpu, m, fill);
}

/*
 * Return: 0 with *objp set (NULL: out of memory), -EAGAIN to retry.
 * Mirrored on purpose by pcp_free_locked (the same three steps the other
 * way round).
 */
static int pcp_alloc_locked(struct pcp_cache *pc, struct pcp_cpu *c, int cpu,
			    void **objp)
{
	bool first = true, gave;
	struct pcp_mag *m, *full, *old;
	long k;
	int r;

	pcp_assert_cpu_locked(c);
	for (;;) {
		m = c->mag;
		k = prim_pop(pc, c, cpu, objp, 1);
		if (k < 0)
			return -EAGAIN;
		if (k == 1) {
			if (first && pcp_mode_cur != PCP_MODE_RSEQ)
				pcp_stat(c, PCP_STAT_ALLOC_HIT);
			return 0;
		}
		if (first) {
			pcp_stat(c, PCP_STAT_ALLOC_SLOW);
			first = false;
			k = first_slow_locked(pc, c, cpu, m, true,
					      c->spare ? c->spare->count : 0);
			if (k < 0)
				return -EAGAIN;
			if (k)
				continue;
		}

		if (c->spare && c->spare->count) {
			if (prim_swap(pc, c, cpu, c->spare))
				return -EAGAIN;
			c->spare = mag_is_real(m) ? m : NULL;
			pcp_stat(c, PCP_STAT_SWAP);
			continue;
		}
		/* a full magazine from the depot for the empty spare, one lock */
		full = depot_exchange(pc, cpu, true, c->spare, &gave);
		if (full) {
			if (gave)
				c->spare = NULL;
			pcp_stat(c, PCP_STAT_DEPOT_GET);
			adapt_miss(c);
			if (prim_swap(pc, c, cpu, full)) {
				/* migrated: it is this CPU's spare now */
				old = c->spare;
				c->spare = full;
				mag_release(pc, cpu, old);
				return -EAGAIN;
			}
			old = c->spare;
			c->spare = mag_is_real(m) ? m : NULL;
			mag_release(pc, cpu, old);
			continue;
		}
		if (!mag_is_real(m)) {
			r = pcp_load_empty_locked(pc, c, cpu);
			if (r == -EAGAIN)
				return r;
			if (r) {
				*objp = pcp_direct_alloc(pc);
				return 0;
			}
			continue;
		}
		return pcp_refill_locked(pc, c, cpu, m, objp);
	}
}

/*
 * The depot is at its limit: the full spare, which is private, goes back
 * to the layer above whole, in one call (one hold of the slab lock:
 * slab_free_bulk()), and the loop then loads it empty (Bonwick's magazine
 * layer; one batch of it halved the spare and doubled the lock round
 * trips of a burst of frees: sh8bench_t2 0.83 -> 0.78 s; sh6bench,
 * larson, xmalloc unchanged). Without a spare (no memory for
 * magazines) a batch is taken from the loaded magazine.
 * Return: 0 or -EAGAIN.
 */
static int pcp_flush_batch_locked(struct pcp_cache *pc, struct pcp_cpu *c,
				  int cpu)
{
	struct pcp_mag *sp = c->spare;
	unsigned long left = cpu_batch(pc, c);
	void *buf[PCP_CHUNK];
	long k;

	pcp_stat(c, PCP_STAT_FLUSH);
	adapt_miss(c);
	pcp_probe(pcp_flush, pc->name, cpu, left);
	if (sp) {
		k = (long)sp->count;
		sp->count -= (uint64_t)k;
		pc->ops->flush(pc->owner, &sp->objs[sp->count], (unsigned int)k);
		return 0;
	}
	while (left) {
		k = prim_pop(pc, c, cpu, buf, min_t(unsigned long, left, PCP_CHUNK));
		if (k < 0)
			return -EAGAIN;
		if (k == 0)
			break;
		pc->ops->flush(pc->owner, buf, (unsigned int)k);
		left -= (unsigned long)k;
	}
	return 0;
}

/*
 * Return: 0 when @obj was taken, -EAGAIN to retry. A deliberate mirror of
 * pcp_alloc_locked (Bonwick's symmetry: the loaded magazine, the spare, the
 * depot), kept as two readable loops rather than one with a direction.
 */
static int pcp_free_locked(struct pcp_cache *pc, struct pcp_cpu *c, int cpu,
			   void *obj)
{
	bool first = true, gave;
	struct pcp_mag *m, *sp, *em;
	long k;
	int r;

	pcp_assert_cpu_locked(c);
	for (;;) {
		m = c->mag;
		k = prim_push(pc, c, cpu, &obj, 1);
		if (k < 0)
			return -EAGAIN;
		if (k == 1) {
			if (first && pcp_mode_cur != PCP_MODE_RSEQ)
				pcp_stat(c, PCP_STAT_FREE_HIT);
			return 0;
		}
		if (first) {
			pcp_stat(c, PCP_STAT_FREE_SLOW);
			first = false;
			k = first_slow_locked(pc, c, cpu, m, false,
					      (mag_is_real(m) ? m->size : 0) +
					      (c->spare ? c->spare->count : 0));
			if (k < 0)
				return -EAGAIN;
			if (k)
				continue;
		}

		sp = c->spare;
		if (sp && sp->count < sp->size) {
			if (prim_swap(pc, c, cpu, sp))
				return -EAGAIN;
			c->spare = mag_is_real(m) ? m : NULL;
			pcp_stat(c, PCP_STAT_SWAP);
			continue;
		}
		if (!mag_is_real(m) && !sp && !pcp_first_free_locked(pc, c, cpu, obj))
			return 0;
		if (!mag_is_real(m) || !sp) {
			/* load an empty magazine; a full one becomes the spare */
			r = pcp_load_empty_locked(pc, c, cpu);
			if (r == -EAGAIN)
				return r;
			if (r) {
				if (mag_is_real(m))
					goto flush;
				pcp_direct_free(pc, obj);
				return 0;
			}
			if (mag_is_real(m))
				c->spare = m;
			continue;
		}
		/* loaded and spare are full: the spare goes to the depot for an
		 * empty magazine, one lock */
		em = depot_exchange(pc, cpu, false, sp, &gave);
		if (gave) {
			c->spare = NULL;
			pcp_stat(c, PCP_STAT_DEPOT_PUT);
			adapt_miss(c);
			em = mag_fit(pc, c, em);
			if (!em)
				em = mag_new(cpu_mag_size(pc, c));
			if (!em)
				continue;	/* no memory: the next round flushes */
			if (prim_swap(pc, c, cpu, em)) {
				c->spare = em;
				return -EAGAIN;
			}
			c->spare = m;
			continue;
		}
flush:
		/* the depot is at its limit: a batch goes back to the layer above */
		if (pcp_flush_batch_locked(pc, c, cpu))
			return -EAGAIN;
	}
}

/*
 * Signal handlers that call malloc: the fast paths are safe from a handler
 * (a section interrupted by the signal aborts and retries), but a handler
 * that misses while its thread holds this CPU's slow-path lock would wait
 * on itself. So every percpu lock is held inside a sigsafe section
 * (pcp_cpu_lock, depot_lock; lib/sigsafe.h), and both slow paths ask the
 * layer above first (ops->may_lock: the slab layer sees the depth in a
 * handler and refuses; the caller then serves the operation lock-free). One add to a
 * per-thread word on each side, in both modes (before, rseq mode paid two
 * rt_sigprocmask calls per refill or flush, about 500 ns).
 */
/*
 * fbc10: the CPU's locked path behind pcp_alloc_slow() and
 * pcp_free_slow(), which try fallback mode's thread cache first
 * (percpu/tcache.c) without the frame these need.
 */
static noinline void *__pcp_alloc_slow(struct pcp_cache *pc)
{
	struct pcp_cpu *c;
	void *obj = NULL;
	int cpu, r;

	if (pc->ops->may_lock && !pc->ops->may_lock(pc->owner))
		return NULL;
	do {
		cpu = pcp_current_cpu();
		c = cpu < 0 ? NULL : pcp_get_cpu(pc, cpu);
		if (unlikely(!c))
			return pcp_direct_alloc(pc);
		pcp_cpu_lock(c);
		c->slow_ops++;
		if (pcp_mode_cur == PCP_MODE_FALLBACK)
			pcp_stat(c, PCP_STAT_FALLBACK_OP);
		r = pcp_alloc_locked(pc, c, cpu, &obj);
		pcp_cpu_unlock(c);
	} while (r);
	if (unlikely(READ_ONCE(pc->depot->mag_want)))
		pcp_mag_grow(pc);
	pcp_reaper_kick();
	return obj;
}

void *pcp_alloc_slow(struct pcp_cache *pc)
{
	void *obj;

	/* fbc10: fallback mode's thread cache first (percpu/tcache.c) */
	if (pc->tc_id && pcp_mode_cur == PCP_MODE_FALLBACK &&
	    (obj = pcp_tc_alloc(pc)))
		return obj;
	return __pcp_alloc_slow(pc);
}

static noinline bool __pcp_free_slow(struct pcp_cache *pc, void *obj)
{
	struct pcp_cpu *c;
	int cpu, r;

	if (pc->ops->may_lock && !pc->ops->may_lock(pc->owner))
		return false;
	do {
		cpu = pcp_current_cpu();
		c = cpu < 0 ? NULL : pcp_get_cpu(pc, cpu);
		if (unlikely(!c)) {
			pcp_direct_free(pc, obj);
			return true;
		}
		pcp_cpu_lock(c);
		c->slow_ops++;
		if (pcp_mode_cur == PCP_MODE_FALLBACK)
			pcp_stat(c, PCP_STAT_FALLBACK_OP);
		r = pcp_free_locked(pc, c, cpu, obj);
		pcp_cpu_unlock(c);
	} while (r);
	pcp_reaper_kick();
	return true;
}

bool pcp_free_slow(struct pcp_cache *pc, void *obj)
{
	/* fbc10: fallback mode's thread cache first (percpu/tcache.c) */
	if (pc->tc_id && pcp_mode_cur == PCP_MODE_FALLBACK && pcp_tc_free(pc, obj))
		return true;
	return __pcp_free_slow(pc, obj);
}

/* ------------------------------------------------------------------ */
/* fbc10: the thread cache's batches (percpu/tcache.c, fallback mode) */

/*
 * The thread cache counts its operations (a hit, or a miss that came
 * here); the policy's own alloc/free hit and slow counts of the objects
 * a batch moves are not operations of the program and are taken back.
 */
struct tc_stat_save {
	uint64_t v[TC_NR_STATS];
};

static const enum pcp_stat_item tc_stat_item[TC_NR_STATS] = {
	[TC_ALLOC_HIT] = PCP_STAT_ALLOC_HIT, [TC_FREE_HIT] = PCP_STAT_FREE_HIT,
	[TC_ALLOC_MISS] = PCP_STAT_ALLOC_SLOW, [TC_FREE_MISS] = PCP_STAT_FREE_SLOW,
};

static void tc_stat_save(struct pcp_cpu *c, struct tc_stat_save *sv)
{
	int i;

	for (i = 0; i < TC_NR_STATS; i++)
		sv->v[i] = c->stat[tc_stat_item[i]];
}

static void tc_stat_restore(struct pcp_cpu *c, const struct tc_stat_save *sv,
			    const uint64_t *tcstat)
{
	int i;

	if (!IS_ENABLED(CONFIG_PERCPU_STATS))
		return;
	for (i = 0; i < TC_NR_STATS; i++)
		c->stat[tc_stat_item[i]] = sv->v[i] + tcstat[i];
	pcp_stat(c, PCP_STAT_FALLBACK_OP);
}

unsigned int pcp_tc_get(struct pcp_cache *pc, void **objs, unsigned int n,
			const uint64_t *tcstat)
{
	struct tc_stat_save sv;
	unsigned int got = 0;
	struct pcp_cpu *c;
	void *obj;
	long k;
	int cpu;

	if (pc->ops->may_lock && !pc->ops->may_lock(pc->owner))
		return 0;
	cpu = pcp_current_cpu();
	c = cpu < 0 ? NULL : pcp_get_cpu(pc, cpu);
	if (unlikely(!c))
		return 0;
	pcp_cpu_lock(c);
	c->slow_ops++;
	tc_stat_save(c, &sv);
	while (got < n) {
		k = prim_pop(pc, c, cpu, objs + got, n - got);
		if (k < 0)
			break;
		got += (unsigned int)k;
		if (got == n)
			break;
		/* the loaded magazine is empty: the policy's miss for one */
		obj = NULL;
		if (pcp_alloc_locked(pc, c, cpu, &obj) || !obj)
			break;
		objs[got++] = obj;
	}
	tc_stat_restore(c, &sv, tcstat);
	pcp_cpu_unlock(c);
	if (unlikely(READ_ONCE(pc->depot->mag_want)))
		pcp_mag_grow(pc);
	pcp_reaper_kick();
	return got;
}

unsigned int pcp_tc_put(struct pcp_cache *pc, void *const *objs,
			unsigned int n, const uint64_t *tcstat, bool ask)
{
	struct tc_stat_save sv;
	unsigned int done = 0;
	const uint64_t *st = tcstat;
	struct pcp_cpu *c;
	long k;
	int cpu, r;

	if (ask && pc->ops->may_lock && !pc->ops->may_lock(pc->owner))
		return 0;
	while (done < n) {
		cpu = pcp_current_cpu();
		c = cpu < 0 ? NULL : pcp_get_cpu(pc, cpu);
		if (unlikely(!c)) {
			while (done < n)
				pcp_direct_free(pc, objs[done++]);
			break;
		}
		pcp_cpu_lock(c);
		c->slow_ops++;
		tc_stat_save(c, &sv);
		r = 0;
		while (done < n && !r) {
			k = prim_push(pc, c, cpu, objs + done, n - done);
			if (k < 0)
				break;
			done += (unsigned int)k;
			/* the loaded magazine is full: the policy's miss for one */
			if (done < n && !(r = pcp_free_locked(pc, c, cpu, objs[done])))
				done++;
		}
		if (st) {
			tc_stat_restore(c, &sv, st);
			st = NULL;
		} else {
			static const uint64_t none[TC_NR_STATS];

			tc_stat_restore(c, &sv, none);
		}
		pcp_cpu_unlock(c);
	}
	if (ask)	/* not under pcp_tc_lock: no thread started there */
		pcp_reaper_kick();
	return n;
}

/* ------------------------------------------------------------------ */
/* Drains */

/*
 * Empty CPU @c: its magazines become private (stop + fence in rseq mode).
 * Return: in *@m and *@sp the magazines for the caller to release after
 * dropping the lock.
 */
static void pcp_drain_cpu_locked(struct pcp_cache *pc, struct pcp_cpu *c,
				 struct pcp_mag **m, struct pcp_mag **sp)
{
	pcp_stop_cpu_locked(pc, c);
	*m = c->mag;
	if (mag_is_real(*m))
		(*m)->count = loaded_count(pc, c);
	*sp = c->spare;
	c->mag = &pcp_empty_mag;
	c->spare = NULL;
	hdr_open(cpu_hdr(pc, c), &pcp_empty_mag);
	if ((*m)->count || (*sp && (*sp)->count)) {
		pcp_stat(c, PCP_STAT_DRAIN);
		pcp_probe(pcp_drain, pc->name, c->cpu,
			  (*m)->count + (*sp ? (*sp)->count : 0));
	}
}

/*
 * Adaptive: CPU @c shrank on its own slow path, at most by half, to pay
 * another cache's growth. Its spare goes: objects back to the layer above,
 * the magazine, of the old size, freed (kept in the depot, it would be
 * loaded again and hold the capacity given). The loaded magazine alone
 * holds no more than two of the new size; it stays until exchanged (no
 * stop of the CPU's fast path, no refill right after).
 */
static void adapt_shed_locked(struct pcp_cache *pc, struct pcp_cpu *c)
{
	struct pcp_mag *sp = c->spare;

	c->spare = NULL;
	if (sp) {
		mag_flush(pc, sp);
		mag_free(sp);
	}
}

static void pcp_drain_cpu(struct pcp_cache *pc, struct pcp_cpu *c)
{
	struct pcp_mag *m, *sp;

	pcp_cpu_lock(c);
	pcp_drain_cpu_locked(pc, c, &m, &sp);
	adapt_reset_locked(pc, c);
	pcp_cpu_unlock(c);
	mag_release(pc, c->cpu, m);
	mag_release(pc, c->cpu, sp);
}

static void pcp_drain_cpus(struct pcp_cache *pc)
{
	unsigned int cpu;

	for (cpu = 0; cpu < pcp_nr_cpus; cpu++) {
		struct pcp_cpu *c = __atomic_load_n(&pc->slow[cpu], __ATOMIC_ACQUIRE);

		if (c)
			pcp_drain_cpu(pc, c);
	}
}

static void pcp_drain_depot(struct pcp_cache *pc)
{
	struct pcp_mag *list;

	depot_lock(pc->depot);
	list = depot_take_all_locked(pc);
	depot_unlock(pc->depot);
	mag_list_free(pc, list);
}

void pcp_cache_drain(struct pcp_cache *pc)
{
	if (pcp_is_bypass(pc))
		return;
	if (pc->tc_id)		/* fbc10: thread caches, percpu/tcache.c */
		pcp_tc_drain(pc);
	sigsafe_enter();
	pthread_mutex_lock(&pc->lock);
	pcp_drain_cpus(pc);
	pcp_drain_depot(pc);
	pthread_mutex_unlock(&pc->lock);
	sigsafe_exit();
}

void pcp_drain_all(void)
{
	struct pcp_cache *pc;

	sigsafe_enter();
	pthread_mutex_lock(&pcp_registry_lock);
	for (pc = pcp_registry; pc; pc = pc->next)
		pcp_cache_drain(pc);
	pthread_mutex_unlock(&pcp_registry_lock);
	sigsafe_exit();
}

/* A new magazine size and batch, under pc->lock. */
static void pcp_cache_resize_locked(struct pcp_cache *pc, unsigned int limit,
				    unsigned int batchcount)
{
	struct pcp_mag *list;

	depot_lock(pc->depot);
	WRITE_ONCE(pc->batchcount, batchcount);
	if (limit == pc->limit) {
		depot_unlock(pc->depot);
		return;
	}
	/* from here on the depot takes only magazines of the new size */
	pcp_probe(pcp_resize, pc->name, limit, batchcount);
	WRITE_ONCE(pc->limit, limit);
	list = depot_take_all_locked(pc);
	depot_unlock(pc->depot);
	mag_list_free(pc, list);
	/* every CPU gives up its old magazines; new ones come on demand */
	pcp_drain_cpus(pc);
}

/*
 * A grown cache goes back to its base size, its bytes to the budget (the
 * reaper after quiet periods, a size set by hand). Under pc->lock.
 */
static void mag_grow_undo_locked(struct pcp_cache *pc)
{
	struct pcp_depot *d = pc->depot;
	unsigned int base = d->mag_base;

	if (!base)
		return;
	__atomic_sub_fetch(&pcp_mag_grown,
			   mag_grow_bytes(pc, base, READ_ONCE(pc->limit)),
			   __ATOMIC_RELAXED);
	depot_lock(d);
	d->mag_base = d->mag_quiet = 0;
	depot_unlock(d);
	pcp_cache_resize_locked(pc, base, pcp_default_batchcount(base));
}

/*
 * The slow path of a refill asked for larger magazines
 * (mag_grow_ask_locked()): with no percpu lock held, resize the cache to
 * d->mag_want within the budget. Its depot limit stays in magazines (of
 * the new size: a grown kmalloc-16 keeps 8 of 4096 objects before it
 * grows), its growth the same bytes in the new size, up to the same cap
 * (depot_grow_max()). Once per cache until the reaper undoes it.
 */
static __slowpath void pcp_mag_grow(struct pcp_cache *pc)
{
	struct pcp_depot *d = pc->depot;
	unsigned int want = __atomic_exchange_n(&d->mag_want, 0, __ATOMIC_RELAXED);
	unsigned int limit;
	unsigned long bytes, used, grow;

	if (!want)
		return;
	sigsafe_enter();
	/*
	 * Not a wait: this slow path may run inside a flush made under
	 * another cache's lock, or this one's (a reaper pass, a drain); a
	 * later refill asks again.
	 */
	if (pthread_mutex_trylock(&pc->lock)) {
		__atomic_store_n(&d->mag_want, want, __ATOMIC_RELAXED);
		sigsafe_exit();
		return;
	}
	limit = pc->limit;
	if (d->mag_pinned || d->mag_base || want <= limit ||
	    READ_ONCE(pcp_adapt_on))
		goto out;
	bytes = mag_grow_bytes(pc, limit, want);
	used = __atomic_load_n(&pcp_mag_grown, __ATOMIC_RELAXED);
	do {
		if (used + bytes > (unsigned long)PCP_MAG_GROW_KB * 1024)
			goto out;
	} while (!__atomic_compare_exchange_n(&pcp_mag_grown, &used,
					      used + bytes, false,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	depot_lock(d);
	d->mag_base = limit;
	d->mag_quiet = 0;
	/* the grown depot keeps its bytes, in magazines of the new size */
	grow = (unsigned long)(((uint64_t)d->grow * limit + want - 1) / want);
	depot_unlock(d);
	pcp_cache_resize_locked(pc, want, pcp_default_batchcount(want));
	depot_lock(d);
	WRITE_ONCE(d->grow, min_t(unsigned long, grow, depot_grow_max(pc)));
	depot_unlock(d);
out:
	pthread_mutex_unlock(&pc->lock);
	sigsafe_exit();
}

/*
 * Reaper pass, under pc->lock: a grown cache goes back at the pass that
 * follows PCP_MAG_GROW_QUIET passes in a row without a flush at its
 * depot's limit (a refill after one restarts the count).
 */
#define PCP_MAG_GROW_QUIET	3u
static void mag_grow_reap_locked(struct pcp_cache *pc)
{
	struct pcp_depot *d = pc->depot;
	bool back;

	if (!READ_ONCE(d->mag_base))
		return;
	depot_lock(d);
	if (READ_ONCE(d->flushed))
		d->mag_quiet = 0;
	back = ++d->mag_quiet > PCP_MAG_GROW_QUIET;
	depot_unlock(d);
	if (back)
		mag_grow_undo_locked(pc);
}

int pcp_cache_set_tunables(struct pcp_cache *pc, unsigned int limit,
			   unsigned int batchcount)
{
	bool set;

	if (limit < 1 || limit > PCP_MAX_LIMIT || batchcount < 1 ||
	    batchcount > limit)
		return -EINVAL;
	if (pcp_is_bypass(pc))
		return 0;
	/*
	 * The slab layer puts every cache's resolved tunables into force
	 * here, the defaults too: only a size or batch other than the
	 * defaults (mag_size, batch, slabinfo -w) stays as set and never
	 * grows; the defaults leave a grown cache grown.
	 */
	set = limit != pcp_default_limit(pc->objsize) ||
	      batchcount != pcp_default_batchcount(limit);
	sigsafe_enter();
	pthread_mutex_lock(&pc->lock);
	WRITE_ONCE(pc->depot->mag_pinned, set);
	if (set)
		mag_grow_undo_locked(pc);
	if (set || !pc->depot->mag_base)
		pcp_cache_resize_locked(pc, limit, batchcount);
	pthread_mutex_unlock(&pc->lock);
	sigsafe_exit();
	return 0;
}

int pcp_cache_set_depot_limit(struct pcp_cache *pc, unsigned int limit)
{
	struct pcp_mag *list = NULL;

	sigsafe_enter();
	pthread_mutex_lock(&pc->lock);
	depot_lock(pc->depot);
	WRITE_ONCE(pc->depot_limit, limit);
	/* a limit set stays as set: no growth (pcp_cache_default_depot_limit()) */
	WRITE_ONCE(pc->depot->pinned, true);
	WRITE_ONCE(pc->depot->grow, 0);
	pc->depot->grew = false;
	__atomic_store_n(&pc->depot->flushed, 0, __ATOMIC_RELAXED);
	/* over the new limit: the depot's objects go back to the layer above */
	if (pc->depot->nr_full > limit)
		list = depot_take_all_locked(pc);
	depot_unlock(pc->depot);
	mag_list_free(pc, list);
	pthread_mutex_unlock(&pc->lock);
	sigsafe_exit();
	return 0;
}

unsigned int pcp_cache_get_depot_limit(const struct pcp_cache *pc)
{
	return READ_ONCE(pc->depot_limit);
}

void pcp_cache_get_tunables(const struct pcp_cache *pc, unsigned int *limit,
			    unsigned int *batchcount)
{
	*limit = READ_ONCE(pc->limit);
	*batchcount = READ_ONCE(pc->batchcount);
}

/* ------------------------------------------------------------------ */
/* Reaper pass */

static uint64_t pcp_cpu_snapshot_locked(struct pcp_cache *pc,
					struct pcp_cpu *c)
{
	return c->slow_ops * 1000003u + (uint64_t)(uintptr_t)c->mag +
	       loaded_count(pc, c) * 7919u;
}

/*
 * Adaptive: at a reaper pass, CPU @c (@idle: nothing changed since the
 * last pass, already drained into *@m, *@sp when it held objects) gives
 * its growth back when idle (down to the start size); else when the low-water mark of the objects
 * it held over the period (the slow paths' counts and this pass's) shows
 * half a magazine or more never used, its magazine halves and its objects
 * go back. Capacity only: the magazines of the new size come on demand.
 */
static void adapt_reap_locked(struct pcp_cache *pc, struct pcp_cpu *c,
			      bool idle, struct pcp_mag **m, struct pcp_mag **sp)
{
	unsigned int lo = adapt_floor(pc), want = c->size;
	uint64_t held = loaded_count(pc, c) + (c->spare ? c->spare->count : 0);
	uint64_t low = min_t(uint64_t, min_t(uint64_t, c->low, c->win_low), held);

	if (idle)	/* drained already: growth goes, a shrink stays */
		want = min_t(unsigned int, c->size, adapt_start(pc));
	else if (low >= (c->size + 1) / 2)
		want = max_t(unsigned int, lo, c->size / 2);
	if (want < c->size) {
		if (!*m && !*sp && !idle)
			pcp_drain_cpu_locked(pc, c, m, sp);
		adapt_account(pc, c, want);
		pcp_stat(c, PCP_STAT_SHRINK);
		pcp_probe(pcp_resize, pc->name, want, (want + 1) / 2);
	}
	c->low = loaded_count(pc, c) + (c->spare ? c->spare->count : 0);
}

/* Drain every CPU whose state did not change since the last pass. */
static void pcp_reap_idle_cpus(struct pcp_cache *pc)
{
	unsigned int cpu;

	for (cpu = 0; cpu < pcp_nr_cpus; cpu++) {
		struct pcp_cpu *c = __atomic_load_n(&pc->slow[cpu], __ATOMIC_ACQUIRE);
		struct pcp_mag *m = NULL, *sp = NULL;
		uint64_t snap;
		bool idle;

		if (!c)
			continue;
		pcp_cpu_lock(c);
		snap = pcp_cpu_snapshot_locked(pc, c);
		idle = snap == c->idle_snap;
		if (idle &&
		    (loaded_count(pc, c) || (c->spare && c->spare->count)))
			pcp_drain_cpu_locked(pc, c, &m, &sp);
		if (READ_ONCE(pcp_adapt_on) && c->size)
			adapt_reap_locked(pc, c, idle, &m, &sp);
		if (m || sp)
			snap = pcp_cpu_snapshot_locked(pc, c);
		c->idle_snap = snap;
		pcp_cpu_unlock(c);
		mag_release(pc, c->cpu, m);
		mag_release(pc, c->cpu, sp);
	}
}

void pcp_reap_all(void)
{
	struct pcp_cache *pc;

	sigsafe_enter();
	pthread_mutex_lock(&pcp_registry_lock);
	for (pc = pcp_registry; pc; pc = pc->next) {
		sigsafe_enter();
		pthread_mutex_lock(&pc->lock);
		pcp_reap_idle_cpus(pc);
		mag_grow_reap_locked(pc);
		depot_trim(pc);
		pthread_mutex_unlock(&pc->lock);
		sigsafe_exit();
	}
	pthread_mutex_unlock(&pcp_registry_lock);
	sigsafe_exit();
}

/* ------------------------------------------------------------------ */
/* Creation, destruction, queries */

static size_t pcp_array_bytes(void)
{
	return pcp_nr_cpus * sizeof(struct pcp_cpu *);
}

static size_t pcp_cache_bytes(void)
{
	return sizeof(struct pcp_cache) + pcp_nr_cpus * sizeof(struct pcp_hdr);
}

/* Bytes of a cache's depot and slow[] array. */
static size_t pcp_cache_head_bytes(void)
{
	return ALIGN_UP(sizeof(struct pcp_depot), 64) + ALIGN_UP(pcp_array_bytes(), 64);
}

/* Bytes of a pcp_cache, its depot and slow[]. */
static size_t pcp_cache_block_bytes(void)
{
	return ALIGN_UP(pcp_cache_bytes(), 64) + pcp_cache_head_bytes();
}

/* Cache colours (pcp_cache_colour()) that every block has room for. */
#define PCP_CACHE_MIN_COLOURS	16

/*
 * The depot and slow[] lie at the block's start, before the pcp_cache,
 * when they leave room in the first page for its colours: the cache's
 * hdr[] array is 64 bytes per CPU id (16 KiB for 256 ids), so a depot
 * and slow[] after it were a second page written at each cache's
 * creation (the depot's mutex, then a CPU's slow[] entry), 4 KiB of RSS
 * per cache a program uses (docs/page_alloc.md, "Fixed cost of a small
 * program"). Before it, a cache's creation and its first CPUs write one
 * page: depot, slow[], the cache and the headers of the CPUs whose
 * hdr[] entries share that page (the low ids). With more CPU ids than
 * leave room (about 360), after the cache as before.
 */
static bool pcp_cache_head_first(void)
{
	return pcp_cache_head_bytes() + PCP_CACHE_MIN_COLOURS * 64 <= PAGE_SIZE;
}

/* Order of the block holding a pcp_cache, its depot and slow[], with room
 * to start it at any of PCP_CACHE_MIN_COLOURS colours. */
static unsigned int pcp_cache_order(void)
{
	size_t bytes = pcp_cache_block_bytes() + (PCP_CACHE_MIN_COLOURS - 1) * 64;
	unsigned int order = 0;

	while ((PAGE_SIZE << order) < bytes)
		order++;
	return order;
}

/*
 * Where in its block the next pcp_cache starts: a colour, as Bonwick's
 * slabs colour their first object. The block is page-aligned, so with
 * the cache at its start every cache's hdr[cpu] sat at the same page
 * offset (0x140 + 64 * cpu): the same set of a 64-set L1 (bits 6-11 of
 * the address), eight ways for every class a program uses, which the
 * hit paths' first load of the header then missed (docs/percpu.md
 * "Cost"). Each new cache starts 64 bytes x a counter further in (past
 * the depot and slow[] when they come first), within the block's slack
 * (room for at least PCP_CACHE_MIN_COLOURS colours, pcp_cache_order())
 * and below PAGE_SIZE, so that virt_to_page() of the cache is still the
 * block's first page.
 */
static size_t pcp_cache_colour(void)
{
	static unsigned int next;
	size_t slack = (PAGE_SIZE << pcp_cache_order()) - pcp_cache_block_bytes();
	size_t start = pcp_cache_head_first() ? pcp_cache_head_bytes() : 0;
	size_t colours;

	if (slack > PAGE_SIZE - 64 - start)
		slack = PAGE_SIZE - 64 - start;
	colours = slack / 64 + 1;
	return start + (__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % colours) * 64;
}

/* Zero headers: both fast paths miss on them (percpu/fastpath.h). */
struct pcp_bypass_store pcp_bypass_store;

bool pcp_cache_is_bypass(const struct pcp_cache *pc)
{
	return pcp_is_bypass(pc);
}

struct pcp_cache *pcp_cache_bypass(void)
{
	pcp_init();
	if (pcp_mode_cur == PCP_MODE_OFF)
		return NULL;
	return PCP_BYPASS;
}

struct pcp_cache *pcp_cache_create(const char *name, void *owner,
				   const struct pcp_ops *ops,
				   unsigned int objsize)
{
	struct pcp_cache *pc;
	struct pcp_cpu **slow;
	struct pcp_depot *d;
	struct page *page;

	pcp_init();
	if (pcp_mode_cur == PCP_MODE_OFF) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!ops || !ops->refill || !ops->flush) {
		errno = EINVAL;
		return NULL;
	}
	/*
	 * One page_alloc block for the cache, its depot and its slow[]
	 * array, straight from page_alloc: the slab layer creates kmalloc
	 * caches under slab_mutex, so creation takes no percpu lock, only
	 * the zone lock (docs/locking.md).
	 */
	page = alloc_pages(__GFP_ZERO | __GFP_NOWARN, pcp_cache_order());
	if (!page)
		goto out_enomem;
	pcp_page_bytes_add((long)PAGE_SIZE << pcp_cache_order());
	pc = (void *)((char *)page_address(page) + pcp_cache_colour());
	if (pcp_cache_head_first())
		d = page_address(page);
	else
		d = (void *)((char *)pc + ALIGN_UP(pcp_cache_bytes(), 64));
	slow = (void *)((char *)d + ALIGN_UP(sizeof(*d), 64));

	pc->slow = slow;
	pc->ops = ops;
	pc->owner = owner;
	strncpy(pc->name, name ? name : "?", sizeof(pc->name) - 1);
	pc->objsize = objsize;
	pc->limit = pcp_default_limit(objsize);
	pc->batchcount = pcp_default_batchcount(pc->limit);
	pc->depot_limit = pcp_default_depot_limit(objsize);
	if (pcp_mode_cur == PCP_MODE_FALLBACK)	/* fbc10: its thread cache */
		pc->tc_id = pcp_tc_id_get(pc);
	pthread_mutex_init(&pc->lock, NULL);
	pthread_mutex_init(&d->lock, NULL);
	pc->depot = d;

	/* lock-free push: no pcp lock taken under the caller's locks */
	pc->next = __atomic_load_n(&pcp_registry, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&pcp_registry, &pc->next, pc, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	return pc;

out_enomem:
	errno = ENOMEM;
	return NULL;
}

void pcp_cache_destroy(struct pcp_cache *pc)
{
	struct pcp_cache *prev;
	unsigned int cpu;

	if (!pc || pcp_is_bypass(pc))
		return;
	sigsafe_enter();
	pthread_mutex_lock(&pcp_registry_lock);
	/*
	 * The head moves under lock-free pushes: unlink it with a CAS. Once
	 * not the head it never is again, and the next pointers of listed
	 * caches change only under the lock.
	 */
	prev = pc;
	if (!__atomic_compare_exchange_n(&pcp_registry, &prev, pc->next, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		while (prev && prev->next != pc)
			prev = prev->next;
		if (prev)
			prev->next = pc->next;
	}
	pthread_mutex_unlock(&pcp_registry_lock);
	sigsafe_exit();

	if (pc->tc_id)		/* fbc10: every thread's bin of it */
		pcp_tc_cache_destroy(pc);
	if (pc->depot->mag_base)
		__atomic_sub_fetch(&pcp_mag_grown,
				   mag_grow_bytes(pc, pc->depot->mag_base, pc->limit),
				   __ATOMIC_RELAXED);
	pcp_cache_drain(pc);
	/* what the CPU drain released into it: the depot's stacks live in
	 * the pcp_cpus freed below */
	pcp_drain_depot(pc);
	for (cpu = 0; cpu < pcp_nr_cpus; cpu++) {
		struct pcp_cpu *c = pc->slow[cpu];

		if (c) {
			/* its budget back, its wish for room forgotten */
			__atomic_sub_fetch(&adapt_acct[c->cpu].used, c->acct,
					   __ATOMIC_RELAXED);
			adapt_forget_want(c);
			pthread_mutex_destroy(&c->lock.mutex);
			pc->slow[cpu] = NULL;
			pcp_mem_free(c, sizeof(*c));
		}
	}
	pthread_mutex_destroy(&pc->depot->lock);
	pthread_mutex_destroy(&pc->lock);
	__free_pages(virt_to_page(pc), pcp_cache_order());
	pcp_page_bytes_add(-((long)PAGE_SIZE << pcp_cache_order()));
}

void pcp_cache_mag_range(struct pcp_cache *pc, unsigned int *lo,
			 unsigned int *hi)
{
	unsigned int cpu, n = 0;

	*lo = *hi = READ_ONCE(pc->limit);
	if (pcp_is_bypass(pc) || !READ_ONCE(pcp_adapt_on))
		return;
	for (cpu = 0; cpu < pcp_nr_cpus; cpu++) {
		struct pcp_cpu *c = __atomic_load_n(&pc->slow[cpu], __ATOMIC_ACQUIRE);
		unsigned int size = c ? READ_ONCE(c->size) : 0;

		if (!size)
			continue;
		if (!n++ || size < *lo)
			*lo = size;
		if (n == 1 || size > *hi)
			*hi = size;
	}
	if (!n)		/* no CPU has used it yet: the size each starts at */
		*lo = *hi = adapt_start(pc);
}

void pcp_cache_stats(struct pcp_cache *pc, int cpu, struct pcp_stats *st)
{
	unsigned int i, c;

	memset(st, 0, sizeof(*st));
	if (!IS_ENABLED(CONFIG_PERCPU_STATS) || pcp_is_bypass(pc))
		return;
	for (c = 0; c < pcp_nr_cpus; c++) {
		struct pcp_cpu *pcpu = __atomic_load_n(&pc->slow[c], __ATOMIC_ACQUIRE);

		if (!pcpu || (cpu >= 0 && (unsigned int)cpu != c))
			continue;
		for (i = 0; i < NR_PCP_STATS; i++)
			st->v[i] += READ_ONCE(pcpu->stat[i]);
		/* what the fast paths count in their header line */
		st->v[PCP_STAT_RSEQ_ABORT] += READ_ONCE(pc->hdr[c].aborts);
		st->v[PCP_STAT_ALLOC_HIT] += READ_ONCE(pc->hdr[c].hits[0]);
		st->v[PCP_STAT_FREE_HIT] += READ_ONCE(pc->hdr[c].hits[1]);
	}
	if (cpu < 0) {
		st->v[PCP_STAT_DIRECT] += __atomic_load_n(&pc->nr_direct,
							  __ATOMIC_RELAXED);
		if (pc->tc_id)	/* fbc10: thread caches' counts */
			pcp_tc_account(pc, st);
	}
}

unsigned long pcp_cache_objects(struct pcp_cache *pc, unsigned long *depot_full)
{
	unsigned long n = 0;
	unsigned int cpu;
	struct pcp_mag *m;

	if (depot_full)
		*depot_full = 0;
	if (pcp_is_bypass(pc))
		return 0;
	for (cpu = 0; cpu < pcp_nr_cpus; cpu++) {
		struct pcp_cpu *c = __atomic_load_n(&pc->slow[cpu], __ATOMIC_ACQUIRE);

		if (!c)
			continue;
		pcp_cpu_lock(c);
		n += loaded_count(pc, c);
		if (c->spare)
			n += c->spare->count;
		pcp_cpu_unlock(c);
	}
	depot_lock(pc->depot);
	for (cpu = 0; cpu < pcp_nr_cpus; cpu++) {
		struct pcp_mag **top = depot_top(pc, true, cpu);

		for (m = top ? *top : NULL; m; m = m->next)
			n += m->count;
	}
	if (depot_full)
		*depot_full = pc->depot->nr_full;
	depot_unlock(pc->depot);
	if (pc->tc_id)		/* fbc10: thread caches */
		n += pcp_tc_account(pc, NULL);
	return n;
}

/* ------------------------------------------------------------------ */
/* fork */

/* The caches pcp_fork_prepare() locked (later pushes are not locked). */
static struct pcp_cache *pcp_fork_head;

void pcp_fork_prepare(void)
{
	struct pcp_cache *pc;
	unsigned int cpu;

	if (pcp_mode_cur == PCP_MODE_FALLBACK)	/* fbc10: outermost of percpu's */
		pcp_tc_fork_prepare();
	pthread_mutex_lock(&pcp_registry_lock);
	pcp_fork_head = __atomic_load_n(&pcp_registry, __ATOMIC_ACQUIRE);
	for (pc = pcp_fork_head; pc; pc = pc->next) {
		pthread_mutex_lock(&pc->lock);
		for (cpu = 0; cpu < pcp_nr_cpus; cpu++)
			if (pc->slow[cpu])
				pthread_mutex_lock(&pc->slow[cpu]->lock.mutex);
		depot_lock(pc->depot);
	}
	pcp_mem_fork_prepare();
}

static void pcp_fork_unlock_all(void)
{
	struct pcp_cache *pc;
	unsigned int cpu;

	for (pc = pcp_fork_head; pc; pc = pc->next) {
		depot_unlock(pc->depot);
		for (cpu = 0; cpu < pcp_nr_cpus; cpu++)
			if (pc->slow[cpu])
				pthread_mutex_unlock(&pc->slow[cpu]->lock.mutex);
		pthread_mutex_unlock(&pc->lock);
	}
	pthread_mutex_unlock(&pcp_registry_lock);
}

void pcp_fork_parent(void)
{
	pcp_mem_fork_parent();
	pcp_fork_unlock_all();
	if (pcp_mode_cur == PCP_MODE_FALLBACK)	/* fbc10 */
		pcp_tc_fork_parent();
}

/*
 * The child has only the forking thread, which holds every lock prepare
 * took; a cache created between prepare and fork may have a lock of its
 * own held by a thread that is gone. Re-making every lock covers both.
 */
void pcp_fork_child(void)
{
	struct pcp_cache *pc;
	unsigned int cpu;

	pcp_mem_fork_child();
	for (pc = pcp_registry; pc; pc = pc->next) {
		pthread_mutex_init(&pc->depot->lock, NULL);
		for (cpu = 0; cpu < pcp_nr_cpus; cpu++) {
			if (pc->slow[cpu])
				owned_init(&pc->slow[cpu]->lock);
		}
		pthread_mutex_init(&pc->lock, NULL);
	}
	pthread_mutex_init(&pcp_registry_lock, NULL);
	if (pcp_mode_cur == PCP_MODE_FALLBACK)	/* fbc10: others' caches orphaned */
		pcp_tc_fork_child();
	/* the reaper thread did not come along; none is started before exec */
	__atomic_store_n(&pcp_reaper_state, PCP_REAPER_DISABLED, __ATOMIC_RELAXED);
}
