// SPDX-License-Identifier: MIT
/*
 * The background reaper (CONFIG_PERCPU_REAPER): every
 * CONFIG_PERCPU_REAPER_PERIOD_MS it runs pcp_reap_all(), which trims each
 * depot to its working set and drains CPUs that stayed idle for a period.
 *
 * A periodic work of lib/cpuclock.h: its real backend runs it on a thread
 * of its own, its virtual one (the simulator's library) at the virtual
 * clock's deadlines. Started lazily by the first slow path after it
 * dropped its locks (never at load time, never in a fork child: a child
 * that only execs must not grow threads); the thread has every signal
 * blocked so that it never takes the program's signals. Stopped (and its
 * thread joined) at exit.
 *
 * Locks: none of its own (lib/cpuclock.c orders a stop with the wait);
 * none is held while pcp_reap_all() runs.
 */
#include <errno.h>
#include "lib/cpuclock.h"
#include "lib/log.h"
#include "uslab/page_alloc.h"
#include "percpu/internal.h"

int pcp_reaper_state = PCP_REAPER_NONE;

/* One pass: trim the depots, drain idle CPUs, size adaptive magazines. */
static void pcp_reaper_pass(void)
{
	pcp_reap_all();
	/* page_alloc's own decay work, if a free asked for it (a point
	 * where this thread holds no lock) */
	page_alloc_decayd_poll();
}

static struct uslab_periodic pcp_reaper_work = {
	.name = "percpu reaper",
	.fn = pcp_reaper_pass,
	.state = &pcp_reaper_state,
	.period_ns = (uint64_t)PCP_REAPER_PERIOD_MS * 1000000u,
};

/**
 * pcp_reaper_kick_slow - start the reaper thread once.
 * Context: a slow path holding no lock of percpu/ (pthread_create may call
 * malloc, which may come back here: the state is STARTING by then).
 */
void pcp_reaper_kick_slow(void)
{
	int r = uslab_periodic_start(&pcp_reaper_work, PCP_REAPER_NONE);

	if (r > 0)
		pr_info("percpu: no reaper thread (error %d); call kmem_cache_shrink", r);
}

/**
 * pcp_reaper_set_period - the reaper's period from its next wait on
 * (the malloc layer's reaper_ms option).
 * @ms: 10 .. 600000, the range of CONFIG_PERCPU_REAPER_PERIOD_MS; 0 stops
 * the reaper for good (it never starts if it has not yet); in the vcpu
 * build the virtual reaper's passes stop, or come at the new period.
 * Context: any; lock-free.
 * Return: 0, -EINVAL out of range, -EOPNOTSUPP without the reaper.
 */
int pcp_reaper_set_period(unsigned long ms)
{
	if (!IS_ENABLED(CONFIG_PERCPU_REAPER))
		return -EOPNOTSUPP;
	if (!ms) {
		/* off: as if built without it (a real run that must count as
		 * `uslab sim --no-reaper` does, which then runs none either) */
		pcp_reaper_stop();
		return 0;
	}
	if (ms < 10 || ms > 600000)
		return -EINVAL;
	uslab_periodic_set_period(&pcp_reaper_work, (uint64_t)ms * 1000000u);
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
	uslab_periodic_cancel(&pcp_reaper_work);
}

__attribute__((destructor)) static void pcp_reaper_exit(void)
{
	pcp_reaper_stop();
}
