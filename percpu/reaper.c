// SPDX-License-Identifier: MIT
/*
 * The background reaper (CONFIG_PERCPU_REAPER): every
 * CONFIG_PERCPU_REAPER_PERIOD_MS it runs pcp_reap_all(), which trims each
 * depot to its working set and drains CPUs that stayed idle for a period.
 *
 * Started lazily by the first slow path after it dropped its locks (never
 * at load time, never in a fork child: a child that only execs must not
 * grow threads), with every signal blocked so that it never takes the
 * program's signals. Stopped and joined at exit.
 *
 * Locks: reaper_lock protects reaper_stop and orders the condition
 * variable; it is never held while pcp_reap_all() runs.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include "lib/log.h"
#include "lib/thread.h"
#include "uslab/page_alloc.h"
#include "percpu/internal.h"

int pcp_reaper_state = PCP_REAPER_NONE;
static pthread_t reaper_thread;
static pthread_mutex_t reaper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reaper_cond;
static bool reaper_stop;
/* Read by the reaper each period; pcp_reaper_set_period() changes it. */
static long reaper_period_ms = PCP_REAPER_PERIOD_MS;

static void *pcp_reaper_main(void *arg)
{
	struct timespec until;
	bool stop;

	for (;;) {
		long period_ms = __atomic_load_n(&reaper_period_ms, __ATOMIC_RELAXED);

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += period_ms / 1000;
		until.tv_nsec += (period_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&reaper_lock);
		while (!reaper_stop &&
		       pthread_cond_timedwait(&reaper_cond, &reaper_lock, &until) != ETIMEDOUT)
			;
		stop = reaper_stop;
		pthread_mutex_unlock(&reaper_lock);
		if (stop)
			return NULL;
		pcp_reap_all();
		/* page_alloc's own decay thread, if a free asked for it */
		page_alloc_decayd_poll();
	}
}

/* The reaper waits on a CLOCK_MONOTONIC condition (its period survives a
 * change of the wall clock). */
static void reaper_cond_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&reaper_cond, &ca);
	pthread_condattr_destroy(&ca);
}

/**
 * pcp_reaper_kick_slow - start the reaper thread once.
 * Context: a slow path holding no lock of percpu/ (pthread_create may call
 * malloc, which may come back here: the state is STARTING by then).
 */
void pcp_reaper_kick_slow(void)
{
	int r = uslab_thread_start_once(&pcp_reaper_state, PCP_REAPER_NONE,
					reaper_cond_init, &reaper_thread, false, 0,
					pcp_reaper_main, NULL);

	if (r > 0)
		pr_info("percpu: no reaper thread (error %d); call kmem_cache_shrink", r);
}

/**
 * pcp_reaper_set_period - the reaper's period from its next wait on
 * (the malloc layer's reaper_ms option).
 * @ms: 10 .. 600000, the range of CONFIG_PERCPU_REAPER_PERIOD_MS; 0 stops
 * the reaper for good (it never starts if it has not yet); in the vcpu
 * build 0 stops the virtual reaper passes and other periods are refused.
 * Context: any; lock-free.
 * Return: 0, -EINVAL out of range, -EOPNOTSUPP without the reaper.
 */
int pcp_reaper_set_period(unsigned long ms)
{
	if (!IS_ENABLED(CONFIG_PERCPU_REAPER))
		return -EOPNOTSUPP;
	if (!ms) {
		/* off: as if built without it (a run that must count as the
		 * simulator does, which then runs none either) */
		if (USLAB_VCPU)
			pcp_vreaper_off = true;
		else
			pcp_reaper_stop();
		return 0;
	}
	if (USLAB_VCPU)
		return -EOPNOTSUPP;
	if (ms < 10 || ms > 600000)
		return -EINVAL;
	__atomic_store_n(&reaper_period_ms, (long)ms, __ATOMIC_RELAXED);
	return 0;
}

bool pcp_reaper_running(void)
{
	return __atomic_load_n(&pcp_reaper_state, __ATOMIC_ACQUIRE) ==
	       PCP_REAPER_RUNNING;
}

void pcp_reaper_stop(void)
{
	int expected = PCP_REAPER_RUNNING;

	if (!__atomic_compare_exchange_n(&pcp_reaper_state, &expected,
					 PCP_REAPER_STOPPED, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		/* never started: make sure it never starts */
		expected = PCP_REAPER_NONE;
		__atomic_compare_exchange_n(&pcp_reaper_state, &expected,
					    PCP_REAPER_STOPPED, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
		return;
	}
	pthread_mutex_lock(&reaper_lock);
	reaper_stop = true;
	pthread_cond_signal(&reaper_cond);
	pthread_mutex_unlock(&reaper_lock);
	pthread_join(reaper_thread, NULL);
}

__attribute__((destructor)) static void pcp_reaper_exit(void)
{
	pcp_reaper_stop();
}
