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
 * A magazine: @count objects in objs[0..count), room for @size. While a
 * CPU has it loaded, its count lives in that CPU's struct pcp_hdr (@cur)
 * and @count is stale; the slow path writes it back when it unloads it.
 */
struct pcp_mag {
	uint64_t count;
	uint64_t size;
	struct pcp_mag *next;		/* depot list */
	uint64_t cpu;			/* the depot: the CPU whose stack it is on */
	void *objs[];
};

/*
 * What the fast paths of one CPU read and write for one cache: the loaded
 * magazine as three pointers, tcmalloc's begin/current/end. Objects are
 * [@begin, @cur); room up to @end. Alloc misses when cur <= begin, free
 * when cur >= end (unsigned), so an all-zero header (never used, the
 * guards) and a closed one (begin = ~0, end = 0: stopped for a swap or a
 * drain) miss both ways with no extra test. One cache line per CPU.
 * @aborts and @hits are written by this CPU's sections only (plain
 * increments; the hit counts only with CONFIG_PERCPU_HIT_STATS).
 */
struct pcp_hdr {
	void **cur;
	void **begin;
	void **end;
	uint64_t aborts;		/* rseq aborts (the abort handler counts) */
	uint64_t hits[2];		/* alloc, free; CONFIG_PERCPU_HIT_STATS */
	uint64_t pad[2];
} __attribute__((aligned(64)));

#define PCP_HDR_SHIFT		6	/* sizeof(struct pcp_hdr) == 1 << 6 */
#define PCP_HDR_CUR		0
#define PCP_HDR_BEGIN		8
#define PCP_HDR_END		16
#define PCP_HDR_ABORTS		24
#define PCP_HDR_HITS		32
static_assert(sizeof(struct pcp_hdr) == 1 << PCP_HDR_SHIFT &&
	      __builtin_offsetof(struct pcp_hdr, cur) == PCP_HDR_CUR &&
	      __builtin_offsetof(struct pcp_hdr, begin) == PCP_HDR_BEGIN &&
	      __builtin_offsetof(struct pcp_hdr, end) == PCP_HDR_END &&
	      __builtin_offsetof(struct pcp_hdr, aborts) == PCP_HDR_ABORTS &&
	      __builtin_offsetof(struct pcp_hdr, hits) == PCP_HDR_HITS,
	      "the fast paths address the header with these offsets");

struct pcp_cpu;

/*
 * One per cache. Only @hdr is read by the inline fast paths: hdr[cpu] is
 * the CPU's loaded magazine while its fast paths may run, closed or zero
 * otherwise (not yet set up, stopped by a swap or a remote drain).
 * hdr[-1] and hdr[-2] (@hdr_guard) exist for an unregistered rseq area
 * (cpu_id -1 or -2, and fallback mode's never-registered area) and stay
 * zero.
 *
 * A bypass cache (pcp_cache_bypass()) has zero headers everywhere and
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
	/* fallback mode's thread cache (percpu/tcache.c): id, 0 = none;
	 * bumped by a drain (in the padding before hdr_guard) */
	unsigned int tc_id, tc_gen;
	/* read by the fast paths */
	struct pcp_hdr hdr_guard[2];	/* hdr[-2], hdr[-1] */
	struct pcp_hdr hdr[];		/* pcp_nr_cpu_ids() entries */
};

#define PCP_CACHE_HDR_OFFSET	__builtin_offsetof(struct pcp_cache, hdr)
#define PCP_MAX_CPU_IDS	8192u	/* more possible CPUs: fallback mode */

/*
 * The bypass cache (pcp_cache_bypass()): zero headers for every CPU id,
 * so that both fast paths always miss on it. Static, so that a table of
 * pcp_cache pointers can start out pointing at it (no NULL test on a
 * fast path); its pages are only ever read (the zero page). All zero, so
 * that it lies in .bss: with one initialised field (its name) the whole
 * 512 KiB went into .data, file-backed pages that the kernel's fault-around
 * mapped 64 KiB at a time into every process (rss_tax: +300 KiB of
 * RssFile). It is told apart by its address (pcp_is_bypass()); pcp_init()
 * writes its name.
 */
struct pcp_bypass_store {
	struct pcp_cache pc;
	struct pcp_hdr hdr[PCP_MAX_CPU_IDS];	/* behind pc.hdr[] */
};
extern struct pcp_bypass_store pcp_bypass_store
	__attribute__((visibility("hidden")));
#define PCP_BYPASS	(&pcp_bypass_store.pc)

static inline bool pcp_is_bypass(const struct pcp_cache *pc)
{
	return pc == PCP_BYPASS;
}

static inline struct pcp_hdr *pcp_hdr(struct pcp_cache *pc, int cpu)
{
	return &pc->hdr[cpu];
}

/* The miss entries behind the fast paths: pcp_alloc_slow() and
 * pcp_free_slow() (include/uslab/percpu.h). */

/*
 * Hit counters (CONFIG_PERCPU_HIT_STATS, off by default): one `incq` in
 * the header line just committed to, after the section (a migration
 * between the commit and the increment can lose one).
 */
#if IS_ENABLED(CONFIG_PERCPU_HIT_STATS)
#define PCP_ASM_HIT(dir)						\
	"incq %c[hdr] + " __stringify(PCP_HDR_HITS) " + 8 * " #dir	\
	"(%[pc], %%rdx)\n\t"
#else
#define PCP_ASM_HIT(dir)	""
#endif

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

/*
 * Arm the section: rseq_cs = descriptor 3 (%[off]: the area's TLS offset;
 * %rcx is scratch).
 */
#define PCP_RSEQ_ARM							\
	"leaq 3b(%%rip), %%rcx\n\t"					\
	"movq %%rcx, %%fs:%c[rseq_cs](%[off])\n\t"

/*
 * Every section opens so: its descriptor, armed, then label 1 (the start).
 * PCP_RSEQ_OPERANDS are the inputs these name (with `long off =
 * pcp_rseq_off` in the caller).
 */
#define PCP_RSEQ_BEGIN(exit_label)					\
	PCP_RSEQ_CS(exit_label)						\
	PCP_RSEQ_ARM							\
	"1:\n\t"
#define PCP_RSEQ_OPERANDS						\
	[off] "r" (off),						\
	[rseq_cs] "i" (PCP_RSEQ_CS_OFFSET),				\
	[cpu_id] "i" (PCP_RSEQ_CPU_ID_OFFSET)

/*
 * The fast paths: label 9 re-arms and starts again (an aborted section
 * is retried here, in percpu, after its count); the header of this CPU
 * is at hdr + (cpu << 6) from the cache, %rdx holding cpu << 6.
 */
#define PCP_FAST_BEGIN(exit_label)					\
	PCP_RSEQ_CS(exit_label)						\
	"9:\n\t"							\
	PCP_RSEQ_ARM							\
	"1:\n\t"							\
	"movslq %%fs:%c[cpu_id](%[off]), %%rdx\n\t"			\
	"shlq $" __stringify(PCP_HDR_SHIFT) ", %%rdx\n\t"
#define PCP_FAST_ABORT							\
	PCP_RSEQ_ABORT_STUB(						\
		"movslq %%fs:%c[cpu_id](%[off]), %%rdx\n\t"		\
		"shlq $" __stringify(PCP_HDR_SHIFT) ", %%rdx\n\t"	\
		"incq %c[hdr] + " __stringify(PCP_HDR_ABORTS)		\
		"(%[pc], %%rdx)\n\t"					\
		"jmp 9b\n\t")
#define PCP_FAST_OPERANDS						\
	[pc] "r" (pc),							\
	[hdr] "i" (PCP_CACHE_HDR_OFFSET)

/**
 * pcp_alloc_fast - pop an object from this CPU's loaded magazine, one rseq
 * critical section (retried here when it aborts).
 * Context: any thread; lock-free, no atomic instruction, no syscall.
 * Return: the object, or NULL: a miss (loaded magazine empty, CPU stopped
 * or not set up, thread without rseq, fallback mode).
 *
 * Cost on a hit: load the rseq offset, arm the section (lea + store),
 * cpu id, shift; two dependent loads (the header's cur, compared with
 * begin; the slot below cur), the committing store of cur - 1.
 *
 * Plain asm with an output, not asm goto: gcc 12 merges asm goto labels
 * with the fall-through when the asm has outputs. A magazine never holds
 * NULL, so NULL tells the miss.
 */
static __always_inline void *pcp_alloc_fast(struct pcp_cache *pc)
{
	void *obj;
	long off = pcp_rseq_off;

	/*
	 * asm goto with an output (gcc 11 and later): the miss jumps straight
	 * to the caller's slow path; the output is valid on the fall-through
	 * only, which is the only place it is read.
	 */
	__asm__ __volatile__ goto (
		PCP_FAST_BEGIN("%l[miss]")
		"movq %c[hdr] + %c[cur](%[pc], %%rdx), %%rcx\n\t"
		"cmpq %c[hdr] + %c[begin](%[pc], %%rdx), %%rcx\n\t"
		"jbe %l[miss]\n\t"
		"movq -8(%%rcx), %[obj]\n\t"
		"subq $8, %%rcx\n\t"
		"movq %%rcx, %c[hdr] + %c[cur](%[pc], %%rdx)\n\t"	/* commit */
		"2:\n\t"
		PCP_ASM_HIT(0)
		".pushsection __rseq_failure, \"ax\"\n\t"
		PCP_FAST_ABORT
		".popsection\n\t"
		: [obj] "=&a" (obj)	/* the return register */
		: PCP_RSEQ_OPERANDS, PCP_FAST_OPERANDS,
		  [cur] "i" (PCP_HDR_CUR), [begin] "i" (PCP_HDR_BEGIN)
		: "rcx", "rdx", "memory", "cc"
		: miss);
	if (!obj)
		__builtin_unreachable();	/* a magazine never holds NULL */
	return obj;
miss:
	return NULL;
}

/**
 * pcp_free_fast - push @obj on this CPU's loaded magazine, one rseq
 * critical section (retried here when it aborts).
 * Context: any thread; lock-free, no atomic instruction, no syscall.
 * Return: true when stored, false on a miss (magazine full, CPU stopped
 * or not set up, fallback mode).
 *
 * Cost on a hit: as pcp_alloc_fast, comparing cur with end, the store of
 * @obj at cur and the commit of cur + 1. (asm goto is fine: no outputs.)
 */
static __always_inline bool pcp_free_fast(struct pcp_cache *pc, void *obj)
{
	long off = pcp_rseq_off;

	__asm__ __volatile__ goto (
		PCP_FAST_BEGIN("%l[miss]")
		"movq %c[hdr] + %c[cur](%[pc], %%rdx), %%rcx\n\t"
		"cmpq %c[hdr] + %c[end](%[pc], %%rdx), %%rcx\n\t"
		"jae %l[miss]\n\t"
		"movq %[obj], (%%rcx)\n\t"
		"addq $8, %%rcx\n\t"
		"movq %%rcx, %c[hdr] + %c[cur](%[pc], %%rdx)\n\t"	/* commit */
		"2:\n\t"
		PCP_ASM_HIT(1)
		".pushsection __rseq_failure, \"ax\"\n\t"
		PCP_FAST_ABORT
		".popsection\n\t"
		:
		: PCP_RSEQ_OPERANDS, PCP_FAST_OPERANDS, [obj] "r" (obj),
		  [cur] "i" (PCP_HDR_CUR), [end] "i" (PCP_HDR_END)
		: "rcx", "rdx", "memory", "cc"
		: miss);
	return true;
miss:
	return false;
}
#else
/* Virtual CPUs (simulator) and other architectures: always the locked path. */
static __always_inline void *pcp_alloc_fast(struct pcp_cache *pc)
{
	return NULL;
}

static __always_inline bool pcp_free_fast(struct pcp_cache *pc, void *obj)
{
	return false;
}
#endif

#endif /* USLAB_PERCPU_FASTPATH_H */
