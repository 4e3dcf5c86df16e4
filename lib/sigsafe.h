/* SPDX-License-Identifier: MIT */
/*
 * Signal handlers that allocate, without a system call per slow path.
 *
 * The kernel keeps an interrupt handler off a lock its CPU holds with
 * spin_lock_irqsave(). Blocking signals does the same in userspace but
 * costs two rt_sigprocmask calls (about 500 ns on the CI machines) per
 * refill or flush. Instead every section that holds an allocator lock is
 * counted in a per-thread depth (sigsafe_enter/sigsafe_exit: one add to a
 * TLS word each), and the entries a signal handler reaches first (the
 * slab layer's misses, kmalloc's large paths) ask sigsafe_reentered():
 * when the depth is not 0, the handler interrupted its own thread inside
 * the allocator, which may hold any of its locks, so the handler takes
 * none: an allocation is served by page_alloc's emergency mappings
 * (page_alloc/emergency.c), a free is deferred on a per-thread list that
 * the thread gives back at its next miss (sigsafe_take_deferred). The
 * lock-free fast paths stay usable in a handler as before (an rseq
 * section a signal interrupts restarts).
 *
 * A handler that siglongjmp()s out of an allocator section leaves its
 * locks held, as with every malloc that does not block signals (glibc's
 * arenas); POSIX allows neither malloc in a handler nor that jump.
 *
 * Context: the counters are per thread; the deferred list is pushed by a
 * handler and taken by its thread, both with one atomic instruction on
 * the thread's own word (a nested handler may push in between).
 */
#ifndef USLAB_LIB_SIGSAFE_H
#define USLAB_LIB_SIGSAFE_H

#include <stdbool.h>
#include "lib/compiler.h"

/* One per-thread block: the miss entries test both words with one base. */
struct sigsafe {
	unsigned long depth;	/* allocator locks held (sections entered) */
	void *deferred;		/* frees a handler deferred, linked by word 0 */
};
extern __thread struct sigsafe sigsafe
	__attribute__((tls_model("initial-exec")));

/* Before taking an allocator lock (the compiler keeps the order). */
static __always_inline void sigsafe_enter(void)
{
	sigsafe.depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * After releasing it. The increments need no atomic instruction: a handler
 * that runs between a load and a store of the depth leaves it as it found
 * it (its sections are balanced).
 */
static __always_inline void sigsafe_exit(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sigsafe.depth--;
}

/* Did a signal handler interrupt this thread inside the allocator? */
static __always_inline bool sigsafe_reentered(void)
{
	return unlikely(sigsafe.depth != 0);
}

/*
 * The miss entries' one test: inside the allocator, or frees waiting.
 * Then sigsafe_reentered() tells which.
 */
static __always_inline bool sigsafe_busy(void)
{
	return unlikely((sigsafe.depth |
			 (unsigned long)__atomic_load_n(&sigsafe.deferred,
							__ATOMIC_RELAXED)) != 0);
}

/*
 * Defer the free of @obj (at least 8 bytes; its first word becomes the
 * link). A CAS loop: a nested handler may push between the load and the
 * store.
 */
static inline void sigsafe_defer(void *obj)
{
	void *old = __atomic_load_n(&sigsafe.deferred, __ATOMIC_RELAXED);

	do {
		*(void **)obj = old;
	} while (!__atomic_compare_exchange_n(&sigsafe.deferred, &old, obj, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* Whether frees wait on this thread's list (one TLS load). */
static __always_inline bool sigsafe_has_deferred(void)
{
	return unlikely(__atomic_load_n(&sigsafe.deferred, __ATOMIC_RELAXED) != NULL);
}

/* Take the whole list (an exchange, which a handler cannot split). */
static inline void *sigsafe_take_deferred(void)
{
	return __atomic_exchange_n(&sigsafe.deferred, NULL, __ATOMIC_RELAXED);
}

#endif /* USLAB_LIB_SIGSAFE_H */
