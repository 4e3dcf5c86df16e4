// SPDX-License-Identifier: MIT
/*
 * Starting the library's own threads (lib/thread.h).
 *
 * No locks of its own. uslab_thread_start() returns only once the new
 * thread runs its function: the thread's start-up in the C runtime
 * allocates (glibc's pthread_getattr_np, a sanitizer's thread set-up), and
 * an allocator without fork handlers (GCC 12's ASan) left locked by a
 * half-started thread at a fork() right after deadlocks the child's first
 * allocation of that size (check_slab's test_fork hung so under
 * `make check-sanitize`: the reaper, started by the cache's first slow
 * path, was still starting when the test forked).
 */
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include "lib/thread.h"

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	sem_t running;		/* posted by the thread: its start-up is done */
};

static void *thread_trampoline(void *p)
{
	struct thread_start *ts = p;
	void *(*fn)(void *) = ts->fn;
	void *arg = ts->arg;

	sem_post(&ts->running);	/* *ts is the creator's: not touched after */
	return fn(arg);
}

int uslab_thread_start(pthread_t *thread, bool detached, size_t stack,
		       void *(*fn)(void *), void *arg)
{
	struct thread_start ts = { .fn = fn, .arg = arg };
	pthread_attr_t attr;
	sigset_t all, old;
	int r;

	pthread_attr_init(&attr);
	if (detached)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (stack)
		pthread_attr_setstacksize(&attr, stack);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sem_init(&ts.running, 0, 0);
	r = pthread_create(thread, &attr, thread_trampoline, &ts);
	if (!r)
		while (sem_wait(&ts.running) && errno == EINTR)
			;
	sem_destroy(&ts.running);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return r;
}

int uslab_thread_start_once(int *state, int from, void (*prepare)(void *),
			    void *prepare_arg, pthread_t *thread, bool detached, size_t stack,
			    void *(*fn)(void *), void *arg)
{
	int expected = from;
	int r;

	if (!__atomic_compare_exchange_n(state, &expected, USLAB_THREAD_STARTING,
					 false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return -EALREADY;
	if (prepare)
		prepare(prepare_arg);
	r = uslab_thread_start(thread, detached, stack, fn, arg);
	__atomic_store_n(state, r ? USLAB_THREAD_OFF : USLAB_THREAD_RUNNING,
			 __ATOMIC_RELEASE);
	return r;
}
