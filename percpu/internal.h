/* SPDX-License-Identifier: MIT */
/*
 * percpu/ private declarations, grouped by the file that defines them.
 */
#ifndef USLAB_PERCPU_INTERNAL_H
#define USLAB_PERCPU_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/compiler.h"
#include "uslab/mm_types.h"
#include "uslab/page_alloc.h"
#include "uslab/percpu.h"
#include "percpu/fastpath.h"
#include "lib/lock.h"
#include "lib/thread.h"

/*
 * One per cache per CPU, allocated the first time that CPU takes a slow
 * path for the cache. Everything here is the slow path's, under @lock:
 * @mag is the magazine the CPU's header (pc->hdr[cpu]) points into, whose
 * count lives in the header while it is loaded.
 */
struct pcp_cpu {
	struct pcp_mag *mag;		/* loaded magazine (never NULL) */
	struct pcp_mag *spare;		/* NULL or a real magazine */
	uint64_t stat[NR_PCP_STATS];
	struct owned_mutex lock;	/* slow paths and drains of this CPU */
	int cpu;
	uint64_t slow_ops;		/* slow paths taken (idle detection) */
	unsigned int last_miss;		/* PCP_MISS_*: the direction of the last slow path */
	unsigned int flips;		/* slow paths in a row, each the other way from the last */
	uint64_t idle_snap;		/* state at the last reaper pass */
	/* the magazines this CPU put in the depot, under the depot's lock
	 * (docs/percpu.md "The depot keeps each CPU's magazines apart") */
	struct pcp_mag *depot_full, *depot_empty;	/* stacks, through ->next */
	/* adaptive sizing (pcp_adapt_on; docs/percpu.md "Adaptive sizing") */
	unsigned int size;		/* magazine size in objects; 0 = not yet set */
	unsigned int win_left;		/* slow paths left in the current window */
	unsigned int misses;		/* trips to the layer above (without PERCPU_STATS) */
	uint16_t hi, floor;		/* the cache's bounds in objects, as of @gen */
	uint64_t miss_snap;		/* trips when the window started */
	uint64_t low;			/* objects held: low-water mark since the last pass */
	uint64_t win_low;		/* the same, over the current window */
	unsigned int win_quiet;		/* windows in a row with objects unused, few misses */
	unsigned int gen;		/* adapt_gen when @hi and @floor were taken */
	unsigned long acct;		/* bytes of growth in the CPU's budget account */
	unsigned long base;		/* two magazines at the start size, in bytes */
	unsigned long cap;		/* two magazines at @size, in bytes */
} __cacheline_aligned;

/* struct pcp_cpu's last_miss: which fast path missed last (none yet, alloc, free). */
enum { PCP_MISS_NONE, PCP_MISS_ALLOC, PCP_MISS_FREE };

/* Full and empty magazines of one cache, behind every CPU. */
struct pcp_depot {
	pthread_mutex_t lock;
	/* the magazines are on the stacks of the CPUs that put them
	 * (struct pcp_cpu's depot_full, depot_empty); @steal: empty, full:
	 * the CPU where a take from another CPU last found one */
	unsigned int steal[2];
	unsigned long nr_full, nr_empty;
	unsigned long full_objs;	/* objects in the full ones (adaptive limit) */
	/* Bonwick's working set: lowest counts seen since the last trim */
	unsigned long min_full, min_empty;
	/*
	 * The limit grows while the cache cycles through the layer above
	 * (docs/percpu.md, "A depot that grows while a cache cycles"):
	 * @grow full magazines are kept beyond pc->depot_limit; @flushed
	 * counts full magazines flushed at the limit since a refill last
	 * looked (atomic: flushes add to it without the depot lock); @grew
	 * says the limit grew since the reaper's last pass, which otherwise
	 * halves @grow. @pinned: the limit was set (depot_limit option,
	 * pcp_cache_set_depot_limit()) and stays as set.
	 */
	unsigned long grow;
	unsigned long flushed;
	bool grew, pinned;
	/*
	 * Magazines that grow while the cache cycles (docs/percpu.md): a
	 * refill that finds the depot grown to its cap and still flushing
	 * asks (@mag_want, the size) for larger magazines; the slow path
	 * resizes once its CPU lock is dropped (pcp_mag_grow()). @mag_base:
	 * the size to go back to (0: not grown); @mag_quiet: reaper passes
	 * in a row without a flush at the limit; @mag_pinned: a size other
	 * than the default was set (pcp_cache_set_tunables()).
	 */
	unsigned int mag_want, mag_base, mag_quiet;
	bool mag_pinned;
};

/* Size 0, count 0: what a CPU has loaded before its first magazine and
 * after a drain; a header pointing into it misses both ways. */
extern struct pcp_mag pcp_empty_mag;

static inline bool mag_is_real(const struct pcp_mag *m)
{
	return m != &pcp_empty_mag;
}

/*
 * USDT probes (provider uslab) on slow paths: pcp_refill, pcp_flush,
 * pcp_drain, pcp_trim, pcp_resize, pcp_depot_grow (`perf probe sdt_uslab:pcp_*`); a stub
 * when CONFIG_USDT is off.
 */
#ifdef CONFIG_USDT
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>
#define pcp_probe(name, ...)	STAP_PROBEV(uslab, name, ##__VA_ARGS__)
#else
#define pcp_probe(name, ...)	do { } while (0)
#endif

/* Kconfig PERCPU_DEPOT_GROW_KB where magazines are built (docs/percpu.md). */
#ifdef CONFIG_PERCPU_DEPOT_GROW_KB
#define PCP_DEPOT_GROW_KB	CONFIG_PERCPU_DEPOT_GROW_KB
#else
#define PCP_DEPOT_GROW_KB	0
#endif

/* Kconfig PERCPU_MAG_GROW_KB / _BYTES (docs/percpu.md "Magazines that grow"). */
#ifdef CONFIG_PERCPU_MAG_GROW_KB
#define PCP_MAG_GROW_KB		CONFIG_PERCPU_MAG_GROW_KB
#define PCP_MAG_GROW_BYTES	CONFIG_PERCPU_MAG_GROW_BYTES
#else
#define PCP_MAG_GROW_KB		0
#define PCP_MAG_GROW_BYTES	65536
#endif

#define PCP_MAX_LIMIT	4096u
#define PCP_CHUNK	64u	/* objects moved per refill/flush call */

/* percpu/cpu.c */
extern enum pcp_mode_id pcp_mode_cur;
extern unsigned int pcp_nr_cpus;
int pcp_current_cpu(void);
void pcp_fence_cpu(int cpu);
int pcp_parse_cpulist(const char *s, unsigned int *max_id);

/* percpu/mem.c: magazine and per-CPU memory, from page_alloc */
void *pcp_mem_alloc(size_t size);
void pcp_mem_free(void *p, size_t size);
void pcp_page_bytes_add(long bytes);
void pcp_mem_fork_prepare(void);
void pcp_mem_fork_parent(void);
void pcp_mem_fork_child(void);

/*
 * percpu/rseq.c: slow-path primitives on the header @h of CPU @cpu, each
 * one rseq critical section. Return: objects moved (pop, push) or the
 * header's cur (close), -1 when the caller is not on @cpu, -2 when the
 * section aborted.
 */
long pcp_rseq_pop(struct pcp_hdr *h, int cpu, void **out, unsigned long n);
long pcp_rseq_push(struct pcp_hdr *h, int cpu, void *const *in,
		   unsigned long n);
long pcp_rseq_close(struct pcp_hdr *h, int cpu);

/* percpu/reaper.c */
/* lib/thread.h's states, and one of its own */
enum {
	PCP_REAPER_NONE		= USLAB_THREAD_NONE,	/* not started yet: the next slow path starts it */
	PCP_REAPER_RUNNING	= USLAB_THREAD_RUNNING,
	PCP_REAPER_DISABLED	= USLAB_THREAD_OFF,	/* Kconfig off, vcpu, fork child, create failed */
	PCP_REAPER_STOPPED	= USLAB_THREAD_NR_STATES, /* at exit or by pcp_reaper_stop() */
};
extern int pcp_reaper_state;
void pcp_reaper_kick_slow(void);

static __always_inline void pcp_reaper_kick(void)
{
	if (IS_ENABLED(CONFIG_PERCPU_REAPER) &&
	    unlikely(__atomic_load_n(&pcp_reaper_state, __ATOMIC_RELAXED) ==
		     PCP_REAPER_NONE))
		pcp_reaper_kick_slow();
	/*
	 * page_alloc's decay thread too, as soon as a flush asked for it: until
	 * it runs, free memory above the fixed watermark goes back at every
	 * free, and the reaper's first pass (which also polls) comes only after
	 * a whole reaper period (the study paid a madvise and a refault per
	 * page for its first two seconds). One load once it runs.
	 */
	page_alloc_decayd_poll();
}

/*
 * percpu/tcache.c: fallback mode's cache per thread (docs/percpu.md
 * "Modes"). A bin's statistics not yet added to a CPU's, in this order.
 */
enum { TC_ALLOC_HIT, TC_FREE_HIT, TC_ALLOC_MISS, TC_FREE_MISS, TC_NR_STATS };
unsigned int pcp_tc_id_get(const struct pcp_cache *pc);
void *pcp_tc_alloc(struct pcp_cache *pc);
bool pcp_tc_free(struct pcp_cache *pc, void *obj);
void pcp_tc_drain(struct pcp_cache *pc);
void pcp_tc_cache_destroy(struct pcp_cache *pc);
unsigned long pcp_tc_account(struct pcp_cache *pc, struct pcp_stats *st);
void pcp_tc_fork_prepare(void);
void pcp_tc_fork_parent(void);
void pcp_tc_fork_child(void);
extern unsigned long pcp_tc_nr_busy;	/* ops a handler sent around a busy cache */

/* percpu/magazine.c */
extern bool pcp_adapt_on;
/*
 * The thread cache's batches through the CPU's locked path (fallback
 * mode): up to @n objects into @objs, or all @n from @objs, in one hold
 * of the CPU lock; @tcstat (TC_*) added to the CPU's statistics.
 * Return: objects moved; 0 when refused (ops->may_lock, asked unless
 * @ask is false: a thread's exit under pcp_tc_lock) or, for get, out of
 * memory.
 */
unsigned int pcp_tc_get(struct pcp_cache *pc, void **objs, unsigned int n,
			const uint64_t *tcstat);
unsigned int pcp_tc_put(struct pcp_cache *pc, void *const *objs,
			unsigned int n, const uint64_t *tcstat, bool ask);
extern pthread_mutex_t pcp_registry_lock;
extern struct pcp_cache *pcp_registry;

#endif /* USLAB_PERCPU_INTERNAL_H */
