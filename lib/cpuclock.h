/* SPDX-License-Identifier: MIT */
/*
 * CPU identity and time, at the bottom of the tree: which CPU runs now, the
 * monotonic clock, and periodic work (page_alloc's decay, percpu's reaper).
 *
 * Two backends, chosen when the library is built:
 *
 *   real     (libuslab-core.a, libuslab.so): the CPU from glibc's rseq
 *            area, else sched_getcpu(); CLOCK_MONOTONIC; each periodic work
 *            runs on a thread of its own, started on demand, with every
 *            signal blocked (lib/thread.h).
 *   virtual  (-DUSLAB_VCPU=1, libuslab-core-vcpu.a, built by sim/Build.mk):
 *            the CPU and the clock are what the simulator last set
 *            (uslab_vcpu_set, uslab_vclock_set); periodic work runs inside
 *            uslab_vclock_set(), on the simulator's one thread, in the
 *            order of its deadlines (ties: the order the works were first
 *            started), deterministically.
 *
 * The per-CPU magazines' fast paths do not come here: they read cpu_id
 * from the rseq area themselves (percpu/fastpath.h). This is for slow
 * paths and for page_alloc.
 *
 * Locks: a periodic work's own mutex orders its stop with its thread's
 * wait (real backend); it is never held while the work runs. The virtual
 * backend has none (the simulator is one thread).
 */
#ifndef USLAB_LIB_CPUCLOCK_H
#define USLAB_LIB_CPUCLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef USLAB_VCPU
#define USLAB_VCPU 0	/* 1: the virtual backend (the simulator's library) */
#endif

/* The largest number of virtual CPUs (percpu's PCP_MAX_CPU_IDS). */
#define USLAB_MAX_VCPUS		8192u

/*
 * uslab_cpu_id - the CPU this thread runs on now.
 * Real: a hint (the thread may move right after); glibc's rseq cpu_id when
 * glibc registered an area, else sched_getcpu(). Virtual: the CPU the
 * simulator named last (uslab_vcpu_set), 0 before.
 * Context: any thread, also a signal handler; no lock, no allocation.
 * Return: the CPU id, or -1 when the kernel does not say (real only).
 */
#if USLAB_VCPU
extern int uslab_vcpu_cur;
static inline int uslab_cpu_id(void)
{
	return uslab_vcpu_cur;
}
#else
int uslab_cpu_id(void);
#endif

/*
 * uslab_now_ns - monotonic time in ns: CLOCK_MONOTONIC (real), the
 * simulator's clock (virtual).
 */
uint64_t uslab_now_ns(void);

/*
 * A periodic work: @fn runs every @period_ns once started. @state is the
 * owner's word of lib/thread.h's states (the owner keeps its own states
 * beside them, and a fast path may test it with one load); @detached and
 * @stack are the real thread's. The rest is the backend's.
 */
struct uslab_periodic {
	const char *name;
	void (*fn)(void);
	int *state;
	uint64_t period_ns;		/* atomic: uslab_periodic_set_period */
	bool detached;			/* real: nobody joins the thread */
	size_t stack;			/* real: its stack size, 0 = default */
	/* the backend's */
	pthread_t thread;
	pthread_mutex_t lock;		/* real: orders @stop with the wait */
	pthread_cond_t cond;
	bool stop;
	bool linked;			/* virtual: on the schedule */
	uint64_t next_ns;		/* virtual: its next deadline */
	struct uslab_periodic *next;	/* virtual: the schedule, in start order */
};

/*
 * uslab_periodic_start - register @w with the backend and start it, if
 * *@w->state is @from (lib/thread.h's start-once rule: one caller moves it
 * to STARTING, then RUNNING, or OFF when the thread cannot start).
 * Real: its thread first runs @w->fn one period after this call.
 * Virtual: no thread; @w->fn runs at now + period, then every period, from
 * uslab_vclock_set().
 * Context: real: the caller holds no allocator lock (pthread_create may
 * call malloc). Virtual: any.
 * Return: 0, -EALREADY when *@w->state was not @from, or pthread_create's
 * error number.
 */
int uslab_periodic_start(struct uslab_periodic *w, int from);

/*
 * uslab_periodic_cancel - no run of @w begins after this returns, and
 * (real, @w not detached) a run in progress has ended. Only for a work
 * this process started (its state RUNNING until the owner, before the
 * call, moves it on: percpu's STOPPED).
 * Context: not from @w->fn. Real: may sleep (joins the thread).
 */
void uslab_periodic_cancel(struct uslab_periodic *w);

/* The period from @w's next wait (real) or next deadline on (virtual). */
void uslab_periodic_set_period(struct uslab_periodic *w, uint64_t ns);

/*
 * The simulator's driving (virtual backend; -EOPNOTSUPP in the real one).
 * uslab_vcpu_set_nr: the number of virtual CPUs (1..USLAB_MAX_VCPUS,
 * default 64) before any per-CPU structure exists (percpu checks that,
 * pcp_vcpu_set_nr). uslab_vcpu_set: the CPU that runs from now on
 * (0..nr-1, else -EINVAL). uslab_vclock_set: the clock moves to @ns (never
 * backwards: -EINVAL), and every periodic work due on the way runs, each
 * at its own deadline (uslab_now_ns() inside it says that deadline).
 */
int uslab_vcpu_set_nr(unsigned int nr);
unsigned int uslab_vcpu_nr(void);
int uslab_vcpu_set(int cpu);
int uslab_vclock_set(uint64_t ns);

#endif /* USLAB_LIB_CPUCLOCK_H */
