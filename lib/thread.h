/* SPDX-License-Identifier: MIT */
/*
 * The library's own threads (page_alloc's decay thread, the percpu reaper,
 * the statistics agent), started one way.
 */
#ifndef USLAB_LIB_THREAD_H
#define USLAB_LIB_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* lib/thread.c */
/*
 * uslab_thread_start - start one of the library's threads with every
 * signal blocked: no handler of the program may run on it (one that calls
 * malloc while the thread holds an allocator lock would wait forever).
 * @thread: its id; @detached: nobody joins it; @stack: its stack size in
 * bytes, 0 for the default; @fn, @arg: what it runs.
 * Returns once the thread runs @fn (its start-up in the C runtime, which
 * may allocate, is over: a fork() right after finds no thread inside an
 * allocator it started).
 * Context: the caller holds no allocator lock (pthread_create may call
 * malloc, the new thread's start-up too); the caller's signal mask is
 * restored.
 * Return: 0, or pthread_create's error number.
 */
int uslab_thread_start(pthread_t *thread, bool detached, size_t stack,
		       void *(*fn)(void *), void *arg);

/*
 * The life of a background thread started on demand, one atomic int.
 * Layers may add states of their own after USLAB_THREAD_OFF (percpu's
 * reaper has STOPPED).
 */
enum {
	USLAB_THREAD_NONE,	/* not started, not asked for */
	USLAB_THREAD_WANTED,	/* asked for: start at the next safe point */
	USLAB_THREAD_STARTING,	/* one caller is in pthread_create */
	USLAB_THREAD_RUNNING,
	USLAB_THREAD_OFF,	/* never: refused, disabled or not wanted here */
	USLAB_THREAD_NR_STATES,
};

/*
 * uslab_thread_start_once - start the thread whose life *@state keeps,
 * if *@state is @from. The one caller that moves it from @from to
 * USLAB_THREAD_STARTING runs @prepare(@prepare_arg) (may be NULL: what
 * must be ready before the thread runs), starts @fn as uslab_thread_start() does and
 * publishes USLAB_THREAD_RUNNING, or USLAB_THREAD_OFF if pthread_create
 * refused. Every other caller returns at once.
 * Context: as uslab_thread_start(); a caller that re-enters through
 * pthread_create's malloc finds STARTING and returns.
 * Return: 0 when this caller started it, -EALREADY when *@state was not
 * @from, or pthread_create's error number.
 */
int uslab_thread_start_once(int *state, int from, void (*prepare)(void *),
			    void *prepare_arg, pthread_t *thread, bool detached, size_t stack,
			    void *(*fn)(void *), void *arg);

#endif /* USLAB_LIB_THREAD_H */
