// SPDX-License-Identifier: MIT
/*
 * The reader's side of the statistics segment (include/uslab/statseg.h):
 * find /dev/shm/uslab.<pid> (or uslab.<pid>.<random>), check it belongs to
 * that very process, ask its agent for a snapshot (and a slabinfo write),
 * copy the snapshot out. Shared by `uslab slabinfo -p` and `uslab top -p`.
 *
 * The file is input from whoever could create it: it is taken only when it
 * is a regular file (opened with O_NOFOLLOW) owned by the target process's
 * user or root, mode 0600, of the segment's size, alive (lib/shmseg.h), with
 * the process's pid and start time. Nothing of it is touched through a
 * mapping (a file truncated under the reader would be SIGBUS): requests and
 * answers go by pwrite/pread, and the one page mapped is only the futex
 * words' address for the kernel. Every wait is bounded (STATSEG_WAIT_S),
 * every byte printed escaped (statseg_fput_text, statseg_printable).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stddef.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include "lib/procfs.h"
#include "lib/shmseg.h"
#include "tools/uslab/builtin.h"

#define STATSEG_WAIT_S	2	/* for the readers' lock, then for the answer */

static const struct shmseg_id statseg_id = {
	.magic = USLAB_STATSEG_MAGIC,
	.version = USLAB_STATSEG_VERSION,
	.size = sizeof(struct uslab_statseg),
};

/* Does /proc/<pid>/maps show libuslab.so (the library, not the recorder)? */
static bool statseg_maps_libuslab(pid_t pid)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libuslab.so") != NULL;
	fclose(f);
	return found;
}

/*
 * Whether the environment @pid started with (/proc/<pid>/environ: the one
 * of its exec, which a fork child shares) asks for stats_shm: an item
 * "stats_shm" of USLAB_OPTIONS. False when it cannot be read.
 */
static bool statseg_env_asks(pid_t pid)
{
	char path[64], *env = NULL;
	size_t len = 0, got;
	bool asks = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	for (;;) {	/* whole, however long: NUL-separated strings */
		char *grown = realloc(env, len + 4097);

		if (!grown)
			break;
		env = grown;
		got = fread(env + len, 1, 4096, f);
		len += got;
		if (got < 4096)
			break;
	}
	fclose(f);
	if (env)
		env[len] = '\0';
	for (size_t off = 0; env && off < len; off += strlen(env + off) + 1) {
		const char *v = env + off, *item;

		if (strncmp(v, "USLAB_OPTIONS=", 14))
			continue;
		for (item = v + 14; *item; item += strcspn(item, ",") + (item[strcspn(item, ",")] != 0))
			if (!strncmp(item, "stats_shm", 9) && (item[9] == ',' || !item[9]))
				asks = true;
	}
	free(env);
	return asks;
}

/* The Uid: line of /proc/<pid>/status (real, effective, saved, fs). Return: 0 or -errno. */
static int proc_uids(pid_t pid, uid_t uids[4])
{
	char path[64], line[256];
	unsigned long u[4];
	int ret = -ENODATA;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4) {
			for (int i = 0; i < 4; i++)
				uids[i] = (uid_t)u[i];
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

void statseg_fput_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 0x20 && c < 0x7f && c != '\\') || c == '\n')
			fputc(c, f);
		else if (c == '\\')
			fputs("\\\\", f);
		else
			fprintf(f, "\\x%02x", c);
	}
}

const char *statseg_printable(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s && o + 5 <= len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, len - o, c == '\\' ? "\\\\" : "\\x%02x", c);
	}
	if (len)
		buf[o < len ? o : len - 1] = '\0';
	return buf;
}

/* Does @uid own process @t (any of its ids) or is it root's? */
static bool owner_ok(uid_t uid, const uid_t uids[4])
{
	return uid == 0 || uid == uids[0] || uid == uids[1] || uid == uids[2] || uid == uids[3];
}

/*
 * Take @name in @dirfd as @h's segment when it passes every check. Return:
 * 0; 1 when there is no such file; -1 with why not in @why.
 */
static int statseg_try(int dirfd, const char *name, const uid_t uids[4], uint64_t start,
		       struct statseg_handle *h, char *why, size_t whylen)
{
	struct uslab_statseg hdr;
	const size_t hdr_len = offsetof(struct uslab_statseg, request);
	struct stat st;
	void *map;
	int fd, alive;

	fd = openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		snprintf(why, whylen, "%s%s", strerror(errno),
			 errno == ELOOP ? " (a symbolic link: not a segment)" :
			 errno == EACCES || errno == EPERM ?
			 " (run as the process's user or root)" : "");
		return -1;
	}
	if (fstat(fd, &st)) {
		snprintf(why, whylen, "fstat: %s", strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file: not a segment");
		goto out_close;
	}
	if (!owner_ok(st.st_uid, uids)) {
		snprintf(why, whylen, "owned by uid %u, but process %d runs as uid %u: "
			 "not its segment (ignored)", (unsigned)st.st_uid, (int)h->pid,
			 (unsigned)uids[1]);
		goto out_close;
	}
	if (st.st_mode & 077) {
		snprintf(why, whylen, "mode %04o, not the 0600 a segment is made with%s: "
			 "not a segment (ignored)", (unsigned)(st.st_mode & 07777),
			 st.st_mode & 022 ? " (others may write it)" : "");
		goto out_close;
	}
	if (st.st_size != (off_t)sizeof(struct uslab_statseg) ||
	    pread(fd, &hdr, hdr_len, 0) != (ssize_t)hdr_len ||
	    hdr.magic != USLAB_STATSEG_MAGIC || hdr.version != USLAB_STATSEG_VERSION ||
	    hdr.size != sizeof(struct uslab_statseg)) {
		snprintf(why, whylen, "%lld bytes, not a version %d statistics segment of %zu bytes "
			 "(a different uslab build?)", (long long)st.st_size,
			 USLAB_STATSEG_VERSION, sizeof(struct uslab_statseg));
		goto out_close;
	}
	alive = shmseg_alive(fd);
	if (alive == 0) {
		snprintf(why, whylen, "left by a process that has gone (%s)",
			 shmseg_remove_if(dirfd, name, &st) > 0 ? "removed" : "not removed");
		goto out_close;
	}
	if (hdr.pid != h->pid || hdr.start_time != start) {
		snprintf(why, whylen, "served by process %d started at %llu, not process %d "
			 "started at %llu (another PID namespace?)", (int)hdr.pid,
			 (unsigned long long)hdr.start_time, (int)h->pid,
			 (unsigned long long)start);
		goto out_close;
	}
	/* the futex words' address for the kernel; never read or written here */
	map = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(why, whylen, "mmap: %s", strerror(errno));
		goto out_close;
	}
	h->map = map;
	h->fd = fd;
	h->start = start;
	return 0;

out_close:
	close(fd);
	return -1;
}

/*
 * statseg_open - find the segment of @pid. Return: 0, or -1 after one line
 * on stderr saying why (no such process, not on uslab, segment off, not
 * its owner's, stale, not of this version, no /proc to check it against).
 */
int statseg_open(const char *cmd, pid_t pid, struct statseg_handle *h)
{
	char name[64], why[256] = "", path[128], bad[300] = "";
	char buf[4096] __attribute__((aligned(8)));
	uid_t uids[4];
	uint64_t start;
	int dirfd, rc, err;
	size_t plen;
	long n;

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	h->pid = pid;
	h->cmd = cmd;
	/* what killed processes left: provably stale ones only (lib/shmseg.h) */
	shmseg_sweep(USLAB_STATSEG_DIR, USLAB_STATSEG_PREFIX, &statseg_id);
	snprintf(name, sizeof(name), "%s%d", USLAB_STATSEG_PREFIX, (int)pid);
	snprintf(path, sizeof(path), "%s/%s", USLAB_STATSEG_DIR, name);
	start = proc_start_time(pid);
	err = start ? proc_uids(pid, uids) : -ENOENT;
	if (err) {
		if (kill(pid, 0) && errno == ESRCH)
			fprintf(stderr, "%s: no process %d\n", cmd, (int)pid);
		else
			fprintf(stderr, "%s: cannot read /proc/%d: %s: without it the segment "
				"cannot be checked against the process (another PID namespace, or "
				"no /proc?)\n", cmd, (int)pid, strerror(-err));
		return -1;
	}
	dirfd = open(USLAB_STATSEG_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "%s: %s: %s\n", cmd, USLAB_STATSEG_DIR, strerror(errno));
		return -1;
	}
	rc = statseg_try(dirfd, name, uids, start, h, why, sizeof(why));
	if (rc < 0)
		snprintf(bad, sizeof(bad), "%s", name);
	/* uslab.<pid>.<random>: the process's name when uslab.<pid> was taken */
	plen = strlen(name);
	while (rc && (n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; rc && off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			char w[256];

			off += d->d_reclen;
			if (strncmp(d->d_name, name, plen) || d->d_name[plen] != '.')
				continue;
			rc = statseg_try(dirfd, d->d_name, uids, start, h, w, sizeof(w));
			if (rc < 0 && !bad[0]) {
				snprintf(bad, sizeof(bad), "%s", d->d_name);
				snprintf(why, sizeof(why), "%s", w);
			}
		}
	}
	close(dirfd);
	if (!rc)
		return 0;
	if (bad[0]) {	/* the first file that did not pass, and why */
		fprintf(stderr, "%s: %s/%s: %s\n", cmd, USLAB_STATSEG_DIR, bad, why);
		return -1;
	}
	if (statseg_maps_libuslab(pid) && statseg_env_asks(pid))
		fprintf(stderr, "%s: process %d runs libuslab.so with USLAB_OPTIONS=stats_shm "
			"but serves no statistics: only the process that started with it serves "
			"them, not a child it forked (or the segment could not be made: its "
			"stderr said why at start)\n", cmd, (int)pid);
	else if (statseg_maps_libuslab(pid))
		fprintf(stderr, "%s: process %d runs libuslab.so but serves no statistics: "
			"start it with USLAB_OPTIONS=stats_shm\n", cmd, (int)pid);
	else
		fprintf(stderr, "%s: process %d is not running on uslab with "
			"USLAB_OPTIONS=stats_shm (no %s)\n", cmd, (int)pid, path);
	return -1;
}

void statseg_close(struct statseg_handle *h)
{
	if (h->map)
		munmap(h->map, (size_t)sysconf(_SC_PAGESIZE));
	if (h->fd >= 0)
		close(h->fd);
	h->map = NULL;
	h->fd = -1;
}

static bool past(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

static void deadline_in(struct timespec *deadline, int s)
{
	clock_gettime(CLOCK_MONOTONIC, deadline);
	deadline->tv_sec += s;
}

/* One u32 of the file at @off. Return: 0, or -1 when the file is cut short. */
static int seg_get32(struct statseg_handle *h, size_t off, uint32_t *v)
{
	return pread(h->fd, v, sizeof(*v), (off_t)off) == (ssize_t)sizeof(*v) ? 0 : -1;
}

static int seg_put(struct statseg_handle *h, size_t off, const void *v, size_t len)
{
	return pwrite(h->fd, v, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

/* The readers' lock, waited for STATSEG_WAIT_S at most. Return: 0 or -1 (said why). */
static int statseg_lock_readers(struct statseg_handle *h)
{
	struct timespec deadline, nap = { 0, 10 * 1000 * 1000 };
	int err;

	deadline_in(&deadline, STATSEG_WAIT_S);
	while ((err = shmseg_lock(h->fd, F_WRLCK, SHMSEG_BYTE_READER)) == -EAGAIN) {
		if (h->stop && *h->stop)
			return -1;	/* told to stop between two naps */
		if (past(&deadline)) {
			fprintf(stderr, "%s: the segment of process %d stayed locked by another "
				"reader for %d s: giving up\n", h->cmd, (int)h->pid, STATSEG_WAIT_S);
			return -1;
		}
		if (nanosleep(&nap, NULL)) {
			if (!h->stop || !*h->stop)
				fprintf(stderr, "%s: interrupted while waiting for the segment's lock\n",
					h->cmd);
			return -1;
		}
	}
	if (err) {
		fprintf(stderr, "%s: lock: %s\n", h->cmd, strerror(-err));
		return -1;
	}
	return 0;
}

/*
 * statseg_snapshot - ask the agent for a snapshot (after applying @write,
 * a slabinfo write line, when not NULL) and copy it to @out.
 * Return: 0; -1 after one line on stderr when the segment stays locked,
 * the process has gone or does not answer within STATSEG_WAIT_S, the file
 * was cut short, or a signal interrupted the wait (silently when it set
 * *@h->stop: the caller was told to stop). *@write_result gets the
 * write's 0 or -errno.
 */
int statseg_snapshot(struct statseg_handle *h, const char *write, int *write_result,
		     struct uslab_statseg *out)
{
	uint32_t *fut_req = (uint32_t *)((char *)h->map + offsetof(struct uslab_statseg, request));
	uint32_t *fut_done = (uint32_t *)((char *)h->map + offsetof(struct uslab_statseg, done));
	struct timespec deadline;
	const char *cut = NULL;
	uint32_t req;
	int32_t zero = 0;
	int ret = -1;

	if (statseg_lock_readers(h))
		return -1;
	if (write) {
		char cmdline[USLAB_STATSEG_CMD] = "";

		snprintf(cmdline, sizeof(cmdline), "%s", write);
		if (seg_put(h, offsetof(struct uslab_statseg, cmd), cmdline, sizeof(cmdline)) ||
		    seg_put(h, offsetof(struct uslab_statseg, cmd_result), &zero, sizeof(zero))) {
			cut = "write";
			goto out;
		}
	}
	if (seg_get32(h, offsetof(struct uslab_statseg, request), &req)) {
		cut = "read";
		goto out;
	}
	req++;
	if (seg_put(h, offsetof(struct uslab_statseg, request), &req, sizeof(req))) {
		cut = "write";
		goto out;
	}
	futex(fut_req, FUTEX_WAKE, 1, NULL);
	deadline_in(&deadline, STATSEG_WAIT_S);
	for (;;) {
		struct timespec left = { 0, 100 * 1000 * 1000 };	/* recheck every 100 ms */
		struct stat st;
		uint32_t done;

		if (fstat(h->fd, &st) || st.st_size != (off_t)sizeof(struct uslab_statseg) ||
		    seg_get32(h, offsetof(struct uslab_statseg, done), &done)) {
			cut = "read";
			goto out;
		}
		if (done == req)
			break;
		if (h->stop && *h->stop)
			goto out_clear;
		if (proc_start_time(h->pid) != h->start) {
			fprintf(stderr, "%s: process %d has gone\n", h->cmd, (int)h->pid);
			goto out_clear;
		}
		if (past(&deadline)) {
			fprintf(stderr, "%s: process %d does not answer within %d s (stopped, or "
				"its agent thread is gone)\n", h->cmd, (int)h->pid, STATSEG_WAIT_S);
			goto out_clear;
		}
		/* EFAULT (the file cut short) shows in the next pread */
		if (futex(fut_done, FUTEX_WAIT, done, &left) && errno == EINTR) {
			if (!h->stop || !*h->stop)
				fprintf(stderr, "%s: interrupted while waiting for process %d\n",
					h->cmd, (int)h->pid);
			goto out_clear;
		}
		if (errno == EFAULT)
			nanosleep(&left, NULL);
	}
	if (pread(h->fd, out, sizeof(*out), 0) != (ssize_t)sizeof(*out)) {
		cut = "read";
		goto out;
	}
	/* the agent's fields are input: bound them before anyone indexes */
	if (out->magic != USLAB_STATSEG_MAGIC || out->pid != h->pid) {
		fprintf(stderr, "%s: the segment of process %d changed under the reader\n",
			h->cmd, (int)h->pid);
		goto out;
	}
	if (out->nr_caches > USLAB_STATSEG_CACHES)
		out->nr_caches = USLAB_STATSEG_CACHES;
	if (out->text_len >= sizeof(out->text))
		out->text_len = sizeof(out->text) - 1;
	out->text[out->text_len] = '\0';
	out->mode[sizeof(out->mode) - 1] = '\0';
	for (uint32_t i = 0; i < out->nr_caches; i++)
		out->caches[i].name[sizeof(out->caches[i].name) - 1] = '\0';
	if (write_result)
		*write_result = out->cmd_result;
	ret = 0;
	goto out;

out_clear:
	if (write) {
		char nul = '\0';

		seg_put(h, offsetof(struct uslab_statseg, cmd), &nul, 1);
	}
out:
	if (cut)
		fprintf(stderr, "%s: the segment of process %d was cut short (%s failed): "
			"not a segment any more\n", h->cmd, (int)h->pid, cut);
	shmseg_lock(h->fd, F_UNLCK, SHMSEG_BYTE_READER);
	return ret;
}
