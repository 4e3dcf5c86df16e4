// SPDX-License-Identifier: MIT
/*
 * Files of shared-memory segments whose life is told by a lock (the rules:
 * lib/shmseg.h). Nothing here allocates (the writer runs it inside the
 * allocator's constructor): directories are read with getdents64 into a
 * stack buffer.
 *
 * No locks of our own; the file locks are the protocol.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "lib/shmseg.h"

int shmseg_lock(int fd, short type, off_t byte)
{
	struct flock fl = {
		.l_type = type, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1,
	};

	if (fcntl(fd, F_OFD_SETLK, &fl))
		return errno == EACCES ? -EAGAIN : -errno;
	return 0;
}

int shmseg_alive(int fd)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET,
		.l_start = SHMSEG_BYTE_ALIVE, .l_len = 1,
	};

	if (fcntl(fd, F_OFD_GETLK, &fl))
		return -errno;
	return fl.l_type != F_UNLCK;
}

bool shmseg_check(int fd, const struct shmseg_id *id, struct stat *st)
{
	struct shmseg_id have;

	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_size != (off_t)id->size)
		return false;
	if (pread(fd, &have, sizeof(have), 0) != (ssize_t)sizeof(have))
		return false;
	return have.magic == id->magic && have.version == id->version &&
	       have.size == id->size;
}

int shmseg_remove_if(int dirfd, const char *name, const struct stat *st)
{
	static unsigned int seq;
	char away[96];
	struct stat now;

	/* the common case of another file having the name: no rename at all */
	if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) ||
	    now.st_dev != st->st_dev || now.st_ino != st->st_ino)
		return 0;
	snprintf(away, sizeof(away), ".%s.gone.%d.%u", name, (int)getpid(),
		 __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	if (renameat(dirfd, name, dirfd, away))
		return errno == ENOENT || errno == EPERM || errno == EACCES ? 0 : -errno;
	if (fstatat(dirfd, away, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
	    now.st_dev == st->st_dev && now.st_ino == st->st_ino) {
		if (unlinkat(dirfd, away, 0))
			return -errno;
		return 1;
	}
	/*
	 * Another file took the name since: put it back, never over a newer
	 * one (then it keeps the temporary name, and a sweep removes it once
	 * it is stale).
	 */
	renameat2(dirfd, away, dirfd, name, RENAME_NOREPLACE);
	return 0;
}

int shmseg_remove_stale(int dirfd, const char *name, const struct shmseg_id *id)
{
	struct stat st;
	int fd, alive, ret = 0;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT || errno == EACCES || errno == EPERM ||
		       errno == ELOOP ? 0 : -errno;
	if (shmseg_check(fd, id, &st)) {
		alive = shmseg_alive(fd);
		if (alive == 0)
			ret = shmseg_remove_if(dirfd, name, &st);
		else if (alive < 0)
			ret = alive;
	}
	close(fd);
	return ret;
}

/* @prefix<digits>[.<anything>], or .@prefix<anything> */
static bool sweep_name(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p;

	if (name[0] == '.')
		return !strncmp(name + 1, prefix, n);
	if (strncmp(name, prefix, n))
		return false;
	p = name + n;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return !*p || *p == '.';
}

int shmseg_sweep(const char *dir, const char *prefix, const struct shmseg_id *id)
{
	char buf[4096] __attribute__((aligned(8)));
	int dirfd, removed = 0;
	long n;

	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);

			off += d->d_reclen;
			if ((d->d_type == DT_REG || d->d_type == DT_UNKNOWN) &&
			    sweep_name(d->d_name, prefix) &&
			    shmseg_remove_stale(dirfd, d->d_name, id) > 0)
				removed++;
		}
	}
	close(dirfd);
	return removed;
}

uint64_t shmseg_random(void)
{
	struct timespec ts;
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
}
