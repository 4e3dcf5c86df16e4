/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU magazines: a mechanism that keeps, for each cache and each CPU, a
 * loaded magazine (array of object pointers) and a spare, with a depot of
 * full and empty magazines behind them (Bonwick's magazines, the kernel's
 * sheaves and barn). It knows nothing about slabs: the layer above supplies
 * refill and flush callbacks that move objects in batches.
 *
 * The alloc and free fast paths are each one rseq critical section ending
 * in a single committing store (x86-64). Where rseq cannot be used the
 * fallback mode serves the same API with a lock per CPU; the mode is chosen
 * once per process (pcp_mode()).
 *
 * Built with -DUSLAB_VCPU=1 (libuslab-core-vcpu.a), the same policy runs on
 * virtual CPUs named by the caller (pcp_vcpu_set()) and a virtual clock
 * (pcp_vclock_set()): no rseq, no threads, deterministic.
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
#include <pthread.h>
#include "lib/compiler.h"

#ifndef USLAB_VCPU
#define USLAB_VCPU 0
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
 * non-atomic increments; compiled away without CONFIG_PERCPU_STATS.
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
	X(DIRECT,	"direct")	/* op bypassed magazines */

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
 * What the layer above supplies. Both may be called with a per-CPU lock
 * and the depot lock of this cache held: they must not call back into
 * pcp_* functions of the same cache.
 */
struct pcp_ops {
	/* Put up to @nr objects in @objs. Return: how many (0 = ENOMEM). */
	unsigned int (*refill)(void *owner, void **objs, unsigned int nr);
	/* Take back @nr objects. */
	void (*flush)(void *owner, void **objs, unsigned int nr);
};

/* A magazine: @count objects in objs[0..count), room for @size. */
struct pcp_mag {
	uint64_t count;
	uint64_t size;
	struct pcp_mag *next;		/* depot list */
	uint64_t pad;
	void *objs[];
};

struct pcp_cpu;

/*
 * One per cache. Only @cpus is read by the inline fast paths: cpus[cpu] is
 * the CPU's struct pcp_cpu while its fast path may run, and otherwise (not
 * yet allocated, stopped by a remote drain) the shared idle pcp_cpu, whose
 * magazine has size 0: both fast paths miss on it with no extra test.
 * cpus[-1] and cpus[-2] (@cpu_guard) exist for an unregistered rseq area
 * (cpu_id -1 or -2) and always hold the idle pcp_cpu.
 *
 * A bypass cache (pcp_cache_bypass()) has the idle pcp_cpu everywhere and
 * never allocates: the layer above uses it for caches that must not be
 * cached (debug caches), so that its fast path needs no NULL test.
 */
struct pcp_cache {
	/* private to percpu/ */
	struct pcp_cpu **slow;		/* every allocated pcp_cpu */
	const struct pcp_ops *ops;
	void *owner;
	char name[32];
	unsigned int objsize;
	unsigned int limit, batchcount, depot_limit;
	pthread_mutex_t lock;		/* lazy pcp_cpu allocation, tunables */
	struct pcp_depot *depot;
	struct pcp_cache *next;		/* registry */
	unsigned long nr_direct;	/* ops that bypassed magazines */
	bool bypass;
	/* read by the fast paths */
	struct pcp_cpu *cpu_guard[2];	/* cpus[-2], cpus[-1] */
	struct pcp_cpu *cpus[];		/* pcp_nr_cpu_ids() entries */
};

#define PCP_CACHE_CPUS_OFFSET	__builtin_offsetof(struct pcp_cache, cpus)

/*
 * struct pcp_cpu (percpu/internal.h) starts with the loaded magazine and
 * then its counters; the fast paths rely on both offsets.
 */
#define PCP_CPU_MAG_OFFSET	0
#define PCP_CPU_STAT_OFFSET	8

/* percpu/cpu.c */
extern long pcp_rseq_off __attribute__((visibility("hidden")));
				/* TLS offset of the rseq area in use */

/**
 * pcp_init - choose the mode, find the possible CPUs; idempotent.
 * Context: any thread; every entry point calls it. Never allocates.
 * Return: 0.
 */
int pcp_init(void);

/** pcp_mode - "off", "rseq", "fallback" or "vcpu". Context: any. */
const char *pcp_mode(void);
enum pcp_mode_id pcp_mode_id(void);

/** pcp_nr_cpu_ids - highest possible CPU + 1 (arrays are this long). */
unsigned int pcp_nr_cpu_ids(void);

/**
 * pcp_default_limit - magazine size for objects of @size bytes: by object
 * count, CONFIG_PERCPU_MAG_SIZE or when that is 0 120 up to 256 B, 54 up
 * to 1 KiB, 64 above; then bounded in bytes, at most
 * CONFIG_PERCPU_MAG_BYTES / @size objects (at least 1).
 * Return: the limit.
 */
unsigned int pcp_default_limit(unsigned int size);
/** pcp_default_batchcount - CONFIG_PERCPU_BATCHCOUNT, or (@limit + 1) / 2. */
unsigned int pcp_default_batchcount(unsigned int limit);

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

static inline bool pcp_cache_is_bypass(const struct pcp_cache *pc)
{
	return pc->bypass;
}

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
 * Every magazine of the old size is drained first.
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
int pcp_cache_set_depot_limit(struct pcp_cache *pc, unsigned int limit);
unsigned int pcp_cache_get_depot_limit(const struct pcp_cache *pc);

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
 * Virtual CPU and clock (libuslab-core-vcpu.a only; elsewhere they return
 * -EOPNOTSUPP). pcp_vcpu_set names the CPU the calling thread runs on from
 * now on (0..pcp_nr_cpu_ids()-1). pcp_vclock_set advances the virtual
 * clock (ns, never backwards); each reaper period crossed runs
 * pcp_reap_all(). pcp_vcpu_set_nr sets the number of virtual CPUs before
 * the first cache exists (default 64).
 */
int pcp_vcpu_set(int cpu);
int pcp_vclock_set(uint64_t ns);
int pcp_vcpu_set_nr(unsigned int nr);

/*
 * percpu/magazine.c: the slow paths behind the inline fast paths.
 * pcp_alloc_miss/pcp_free_miss take the fast path's result: a miss, or an
 * aborted section (counted, then retried).
 */
#define PCP_MISS	((void *)0)
#define PCP_ABORTED	((void *)1)
void *pcp_alloc_slow(struct pcp_cache *pc);
void pcp_free_slow(struct pcp_cache *pc, void *obj);
void *pcp_alloc_miss(struct pcp_cache *pc, void *why);
void pcp_free_miss(struct pcp_cache *pc, void *obj, int why);
void pcp_count_abort(struct pcp_cache *pc);

/*
 * Hit counters: one `incq` on the pcp_cpu just committed to, after the
 * section (one instruction, so only a migration between the commit and
 * the increment, racing with the old CPU's own increment, can lose one).
 */
#if IS_ENABLED(CONFIG_PERCPU_STATS)
#define PCP_ASM_STAT	"incq %c[stat](%%rdx)\n\t"
#else
#define PCP_ASM_STAT	""
#endif
#define PCP_STAT_OFF(item)	(PCP_CPU_STAT_OFFSET + 8 * (item))

#if defined(__x86_64__) && !USLAB_VCPU
/*
 * rseq descriptor, pointer array and exit points, as librseq lays them
 * out (debuggers and tools find critical sections through them).
 * Labels: 1 start, 2 post-commit, 3 descriptor, 4 abort handler.
 */
#define PCP_RSEQ_CS(exit_label)						\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n\t"						\
	"3:\n\t"							\
	".long 0x0, 0x0\n\t"						\
	".quad 1f, (2f - 1f), 4f\n\t"					\
	".popsection\n\t"						\
	".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"			\
	".quad 3b\n\t"							\
	".popsection\n\t"						\
	".pushsection __rseq_exit_point_array, \"aw\"\n\t"		\
	".quad 1f, " exit_label "\n\t"					\
	".popsection\n\t"

/* The abort handler, preceded by the signature (ud1 0x53053053). */
#define PCP_RSEQ_ABORT(abort_label)					\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long 0x53053053\n\t"						\
	"4:\n\t"							\
	"jmp " abort_label "\n\t"					\
	".popsection\n\t"

/**
 * pcp_alloc_fast - pop an object from this CPU's loaded magazine, one rseq
 * critical section.
 * Context: any thread; lock-free, no atomic instruction, no syscall.
 * Return: the object, PCP_MISS (loaded magazine empty, CPU stopped or not
 * set up, thread without rseq) or PCP_ABORTED (preempted, migrated or
 * signalled inside the section).
 *
 * Cost on a hit: load the rseq offset, arm the section (lea + store), then
 * cpu id, cpus[cpu], magazine, count: 4 loads, 1 test; 1 load of the
 * object, the committing store of count - 1; the hit counter.
 *
 * Plain asm with an output, not asm goto: gcc 12 merges asm goto labels
 * with the fall-through when the asm has outputs. A magazine never holds
 * NULL or 1, so the object itself tells a miss (0) and an abort (1).
 */
static __always_inline void *pcp_alloc_fast(struct pcp_cache *pc)
{
	void *obj;
	long off = pcp_rseq_off;

	__asm__ __volatile__ (
		PCP_RSEQ_CS("5f")
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %%fs:8(%[off])\n\t"
		"1:\n\t"
		"movslq %%fs:4(%[off]), %%rax\n\t"
		"movq %c[cpus](%[pc], %%rax, 8), %%rdx\n\t"
		"movq (%%rdx), %%rcx\n\t"
		"movq (%%rcx), %%rax\n\t"
		"testq %%rax, %%rax\n\t"
		"jz 5f\n\t"
		"movq 24(%%rcx, %%rax, 8), %[obj]\n\t"
		"decq %%rax\n\t"
		"movq %%rax, (%%rcx)\n\t"	/* commit */
		"2:\n\t"
		PCP_ASM_STAT
		".pushsection __rseq_failure, \"ax\"\n\t"
		"5:\n\t"
		"xorl %k[obj], %k[obj]\n\t"
		"jmp 6f\n\t"
		".byte 0x0f, 0xb9, 0x3d\n\t"
		".long 0x53053053\n\t"
		"4:\n\t"
		"movl $1, %k[obj]\n\t"
		"jmp 6f\n\t"
		".popsection\n\t"
		"6:\n\t"
		: [obj] "=&r" (obj)
		: [off] "r" (off), [pc] "r" (pc),
		  [cpus] "i" (PCP_CACHE_CPUS_OFFSET),
		  [stat] "i" (PCP_STAT_OFF(PCP_STAT_ALLOC_HIT))
		: "rax", "rcx", "rdx", "memory", "cc");
	return obj;
}

/**
 * pcp_free_fast - push @obj on this CPU's loaded magazine, one rseq
 * critical section.
 * Context: any thread; lock-free, no atomic instruction, no syscall.
 * Return: 0 when stored, 1 on a miss (magazine full, CPU stopped or not
 * set up), 2 when the section aborted.
 *
 * Cost on a hit: as pcp_alloc_fast, with a compare against the magazine's
 * size instead of the test, the store of @obj and the commit of count + 1.
 * (asm goto is fine here: no outputs.)
 */
static __always_inline int pcp_free_fast(struct pcp_cache *pc, void *obj)
{
	long off = pcp_rseq_off;

	__asm__ __volatile__ goto (
		PCP_RSEQ_CS("%l[miss]")
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %%fs:8(%[off])\n\t"
		"1:\n\t"
		"movslq %%fs:4(%[off]), %%rax\n\t"
		"movq %c[cpus](%[pc], %%rax, 8), %%rdx\n\t"
		"movq (%%rdx), %%rcx\n\t"
		"movq (%%rcx), %%rax\n\t"
		"cmpq 8(%%rcx), %%rax\n\t"
		"jae %l[miss]\n\t"
		"movq %[obj], 32(%%rcx, %%rax, 8)\n\t"
		"incq %%rax\n\t"
		"movq %%rax, (%%rcx)\n\t"	/* commit */
		"2:\n\t"
		PCP_ASM_STAT
		PCP_RSEQ_ABORT("%l[aborted]")
		:
		: [off] "r" (off), [pc] "r" (pc), [obj] "r" (obj),
		  [cpus] "i" (PCP_CACHE_CPUS_OFFSET),
		  [stat] "i" (PCP_STAT_OFF(PCP_STAT_FREE_HIT))
		: "rax", "rcx", "rdx", "memory", "cc"
		: miss, aborted);
	return 0;
miss:
	return 1;
aborted:
	return 2;
}
#else
/* Virtual CPUs (simulator) and other architectures: always the locked path. */
static __always_inline void *pcp_alloc_fast(struct pcp_cache *pc)
{
	return PCP_MISS;
}

static __always_inline int pcp_free_fast(struct pcp_cache *pc, void *obj)
{
	return 1;
}
#endif

/**
 * pcp_alloc - an object from this CPU's magazines, else from the depot or
 * a refill of the layer above.
 * Context: any thread; lock-free on a hit. Not on a bypass cache.
 * Return: the object, or NULL when the layer above is out of memory.
 */
static __always_inline void *pcp_alloc(struct pcp_cache *pc)
{
	void *obj = pcp_alloc_fast(pc);

	if (likely((uintptr_t)obj > (uintptr_t)PCP_ABORTED))
		return obj;
	return pcp_alloc_miss(pc, obj);
}

/**
 * pcp_free - give @obj to this CPU's magazines (the depot or the layer
 * above when they are full).
 * Context: any thread; lock-free on a hit. Not on a bypass cache.
 */
static __always_inline void pcp_free(struct pcp_cache *pc, void *obj)
{
	int r = pcp_free_fast(pc, obj);

	if (unlikely(r))
		pcp_free_miss(pc, obj, r);
}

#endif /* USLAB_PERCPU_H */
