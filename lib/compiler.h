/* SPDX-License-Identifier: MIT */
/*
 * Compiler helpers shared by every layer. Defined once, here.
 */
#ifndef USLAB_LIB_COMPILER_H
#define USLAB_LIB_COMPILER_H

#include <stddef.h>
#include <assert.h>

#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)

#ifndef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#endif
#define noinline		__attribute__((__noinline__))
#define __fastpath		__attribute__((__hot__))
#define __slowpath		__attribute__((__noinline__, __cold__))
#define __cacheline_aligned	__attribute__((__aligned__(64)))
#define __packed		__attribute__((__packed__))
#define __maybe_unused		__attribute__((__unused__))
#define __visible		__attribute__((__visibility__("default")))
#define __printf(a, b)		__attribute__((__format__(printf, a, b)))
/* The caller's return address, as the kernel's: a call site for reports. */
#define _RET_IP_		((unsigned long)__builtin_return_address(0))

/*
 * Relaxed atomics rather than volatile accesses: the same plain moves on
 * x86-64, and ThreadSanitizer (make check-sanitize) sees them as the
 * deliberate racy accesses they are.
 */
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define barrier()		__asm__ __volatile__("" ::: "memory")

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define ALIGN_UP(x, a)		(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define ALIGN_DOWN(x, a)	((x) & ~((__typeof__(x))(a) - 1))
#define IS_ALIGNED(x, a)	(((x) & ((__typeof__(x))(a) - 1)) == 0)
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define min_t(t, a, b)		((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b)		((t)(a) > (t)(b) ? (t)(a) : (t)(b))

/*
 * IS_ENABLED(CONFIG_X): 1 when the bool symbol is set, 0 otherwise, usable in
 * plain C `if` so both branches always compile (the kernel's kconfig.h trick).
 */
#define __ARG_PLACEHOLDER_1		0,
#define __take_second_arg(__ignored, val, ...) val
#define __is_defined(x)			___is_defined(x)
#define ___is_defined(val)		____is_defined(__ARG_PLACEHOLDER_##val)
#define ____is_defined(arg1_or_junk)	__take_second_arg(arg1_or_junk 1, 0)
#define IS_ENABLED(option)		__is_defined(option)

#endif /* USLAB_LIB_COMPILER_H */
