// SPDX-License-Identifier: MIT
/*
 * USLAB_OPTIONS=stats_shm: the statistics segment /dev/shm/uslab.<pid> and
 * the agent thread that serves it (the format and the protocol are in
 * include/uslab/statseg.h; the readers are `uslab slabinfo -p` and
 * `uslab top -p`).
 *
 * Off by default: it costs nothing on the allocation paths (they never look
 * at the segment; docs/malloc.md gives the callgrind counts), but a process
 * that asks for it gets a thread and a file, which an unmodified preloaded
 * program should not get unasked.
 *
 * Locking: none of its own. The agent serves one request at a time (readers
 * serialize with flock() on the file); it takes the locks of the calls it
 * makes (slabinfo_write, kmem_cache_stats_all, slabinfo_show), as any thread
 * of the program could.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "uslab/statseg.h"
#include "lib/log.h"
#include "lib/procfs.h"
#include "lib/thread.h"
#include "malloc/internal.h"

static struct uslab_statseg *seg;
static pid_t seg_pid;			/* the process that created it */
static char seg_path[64];

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

static void statseg_serve(struct uslab_statseg *s)
{
	struct timespec ts;
	size_t n;

	if (s->cmd[0]) {
		s->cmd[sizeof(s->cmd) - 1] = '\0';
		s->cmd_result = slabinfo_write(s->cmd);
		s->cmd[0] = '\0';
	}
	n = kmem_cache_stats_all(s->caches, USLAB_STATSEG_CACHES);
	s->total_caches = (uint32_t)n;
	s->nr_caches = (uint32_t)(n < USLAB_STATSEG_CACHES ? n : USLAB_STATSEG_CACHES);
	s->text_len = (uint32_t)slabinfo_show(s->text, sizeof(s->text));
	snprintf(s->mode, sizeof(s->mode), "%s", pcp_mode());
	s->flags = kmem_cache_stats_enabled() ? USLAB_STATSEG_F_COUNTED : 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->snap_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	s->snaps++;
}

static void *statseg_agent(void *arg)
{
	struct uslab_statseg *s = arg;

	for (;;) {
		uint32_t req = __atomic_load_n(&s->request, __ATOMIC_ACQUIRE);

		if (req != __atomic_load_n(&s->done, __ATOMIC_RELAXED)) {
			statseg_serve(s);
			__atomic_store_n(&s->done, req, __ATOMIC_RELEASE);
			futex(&s->done, FUTEX_WAKE, INT32_MAX);
			continue;
		}
		/* shared futex (the reader is another process): no _PRIVATE */
		futex(&s->request, FUTEX_WAIT, req);
	}
	return NULL;
}

/**
 * malloc_statseg_start - create /dev/shm/uslab.<pid> and its agent thread.
 * Context: the library constructor, once. Failures are reported on
 * stderr in one line and leave the process running without the segment.
 */
void malloc_statseg_start(void)
{
	pthread_t tid;
	void *map;
	int fd, err;

	seg_pid = getpid();
	snprintf(seg_path, sizeof(seg_path), "%s/%s%d", USLAB_STATSEG_DIR,
		 USLAB_STATSEG_PREFIX, (int)seg_pid);
	unlink(seg_path);		/* a stale one from a pid long gone */
	fd = open(seg_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		pr_warn("stats_shm: cannot create %s: %s", seg_path, strerror(errno));
		return;
	}
	if (ftruncate(fd, sizeof(struct uslab_statseg))) {
		err = errno;
		goto out_unlink;
	}
	map = mmap(NULL, sizeof(struct uslab_statseg), PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		goto out_unlink;
	}
	close(fd);
	seg = map;
	seg->version = USLAB_STATSEG_VERSION;
	seg->size = sizeof(struct uslab_statseg);
	seg->pid = seg_pid;
	seg->start_time = proc_start_time(seg_pid);

	/* The agent never takes the program's signals. */
	err = uslab_thread_start(&tid, true, 64 * 1024, statseg_agent, seg);
	if (err) {
		munmap(seg, sizeof(*seg));
		seg = NULL;
		unlink(seg_path);
		pr_warn("stats_shm: cannot start the agent thread: %s", strerror(err));
		return;
	}
	pthread_setname_np(tid, "uslab-stats");
	/* Readers check the magic last: the segment is complete once it is set. */
	__atomic_store_n(&seg->magic, USLAB_STATSEG_MAGIC, __ATOMIC_RELEASE);
	return;

out_unlink:
	close(fd);
	unlink(seg_path);
	pr_warn("stats_shm: cannot map %s: %s", seg_path, strerror(err));
}

/** malloc_statseg_stop - remove the file at exit (only the process that made it). */
void malloc_statseg_stop(void)
{
	if (seg && getpid() == seg_pid)
		unlink(seg_path);
}

/*
 * malloc_statseg_fork_child - the child has no agent: it must neither
 * answer for nor remove its parent's segment.
 */
void malloc_statseg_fork_child(void)
{
	if (seg) {
		munmap(seg, sizeof(*seg));
		seg = NULL;
	}
}
