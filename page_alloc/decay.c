// SPDX-License-Identifier: MIT
/*
 * The decay thread (the kernel's kswapd, in spirit): free memory that a
 * program stops using goes back to the OS within about
 * CONFIG_PAGE_ALLOC_DECAY_MS, whichever layers sit above. It belongs to
 * page_alloc, so a build without per-CPU magazines (the nocache preset,
 * debug caches) decays as the default one does.
 *
 * Starting it: pthread_create may call malloc, so it cannot start inside
 * page_alloc (callers hold slab and percpu locks there). The first free
 * that finds free resident memory over the fixed watermark only marks it
 * wanted (pa_decayd_kick); page_alloc_decayd_poll(), called by the layers
 * above at points where they hold none of their locks (the slab layer's
 * unbatched alloc and free, kmalloc's large paths, the percpu reaper's
 * start), creates it. It runs with every signal blocked and is detached:
 * it only sleeps and calls pa_decay_tick(), which takes the zone lock like
 * any caller, so exit may find it anywhere. A fork child has none (its
 * state goes back to "not started"; the next poll there starts one if the
 * child frees enough).
 *
 * Without the thread (not yet started, a fork child, pthread_create
 * refused, the simulator) the allowance is the fixed watermark only, as
 * before: nothing would give a larger share back.
 *
 * Locking: none of its own; the state is one atomic word.
 */
#include <errno.h>
#include <signal.h>
#include <time.h>
#include "lib/thread.h"
#include "page_alloc/internal.h"

/* lib/thread.h's states; OFF: pthread_create refused, reaper_ms=0, the simulator */
enum {
	DECAYD_NONE	= USLAB_THREAD_NONE,	/* not wanted yet */
	DECAYD_WANTED	= USLAB_THREAD_WANTED,	/* something to decay: start at the next poll */
	DECAYD_RUNNING	= USLAB_THREAD_RUNNING,
	DECAYD_OFF	= USLAB_THREAD_OFF,
};
_Static_assert(DECAYD_WANTED == PAGE_ALLOC_DECAYD_WANTED,
	       "page_alloc_decayd_poll() tests the value in the public header");

int page_alloc_decayd_state;

/* Four ticks per period: the recent peak is the highest of the last four (decay_high_locked). */
#define DECAYD_TICK_NS	((long)CONFIG_PAGE_ALLOC_DECAY_MS * 1000000L / 4)

static void *pa_decayd_main(void *arg)
{
	struct timespec ts = {
		.tv_sec = DECAYD_TICK_NS / 1000000000L,
		.tv_nsec = DECAYD_TICK_NS % 1000000000L,
	};

	(void)arg;
	for (;;) {
		while (nanosleep(&ts, NULL) && errno == EINTR)
			;
		pa_decay_tick();
	}
	return NULL;
}

/*
 * Mark the thread wanted (a free went over the fixed watermark). The
 * simulator runs on virtual time: its virtual reaper calls
 * page_alloc_decay() instead, and no thread ever starts there.
 * Context: any, also under the caller's locks: one load, maybe one CAS.
 */
void pa_decayd_kick(void)
{
	int expected = DECAYD_NONE;

#if defined(USLAB_VCPU) && USLAB_VCPU
	return;
#endif
	if (__atomic_load_n(&page_alloc_decayd_state, __ATOMIC_RELAXED) != DECAYD_NONE)
		return;
	__atomic_compare_exchange_n(&page_alloc_decayd_state, &expected, DECAYD_WANTED,
				    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/**
 * page_alloc_decayd_start - start the decay thread if a free asked for it.
 *
 * The body of page_alloc_decayd_poll() (include/uslab/page_alloc.h).
 * Context: the caller holds no allocator lock (pthread_create may call
 * malloc). Thread-safe: one caller creates it.
 */
void page_alloc_decayd_start(void)
{
	pthread_t thread;
	int r;

	r = uslab_thread_start_once(&page_alloc_decayd_state, DECAYD_WANTED, NULL,
				    &thread, true, 64 << 10, pa_decayd_main, NULL);
	if (!r)
		page_alloc_set_decay_agent(true);
	else if (r > 0)
		pr_info("page_alloc: no decay thread (error %d); free memory "
			"beyond the watermark goes back at once", r);
}

/**
 * page_alloc_decayd_disable - never start the decay thread (the malloc
 * layer's reaper_ms=0: no background thread at all, as `uslab sim
 * --no-reaper`, whose counts a real run then matches). Without an agent
 * only the fixed watermark applies. A thread already running stays.
 * Context: any; lock-free.
 */
void page_alloc_decayd_disable(void)
{
	int cur = __atomic_load_n(&page_alloc_decayd_state, __ATOMIC_RELAXED);

	while ((cur == DECAYD_NONE || cur == DECAYD_WANTED) &&
	       !__atomic_compare_exchange_n(&page_alloc_decayd_state, &cur,
					    DECAYD_OFF, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* In a fork child: the thread is not there (OFF stays OFF). */
void pa_decayd_fork_child(void)
{
	page_alloc_set_decay_agent(false);
	if (__atomic_load_n(&page_alloc_decayd_state, __ATOMIC_RELAXED) != DECAYD_OFF)
		__atomic_store_n(&page_alloc_decayd_state, DECAYD_NONE, __ATOMIC_RELAXED);
}

/** page_alloc_decayd_running - whether the decay thread runs. */
bool page_alloc_decayd_running(void)
{
	return __atomic_load_n(&page_alloc_decayd_state, __ATOMIC_ACQUIRE) ==
	       DECAYD_RUNNING;
}
