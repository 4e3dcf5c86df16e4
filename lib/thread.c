// SPDX-License-Identifier: MIT
/*
 * Starting the library's own threads (lib/thread.h).
 *
 * No locks of its own.
 */
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
