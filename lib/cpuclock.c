// SPDX-License-Identifier: MIT
/*
 * CPU identity, time and periodic work (lib/cpuclock.h): the real backend
 * and, built with -DUSLAB_VCPU=1, the virtual one. Locks: see the header.
 */
#include <errno.h>
#include <sched.h>
#include <sys/rseq.h>
#include <time.h>
#include "lib/compiler.h"
#include "lib/cpuclock.h"
#include "lib/thread.h"

#if !USLAB_VCPU
/* ------------------------------------------------------------------ */
/* Real backend */

int uslab_cpu_id(void)
{
	if (__rseq_size > 0) {
		const struct rseq *rs = (const struct rseq *)
			((char *)__builtin_thread_pointer() + __rseq_offset);
		int cpu = (int)READ_ONCE(rs->cpu_id);

		if (cpu >= 0)
			return cpu;
	}
	return sched_getcpu();
}

uint64_t uslab_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The thread of one work: wait a period on a CLOCK_MONOTONIC condition (a
 * change of the wall clock does not move it; a cancel wakes it), run.
 */
static void *periodic_main(void *arg)
{
	struct uslab_periodic *w = arg;
	struct timespec until;
	bool stop;

	for (;;) {
		uint64_t period = __atomic_load_n(&w->period_ns, __ATOMIC_RELAXED);

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)(period / 1000000000u);
		until.tv_nsec += (long)(period % 1000000000u);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&w->lock);
		while (!w->stop &&
		       pthread_cond_timedwait(&w->cond, &w->lock, &until) != ETIMEDOUT)
			;
		stop = w->stop;
		pthread_mutex_unlock(&w->lock);
		if (stop)
			return NULL;
		w->fn();
	}
}

/*
 * Made afresh at each start: a start happens only where no thread of @w
 * exists in this process (first start, a fork child), so nothing holds
 * them.
 */
static void periodic_prepare(void *arg)
{
	struct uslab_periodic *w = arg;
	pthread_condattr_t ca;

	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	w->stop = false;
}

int uslab_periodic_start(struct uslab_periodic *w, int from)
{
	return uslab_thread_start_once(w->state, from, periodic_prepare, w,
				       &w->thread, w->detached, w->stack,
				       periodic_main, w);
}

void uslab_periodic_cancel(struct uslab_periodic *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	if (!w->detached)
		pthread_join(w->thread, NULL);
}

int uslab_vcpu_set_nr(unsigned int nr)
{
	(void)nr;
	return -EOPNOTSUPP;
}

unsigned int uslab_vcpu_nr(void)
{
	return 0;
}

int uslab_vcpu_set(int cpu)
{
	(void)cpu;
	return -EOPNOTSUPP;
}

int uslab_vclock_set(uint64_t ns)
{
	(void)ns;
	return -EOPNOTSUPP;
}

#else
/* ------------------------------------------------------------------ */
/* Virtual backend: the simulator's one thread sets CPU and clock. */

int uslab_vcpu_cur;
static unsigned int vcpu_nr = 64;
static uint64_t vclock;
static struct uslab_periodic *vsched;	/* started works, in start order */

uint64_t uslab_now_ns(void)
{
	return vclock;
}

int uslab_periodic_start(struct uslab_periodic *w, int from)
{
	int expected = from;
	struct uslab_periodic **p;

	if (!__atomic_compare_exchange_n(w->state, &expected, USLAB_THREAD_RUNNING,
					 false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return -EALREADY;
	w->next_ns = vclock + w->period_ns;
	if (!w->linked) {
		w->next = NULL;
		for (p = &vsched; *p; p = &(*p)->next)
			;
		*p = w;
		w->linked = true;
	}
	w->stop = false;
	return 0;
}

void uslab_periodic_cancel(struct uslab_periodic *w)
{
	w->stop = true;
}

int uslab_vcpu_set_nr(unsigned int nr)
{
	if (nr == 0 || nr > USLAB_MAX_VCPUS)
		return -EINVAL;
	vcpu_nr = nr;
	if ((unsigned int)uslab_vcpu_cur >= nr)
		uslab_vcpu_cur = 0;
	return 0;
}

unsigned int uslab_vcpu_nr(void)
{
	return vcpu_nr;
}

int uslab_vcpu_set(int cpu)
{
	if (cpu < 0 || (unsigned int)cpu >= vcpu_nr)
		return -EINVAL;
	uslab_vcpu_cur = cpu;
	return 0;
}

/* The started work due first by @limit (ties: start order), or NULL. */
static struct uslab_periodic *vsched_due(uint64_t limit)
{
	struct uslab_periodic *w, *best = NULL;

	for (w = vsched; w; w = w->next)
		if (!w->stop && w->next_ns <= limit &&
		    (!best || w->next_ns < best->next_ns))
			best = w;
	return best;
}

int uslab_vclock_set(uint64_t ns)
{
	struct uslab_periodic *w;

	if (ns < vclock)
		return -EINVAL;
	/* a work may start or cancel works: each step looks again */
	while ((w = vsched_due(ns))) {
		vclock = w->next_ns;
		w->next_ns += w->period_ns ? w->period_ns : 1;
		w->fn();
	}
	vclock = ns;
	return 0;
}
#endif

void uslab_periodic_set_period(struct uslab_periodic *w, uint64_t ns)
{
	__atomic_store_n(&w->period_ns, ns, __ATOMIC_RELAXED);
}
