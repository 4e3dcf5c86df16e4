/* SPDX-License-Identifier: MIT */
/*
 * Logging that is safe inside the allocator: formats into a stack buffer and
 * writes with write(2), so it never calls malloc or takes stdio locks.
 */
#ifndef USLAB_LIB_LOG_H
#define USLAB_LIB_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include "lib/compiler.h"

enum { LOG_ERR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

extern int uslab_log_level;

/* lib/log.c */
void uslab_log(int level, const char *fmt, ...) __printf(2, 3);
void uslab_vlog(int level, const char *fmt, va_list ap);
void uslab_log_set_fd(int fd);
/* write(2) all of @buf, retrying on EINTR; never allocates. Return: 0 or -errno. */
int uslab_write_all(int fd, const void *buf, size_t n);
int uslab_log_get_fd(void);
/* Fixed-buffer formatting that never allocates: returns bytes written. */
size_t uslab_bufprintf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
	__printf(4, 5);
void uslab_panic(const char *fmt, ...) __printf(1, 2) __attribute__((noreturn));

#define pr_err(...)	uslab_log(LOG_ERR, __VA_ARGS__)
#define pr_warn(...)	uslab_log(LOG_WARN, __VA_ARGS__)
#define pr_info(...)	uslab_log(LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	uslab_log(LOG_DEBUG, __VA_ARGS__)

#define BUG_ON(cond) do {						\
	if (unlikely(cond))						\
		uslab_panic("BUG at %s:%d: %s", __FILE__, __LINE__, #cond); \
} while (0)

#endif /* USLAB_LIB_LOG_H */
