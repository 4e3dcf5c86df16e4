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
#include "uslab/gfp.h"

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
#define SLAB_STORE_USER		0x00010000u	/* accepted, no effect */

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
extern const struct kmalloc_info_struct kmalloc_info[NR_KMALLOC_CLASSES];
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
struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, slab_flags_t flags,
				     void (*ctor)(void *));

/**
 * kmem_cache_destroy - destroy a cache. Objects still allocated are
 * reported on stderr ("kmem_cache_destroy NAME: Slab cache still has
 * objects") and their slabs are leaked, as the kernel does. NULL is ignored.
 */
void kmem_cache_destroy(struct kmem_cache *s);

/**
 * kmem_cache_shrink - drain per-CPU caches and give empty slabs back to the
 * page allocator. Return: 0 if every slab was freed, 1 otherwise.
 */
int kmem_cache_shrink(struct kmem_cache *s);

void *kmem_cache_alloc(struct kmem_cache *s, gfp_t flags);
void *kmem_cache_zalloc(struct kmem_cache *s, gfp_t flags);
void kmem_cache_free(struct kmem_cache *s, void *obj);
/* Bulk forms, as in the kernel: return the count allocated (all or 0). */
int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t flags, size_t nr, void **p);
void kmem_cache_free_bulk(struct kmem_cache *s, size_t nr, void **p);
unsigned int kmem_cache_size(struct kmem_cache *s);
const char *kmem_cache_name(const struct kmem_cache *s);

void *kmalloc(size_t size, gfp_t flags);
void *kzalloc(size_t size, gfp_t flags);
void *kmalloc_array(size_t n, size_t size, gfp_t flags);
void *kcalloc(size_t n, size_t size, gfp_t flags);
void *krealloc(const void *p, size_t new_size, gfp_t flags);
void kfree(const void *p);
void kfree_sensitive(const void *p);
size_t ksize(const void *p);
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
 * kfree_rcu(ptr, field): free @ptr after a grace period; @field is the name
 * of its struct rcu_head member (liburcu's). kvfree_rcu(ptr) is the
 * single-argument form (no rcu_head needed: it waits inline).
 */
struct rcu_head;
void __kfree_rcu(struct rcu_head *head, size_t offset);
#define kfree_rcu(ptr, field)						\
	__kfree_rcu(&(ptr)->field, __builtin_offsetof(__typeof__(*(ptr)), field))
void kvfree_rcu_mightsleep(const void *p);
/* Wait until every pending kfree_rcu() has been freed. */
void kfree_rcu_barrier(void);

/*
 * slabinfo: /proc/slabinfo version 2.1, tunables columns carrying the real
 * per-CPU magazine settings. Never allocates from the caches it lists.
 * Return: bytes written (NUL-terminated, truncated at @len).
 */
size_t slabinfo_show(char *buf, size_t len);
/* Write slabinfo to a file descriptor, however long. Return: 0 or -errno. */
int slabinfo_write_fd(int fd);
/*
 * slabinfo_write - "<cache> <limit> <batchcount> <sharedfactor>", as writing
 * /proc/slabinfo did under SLAB. Return: 0 or -EINVAL/-ENOENT.
 */
int slabinfo_write(const char *line);

/**
 * kmem_cache_set_tunables - magazine size (@limit) and @batchcount for @s;
 * @shared is kept and shown (sharedfactor). Safe while other threads use @s.
 * Return: 0 or -EINVAL.
 */
int kmem_cache_set_tunables(struct kmem_cache *s, unsigned int limit,
			    unsigned int batchcount, unsigned int shared);

/**
 * kmem_cache_pcp - the per-CPU magazines in front of @s (uslab/percpu.h),
 * for statistics and tunables (the simulator and the tuner read them).
 * Context: any; lock-free.
 * Return: the pcp_cache, or NULL when @s has none (debug caches, nocache).
 */
struct pcp_cache;
struct pcp_cache *kmem_cache_pcp(struct kmem_cache *s);

/** kmem_cache_find - a cache by name (first match), or NULL. */
struct kmem_cache *kmem_cache_find(const char *name);

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

/** kmem_cache_shrink_all - kmem_cache_shrink() every cache, then trim pages. */
void kmem_cache_shrink_all(void);

/*
 * fork() safety, for the malloc layer's pthread_atfork(): prepare pauses
 * liburcu's call_rcu workers and takes slab_mutex and every cache lock;
 * parent releases them; child re-initialises them. Call page_alloc's
 * handlers after (prepare) and before (parent, child) these.
 */
void slab_fork_prepare(void);
void slab_fork_parent(void);
void slab_fork_child(void);

#endif /* USLAB_SLAB_H */
