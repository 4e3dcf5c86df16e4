/* SPDX-License-Identifier: MIT */
/*
 * percpu/fastpath.h - the per-CPU layer's inline fast paths and everything
 * they rely on: the rseq ABI constants (signature, struct rseq offsets),
 * the layout of struct pcp_cache, struct pcp_cpu's and struct pcp_mag's
 * fields the asm addresses, the critical-section descriptor and the one
 * abort-stub macro. Internal, never installed: percpu/ and the layer that
 * inlines the fast paths (slab/) include it; include/uslab/percpu.h is the
 * public API and knows none of this. May include lib/.
 */
#ifndef USLAB_PERCPU_FASTPATH_H
#define USLAB_PERCPU_FASTPATH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "lib/compiler.h"
#include "uslab/percpu.h"

#ifndef USLAB_VCPU
#define USLAB_VCPU 0	/* 1: the simulator's library (virtual CPUs) */
#endif

#define __pcp_str(x)	#x
#define __stringify(x)	__pcp_str(x)

/*
 * rseq ABI (linux/rseq.h, checked against <sys/rseq.h> in percpu/cpu.c):
 * the signature the kernel expects before each abort handler, and the
 * offsets of struct rseq's fields the fast paths touch: cpu_id (read
 * only: never written by us) and rseq_cs (the armed descriptor).
 */
#define PCP_RSEQ_SIG			0x53053053
#define PCP_RSEQ_CPU_ID_OFFSET		4
#define PCP_RSEQ_CS_OFFSET		8

/* percpu/cpu.c: TLS offset of the rseq area the fast paths read */
extern long pcp_rseq_off __attribute__((visibility("hidden")));

/*
 * A magazine: @count objects in objs[0..count), room for @size. The fast
 * paths address it with the PCP_MAG_* offsets (static_assert below).
 */
struct pcp_mag {
	uint64_t count;
	uint64_t size;
	struct pcp_mag *next;		/* depot list */
	uint64_t pad;
	void *objs[];
};

#define PCP_MAG_COUNT_OFFSET	0
#define PCP_MAG_SIZE_OFFSET	8
#define PCP_MAG_OBJS_OFFSET	32
static_assert(__builtin_offsetof(struct pcp_mag, count) == PCP_MAG_COUNT_OFFSET &&
	      __builtin_offsetof(struct pcp_mag, size) == PCP_MAG_SIZE_OFFSET &&
	      __builtin_offsetof(struct pcp_mag, objs) == PCP_MAG_OBJS_OFFSET,
	      "the fast paths address the magazine with these offsets");

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

/*
 * percpu/magazine.c: the slow paths behind the inline fast paths.
 * pcp_alloc_miss/pcp_free_miss take the fast path's result: a miss, or an
 * aborted section (counted, then retried).
 */
#define PCP_MISS	((void *)0)
#define PCP_ABORTED	((void *)1)
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

/*
 * The abort handler, label 4, preceded by the signature the kernel checks
 * (ud1 with PCP_RSEQ_SIG as its displacement), then @handler (asm text
 * that ends in a jump). Goes inside the section's __rseq_failure block.
 */
#define PCP_RSEQ_ABORT_STUB(handler)					\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long " __stringify(PCP_RSEQ_SIG) "\n\t"			\
	"4:\n\t"							\
	handler

/* Arm the section: rseq_cs = descriptor 3 (%[off]: the area's TLS offset). */
#define PCP_RSEQ_ARM							\
	"leaq 3b(%%rip), %%rax\n\t"					\
	"movq %%rax, %%fs:%c[rseq_cs](%[off])\n\t"

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
		PCP_RSEQ_ARM
		"1:\n\t"
		"movslq %%fs:%c[cpu_id](%[off]), %%rax\n\t"
		"movq %c[cpus](%[pc], %%rax, 8), %%rdx\n\t"
		"movq %c[mag](%%rdx), %%rcx\n\t"
		"movq %c[count](%%rcx), %%rax\n\t"
		"testq %%rax, %%rax\n\t"
		"jz 5f\n\t"
		"movq %c[top](%%rcx, %%rax, 8), %[obj]\n\t"
		"decq %%rax\n\t"
		"movq %%rax, %c[count](%%rcx)\n\t"	/* commit */
		"2:\n\t"
		PCP_ASM_STAT
		".pushsection __rseq_failure, \"ax\"\n\t"
		"5:\n\t"
		"xorl %k[obj], %k[obj]\n\t"
		"jmp 6f\n\t"
		PCP_RSEQ_ABORT_STUB("movl $1, %k[obj]\n\t" "jmp 6f\n\t")
		".popsection\n\t"
		"6:\n\t"
		: [obj] "=&r" (obj)
		: [off] "r" (off), [pc] "r" (pc),
		  [rseq_cs] "i" (PCP_RSEQ_CS_OFFSET),
		  [cpu_id] "i" (PCP_RSEQ_CPU_ID_OFFSET),
		  [cpus] "i" (PCP_CACHE_CPUS_OFFSET),
		  [mag] "i" (PCP_CPU_MAG_OFFSET),
		  [count] "i" (PCP_MAG_COUNT_OFFSET),
		  /* objs[count - 1] */
		  [top] "i" (PCP_MAG_OBJS_OFFSET - 8),
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
		PCP_RSEQ_ARM
		"1:\n\t"
		"movslq %%fs:%c[cpu_id](%[off]), %%rax\n\t"
		"movq %c[cpus](%[pc], %%rax, 8), %%rdx\n\t"
		"movq %c[mag](%%rdx), %%rcx\n\t"
		"movq %c[count](%%rcx), %%rax\n\t"
		"cmpq %c[size](%%rcx), %%rax\n\t"
		"jae %l[miss]\n\t"
		"movq %[obj], %c[objs](%%rcx, %%rax, 8)\n\t"
		"incq %%rax\n\t"
		"movq %%rax, %c[count](%%rcx)\n\t"	/* commit */
		"2:\n\t"
		PCP_ASM_STAT
		".pushsection __rseq_failure, \"ax\"\n\t"
		PCP_RSEQ_ABORT_STUB("jmp %l[aborted]\n\t")
		".popsection\n\t"
		:
		: [off] "r" (off), [pc] "r" (pc), [obj] "r" (obj),
		  [rseq_cs] "i" (PCP_RSEQ_CS_OFFSET),
		  [cpu_id] "i" (PCP_RSEQ_CPU_ID_OFFSET),
		  [cpus] "i" (PCP_CACHE_CPUS_OFFSET),
		  [mag] "i" (PCP_CPU_MAG_OFFSET),
		  [count] "i" (PCP_MAG_COUNT_OFFSET),
		  [size] "i" (PCP_MAG_SIZE_OFFSET),
		  [objs] "i" (PCP_MAG_OBJS_OFFSET),
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


#endif /* USLAB_PERCPU_FASTPATH_H */
