// SPDX-License-Identifier: MIT
/*
 * Starting the library's own threads (lib/thread.h).
 *
 * No locks of its own.
 */
#include <errno.h>
#include <signal.h>
#include "lib/thread.h"

int uslab_thread_start(pthread_t *thread, bool detached, size_t stack,
		       void *(*fn)(void *), void *arg)
{
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
	r = pthread_create(thread, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return r;
}

int uslab_thread_start_once(int *state, int from, void (*prepare)(void),
			    pthread_t *thread, bool detached, size_t stack,
			    void *(*fn)(void *), void *arg)
{
	int expected = from;
	int r;

	if (!__atomic_compare_exchange_n(state, &expected, USLAB_THREAD_STARTING,
					 false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return -EALREADY;
	if (prepare)
		prepare();
	r = uslab_thread_start(thread, detached, stack, fn, arg);
	__atomic_store_n(state, r ? USLAB_THREAD_OFF : USLAB_THREAD_RUNNING,
			 __ATOMIC_RELEASE);
	return r;
}
