/* SPDX-License-Identifier: MIT */
/*
 * A mutex that knows which thread holds it: the lock-held assertion of a
 * `_locked` function (STYLE.md), as the kernel's lockdep_assert_held().
 * Used for the slab cache lock, the per-CPU magazine lock and the zone lock
 * (docs/locking.md). Recording the holder is one store per lock and per
 * unlock.
 *
 * owned_assert_held() checks that this thread holds the lock; with
 * CONFIG_DEBUG_LOCKS (on in the debug preset) owned_lock() also refuses a
 * lock this thread already holds (a self-deadlock) and owned_unlock() one
 * it does not hold. Each says which lock and stops the process.
 */
#ifndef USLAB_LIB_LOCK_H
#define USLAB_LIB_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include "lib/compiler.h"
#include "lib/log.h"

struct owned_mutex {
	pthread_mutex_t mutex;
	pthread_t owner;		/* 0 while free */
};

#define OWNED_MUTEX_INITIALIZER	{ PTHREAD_MUTEX_INITIALIZER, 0 }

/* A fork child re-makes its locks: the forking thread held them all. */
static inline void owned_init(struct owned_mutex *m)
{
	pthread_mutex_init(&m->mutex, NULL);
	m->owner = 0;
}

static inline bool owned_by_me(const struct owned_mutex *m)
{
	return pthread_equal(__atomic_load_n(&m->owner, __ATOMIC_RELAXED), pthread_self());
}

static inline void owned_lock(struct owned_mutex *m, const char *what)
{
	if (IS_ENABLED(CONFIG_DEBUG_LOCKS) && unlikely(owned_by_me(m)))
		uslab_panic("%s: taken again by the thread that holds it", what);
	pthread_mutex_lock(&m->mutex);
	__atomic_store_n(&m->owner, pthread_self(), __ATOMIC_RELAXED);
}

static inline void owned_unlock(struct owned_mutex *m, const char *what)
{
	if (IS_ENABLED(CONFIG_DEBUG_LOCKS) && unlikely(!owned_by_me(m)))
		uslab_panic("%s: released by a thread that does not hold it", what);
	__atomic_store_n(&m->owner, (pthread_t)0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&m->mutex);
}

static inline void owned_assert_held(const struct owned_mutex *m, const char *what)
{
	if (unlikely(!owned_by_me(m)))
		uslab_panic("%s: not held by this thread", what);
}

#endif /* USLAB_LIB_LOCK_H */
