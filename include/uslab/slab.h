/* SPDX-License-Identifier: MIT */
/*
 * Slab caches with the kernel's API (include/linux/slab.h): same names,
 * signatures and documented semantics, so kernel code compiles unchanged.
 *
 * Concurrency: every function is thread-safe. kmem_cache_destroy() must not
 * race with allocations from the same cache (as in the kernel).
 */
#ifndef USLAB_SLAB_H
#define USLAB_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "uslab/api.h"
#include "uslab/gfp.h"
#include "uslab/tunables.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned int slab_flags_t;

/* kmem_cache_create() flags, the kernel's names */
#define SLAB_CONSISTENCY_CHECKS	0x00000100u	/* check frees (double free, bad pointer) */
#define SLAB_RED_ZONE		0x00000400u	/* guard bytes around each object */
#define SLAB_POISON		0x00000800u	/* fill freed objects with 0x6b, check on alloc */
#define SLAB_HWCACHE_ALIGN	0x00002000u	/* align objects on cache lines */
#define SLAB_PANIC		0x00040000u	/* abort if creation fails */
#define SLAB_TYPESAFE_BY_RCU	0x00080000u	/* slabs freed only after a grace period */
#define SLAB_ACCOUNT		0x04000000u	/* accepted, no effect */
#define SLAB_RECLAIM_ACCOUNT	0x00020000u	/* accepted, no effect */
#define SLAB_NO_MERGE		0x01000000u	/* accepted; uslab never merges caches */
#define SLAB_STORE_USER		0x00010000u	/* record allocation and free call sites */

#define ZERO_SIZE_PTR		((void *)16)
#define ZERO_OR_NULL_PTR(x)	((unsigned long)(x) <= (unsigned long)ZERO_SIZE_PTR)

#define KMALLOC_MIN_SIZE	8
#define KMALLOC_SHIFT_LOW	3
#define KMALLOC_MAX_CACHE_SIZE	CONFIG_KMALLOC_MAX_CACHE_SIZE
/* Largest kmalloc: the page allocator's own mappings go well beyond this. */
#define KMALLOC_MAX_SIZE	((size_t)1 << 40)
#define ARCH_KMALLOC_MINALIGN	8

/*
 * The kmalloc size classes: ONE table, kmalloc_info[] (slab/kmalloc.c),
 * smallest first; slab, malloc, its options and debug caches, and the
 * simulator all walk it with for_each_kmalloc_class().
 *
 *   8, 16, 32, 48, 64, 80, 96, 112, 128	steps of 16 (16-byte aligned)
 *   160, 192, 224, 256, 320, 384, ...	four classes per doubling
 *   ... 160k, 192k, 224k, 256k		up to KMALLOC_MAX_CACHE_SIZE
 *
 * Rounding waste: a request of s > 128 bytes lands in a class at most a
 * quarter of the power of two below s above it, so the unused tail is
 * under 12.5% of the power of two above s (under 20% of the class; about
 * 10% on average for sizes spread evenly), the rule of jemalloc's and
 * mimalloc's classes. From 16 to 128 the 16-byte steps waste at most 15
 * bytes. docs/slab.md, "Size classes", has the table and the slab orders.
 */
#define KMALLOC_SHIFT_HIGH	(KMALLOC_MAX_CACHE_SIZE >= (1 << 18) ? 18 :	\
				 KMALLOC_MAX_CACHE_SIZE >= (1 << 17) ? 17 :	\
				 KMALLOC_MAX_CACHE_SIZE >= (1 << 16) ? 16 :	\
				 KMALLOC_MAX_CACHE_SIZE >= (1 << 15) ? 15 :	\
				 KMALLOC_MAX_CACHE_SIZE >= (1 << 14) ? 14 :	\
				 KMALLOC_MAX_CACHE_SIZE >= (1 << 13) ? 13 : 12)
/* 8, eight steps of 16 up to 128, then four per doubling. */
#define NR_KMALLOC_CLASSES	(9 + 4 * (KMALLOC_SHIFT_HIGH - 7))
/* Sizes up to this find their class in a byte table, larger ones by fls. */
#define KMALLOC_SMALL_MAX	1024

struct kmalloc_info_struct {
	const char *name;	/* "kmalloc-64", "kmalloc-1280", "kmalloc-8k" */
	unsigned int size;	/* object size: the largest request served */
};
/* the first NR_KMALLOC_CLASSES rows are this build's classes */
extern const struct kmalloc_info_struct kmalloc_info[];
/* Class of sizes 8i + 1 .. 8i + 8, for sizes up to KMALLOC_SMALL_MAX. */
extern const unsigned char kmalloc_size_index[KMALLOC_SMALL_MAX / 8];

#define for_each_kmalloc_class(idx)					\
	for ((idx) = 0; (idx) < NR_KMALLOC_CLASSES; (idx)++)

/* Class of 1 <= @size <= KMALLOC_SMALL_MAX: one byte load. */
static inline unsigned int kmalloc_index_small(size_t size)
{
	return kmalloc_size_index[(size - 1) >> 3];
}

/*
 * kmalloc_index - class of 1 <= @size <= KMALLOC_MAX_CACHE_SIZE: a byte
 * load up to KMALLOC_SMALL_MAX, above it computed from the highest set bit
 * of size - 1 (as jemalloc's sz_size2index): with k = fls(size - 1) - 1
 * the group (2^k, 2^(k+1)] has classes 5, 6, 7, 8 << (k - 2), and
 * (size - 1) >> (k - 2) is 4..7 inside it.
 */
static inline unsigned int kmalloc_index(size_t size)
{
	size_t s = size - 1;
	unsigned int k;

	if (s < KMALLOC_SMALL_MAX)
		return kmalloc_size_index[s >> 3];
	k = 63 - (unsigned int)__builtin_clzl(s);
	return 4 * k - 23 + (unsigned int)(s >> (k - 2));
}

struct kmem_cache;

/**
 * kmem_cache_create - create a cache of objects of @size bytes.
 * @name: shown by slabinfo; the string is copied.
 * @size: object size (> 0).
 * @align: minimum alignment (0 = natural word alignment); a power of two.
 * @flags: SLAB_* flags.
 * @ctor: called on each object when its slab is created, never again when
 *        a freed object is reused. May be NULL.
 * Context: may sleep; takes the cache-list mutex.
 * Return: the cache, or NULL (errno EINVAL for bad arguments, ENOMEM).
 */
USLAB_API struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
					       unsigned int align, slab_flags_t flags,
					       void (*ctor)(void *));

/**
 * kmem_cache_destroy - destroy a cache. Objects still allocated are
 * reported on stderr ("kmem_cache_destroy NAME: Slab cache still has
 * objects") and their slabs are leaked, as the kernel does. NULL is ignored.
 */
USLAB_API void kmem_cache_destroy(struct kmem_cache *s);

/**
 * kmem_cache_shrink - drain per-CPU caches and give empty slabs back to the
 * page allocator. Return: 0 if every slab was freed, 1 otherwise.
 */
USLAB_API int kmem_cache_shrink(struct kmem_cache *s);

USLAB_API void *kmem_cache_alloc(struct kmem_cache *s, gfp_t flags);
USLAB_API void *kmem_cache_zalloc(struct kmem_cache *s, gfp_t flags);
USLAB_API void kmem_cache_free(struct kmem_cache *s, void *obj);
/* Bulk forms, as in the kernel: return the count allocated (all or 0). */
USLAB_API int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t flags, size_t nr, void **p);
USLAB_API void kmem_cache_free_bulk(struct kmem_cache *s, size_t nr, void **p);
USLAB_API unsigned int kmem_cache_size(struct kmem_cache *s);
USLAB_API const char *kmem_cache_name(const struct kmem_cache *s);

USLAB_API void *kmalloc(size_t size, gfp_t flags);
USLAB_API void *kzalloc(size_t size, gfp_t flags);
USLAB_API void *kmalloc_array(size_t n, size_t size, gfp_t flags);
USLAB_API void *kcalloc(size_t n, size_t size, gfp_t flags);
USLAB_API void *krealloc(const void *p, size_t new_size, gfp_t flags);
USLAB_API void kfree(const void *p);
USLAB_API void kfree_sensitive(const void *p);
USLAB_API size_t ksize(const void *p);
#ifdef USLAB_INTERNAL	/* the library's own calls, not exported */
/*
 * The one route from a size class to its cache, for kmalloc() and the
 * malloc layer: __kmalloc_index() allocates from class @idx (the CPU's
 * magazine, else the slab layer, entering the rseq section once), @flags
 * without __GFP_ZERO. kfree_fast() frees a pointer page_alloc_owns().
 * Same results as kmalloc()/kfree().
 */
void *__kmalloc_index(unsigned long idx, gfp_t flags);
void kfree_fast(void *p);
/* kmalloc with an alignment (power of two); used by the malloc layer. */
void *kmalloc_aligned(size_t size, size_t align, gfp_t flags);
/* Which cache serves kmalloc(@size)? NULL for sizes above the caches. */
struct kmem_cache *kmalloc_slab(size_t size);
/*
 * ksize() of a block about to be used whole (realloc, malloc_usable_size),
 * with a free's checks: a freed block or a pointer inside one is reported
 * as free reports it (@caller, the cache, the pointer; @addr the call
 * site), then aborts in hardened builds (slab/debug.c).
 */
size_t ksize_checked(const void *p, const char *caller, unsigned long addr);
#endif

/*
 * kfree_rcu(ptr, field): free @ptr after a grace period; @field is the name
 * of its struct rcu_head member (liburcu's, from <urcu/call-rcu.h>,
 * included here so that this header alone is enough). kvfree_rcu(ptr) is
 * the single-argument form (no rcu_head needed: it waits inline).
 *
 * call-rcu.h declares its calls under the names of the flavour mapped when
 * it is first included (liburcu includes it from a flavour's header), and
 * its include guard keeps it from being read again: taken here unmapped, it
 * would declare call_rcu() and a later <urcu.h> (<linux/rcupdate.h>) would
 * map call_rcu to urcu_memb_call_rcu, never declared. So it is read under
 * the memb flavour's mapping (uslab's, pkg-config's Requires), which is
 * cleared again: this header defines no generic RCU names itself.
 */
#ifndef _URCU_CALL_RCU_H
#include <urcu/map/urcu-memb.h>
#include <urcu/call-rcu.h>
#include <urcu/map/clear.h>
#endif
USLAB_API void __kfree_rcu(struct rcu_head *head, size_t offset);
#define kfree_rcu(ptr, field)						\
	__kfree_rcu(&(ptr)->field, __builtin_offsetof(__typeof__(*(ptr)), field))
USLAB_API void kvfree_rcu_mightsleep(const void *p);
/* Wait until every pending kfree_rcu() has been freed. */
USLAB_API void kfree_rcu_barrier(void);

/*
 * slabinfo: /proc/slabinfo version 2.1, tunables columns carrying the real
 * per-CPU magazine settings. Never allocates from the caches it lists.
 * Return: bytes written (NUL-terminated, truncated at @len).
 */
USLAB_API size_t slabinfo_show(char *buf, size_t len);
/* Write slabinfo to a file descriptor, however long. Return: 0 or -errno. */
USLAB_API int slabinfo_write_fd(int fd);
/*
 * slabinfo_write - "<cache> <limit> <batchcount> <sharedfactor>", as writing
 * /proc/slabinfo did under SLAB. Return: 0 or -EINVAL/-ENOENT.
 */
USLAB_API int slabinfo_write(const char *line);
#ifdef USLAB_INTERNAL
/* Is @line a write slabinfo_write() accepts? 0, or -EINVAL with @why
 * ("BATCHCOUNT: expected 1 to 64 (the LIMIT), found 100") naming the field
 * and its range; the cache itself is not looked up. For `uslab slabinfo
 * -w`, before the line goes to the process. */
int slabinfo_check(const char *line, char *why, size_t len);
#endif

/**
 * kmem_cache_set_tunables - magazine size (@limit) and @batchcount for @s;
 * @shared is kept and shown (sharedfactor). Safe while other threads use @s.
 * Return: 0 or -EINVAL.
 */
USLAB_API int kmem_cache_set_tunables(struct kmem_cache *s, unsigned int limit,
				      unsigned int batchcount, unsigned int shared);

#ifdef USLAB_INTERNAL
/**
 * kmem_cache_pcp - the per-CPU magazines in front of @s (uslab/percpu.h),
 * for statistics and tunables (the simulator and the tuner read them).
 * Context: any; lock-free.
 * Return: the pcp_cache, or NULL when @s has none (debug caches, nocache).
 */
struct pcp_cache;
struct pcp_cache *kmem_cache_pcp(struct kmem_cache *s);
#endif

/** kmem_cache_find - a cache by name (first match), or NULL. */
USLAB_API struct kmem_cache *kmem_cache_find(const char *name);

/**
 * kmem_cache_set_fault - failslab: make the slab layer's allocations (each
 * refill of a CPU's magazine and each allocation that bypasses magazines)
 * fail as on a shortage (NULL, errno ENOMEM; never with __GFP_NOFAIL), per
 * "probability[:interval[:times[:space]]]" (docs/slab.md, "Fault
 * injection"); "0": off.
 * Return: 0 or -EINVAL.
 */
int kmem_cache_set_fault(const char *spec);
/** kmem_cache_faults_injected - failures injected so far. */
unsigned long kmem_cache_faults_injected(void);

/*
 * Per-cache settings: the magazine size, batch and depot limit of a cache,
 * named before or after it exists ("mag_size.kmalloc-64=32", by size
 * "mag_size.64=32", by kmem_cache_create() name "mag_size.conn_cache=64",
 * or for every kmalloc cache "mag_size=32"; likewise batch and depot_limit).
 * Kept and applied when the named cache is created; applied at once to
 * caches that exist. USLAB_OPTIONS, `uslab sim` and slabinfo writes all
 * come through here (slab/settings.c).
 */
enum kmem_cache_tunable {	/* the cache rows of <uslab/tunables.h> */
	KMEM_TUNE_MAG_SIZE = USLAB_OPT_MAG_SIZE,	/* objects per magazine; 0 = default */
	KMEM_TUNE_BATCH = USLAB_OPT_BATCH,		/* objects per refill/flush; 0 = default */
	KMEM_TUNE_DEPOT_LIMIT = USLAB_OPT_DEPOT_LIMIT,	/* full magazines kept; -1 = unlimited */
	KMEM_TUNE_DEBUG = USLAB_OPT_SLAB_DEBUG,		/* SLAB_* debug flags, 0 = off */
};

struct kmem_cache_setting {
	enum kmem_cache_tunable what;
	long value;
	char cache[48];		/* the cache it names ("kmalloc-*": a prefix);
				 * "" = every kmalloc cache (slab_debug: every cache) */
	char key[48];		/* the name as given ("64", "kmalloc-64") */
};

/* A decimal in [@min, @max], nothing else. Return: 0, -EINVAL, -ERANGE. */
int kmem_cache_parse_long(const char *val, long min, long max, long *out);
/*
 * A setting from its parts, parsed already: @value within the row's
 * bounds, @cache (@len bytes; NULL or 0: every kmalloc cache) a cache
 * name, a prefix ending in '*' or a byte size. Nothing is applied.
 * Return: 0, -EINVAL (bad name), -ERANGE, -EOPNOTSUPP (nothing to set in
 * this build: no magazines, no slab debugging for slab_debug).
 */
int kmem_cache_setting_make(struct kmem_cache_setting *set, enum kmem_cache_tunable what,
			    const char *cache, size_t len, long value);
/*
 * "name[.cache]=value" as text (split once, then as above).
 * Return: 0, -ENOENT (not a cache setting), -EINVAL, -ERANGE, -EOPNOTSUPP.
 */
int kmem_cache_setting_parse(const char *item, struct kmem_cache_setting *set);
/* Return: 0, -ENOSPC, or an existing cache's refusal (-EINVAL). */
int kmem_cache_setting_add(const struct kmem_cache_setting *set);
/* Parse and add "name[.cache]=value". */
int kmem_cache_setting(const char *item);
/*
 * slab_debug's value in the kernel's syntax ("FZPU", "FZ,kmalloc-64,dentry",
 * "P,kmalloc-*;-,kmalloc-8", "" = FZPU for every cache) into up to @max
 * settings, in order. Return: how many; -EINVAL (a letter other than
 * F Z P U -, an empty or too long name), -ENOSPC (more than @max), or
 * -EOPNOTSUPP (no CONFIG_SLAB_DEBUG).
 */
int kmem_cache_debug_parse(const char *val, struct kmem_cache_setting *sets,
			   unsigned int max);
/* May a kept slab_debug setting make a kmalloc cache a debug cache? */
bool kmem_cache_debug_kmalloc(void);
char *kmem_cache_setting_str(const struct kmem_cache_setting *set, char *buf,
			     size_t len);
/* Settings naming a cache that never existed, ", "-separated. Return: count. */
unsigned int kmem_cache_settings_unmatched(char *buf, size_t len);
void kmem_cache_settings_clear(void);

/*
 * Statistics as calls (slab/stats.c). Counters of one cache: the per-CPU
 * layer's (zero without CONFIG_PERCPU_STATS: see @flags) and the slab
 * layer's. Fixed-width fields, so a tool may copy the struct as it is.
 */
#define KMEM_CACHE_STATS_MAGAZINES	0x1	/* has per-CPU magazines */
#define KMEM_CACHE_STATS_COUNTED	0x2	/* allocs..direct are counted */
#define KMEM_CACHE_STATS_KMALLOC	0x4	/* one of the kmalloc-N caches */
#define KMEM_CACHE_STATS_ADAPTIVE	0x8	/* magazines size themselves */

struct kmem_cache_stats {
	char name[48];
	uint32_t flags;
	uint32_t object_size;		/* what callers get */
	uint32_t size;			/* stride in the slab */
	uint32_t objects_per_slab, pages_per_slab;
	uint32_t limit, batchcount, shared;	/* magazine tunables in force */
	uint32_t depot_limit;		/* full magazines kept; ~0u unlimited */
	uint64_t allocs, frees;		/* operations on the cache */
	uint64_t alloc_hits, free_hits;	/* served by the loaded magazine */
	uint64_t alloc_slow, free_slow;	/* took the per-CPU slow path */
	uint64_t refills, flushes;	/* batches from and to the slabs */
	uint64_t swaps, depot_gets, depot_puts;
	uint64_t rseq_aborts, fallback_ops, drains, direct;
	uint64_t grows, shrinks;	/* adaptive size changes (all CPUs) */
	uint32_t mag_lo, mag_hi;	/* magazine sizes in force over the CPUs */
	uint64_t active_objs, num_objs, cached_objs;	/* as slabinfo; cached:
							 * in magazines/depot */
	uint64_t nr_slabs, nr_slabs_peak;
	uint64_t slab_bytes, slab_bytes_peak;
};

/* Are the counters compiled in? (CONFIG_STATS, CONFIG_PERCPU_STATS) */
bool kmem_cache_stats_enabled(void);
void kmem_cache_get_stats(struct kmem_cache *s, struct kmem_cache_stats *st);
/* Every cache into @st[0..@max). Return: the number of caches. */
size_t kmem_cache_stats_all(struct kmem_cache_stats *st, size_t max);
void kmem_cache_stats_reset_peak(void);
void kmem_cache_stats_sub(struct kmem_cache_stats *after,
			  const struct kmem_cache_stats *before);
/* The per-cache table (`uslab sim`, USLAB_OPTIONS=stats): text into @buf. */
size_t kmem_cache_stats_header(char *buf, size_t len);
/* The same for rows whose KMEM_CACHE_STATS_ADAPTIVE is @adaptive. */
size_t kmem_cache_stats_header_adaptive(bool adaptive, char *buf, size_t len);
size_t kmem_cache_stats_row(const struct kmem_cache_stats *st, char *buf,
			    size_t len);
size_t kmem_cache_stats_total(uint64_t allocs, uint64_t frees, uint64_t hits,
			      char *buf, size_t len);
/* What the "all caches" line sums, row by row: allocs under allocs, frees
 * under frees, magazine hits of both. */
struct kmem_cache_stats_sum {
	uint64_t allocs, frees, hits;
};
static inline void kmem_cache_stats_sum_add(struct kmem_cache_stats_sum *sum,
					    const struct kmem_cache_stats *st)
{
	sum->allocs += st->allocs;
	sum->frees += st->frees;
	sum->hits += st->alloc_hits + st->free_hits;
}
struct page_alloc_stats;
size_t kmem_cache_stats_page_line(const struct page_alloc_stats *ps, char *buf,
				  size_t len);
bool kmem_cache_stats_shown(const struct kmem_cache_stats *st);
/* Heading, table, totals and page allocator line to @fd. Return: 0/-errno. */
int kmem_cache_stats_write_fd(int fd);

/** kmem_cache_shrink_all - kmem_cache_shrink() every cache, then trim pages. */
USLAB_API void kmem_cache_shrink_all(void);

#ifdef USLAB_INTERNAL
/*
 * fork() safety, for the malloc layer's pthread_atfork(): prepare pauses
 * liburcu's call_rcu workers and takes slab_mutex and every cache lock;
 * parent releases them; child re-initialises them. Call page_alloc's
 * handlers after (prepare) and before (parent, child) these.
 */
void slab_fork_prepare(void);
void slab_fork_parent(void);
void slab_fork_child(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* USLAB_SLAB_H */
