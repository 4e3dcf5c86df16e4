// SPDX-License-Identifier: MIT
/*
 * The reader's side of the statistics segment (include/uslab/statseg.h):
 * find /dev/shm/uslab.<pid>, check it belongs to that very process, ask
 * its agent for a snapshot (and a slabinfo write), copy the snapshot out.
 * Shared by `uslab slabinfo -p` and `uslab top -p`.
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
#include <time.h>
#include <unistd.h>
#include "lib/procfs.h"
#include "tools/uslab/builtin.h"

/* Does /proc/<pid>/maps show libuslab.so? */
static bool maps_libuslab(pid_t pid)
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

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

/*
 * statseg_open - map the segment of @pid. Return: 0, or -1 after one line
 * on stderr saying why (no such process, not on uslab, segment off, stale,
 * not ours to read, not a segment of this version).
 */
int statseg_open(const char *cmd, pid_t pid, struct statseg_handle *h)
{
	char path[128];
	struct stat st;
	struct uslab_statseg *s;
	uint64_t start;
	int fd;

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	snprintf(path, sizeof(path), "%s/%s%d", USLAB_STATSEG_DIR, USLAB_STATSEG_PREFIX, (int)pid);
	start = proc_start_time(pid);
	if (!start && kill(pid, 0) && errno == ESRCH) {
		/* a process killed by a signal leaves its segment: clear it */
		fprintf(stderr, "%s: no process %d%s\n", cmd, (int)pid,
			unlink(path) ? "" : " (removed the segment it left)");
		return -1;
	}
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == EACCES || errno == EPERM)
			fprintf(stderr, "%s: %s: %s (run as the process's user or root)\n",
				cmd, path, strerror(errno));
		else if (errno != ENOENT)
			fprintf(stderr, "%s: %s: %s\n", cmd, path, strerror(errno));
		else if (maps_libuslab(pid))
			fprintf(stderr, "%s: process %d runs libuslab.so but serves no statistics: "
				"start it with USLAB_OPTIONS=stats_shm\n", cmd, (int)pid);
		else
			fprintf(stderr, "%s: process %d is not running on uslab with "
				"USLAB_OPTIONS=stats_shm (no %s)\n", cmd, (int)pid, path);
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size != sizeof(struct uslab_statseg)) {
		fprintf(stderr, "%s: %s: %lld bytes, expected a version %d segment of %zu bytes "
			"(a different uslab build?)\n", cmd, path, (long long)st.st_size,
			USLAB_STATSEG_VERSION, sizeof(struct uslab_statseg));
		close(fd);
		return -1;
	}
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED) {
		fprintf(stderr, "%s: mmap %s: %s\n", cmd, path, strerror(errno));
		close(fd);
		return -1;
	}
	if (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) != USLAB_STATSEG_MAGIC ||
	    s->version != USLAB_STATSEG_VERSION || s->size != sizeof(*s) || s->pid != pid) {
		fprintf(stderr, "%s: %s is not a version %d uslab statistics segment of process %d\n",
			cmd, path, USLAB_STATSEG_VERSION, (int)pid);
		goto out_unmap;
	}
	if (!start || start != s->start_time) {
		fprintf(stderr, "%s: process %d has gone (%s%s is left from it)\n", cmd, (int)pid,
			unlink(path) ? "" : "removed: ", path);
		goto out_unmap;
	}
	h->seg = s;
	h->fd = fd;
	h->pid = pid;
	h->cmd = cmd;
	return 0;

out_unmap:
	munmap(s, sizeof(*s));
	close(fd);
	return -1;
}

void statseg_close(struct statseg_handle *h)
{
	if (h->seg)
		munmap(h->seg, sizeof(*h->seg));
	if (h->fd >= 0)
		close(h->fd);
	h->seg = NULL;
	h->fd = -1;
}

/*
 * statseg_snapshot - ask the agent for a snapshot (after applying @write,
 * a slabinfo write line, when not NULL) and copy it to @out.
 * Return: 0; -1 after one line on stderr when the process has gone or does
 * not answer within 2 s. *@write_result gets the write's 0 or -errno.
 */
int statseg_snapshot(struct statseg_handle *h, const char *write, int *write_result,
		     struct uslab_statseg *out)
{
	struct uslab_statseg *s = h->seg;
	struct timespec deadline, now;
	uint32_t req;
	int ret = -1;

	if (flock(h->fd, LOCK_EX)) {	/* one reader at a time */
		fprintf(stderr, "%s: lock: %s\n", h->cmd, strerror(errno));
		return -1;
	}
	if (write) {
		snprintf(s->cmd, sizeof(s->cmd), "%s", write);
		s->cmd_result = 0;
	}
	req = __atomic_add_fetch(&s->request, 1, __ATOMIC_ACQ_REL);
	futex(&s->request, FUTEX_WAKE, 1, NULL);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += 2;
	for (;;) {
		uint32_t done = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);
		struct timespec left;

		if (done == req)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > deadline.tv_sec ||
		    (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec) ||
		    proc_start_time(h->pid) != s->start_time) {
			if (proc_start_time(h->pid) != s->start_time)
				fprintf(stderr, "%s: process %d has gone\n", h->cmd, (int)h->pid);
			else
				fprintf(stderr, "%s: process %d does not answer (stopped, or its "
					"agent thread is gone)\n", h->cmd, (int)h->pid);
			if (write)
				s->cmd[0] = '\0';
			goto out;
		}
		left.tv_sec = 0;
		left.tv_nsec = 100 * 1000 * 1000;	/* recheck the process every 100 ms */
		futex(&s->done, FUTEX_WAIT, done, &left);
	}
	memcpy(out, s, sizeof(*out));
	/* the agent's fields are input: bound them before anyone indexes */
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
out:
	flock(h->fd, LOCK_UN);
	return ret;
}
