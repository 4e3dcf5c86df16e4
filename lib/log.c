// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include "lib/log.h"

int uslab_log_level = CONFIG_LOG_LEVEL;
static int log_fd = 2;

void uslab_log_set_fd(int fd)
{
	log_fd = fd;
}

int uslab_log_get_fd(void)
{
	return log_fd;
}

int uslab_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void uslab_vlog(int level, const char *fmt, va_list ap)
{
	char buf[1024];
	int saved = errno;
	int n;

	if (level > uslab_log_level)
		return;
	n = snprintf(buf, sizeof(buf), "uslab: ");
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	if (buf[n - 1] != '\n')
		buf[n++] = '\n';
	uslab_write_all(log_fd, buf, (size_t)n);
	errno = saved;
}

void uslab_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	uslab_vlog(level, fmt, ap);
	va_end(ap);
}

size_t uslab_bufprintf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= len)
		return 0;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	if ((size_t)n >= len - *pos)
		n = (int)(len - *pos - 1);
	*pos += (size_t)n;
	return (size_t)n;
}

void uslab_panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	uslab_vlog(LOG_ERR, fmt, ap);
	va_end(ap);
	abort();
}
