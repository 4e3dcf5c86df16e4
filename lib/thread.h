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
 * Context: the caller holds no allocator lock (pthread_create may call
 * malloc); the caller's signal mask is restored.
 * Return: 0, or pthread_create's error number.
 */
int uslab_thread_start(pthread_t *thread, bool detached, size_t stack,
		       void *(*fn)(void *), void *arg);

#endif /* USLAB_LIB_THREAD_H */
