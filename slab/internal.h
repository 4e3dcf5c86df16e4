/* SPDX-License-Identifier: MIT */
/*
 * slab/ private declarations: struct kmem_cache, the slab arm of struct page
 * and the slow paths the per-CPU layer refills from and flushes to.
 *
 * Which calls may run concurrently (all on the same cache unless stated):
 *
 *   slab_alloc_bulk   / slab_alloc_bulk      safe (cache lock)
 *   slab_alloc_bulk   / slab_free_bulk       safe (cache lock)
 *   slab_free_bulk    / kmem_cache_shrink    safe (cache lock)
 *   anything          / slabinfo_show        safe (RCU walk + cache lock)
 *   anything          / kmem_cache_destroy   NOT safe on the same cache,
 *                                            as in the kernel
 *   kmem_cache_create / kmem_cache_destroy   safe (slab_mutex) on
 *                                            different caches
 */
#ifndef USLAB_SLAB_INTERNAL_H
#define USLAB_SLAB_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <urcu/list.h>
#include "lib/compiler.h"
#include "lib/list.h"
#include "lib/sigsafe.h"
#include "lib/log.h"
#include "lib/lock.h"
#include "uslab/mm_types.h"
#include "uslab/page_alloc.h"
#include "uslab/percpu.h"
#include "percpu/fastpath.h"
#include "uslab/slab.h"
#include "slab/fastpath.h"	/* slab_mark_at() */

#define SLAB_NAME_LEN		48
/* Debug fill bytes, the kernel's values (include/linux/poison.h). */
#define POISON_FREE		0x6b
#define POISON_END		0xa5
#define SLUB_RED_INACTIVE	0xbb
#define SLUB_RED_ACTIVE		0xcc

/* Flags that make a cache a debug cache (checks on every alloc and free). */
#define SLAB_DEBUG_FLAGS	(SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | \
				 SLAB_STORE_USER)
/* Internal: poisoning really done (off for ctor and TYPESAFE_BY_RCU caches). */
#define __OBJECT_POISON		0x80000000u
/* Internal: one of the kmalloc-N caches. */
#define __SLAB_KMALLOC		0x40000000u

/* Slab orders are tried up to this before accepting fewer objects. */
#define SLAB_PREFERRED_MAX_ORDER	3
#define SLAB_MIN_OBJECTS		4
/* Rule 1 of the order rule starts here (Kconfig SLAB_MIN_ORDER). */
#ifdef CONFIG_SLAB_MIN_ORDER
#define SLAB_MIN_ORDER			CONFIG_SLAB_MIN_ORDER
#else
#define SLAB_MIN_ORDER			0
#endif
#define SLAB_MIN_PARTIAL		2
#define SLAB_MAX_PARTIAL		10
/*
 * The part of a slab's last used page that its objects leave unused, at
 * most this percent of the objects' bytes, looked for up to
 * SLAB_TAIL_MAX_ORDER (calculate_order(), docs/slab.md "Slab orders").
 */
#define SLAB_PAGE_TAIL_PERCENT		3
#define SLAB_TAIL_MAX_ORDER		4

/*
 * A cache. Objects are laid out in a slab with a stride of @size:
 *
 *   [left red zone: red_left_pad][object: object_size][right red zone]
 *   [free pointer, when outside the object][padding to @align]
 *
 * The free pointer sits at @offset from the object start: inside the free
 * object for plain caches, past the object for caches whose free objects
 * must stay intact (ctor, SLAB_TYPESAFE_BY_RCU, poisoning).
 *
 * Debug metadata follows, past the free pointer and the free mark:
 * SLAB_STORE_USER keeps two struct slab_track (allocation, free) at
 * @track_off; a kmalloc cache with SLAB_RED_ZONE keeps the size asked for
 * at @orig_off, and its red zone starts there (the kernel's kmalloc red
 * zone), so that malloc(50) from kmalloc-64 is guarded from byte 50.
 *
 * With CONFIG_SLAB_FREE_HARDENED every free object (in a magazine or on a
 * slab's freelist) also has a free mark ("Free marks" below): at
 * @mark_off, word 0 of plain caches (the free pointer then moves to word
 * 1; in 8-byte objects it shares word 0, xor'd with the slab's mark:
 * slab_link_xor()), a word past the free pointer
 * for the others; for kmalloc classes above 1 KiB in page_alloc's shadow,
 * outside the object (slab_mark()). Handing an object out checks and
 * clears it.
 */
/* CPU slots of a cache's fresh slabs (struct kmem_cache.fresh_slab) */
#define SLAB_FRESH_SLOTS	8

struct kmem_cache {
	/* Read-mostly, set at creation. */
	unsigned int object_size;	/* what the user asked for (class size for kmalloc) */
	unsigned int size;		/* stride in the slab */
	unsigned int align;
	unsigned int offset;		/* free pointer offset from the object */
	unsigned int red_left_pad;
	unsigned int rz_end;		/* right red zone ends at object + rz_end */
	unsigned int order;		/* slab is 2^order pages */
	unsigned int objects;		/* objects per slab */
	unsigned int min_partial;	/* empty slabs kept */
	slab_flags_t flags;
	void (*ctor)(void *);
	/* per-CPU magazines in front of the slabs; the bypass pcp_cache for
	 * debug caches; NULL without CONFIG_PERCPU_CACHE */
	struct pcp_cache *pcp;
	/*
	 * Hardened frees (slab_free_check): n bytes from the slab start is
	 * an object iff n * @obj_magic < @obj_limit (one multiply, one
	 * compare); 0 and 0 on debug caches: all their frees go to the
	 * slow path, which checks more.
	 */
	uint64_t obj_magic, obj_limit;
	unsigned int mark_off;		/* where a free object holds the mark */
	/*
	 * Where the mark is, for slab_mark(): in the object (@mark_mul 1,
	 * @mark_bias @mark_off), or for kmalloc classes above
	 * KMALLOC_SMALL_MAX in page_alloc's shadow, outside the object
	 * (slab_mark_layout()).
	 */
	uint64_t mark_mul;
	uintptr_t mark_bias;
	unsigned long mark_key;		/* the mark (slab_mark_key()) */
	unsigned long link_xor;		/* free pointers xor this (slab_link_xor()) */
	unsigned int track_off;		/* SLAB_STORE_USER tracks; 0: none */
	unsigned int orig_off;		/* kmalloc red zone: size asked; 0: none */
	/*
	 * kmalloc caches: class index + 1, kept in page_alloc's tag byte of
	 * every page of their slabs (0 for other caches), and the slab's
	 * bytes - 1 (slabs are naturally aligned buddy blocks): kfree_fast()
	 * finds the cache and the object's offset without the struct page.
	 */
	unsigned char page_tag;
	uintptr_t slab_mask;

	/* Tunables for the per-CPU layer; written under @lock. */
	unsigned int limit;
	unsigned int batchcount;
	unsigned int shared;
	long depot_limit;		/* from the settings; -2: percpu's default */
	unsigned int settings_gen;	/* settings seen (slab/settings.c) */

	struct owned_mutex lock;	/* slab_lock(); holder for slab_assert_locked() */
	/* Protected by @lock. */
	struct list_head partial;	/* 0 < inuse < objects */
	struct list_head full;		/* inuse == objects */
	struct list_head empty;		/* inuse == 0, at most min_partial */
	unsigned long nr_partial, nr_full, nr_empty;
	unsigned long nr_slabs;		/* partial + full + empty */
	unsigned long nr_slabs_peak;	/* high-water mark of nr_slabs */
	unsigned long nr_inuse;		/* objects handed out by the slab layer */
	unsigned long slabs_allocated, slabs_freed;
	unsigned long alloc_calls, free_calls;
	/* refills that dropped the lock to make slabs (grow_slabs()) */
	unsigned long grow_relocks;
	/*
	 * The slab each CPU slot (uslab_cpu_id() % SLAB_FRESH_SLOTS) takes
	 * its fresh objects from, marked by slab->frozen = slot + 1: no other
	 * slot takes that slab's fresh objects (docs/slab.md "Fresh objects:
	 * one slab per CPU"). @fresh_held: the fresh objects those slabs hold.
	 */
	struct page *fresh_slab[SLAB_FRESH_SLOTS];
	unsigned long fresh_held;
	/*
	 * Written without the lock (hints, slab_prefault_fresh()): a byte
	 * of a fresh object the last refill handed out, out of memory then
	 * (0: none), the refills still to pass before the next look at one
	 * and the current backoff, what the last look found, and the refills
	 * that populated their fresh objects' pages ahead.
	 */
	unsigned long fill_probe;
	void *fill_probe_owner;	/* the thread that left it (its TLS block) */
	unsigned int fill_wait, fill_backoff;
	int fill_seen;		/* FILL_WRITES(_NOT): what the last look found */
	unsigned long fill_prefaults;

	/* slab_caches, under slab_mutex for writers and RCU for readers. */
	struct cds_list_head list;
	char name[SLAB_NAME_LEN];
};

/* SLAB_STORE_USER: who allocated or freed an object last (slab/debug.c). */
struct slab_track {
	unsigned long addr;		/* return address of the API call */
	unsigned long when_ms;		/* CLOCK_MONOTONIC, ms */
	int cpu;
	int pid;			/* thread id */
};
enum slab_track_item { TRACK_ALLOC, TRACK_FREE };

/* USDT probes (provider uslab) on slow paths; a stub when CONFIG_USDT is off. */
#ifdef CONFIG_USDT
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>
#define slab_probe(name, ...)	STAP_PROBEV(uslab, name, ##__VA_ARGS__)
#else
#define slab_probe(name, ...)	do { } while (0)
#endif

/* slab/slab.c */
extern pthread_mutex_t slab_mutex;
extern struct cds_list_head slab_caches;
extern struct kmem_cache kmem_cache_boot;
void slab_init(void);
void slab_lock(struct kmem_cache *s);
void slab_unlock(struct kmem_cache *s);
void slab_assert_locked(struct kmem_cache *s);
/*
 * @addr: the API call's return address (_RET_IP_) for SLAB_STORE_USER and
 * reports; 0 when the layer allocates or frees for itself.
 */
int slab_alloc_bulk(struct kmem_cache *s, gfp_t gfp, void **objs, int n,
		    unsigned long addr);
void slab_free_bulk(struct kmem_cache *s, void **objs, int n,
		    unsigned long addr);
void *__slab_alloc(struct kmem_cache *s, gfp_t gfp, unsigned long addr);
void __slab_free(struct kmem_cache *s, void *obj, unsigned long addr);
static inline void *slab_alloc(struct kmem_cache *s, gfp_t gfp)
{
	return __slab_alloc(s, gfp, 0);
}
extern unsigned long slab_free_key __attribute__((visibility("hidden")));
/* The word of @obj's free mark (slab_mark_at() with @s's constants). */
static __always_inline unsigned long *slab_mark(const struct kmem_cache *s,
						const void *obj)
{
	return slab_mark_at(obj, s->mark_mul, s->mark_bias);
}

/* The slab layer's own frees (no API free marked @obj): marked here. */
static inline void slab_free(struct kmem_cache *s, void *obj)
{
	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
		*slab_mark(s, obj) = s->mark_key;
	__slab_free(s, obj, 0);
}
int slab_calculate_layout(struct kmem_cache *s);
int __kmem_cache_create(struct kmem_cache *s, const char *name,
			unsigned int size, unsigned int align,
			slab_flags_t flags, void (*ctor)(void *));
void slab_nofail_wait(unsigned int attempt);
void slab_untag(struct kmem_cache *s);

static inline bool slab_debug(const struct kmem_cache *s)
{
	return IS_ENABLED(CONFIG_SLAB_DEBUG) && (s->flags & SLAB_DEBUG_FLAGS);
}

static inline void *slab_base(const struct page *slab)
{
	return page_address(slab);
}

/* The slab (head page) of an object inside the reserved range. */
static inline struct page *virt_to_slab(const void *p)
{
	struct page *head = compound_head(virt_to_page(p));

	return PageFlag(head, PG_slab) ? head : NULL;
}

/*
 * What a free pointer is stored xor'd with: 0, or for a cache whose
 * objects hold the link in the mark's own word (8-byte objects under
 * CONFIG_SLAB_FREE_HARDENED: slab_calculate_layout()) the slab's mark,
 * so that a free object on a slab's freelist holds `link ^ ~mark_key`
 * (the slab's mark itself at the end of the list), never the magazine
 * mark (that would take a link of all ones) nor 0 (a link of ~mark_key,
 * no heap address): the mark word still tells the three states apart.
 */
static __always_inline unsigned long slab_link_xor(const struct kmem_cache *s)
{
	return IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) ? s->link_xor : 0;
}

static inline void *get_freepointer(const struct kmem_cache *s, void *obj)
{
	return (void *)(*(uintptr_t *)((char *)obj + s->offset) ^
			slab_link_xor(s));
}

static inline void set_freepointer(const struct kmem_cache *s, void *obj,
				   void *next)
{
	*(uintptr_t *)((char *)obj + s->offset) = (uintptr_t)next ^ slab_link_xor(s);
}

/* Object that contains @addr (any byte of its stride), no checks. */
static inline void *slab_nearest_obj(const struct kmem_cache *s,
				     const struct page *slab, const void *addr)
{
	char *base = slab_base(slab);
	size_t idx = (size_t)((const char *)addr - base) / s->size;

	return base + idx * s->size + s->red_left_pad;
}

/* slab/debug.c */
extern unsigned long slab_free_key __attribute__((visibility("hidden")));
void slab_free_key_init(void);
/*
 * @addr: the API call's site (_RET_IP_ taken in the exported function),
 * which SLAB_STORE_USER caches show. Passed, not taken here: a return
 * address read in a callee is the API call's site only if every call on
 * the way was a tail call, which ASan's frames (and -O0) do not make.
 * The argument is set up on these cold branches only, never on a hit.
 */
__slowpath void slab_report_double_free(const char *caller,
					struct kmem_cache *s, const void *obj,
					unsigned long addr);
size_t kmalloc_usable_fast(const void *p);
__slowpath void slab_report_taken_twice(const char *caller,
					struct kmem_cache *s, const void *obj,
					unsigned long word);
__slowpath void slab_free_unaligned(const char *caller, struct kmem_cache *s,
				    void *obj, unsigned long addr);
void slab_debug_init_object(struct kmem_cache *s, void *obj);
void slab_debug_alloc_locked(struct kmem_cache *s, struct page *slab, void *obj,
			     unsigned long addr);
struct page *slab_debug_free_locked(struct kmem_cache *s, void *obj,
				    const char *caller, unsigned long addr);
void slab_debug_set_orig_size(struct kmem_cache *s, void *obj, size_t size);
size_t slab_debug_orig_size(struct kmem_cache *s, const void *obj);
/* The end of every fatal report (abort: a core dump, SIGABRT). */
void slab_fatal(void) __attribute__((noreturn));
void slab_bad_pointer(const char *caller, const char *cache, const void *p,
		      const char *why, bool fatal);
void slab_free_not_slab(const char *caller, struct kmem_cache *s,
			const void *obj, bool fatal);

/* slab/kmalloc.c */
struct kmem_cache *kmalloc_cache_get(unsigned int idx);
int kmalloc_cache_remake(struct kmem_cache *old);
void kmalloc_debug_route(void);

/* slab/rcu.c */
void slab_rcu_barrier_if_pending(void);
void slab_rcu_free_slab(struct page *slab);
void slab_rcu_barrier(void);
void slab_rcu_synchronize(void);
void slab_rcu_read_lock(void);
void slab_rcu_read_unlock(void);
void slab_rcu_fork_prepare(void);
void slab_rcu_fork_parent(void);
void slab_rcu_fork_child(void);

/* slab/settings.c: parse, keep, resolve (calls nothing of slab/ but
 * kmalloc's name table) */
void slab_settings_resolve(struct kmem_cache *s);
void slab_settings_tunables(struct kmem_cache *s, unsigned int *limit,
			    unsigned int *batch, long *depot, unsigned int *gen);
unsigned int slab_settings_gen(void);
int slab_settings_store(const struct kmem_cache_setting *set);
bool slab_setting_matches(const struct kmem_cache_setting *set,
			  const struct kmem_cache *s);
bool slab_setting_debug_may_kmalloc(const struct kmem_cache_setting *set);
slab_flags_t slab_settings_debug_flags(const char *name, slab_flags_t flags);
void slab_settings_fork_prepare(void);
void slab_settings_fork_parent(void);
void slab_settings_fork_child(void);

/* slab/slab.c: the settings put into live caches */
#define SLAB_MAX_SHARED		4096	/* slabinfo's SHAREDFACTOR */
void slab_settings_recheck(struct kmem_cache *s);
int slab_settings_apply(struct kmem_cache *s);

/* slab/slab.c: the per-CPU layer's callbacks */
extern const struct pcp_ops slab_pcp_ops;

/*
 * The slab layer's miss entries (the only ones; docs/percpu.md, "One
 * protocol"): behind slab_alloc_fast()/slab_free_fast() and kmalloc's
 * fast paths when the CPU's magazine missed, __GFP_ZERO, a bypass cache.
 * Allocation returns an object already taken (slab_obj_take()); free
 * takes an object already marked (slab_free_test()). @addr: the API
 * call's site for SLAB_STORE_USER caches and reports, 0 from malloc.
 */
void *slab_alloc_miss(struct kmem_cache *s, gfp_t gfp, unsigned long addr);
void slab_free_miss(struct kmem_cache *s, void *obj, unsigned long addr);
void slab_drain_deferred(void);

/*
 * Free marks (CONFIG_SLAB_FREE_HARDENED; docs/slab.md, "Hardened frees").
 * A free object's mark word (slab_mark(): word 0 of the object, or its
 * word in page_alloc's shadow) holds one of two words of its cache:
 *
 *   mark_key    in a magazine or the depot: every free stores it (a
 *               store, no load: the freed block is not read)
 *   ~mark_key   on a slab's freelist: slab_free_bulk() checks that an
 *               object arriving holds mark_key and swaps it;
 *               slab_alloc_bulk() checks and swaps it back
 *
 * mark_key is the address of the cache's pcp_cache (the bypass cache's
 * when it has no magazines): the one word both hit paths already hold in
 * a register (malloc()'s table entry, free()'s class entry), so neither
 * loads a key; slab_free_key, random per process, without per-CPU caches
 * (slab_mark_key()).
 *
 * Every allocation checks mark_key and clears it (slab_obj_take())
 * before the block is handed out, so an object freed twice is reported
 * at the latest when its second copy would be handed out or would reach
 * the slab, never given to two owners. The interior-pointer test stays
 * on the free (arithmetic, slab_free_test()).
 */
static __always_inline unsigned long slab_mark_slab(const struct kmem_cache *s)
{
	return ~s->mark_key;
}

/*
 * Does @mark, the mark word of @obj, say "on a slab's freelist"? The
 * slab's mark; where the link shares the word (slab_link_xor()), a link
 * xor'd with it: NULL, or a word-aligned address in @obj's own slab
 * (slabs are naturally aligned), which stops a walk from leaving it.
 */
static __always_inline bool slab_mark_on_slab(const struct kmem_cache *s,
					      const void *obj, unsigned long mark)
{
	uintptr_t link;

	if (!slab_link_xor(s))
		return mark == slab_mark_slab(s);
	link = mark ^ slab_link_xor(s);
	return !link || (!((link ^ (uintptr_t)obj) & ~s->slab_mask) &&
			 !(link & (sizeof(void *) - 1)));
}

/*
 * @obj is about to be handed out: it must hold the magazine mark (else it
 * was handed out already since its last free, or written after it: a
 * double free, reported naming the cache and the object). Clears it.
 */
__slowpath void slab_take_bad(struct kmem_cache *s, void *obj);
/*
 * slab_obj_take() with the mark's word and the cache's key already found
 * (@s may be NULL: the report finds the cache)
 */
static __always_inline void *slab_obj_take_at(struct kmem_cache *s, void *obj,
					      unsigned long *mark,
					      unsigned long key)
{
	if (IS_ENABLED(CONFIG_SLAB_FREE_HARDENED)) {
		if (unlikely(*mark != key))
			slab_take_bad(s, obj);
		*mark = 0;
	}
	return obj;
}

static __always_inline void *slab_obj_take(struct kmem_cache *s, void *obj)
{
	return slab_obj_take_at(s, obj, slab_mark(s, obj), s->mark_key);
}

/*
 * Does @obj hold a free mark (a free object: the magazine's or the
 * slab's)? For the checks of other calls than a free (ksize_checked():
 * realloc, malloc_usable_size); false without CONFIG_SLAB_FREE_HARDENED.
 */
static __always_inline bool slab_obj_marked_free(const struct kmem_cache *s,
						 const void *obj)
{
	unsigned long mark;

	if (!IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
		return false;
	mark = *slab_mark(s, obj);
	return mark == s->mark_key || slab_mark_on_slab(s, obj, mark);
}

enum slab_free_fault { SLAB_FREE_OK, SLAB_FREE_UNALIGNED };

/*
 * The free side, no report (kfree_fast() hands a failure to kfree(), which
 * runs slab_free_check()). @n: @obj's offset from the start of its slab:
 * @obj must sit at an object boundary (one multiply, one compare); then it
 * gets the magazine mark (one store, no load).
 * Return: SLAB_FREE_OK (and @obj marked), else the fault.
 */
static __always_inline enum slab_free_fault
slab_free_test(struct kmem_cache *s, void *obj, uint64_t n)
{
	if (!IS_ENABLED(CONFIG_SLAB_FREE_HARDENED))
		return SLAB_FREE_OK;
	if (unlikely(n * s->obj_magic >= s->obj_limit))
		return SLAB_FREE_UNALIGNED;
	*slab_mark(s, obj) = s->mark_key;
	return SLAB_FREE_OK;
}

/* @n: @obj's offset from the start of its slab. */
static __always_inline bool slab_free_check_at(const char *caller,
					       struct kmem_cache *s, void *obj,
					       uint64_t n)
{
	if (likely(slab_free_test(s, obj, n) == SLAB_FREE_OK))
		return true;
	slab_free_unaligned(caller, s, obj, _RET_IP_);
	return false;
}

static __always_inline bool slab_free_check(const char *caller,
					    struct kmem_cache *s,
					    const struct page *page, void *obj)
{
	/* struct page is 64 bytes: (page - head) pages of 4 KiB */
	uint64_t n = ((uintptr_t)obj & ~PAGE_MASK) +
		     (((uintptr_t)page - (uintptr_t)compound_head(page)) <<
		      (PAGE_SHIFT - 6));

	return slab_free_check_at(caller, s, obj, n);
}

/*
 * kmem_cache_alloc()'s fast path: the CPU's magazine (percpu/), the slab
 * layer only on a miss. Debug caches (and a cache whose magazines could
 * not be set up) have the bypass pcp_cache, on which every fast path
 * misses, so that no NULL test is needed here. The API call's site (which
 * SLAB_STORE_USER caches record) is an argument of the miss only:
 * _RET_IP_ of the exported function this is inlined into.
 */
static __always_inline void *slab_alloc_fast(struct kmem_cache *s, gfp_t gfp)
{
	void *obj;

	if (IS_ENABLED(CONFIG_PERCPU_CACHE) && likely(!(gfp & __GFP_ZERO))) {
		obj = pcp_alloc_fast(s->pcp);
		if (likely(obj))
			return slab_obj_take(s, obj);
	}
	return slab_alloc_miss(s, gfp, _RET_IP_);
}

/*
 * Give @obj back, checked and marked (the caller ran slab_free_check()).
 * The API call's site is an argument of the miss only.
 */
static __always_inline void slab_free_fast(struct kmem_cache *s, void *obj)
{
	if (IS_ENABLED(CONFIG_PERCPU_CACHE) && likely(pcp_free_fast(s->pcp, obj)))
		return;
	slab_free_miss(s, obj, _RET_IP_);
}

#endif /* USLAB_SLAB_INTERNAL_H */
