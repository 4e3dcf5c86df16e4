// SPDX-License-Identifier: MIT
/*
 * Reads of /proc/<pid>/ shared by the library (the statistics segment it
 * writes), the tools (the reader that checks the segment's owner; replay's
 * memory figures) and the simulator (its resident peak).
 *
 * No locks.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "lib/procfs.h"

/* The start of @path into @buf, NUL-terminated. Return: bytes, or 0. */
static size_t read_proc(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (size_t)n;
}

uint64_t proc_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!read_proc(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');		/* the command may hold spaces */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
			 "%*d %*d %*d %*d %*d %*d %llu", &t) != 1)
		return 0;
	return t;
}

uint64_t proc_rss_bytes(void)
{
	char buf[256], *p;

	if (!read_proc("/proc/self/statm", buf, sizeof(buf)))
		return 0;
	p = strchr(buf, ' ');		/* size, then resident, in pages */
	return p ? strtoull(p + 1, NULL, 10) * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

int64_t proc_hwm_bytes(void)
{
	char buf[4096], *p;
	long long kib;

	if (!read_proc("/proc/self/status", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "\nVmHWM:");
	if (!p || sscanf(p + 7, " %lld kB", &kib) != 1 || kib < 0)
		return -1;
	return (int64_t)kib * 1024;
}

bool proc_reset_hwm(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, "5", 1) == 1;
	close(fd);
	return ok;
}
