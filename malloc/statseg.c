// SPDX-License-Identifier: MIT
/*
 * USLAB_OPTIONS=stats_shm: the statistics segment /dev/shm/uslab.<pid> and
 * the agent thread that serves it (the format and the protocol are in
 * include/uslab/statseg.h; the readers are `uslab slabinfo -p` and
 * `uslab top -p`).
 *
 * Off by default: it costs nothing on the allocation paths (they never look
 * at the segment; docs/malloc.md gives the callgrind counts), but a process
 * that asks for it gets a thread, a file and a watcher process, which an
 * unmodified preloaded program should not get unasked.
 *
 * The file's life (lib/shmseg.h): this process holds its alive lock
 * through its mapping; a watcher process removes the file once that lock
 * is free (the process exited, exec'd or was killed, even by SIGKILL), and
 * every process that starts the option sweeps the stale ones a watcher
 * could not remove (the watcher itself killed).
 *
 * Locking: none of its own. The agent serves one request at a time (readers
 * take turns with a file lock, SHMSEG_BYTE_READER); it takes the locks of the calls it
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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "uslab/statseg.h"
#include "lib/log.h"
#include "lib/procfs.h"
#include "lib/shmseg.h"
#include "lib/thread.h"
#include "malloc/internal.h"

static struct uslab_statseg *seg;
static pid_t seg_pid;			/* the process that created it */
static char seg_name[64];		/* in USLAB_STATSEG_DIR */
static struct stat seg_st;		/* the file: removed only while the name is its */

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

static const struct shmseg_id statseg_id = {
	.magic = USLAB_STATSEG_MAGIC,
	.version = USLAB_STATSEG_VERSION,
	.size = sizeof(struct uslab_statseg),
};

/* Every descriptor but @a and @b closed (the watcher keeps nothing of the program's). */
static void close_all_but(int a, int b)
{
	unsigned int lo = (unsigned int)(a < b ? a : b), hi = (unsigned int)(a < b ? b : a);

	if (lo && syscall(SYS_close_range, 0u, lo - 1, 0u))
		goto slow;
	if (hi > lo + 1 && syscall(SYS_close_range, lo + 1, hi - 1, 0u))
		goto slow;
	if (!syscall(SYS_close_range, hi + 1, ~0u, 0u))
		return;
slow:
	for (int fd = 0; fd < 65536; fd++)
		if (fd != a && fd != b)
			close(fd);
}

/*
 * The watcher: a process of its own (two forks away, so the program never
 * sees a child of ours) that waits for the alive lock and removes the
 * segment when the program's last mapping of it goes: exit, os._exit, exec,
 * a fatal signal, SIGKILL. @dirfd and @fd (the file, another open file
 * description, no lock) were opened by the middle child.
 */
static __attribute__((noreturn)) void statseg_watcher(int dirfd, int fd, const struct stat *st)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET,
		.l_start = SHMSEG_BYTE_ALIVE, .l_len = 1,
	};

	setsid();			/* no terminal's or group's signals */
	prctl(PR_SET_NAME, "uslab-statseg");
	if (chdir("/"))
		_exit(1);
	close_all_but(dirfd, fd);
	while (fcntl(fd, F_OFD_SETLKW, &fl) && errno == EINTR)
		;
	shmseg_remove_if(dirfd, seg_name, st);
	_exit(0);
}

/*
 * Start the watcher. Only system calls in the children: they run from
 * _Fork(). The middle child drops its copy of the mapping (it would hold
 * the lock) before the watcher is forked, and this process waits for it,
 * so no copy outlives this call: an exec right after still frees the lock.
 */
static void statseg_watch(const struct stat *st)
{
	struct stat now;
	int status, dirfd, fd;
	pid_t mid;

	mid = _Fork();		/* no atfork handlers */
	if (mid < 0)
		return;		/* no watcher: the next sweep removes what is left */
	if (!mid) {
		munmap(seg, sizeof(*seg));
		dirfd = open(USLAB_STATSEG_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		fd = dirfd < 0 ? -1 : openat(dirfd, seg_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &now) || now.st_dev != st->st_dev ||
		    now.st_ino != st->st_ino)
			_exit(0);
		if (!_Fork())
			statseg_watcher(dirfd, fd, st);
		_exit(0);
	}
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
}

/*
 * Give the complete segment (@tmp in @dirfd) its name: uslab.<pid>, after
 * removing a stale file of that name; when the name is held by a file we
 * may not remove (another user's, or a live segment another PID namespace
 * serves under the same number), uslab.<pid>.<random>, which the readers
 * also look for. Return: 0 or -errno.
 */
static int statseg_link(int dirfd, const char *tmp)
{
	snprintf(seg_name, sizeof(seg_name), "%s%d", USLAB_STATSEG_PREFIX, (int)seg_pid);
	if (!linkat(dirfd, tmp, dirfd, seg_name, 0))
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (shmseg_remove_stale(dirfd, seg_name, &statseg_id) > 0 &&
	    !linkat(dirfd, tmp, dirfd, seg_name, 0))
		return 0;
	for (int tries = 0; tries < 8; tries++) {
		snprintf(seg_name, sizeof(seg_name), "%s%d.%016llx", USLAB_STATSEG_PREFIX,
			 (int)seg_pid, (unsigned long long)shmseg_random());
		if (!linkat(dirfd, tmp, dirfd, seg_name, 0))
			return 0;
		if (errno != EEXIST)
			break;
	}
	return -errno;
}

/**
 * malloc_statseg_start - sweep the stale segments, create this process's
 * and its agent thread and watcher.
 * Context: the library constructor, once. Failures are reported on
 * stderr in one line and leave the process running without the segment.
 */
void malloc_statseg_start(void)
{
	char tmp[80];
	const char *what = "create";
	struct stat st;
	pthread_t tid;
	void *map;
	int dirfd, fd, err;

	seg_pid = getpid();
	/* what processes killed before us left (provably stale: no lock) */
	shmseg_sweep(USLAB_STATSEG_DIR, USLAB_STATSEG_PREFIX, &statseg_id);
	dirfd = open(USLAB_STATSEG_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		pr_warn("stats_shm: cannot open %s: %s", USLAB_STATSEG_DIR, strerror(errno));
		return;
	}
	/* complete under a name of our own, then linked: readers never see half */
	snprintf(tmp, sizeof(tmp), ".%s%d.new.%016llx", USLAB_STATSEG_PREFIX, (int)seg_pid,
		 (unsigned long long)shmseg_random());
	fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		pr_warn("stats_shm: cannot create %s/%s: %s", USLAB_STATSEG_DIR, tmp,
			strerror(errno));
		close(dirfd);
		return;
	}
	what = "map";
	if (ftruncate(fd, sizeof(struct uslab_statseg)) || fstat(fd, &st)) {
		err = errno;
		goto out_unlink;
	}
	map = mmap(NULL, sizeof(struct uslab_statseg), PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		goto out_unlink;
	}
	/* Held through the mapping (an OFD lock lives as long as the file
	 * description, which the mapping keeps): gone with the process. */
	what = "lock";
	err = -shmseg_lock(fd, F_RDLCK, SHMSEG_BYTE_ALIVE);
	if (err) {
		munmap(map, sizeof(struct uslab_statseg));
		goto out_unlink;
	}
	seg = map;
	seg->version = USLAB_STATSEG_VERSION;
	seg->size = sizeof(struct uslab_statseg);
	seg->pid = seg_pid;
	seg->start_time = proc_start_time(seg_pid);
	__atomic_store_n(&seg->magic, USLAB_STATSEG_MAGIC, __ATOMIC_RELEASE);

	/* The agent never takes the program's signals. */
	what = "start the agent thread for";
	err = uslab_thread_start(&tid, true, 64 * 1024, statseg_agent, seg);
	if (err)
		goto out_unmap;
	pthread_setname_np(tid, "uslab-stats");
	what = "name";
	err = -statseg_link(dirfd, tmp);
	if (err)
		goto out_unmap;	/* the agent sleeps on, unasked */
	unlinkat(dirfd, tmp, 0);
	close(fd);
	seg_st = st;
	statseg_watch(&st);
	close(dirfd);
	return;

out_unmap:
	munmap(seg, sizeof(*seg));
	seg = NULL;
out_unlink:
	close(fd);
	unlinkat(dirfd, tmp, 0);
	close(dirfd);
	pr_warn("stats_shm: cannot %s %s/%s: %s", what, USLAB_STATSEG_DIR, tmp, strerror(err));
}

/** malloc_statseg_stop - remove the file at exit (only the process that made it). */
void malloc_statseg_stop(void)
{
	int dirfd;

	if (!seg || getpid() != seg_pid || !seg_name[0])
		return;
	dirfd = open(USLAB_STATSEG_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return;
	shmseg_remove_if(dirfd, seg_name, &seg_st);
	close(dirfd);
}

/*
 * malloc_statseg_fork_child - the child has no agent: it must neither
 * answer for nor remove its parent's segment, nor keep it alive (its copy
 * of the mapping would hold the lock after the parent has gone).
 */
void malloc_statseg_fork_child(void)
{
	if (seg) {
		munmap(seg, sizeof(*seg));
		seg = NULL;
	}
}
