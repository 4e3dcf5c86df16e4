// SPDX-License-Identifier: MIT
/*
 * libuslab-record.so: preloaded by `uslab record`, it wraps the malloc family
 * of whatever allocator is underneath (found with dlsym(RTLD_NEXT)) and
 * appends one raw event per call to a per-thread buffer, flushed with one
 * write(2) per 32 KiB to $USLAB_RECORD_DIR/raw.<pid>.<n> (O_APPEND, so
 * threads need no lock to share the file). It links nothing of uslab.
 *
 * Addresses, not ids, are recorded: the collector (`uslab record`, after the
 * program ends) turns them into dense ids while it merges the threads by
 * time, so the hot path takes no lock and touches no shared table. For that
 * merge to see an address's free before its reuse by another thread, a free
 * is stamped before the real free, an allocation after the real allocation
 * returns, and a realloc twice: its old half (REC_OP_REALLOC_OLD) before, its
 * new half after.
 *
 * Locks (neither on the malloc fast path):
 *   pool_lock        spinlock; protects the list of all buffers and the
 *                    pool of free ones (thread start and exit, flush_all).
 *   open_lock        spinlock; serializes opening the raw file.
 *   Order: pool_lock, then open_lock (fork's prepare handler takes both).
 *
 * Fork: the child gets its own raw file (and `uslab record` puts it in the
 * same trace as its own process). Exec: the buffers are flushed first; the
 * new image is recorded as long as the environment keeps LD_PRELOAD and
 * USLAB_RECORD_DIR and the program is dynamically linked. When it is not,
 * a line in $USLAB_RECORD_DIR/notes says so, and `uslab record` warns.
 * vfork and posix_spawn children share the parent's memory until they exec:
 * what they allocate before that is counted as the parent's.
 *
 * Fatal signals: every signal whose default action ends the process and
 * that the program left at SIG_DFL gets fatal_flush, which writes every
 * thread's buffer and dies of the signal as the default action would, so a
 * program killed by TERM, INT, SEGV, ABRT... keeps its last events. A
 * handler the program installs replaces ours (it decides what the signal
 * does; when it ends by exit() the destructor flushes, by _exit exit_now
 * does); SIGKILL cannot be caught: up to 32 KiB per thread are lost then,
 * and `uslab record` says so. sigaction and signal are wrapped so the
 * program cannot tell: where fatal_flush stands it reads SIG_DFL (python
 * installs its KeyboardInterrupt handler only over SIG_DFL), and setting
 * SIG_DFL puts fatal_flush back.
 */
#include <assert.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/close_range.h>
#include <linux/membarrier.h>
#include <sys/rseq.h>
#include <time.h>
#include <unistd.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include "tools/record/record.h"

#define MAX_EXEC_ARGS	4096

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void *(*memalign_fn)(size_t, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
/* execve and execvpe: one type */
typedef int (*exec_fn)(const char *, char *const[], char *const[]);
typedef void (*exit_fn)(int);
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*sighandler_fn)(int);
typedef sighandler_fn (*signal_fn)(int, sighandler_fn);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);
typedef int (*close_fn)(int);
typedef int (*close_range_fn)(unsigned int, unsigned int, int);
typedef void (*closefrom_fn)(int);
typedef int (*dup2_fn)(int, int);
typedef int (*dup3_fn)(int, int, int);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef long (*syscall_fn)(long, ...);

typedef size_t (*usable_fn)(void *);

static struct {
	usable_fn usable;	/* record -p: the blocks' sizes at free */
	malloc_fn malloc;
	free_fn free;
	calloc_fn calloc;
	realloc_fn realloc;
	memalign_fn memalign;
	posix_memalign_fn posix_memalign;
	memalign_fn aligned_alloc;
	malloc_fn valloc;
	malloc_fn pvalloc;
	exec_fn execve;
	exec_fn execvpe;
	spawn_fn posix_spawn;
	spawn_fn posix_spawnp;
	exit_fn _exit;
	exit_fn _Exit;
	sigaction_fn sigaction;
	signal_fn signal;
	signal_fn bsd_signal;
	signal_fn sysv_signal;
	signal_fn sigset;
	close_fn close;
	close_range_fn close_range;
	closefrom_fn closefrom;
	dup2_fn dup2;
	dup3_fn dup3;
	fexecve_fn fexecve;
	execveat_fn execveat;
	syscall_fn syscall;
} real;

/*
 * A libc function of ours wrapped: resolved at record_init, or here when
 * a wrapper runs before it (another library's constructor).
 */
#define REAL(name) ({							\
	if (unlikely(!real.name))						\
		real.name = (__typeof__(real.name))dlsym(RTLD_NEXT, #name);	\
	real.name;								\
})

/* 0: not started, 1: resolving symbols (bootstrap allocator), 2: ready,
 * 3: disabled (no USLAB_RECORD_DIR: pass everything through). */
static atomic_int state;

/* Allocations made while dlsym runs, before the real malloc is known. */
static char boot_heap[128 << 10] __attribute__((aligned(64)));
static atomic_size_t boot_used;

struct rec_buf {
	struct rec_block hdr;		/* written together with data[] */
	uint8_t data[REC_BLOCK_BYTES];
	/* count << 32 | bytes: one word, so a flush by another thread (exit,
	 * exec) takes a consistent block; 0 tells the owner a block began. */
	_Atomic uint64_t fill;
	uint64_t first_time;	/* of the block's first event */
	struct rec_state st;
	/* Set by the owner around each append (emit_stack): flush_all (exit,
	 * exec) waits for it to clear before taking the block, and an owner
	 * that sees `exiting` set writes its event alone, leaving the buffer
	 * to flush_all. Without it the owner refilled data[] and rewrote hdr
	 * while flush_all's write(2) was copying them: a header of one event
	 * before 32 KiB of another block, and the collector kept nothing of
	 * the raw file after it. */
	_Atomic int emitting;
	bool in_use;
	struct rec_buf *next_all;
	struct rec_buf *next_free;
};

/*
 * `record -g`: a thread's call stacks seen so far, by a 64-bit hash of their
 * frames, so each distinct stack goes into the raw file once per thread (a
 * REC_OP_STACK record) and events carry its small local id. Open addressing
 * in one mapping, doubled when three quarters full (python3 meets 15000
 * distinct stacks: a fixed 4096 slots wrote a definition of up to 64 frames
 * before most of its events, three quarters of a 1.2 GB raw file); past
 * STACK_SLOTS_MAX, or when a mapping fails, stacks are still recorded, only
 * no longer deduplicated. Mapped at the thread's first stack, unmapped by
 * its key destructor (thread_exit): a program that runs many short threads
 * keeps one table per live thread, not one per thread it ever ran. A
 * thread's ids count on in rec_self, so what it allocates after its
 * destructor (other keys' destructors) still gets new ids, each stack
 * defined where used.
 */
#define STACK_SLOTS_MIN	512u		/* 6 KiB */
#define STACK_SLOTS_MAX	(1u << 22)	/* 48 MiB */

struct stack_table {
	uint32_t slots, used;	/* slots: a power of two */
	size_t bytes;		/* of the mapping, this header included */
	uint64_t *hash;		/* 0: empty */
	uint32_t *id;
};

struct rec_self {
	struct rec_buf *buf;
	struct stack_table *stacks;
	uint32_t last_stack_id;	/* the thread's ids in this raw file: 1.. */
	uint32_t tid;
	bool has_tid;
	bool busy;		/* inside a wrapper: nested calls pass through */
	bool exited;		/* after the thread's key destructor */
};

static __thread struct rec_self self __attribute__((tls_model("initial-exec")));

static atomic_uint next_tid;
static atomic_int pool_lock, open_lock;
static struct rec_buf *all_bufs, *free_bufs;
static int raw_fd = -1;
static dev_t raw_dev;		/* the file raw_fd must name (re-checked per block) */
static ino_t raw_ino;
static char raw_path[640];	/* this image's raw file */
/* The process whose memory this is: a vfork or posix_spawn child shares it
 * until it execs, and must not open files into (or flush) its parent's. */
static pid_t owner_pid;
static bool exiting;
static bool membarrier_private;	/* MEMBARRIER_CMD_PRIVATE_EXPEDITED registered */
static pthread_key_t thread_key;
static char rec_dir[512];
/* `uslab record -p`: loaded into a running process (uslab_record_attach):
 * frees say the block's size, for the blocks allocated before attach. */
static bool attached;
/* uslab's kernel API: the caches this image has named (kcache_meet) */
#define KCACHE_SLOTS	1024u
#define KCACHE_GONE	((uintptr_t)1)
static _Atomic uintptr_t kcache_seen[KCACHE_SLOTS];

static void spin_lock(atomic_int *l)
{
	while (atomic_exchange_explicit(l, 1, memory_order_acquire))
		while (atomic_load_explicit(l, memory_order_relaxed))
			__builtin_ia32_pause();
}

static void spin_unlock(atomic_int *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

static void *map_zero(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One load from glibc's rseq area (cpu_id), no syscall. */
static uint16_t current_cpu(void)
{
	if (likely(__rseq_size >= 8)) {
		const struct rseq *rs = (const struct rseq *)
			((char *)__builtin_thread_pointer() + __rseq_offset);
		uint32_t cpu = READ_ONCE(rs->cpu_id);

		return cpu < 0xffff ? (uint16_t)cpu : 0xffff;
	}
	return 0xffff;
}

/* ---- Raw file -------------------------------------------------------- */

static size_t put_str(char *buf, size_t pos, size_t cap, const char *s)
{
	while (*s && pos + 1 < cap)
		buf[pos++] = *s++;
	buf[pos] = 0;
	return pos;
}

static size_t put_u64(char *buf, size_t pos, size_t cap, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && pos + 1 < cap)
		buf[pos++] = tmp[--n];
	buf[pos] = 0;
	return pos;
}

static void write_full(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		c += n;
		len -= (size_t)n;
	}
}

/*
 * Side file raw.<pid>.<n>.meta: what the collector needs to name and date
 * this process image's trace. /proc/self/cmdline is copied as is (NULs).
 */
static void write_meta(const char *path, uint64_t mono)
{
	char buf[8192];
	struct timespec rt;
	size_t pos = 0;
	ssize_t n;
	int fd, cfd;

	clock_gettime(CLOCK_REALTIME, &rt);
	pos = put_str(buf, pos, sizeof(buf), "pid=");
	pos = put_u64(buf, pos, sizeof(buf), (uint64_t)getpid());
	pos = put_str(buf, pos, sizeof(buf), "\nppid=");
	pos = put_u64(buf, pos, sizeof(buf), (uint64_t)getppid());
	pos = put_str(buf, pos, sizeof(buf), "\nmono=");
	pos = put_u64(buf, pos, sizeof(buf), mono);
	pos = put_str(buf, pos, sizeof(buf), "\nreal=");
	pos = put_u64(buf, pos, sizeof(buf),
		      (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
	pos = put_str(buf, pos, sizeof(buf), "\nrseq=");
	pos = put_u64(buf, pos, sizeof(buf), __rseq_size >= 8);
	if (attached)
		pos = put_str(buf, pos, sizeof(buf), "\nattach=1");
	pos = put_str(buf, pos, sizeof(buf), "\ncomm=");
	cfd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		n = read(cfd, buf + pos, 16);
		if (n > 0)
			pos += (size_t)n;
		close(cfd);
		while (pos && (buf[pos - 1] == '\n' || buf[pos - 1] == 0))
			pos--;
	}
	pos = put_str(buf, pos, sizeof(buf), "\nexe=");
	n = pos + 2048 < sizeof(buf) ?
	    readlink("/proc/self/exe", buf + pos, 2047) : -1;
	if (n > 0)
		pos += (size_t)n;
	buf[pos] = 0;
	pos = put_str(buf, pos, sizeof(buf), "\ncmdline=");
	cfd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		n = read(cfd, buf + pos, sizeof(buf) - pos - 2);
		if (n > 0)
			pos += (size_t)n;
		close(cfd);
	}
	buf[pos++] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	write_full(fd, buf, pos);
	close(fd);
}

/* ---- The raw file's descriptor: out of the program's way ---------------
 *
 * A program may close every descriptor it did not open, or open a file on
 * a number it believes free (`exec 3>file` in a shell): the raw file's
 * descriptor must be neither closed from under the recorder nor shared with
 * the program's file. So it lives at a high number (F_DUPFD_CLOEXEC from 64
 * below the soft RLIMIT_NOFILE, at most 65536); close, close_range,
 * closefrom, dup2 and dup3 (and syscall() of those) that would close it or
 * put another file on it move it to another number first (rec_fd_evict);
 * and every block written checks that raw_fd still names the raw file
 * (dev and inode): a raw system call the wrappers did not see makes it
 * reopen the file by its path (O_APPEND: no event lost, nothing written
 * into the program's file). Left open: a thread that took raw_fd just
 * before a raw close + open by another thread may write one block into
 * the program's new file.
 */

/* The real close, never the wrapper (which would move the raw file instead). */
static int rec_close(int fd)
{
	close_fn fn = REAL(close);

	return fn ? fn(fd) : (int)REAL(syscall)(SYS_close, fd);
}

static int fd_floor(void)
{
	struct rlimit rl;
	rlim_t top = 1024;

	if (!getrlimit(RLIMIT_NOFILE, &rl))
		top = rl.rlim_cur;
	if (top > 65536)
		top = 65536;
	return top > 128 ? (int)top - 64 : (int)top / 2;
}

/* @fd moved to the lowest free number from @min up (closed where it was).
 * Return: the new number, or @fd when none is free there. */
static int fd_move(int fd, int min)
{
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, min);

	if (nfd < 0)
		return fd;
	rec_close(fd);
	return nfd;
}

static bool fd_is_raw(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_dev == raw_dev && st.st_ino == raw_ino;
}

/* raw_fd: a high number naming the raw file just opened as @fd. */
static void raw_fd_set_locked(int fd)
{
	struct stat st;

	fd = fd_move(fd, fd_floor());
	if (!fstat(fd, &st)) {
		raw_dev = st.st_dev;
		raw_ino = st.st_ino;
	}
	WRITE_ONCE(raw_fd, fd);
}

/*
 * The program is about to close (or put another file on) every number in
 * [@lo, @hi]: move the raw file's descriptor out of it. Return: the number
 * it still has inside the range (the caller leaves that one out), or -1.
 * Only the process that owns the raw file (not a vfork child, whose
 * descriptors are its own) moves it.
 */
static int rec_fd_evict(unsigned int lo, unsigned int hi)
{
	int fd, nfd, pinned = -1;

	if (atomic_load(&state) != 2 || getpid() != owner_pid)
		return -1;
	spin_lock(&open_lock);
	fd = raw_fd;
	if (fd >= 0 && (unsigned int)fd >= lo && (unsigned int)fd <= hi) {
		nfd = hi < (unsigned int)INT_MAX ? fcntl(fd, F_DUPFD_CLOEXEC, (int)hi + 1) : -1;
		if (nfd < 0)	/* nothing free above: the lowest free below */
			nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (nfd >= 0 && (unsigned int)nfd >= lo && (unsigned int)nfd <= hi) {
			rec_close(nfd);
			nfd = -1;
		}
		if (nfd >= 0) {
			rec_close(fd);
			WRITE_ONCE(raw_fd, nfd);
		} else {
			pinned = fd;
		}
	}
	spin_unlock(&open_lock);
	return pinned;
}

__visible int close(int fd)
{
	close_fn fn = REAL(close);

	/* moved: the number is closed already, the program gets EBADF as for
	 * any number it never opened; pinned (nowhere to go): it stays open
	 * and the program's close succeeds */
	if (unlikely(fd >= 0 && fd == READ_ONCE(raw_fd)) &&
	    rec_fd_evict((unsigned int)fd, (unsigned int)fd) == fd)
		return 0;
	return fn ? fn(fd) : (int)REAL(syscall)(SYS_close, fd);
}

/* close_range and closefrom: the range, less the raw file's number when it could not move. */
static int rec_close_range(unsigned int lo, unsigned int hi, int flags)
{
	close_range_fn fn = REAL(close_range);
	int pinned = -1, rc = 0;

	if (!(flags & CLOSE_RANGE_CLOEXEC) && lo <= hi)
		pinned = rec_fd_evict(lo, hi);
#define CR(a, b) (fn ? fn(a, b, flags) : (int)REAL(syscall)(SYS_close_range, a, b, flags))
	if (pinned < 0)
		return CR(lo, hi);
	if ((unsigned int)pinned > lo)
		rc = CR(lo, (unsigned int)pinned - 1);
	if (!rc && (unsigned int)pinned < hi)
		rc = CR((unsigned int)pinned + 1, hi);
#undef CR
	return rc;
}

__visible int close_range(unsigned int lo, unsigned int hi, int flags)
{
	return rec_close_range(lo, hi, flags);
}

__visible void closefrom(int lo)
{
	if (lo < 0)
		lo = 0;
	rec_close_range((unsigned int)lo, ~0u, 0);
}

__visible int dup2(int old, int new)
{
	dup2_fn fn = REAL(dup2);

	if (new >= 0 && old != new && new == READ_ONCE(raw_fd))
		rec_fd_evict((unsigned int)new, (unsigned int)new);
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(old, new);
}

__visible int dup3(int old, int new, int flags)
{
	dup3_fn fn = REAL(dup3);

	if (new >= 0 && old != new && new == READ_ONCE(raw_fd))
		rec_fd_evict((unsigned int)new, (unsigned int)new);
	return fn ? fn(old, new, flags) : (int)REAL(syscall)(SYS_dup3, old, new, flags);
}

static int open_raw_locked(void)
{
	char path[640];
	uint64_t mono = now_ns();

	for (unsigned int gen = 0; gen < 1000; gen++) {
		size_t pos = put_str(path, 0, sizeof(path), rec_dir);

		pos = put_str(path, pos, sizeof(path), "/raw.");
		pos = put_u64(path, pos, sizeof(path), (uint64_t)getpid());
		pos = put_str(path, pos, sizeof(path), ".");
		pos = put_u64(path, pos, sizeof(path), gen);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);

		if (fd >= 0) {
			raw_fd_set_locked(fd);
			put_str(raw_path, 0, sizeof(raw_path), path);
			put_str(path, pos, sizeof(path), REC_META_SUFFIX);
			write_meta(path, mono);
			return 0;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/* The raw file, found again by its path when raw_fd no longer names it. */
static void reopen_raw_locked(void)
{
	int fd;

	if (!raw_path[0])
		return;
	fd = open(raw_path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd >= 0)
		raw_fd_set_locked(fd);	/* the old number is the program's now: left alone */
	else
		WRITE_ONCE(raw_fd, -1);
}

/* Also from fatal_flush: open_lock is only tried there (the interrupted
 * thread may hold it), for a bounded while. */
static int raw_file(void)
{
	int fd = READ_ONCE(raw_fd);

	if (likely(fd >= 0) && likely(fd_is_raw(fd)))
		return fd;
	if (getpid() != owner_pid)
		return -1;
	for (unsigned int spins = 0; atomic_exchange_explicit(&open_lock, 1, memory_order_acquire);
	     spins++) {
		if (spins > (1u << 22))
			return -1;
		__builtin_ia32_pause();
	}
	if (raw_fd < 0 && !raw_path[0])
		open_raw_locked();
	else if (raw_fd < 0 || !fd_is_raw(raw_fd))
		reopen_raw_locked();
	fd = raw_fd;
	spin_unlock(&open_lock);
	return fd;
}

/* One write of header + events: O_APPEND keeps blocks whole. */
static void write_block(struct rec_block *hdr, uint32_t tid, uint64_t fill)
{
	int e = errno;

	if (!fill)
		return;
	hdr->magic = REC_BLOCK_MAGIC;
	hdr->tid = tid;	/* hdr->time: set by the caller */
	hdr->count = (uint32_t)(fill >> 32);
	hdr->bytes = (uint32_t)fill;
	/* EBADF before a byte went out: the descriptor was moved (rec_fd_evict)
	 * between raw_file() and the write; once more, on its new number */
	for (int tries = 0; tries < 2; tries++) {
		int fd = raw_file();
		ssize_t n;

		if (fd < 0)
			break;
		do
			n = write(fd, hdr, sizeof(*hdr) + hdr->bytes);
		while (n < 0 && errno == EINTR);
		if (n >= 0 && (size_t)n < sizeof(*hdr) + hdr->bytes)
			write_full(fd, (char *)hdr + n, sizeof(*hdr) + hdr->bytes - (size_t)n);
		if (n >= 0 || errno != EBADF)
			break;
	}
	errno = e;
}

static void flush_buf(struct rec_buf *b)
{
	b->hdr.time = b->first_time;
	write_block(&b->hdr, b->hdr.tid, atomic_exchange(&b->fill, 0));
}

/*
 * A full barrier on every thread of the process that is running now
 * (membarrier, registered by record_init), so that after it either an
 * owner's `emitting` store is seen here or the owner sees `exiting`.
 * Return: whether the barrier was made.
 */
static bool fence_all_threads(void)
{
	syscall_fn fn = real.syscall;

	atomic_thread_fence(memory_order_seq_cst);
	if (!fn)
		return false;
	if (membarrier_private && !fn(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		return true;
	return !fn(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}

/*
 * exit, exec: every buffer. Other threads still running append their next
 * events as blocks of their own while `exiting` stands (an exec that fails
 * gives them their buffers back); an append already under way when it was
 * set is waited for (a bounded wait: an owner that never comes back, left
 * by longjmp from a signal handler, is flushed as it stands).
 */
static void flush_all(void)
{
	bool was = READ_ONCE(exiting), fenced;

	WRITE_ONCE(exiting, true);
	fenced = fence_all_threads();
	spin_lock(&pool_lock);
	for (struct rec_buf *b = all_bufs; b; b = b->next_all) {
		if (!b->in_use)
			continue;
		for (unsigned int spins = 0; fenced && b != self.buf &&
		     atomic_load_explicit(&b->emitting, memory_order_acquire) &&
		     spins < 100000; spins++)
			sched_yield();
		flush_buf(b);
	}
	spin_unlock(&pool_lock);
	WRITE_ONCE(exiting, was);
}

/* ---- Threads --------------------------------------------------------- */

static struct rec_buf *buf_get(void)
{
	struct rec_buf *b;

	spin_lock(&pool_lock);
	b = free_bufs;
	if (b) {
		free_bufs = b->next_free;
	} else {
		b = map_zero(sizeof(*b));
		if (b) {
			b->next_all = all_bufs;
			all_bufs = b;
		}
	}
	if (b) {
		b->in_use = true;
		atomic_store(&b->fill, 0);
	}
	spin_unlock(&pool_lock);
	return b;
}

static void buf_put_locked(struct rec_buf *b)
{
	assert(atomic_load_explicit(&pool_lock, memory_order_relaxed));
	b->in_use = false;
	b->next_free = free_bufs;
	free_bufs = b;
}

/* pthread key destructor: flush; later events of this thread go out one
 * block each (write_direct), so the buffer can serve another thread. */
static void thread_exit(void *arg)
{
	struct rec_buf *b = arg;

	self.busy = true;
	flush_buf(b);
	spin_lock(&pool_lock);
	buf_put_locked(b);
	spin_unlock(&pool_lock);
	self.buf = NULL;
	if (self.stacks)
		munmap(self.stacks, self.stacks->bytes);
	self.stacks = NULL;
	self.exited = true;
	self.busy = false;
}

static __slowpath struct rec_buf *thread_start(void)
{
	struct rec_buf *b;

	if (!self.has_tid) {
		self.tid = atomic_fetch_add(&next_tid, 1);
		self.has_tid = true;
	}
	if (self.exited || exiting)
		return NULL;
	b = buf_get();
	if (!b)
		return NULL;
	b->hdr.tid = self.tid;
	self.buf = b;
	pthread_setspecific(thread_key, b);
	return b;
}

/* One event (and the stack it names, if any) as a block of its own. */
static __slowpath void write_direct(const struct rec_event *ev,
				   const struct rec_event *stack)
{
	struct {
		struct rec_block hdr;
		uint8_t data[REC_EVENT_MAX + REC_STACK_BYTES];
	} one;
	struct rec_state st = { 0 };
	size_t n = 0;

	if (stack)
		n = rec_encode(one.data, &st, stack);
	n += rec_encode(one.data + n, &st, ev);
	one.hdr.time = ev->time;
	write_block(&one.hdr, self.tid, (uint64_t)(stack ? 2 : 1) << 32 | n);
}

/*
 * Append: a clock read (vDSO), one load from the rseq area, about 10 bytes
 * of varints into the thread's block; one write(2) per 32 KiB (about 3000
 * events). No lock, no atomic read-modify-write.
 */
static __always_inline void emit_stack(uint8_t op, uint64_t t, const void *addr,
				       const void *old, uint64_t size, uint64_t align,
				       uint32_t sid, const struct rec_event *def)
{
	struct rec_buf *b = self.buf;
	struct rec_event e = {
		.time = t, .size = size, .addr = (uintptr_t)addr,
		.old_addr = (uintptr_t)old, .align = (uint32_t)align,
		.cpu = current_cpu(), .op = op, .stack = sid,
	};
	uint64_t fill;
	size_t n;

	if (unlikely(!b)) {
		b = thread_start();
		if (!b) {
			write_direct(&e, def);
			return;
		}
	}
	/* the store before the load: flush_all's membarrier orders them */
	atomic_store_explicit(&b->emitting, 1, memory_order_relaxed);
	barrier();
	if (unlikely(READ_ONCE(exiting))) {
		atomic_store_explicit(&b->emitting, 0, memory_order_release);
		write_direct(&e, def);
		return;
	}
	fill = atomic_load_explicit(&b->fill, memory_order_relaxed);
	if (unlikely(def)) {
		/* the definition and its event in the same block */
		if ((uint32_t)fill + REC_STACK_BYTES + REC_EVENT_MAX > REC_BLOCK_BYTES) {
			flush_buf(b);
			fill = 0;
		}
		if (!fill) {
			b->st = (struct rec_state){ 0 };
			b->first_time = t;
		}
		n = rec_encode(b->data + (uint32_t)fill, &b->st, def);
		fill += ((uint64_t)1 << 32) + n;
	}
	if (!fill) {
		b->st = (struct rec_state){ 0 };
		b->first_time = t;
	}
	n = rec_encode(b->data + (uint32_t)fill, &b->st, &e);
	fill += ((uint64_t)1 << 32) + n;
	atomic_store_explicit(&b->fill, fill, memory_order_release);
	if (unlikely((uint32_t)fill + REC_EVENT_MAX > REC_BLOCK_BYTES ||
		     READ_ONCE(exiting)))
		flush_buf(b);
	atomic_store_explicit(&b->emitting, 0, memory_order_release);
}

static __always_inline void emit(uint8_t op, uint64_t t, const void *addr,
				 const void *old, uint64_t size, uint64_t align)
{
	emit_stack(op, t, addr, old, size, align, 0, NULL);
}

/* ---- Call stacks (record -g) ------------------------------------------- */

static bool want_stacks;
static uint32_t stack_depth = REC_STACK_DEPTH;	/* record -g --max-stack */
static uintptr_t self_lo, self_hi;	/* this library's text: frames skipped */

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t base = (uintptr_t)arg;

	if (info->dlpi_addr != base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			self_lo = base + ph->p_vaddr;
			self_hi = self_lo + ph->p_memsz;
		}
	}
	return 1;
}

/* Four independent lanes (scalars, so they stay in registers): a multiply
 * chain per frame is 5 cycles of latency, and this runs for every
 * allocation under -g. */
#define MIX(l, x)	do { (l) = ((l) ^ (x)) * 0xbf58476d1ce4e5b9ull; (l) ^= (l) >> 31; } while (0)

static uint64_t hash_frames(const uint64_t *f, uint32_t n)
{
	uint64_t a = 0x9e3779b97f4a7c15ull ^ n, b = 0xc2b2ae3d27d4eb4full;
	uint64_t c = 0x165667b19e3779f9ull, d = 0x27d4eb2f165667c5ull, h;
	uint32_t i = 0;

	for (; i + 4 <= n; i += 4) {
		MIX(a, f[i]);
		MIX(b, f[i + 1]);
		MIX(c, f[i + 2]);
		MIX(d, f[i + 3]);
	}
	for (; i < n; i++)
		MIX(a, f[i]);
	h = a ^ (b << 16 | b >> 48) ^ (c << 32 | c >> 32) ^ (d << 48 | d >> 16);
	MIX(h, 0);
	return h ? h : 1;
}
#undef MIX

static struct stack_table *table_new(uint32_t slots)
{
	size_t bytes = sizeof(struct stack_table) + (size_t)slots * (sizeof(uint64_t) + sizeof(uint32_t));
	struct stack_table *t = map_zero(bytes);

	if (!t)
		return NULL;
	t->slots = slots;
	t->bytes = bytes;
	t->hash = (uint64_t *)(t + 1);
	t->id = (uint32_t *)(t->hash + slots);
	return t;
}

static void table_put(struct stack_table *t, uint64_t h, uint32_t id)
{
	uint32_t slot;

	for (slot = (uint32_t)h & (t->slots - 1); t->hash[slot]; slot = (slot + 1) & (t->slots - 1))
		;
	t->hash[slot] = h;
	t->id[slot] = id;
	t->used++;
}

/* Twice the slots, or NULL (then the old table stays, full). */
static struct stack_table *table_grow(struct stack_table *old)
{
	struct stack_table *t;

	if (old->slots >= STACK_SLOTS_MAX)
		return NULL;
	t = table_new(old->slots * 2);
	if (!t)
		return NULL;
	for (uint32_t i = 0; i < old->slots; i++)
		if (old->hash[i])
			table_put(t, old->hash[i], old->id[i]);
	munmap(old, old->bytes);
	return t;
}

/*
 * The caller's call stack (frames inside this library skipped), unwound
 * with libunwind's unw_backtrace (the unwind tables, as heaptrack does), as
 * the thread's local id; @def is filled in when the thread had not seen it.
 * Cost: the unwind (about 1 us for 20 frames, cached), a hash, one probe.
 */
static __slowpath uint32_t capture_stack(struct rec_event *def, uint64_t *frames)
{
	void *raw[REC_STACK_MAX + 8];
	struct stack_table *tab = self.stacks;
	/* one frame past the depth (and this library's own, at most 8) tells
	 * a cut stack from one of exactly the depth */
	int n = unw_backtrace(raw, (int)stack_depth + 9), skip = 0;
	uint32_t nf, slot;
	uint64_t h;

	while (skip < n && (uintptr_t)raw[skip] >= self_lo && (uintptr_t)raw[skip] < self_hi)
		skip++;
	nf = (uint32_t)min_t(int, n - skip, (int)stack_depth);
	for (uint32_t i = 0; i < nf; i++)
		frames[i] = (uintptr_t)raw[skip + i];
	if (n - skip > (int)stack_depth)	/* cut: marked (docs/trace-format.md) */
		frames[nf++] = TRACE_FRAME_CUT;
	def->op = 0;
	if (!tab && !self.exited)
		tab = self.stacks = table_new(STACK_SLOTS_MIN);
	if (!tab) {		/* after thread_exit: define it again */
		*def = (struct rec_event){ .op = REC_OP_STACK, .stack = ++self.last_stack_id,
					   .nframes = nf, .frames = frames };
		return def->stack;
	}
	h = hash_frames(frames, nf);
	for (slot = (uint32_t)h & (tab->slots - 1); tab->hash[slot];
	     slot = (slot + 1) & (tab->slots - 1))
		if (tab->hash[slot] == h)
			return tab->id[slot];
	*def = (struct rec_event){
		.op = REC_OP_STACK, .stack = ++self.last_stack_id, .nframes = nf, .frames = frames,
	};
	if (tab->used + 1 > tab->slots / 4 * 3) {
		struct stack_table *t = table_grow(tab);

		if (!t)
			return def->stack;	/* full: not deduplicated */
		tab = self.stacks = t;
	}
	table_put(tab, h, def->stack);
	return def->stack;
}

/* raw.<pid>.<n>.maps: the executable mappings with a file, at start, exec
 * and exit (the union covers what was dlopen'd later), for report time. */

static void dump_maps(void)
{
	char buf[8192], out[8192], path[660];
	size_t have = 0, o = 0;
	int in, fd;
	ssize_t n;

	if (!want_stacks || !raw_path[0])
		return;
	put_str(path, put_str(path, 0, sizeof(path), raw_path), sizeof(path), REC_MAPS_SUFFIX);
	in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		close(in);
		return;
	}
	while ((n = read(in, buf + have, sizeof(buf) - have - 1)) > 0 || have) {
		char *line = buf, *nl;

		have += n > 0 ? (size_t)n : 0;
		buf[have] = 0;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			char *sp1, *path_start;

			*nl = 0;
			/* "start-end perms offset dev inode path": keep r-x with a path */
			sp1 = strchr(line, ' ');
			path_start = strchr(line, '/');
			if (sp1 && sp1[3] == 'x' && path_start &&
			    o + (size_t)(nl - line) + 2 < sizeof(out)) {
				memcpy(out + o, line, (size_t)(nl - line));
				o += (size_t)(nl - line);
				out[o++] = '\n';
			}
			if (o > sizeof(out) / 2) {
				write_full(fd, out, o);
				o = 0;
			}
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (n <= 0 || have >= sizeof(buf) - 1)
			break;
	}
	write_full(fd, out, o);
	close(fd);
	close(in);
}

/* ---- Set-up, fork, exit ------------------------------------------------ */

static void atfork_prepare(void)
{
	self.busy = true;
	if (self.buf)
		flush_buf(self.buf);
	spin_lock(&pool_lock);
	spin_lock(&open_lock);
}

static void atfork_parent(void)
{
	spin_unlock(&open_lock);
	spin_unlock(&pool_lock);
	self.busy = false;
}

/* The child is a new process with one thread: a raw file of its own, and
 * the other threads' buffers (their events belong to the parent) dropped. */
static void atfork_child(void)
{
	if (raw_fd >= 0)
		rec_close(raw_fd);
	raw_fd = -1;
	raw_path[0] = 0;
	owner_pid = getpid();
	if (self.stacks) {	/* its ids were the parent's file's */
		memset(self.stacks->hash, 0, self.stacks->slots * sizeof(uint64_t));
		self.stacks->used = 0;
	}
	self.last_stack_id = 0;
	/* the child's raw file names its caches again */
	for (unsigned int i = 0; i < KCACHE_SLOTS; i++)
		atomic_store_explicit(&kcache_seen[i], 0, memory_order_relaxed);
	/* Opened now, so a child that never allocates is still in the
	 * process table. */
	open_raw_locked();
	for (struct rec_buf *b = all_bufs; b; b = b->next_all) {
		if (b == self.buf || !b->in_use)
			continue;
		atomic_store(&b->fill, 0);
		buf_put_locked(b);
	}
	if (self.buf)
		atomic_store(&self.buf->fill, 0);
	atfork_parent();
}

/* ---- Fatal signals ------------------------------------------------------ */

static const int fatal_sigs[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGABRT, SIGFPE, SIGSEGV, SIGBUS,
	SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGSYS,
};

/*
 * The process dies of @sig: write what every thread has buffered, then
 * die of it with the default action (status, core dump). Async-signal-safe:
 * atomics, write(2) and, for -g, open/read of /proc/self/maps. The list of
 * buffers is walked without pool_lock (the interrupted thread may hold
 * it): buffers are never unmapped and are pushed with next_all set first;
 * a buffer another thread is filling yields the events committed to fill.
 */
/* Ends as trace/outfile.c's out_fatal, not shared: this library links nothing of uslab. */
static void fatal_flush(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	int e = errno;
	sigset_t set;

	if (atomic_load(&state) == 2 && getpid() == owner_pid && READ_ONCE(raw_fd) >= 0) {
		WRITE_ONCE(exiting, true);
		for (struct rec_buf *b = READ_ONCE(all_bufs); b; b = READ_ONCE(b->next_all))
			if (READ_ONCE(b->in_use))
				flush_buf(b);
		dump_maps();
	}
	sigemptyset(&dfl.sa_mask);
	real.sigaction(sig, &dfl, NULL);	/* not our wrapper: it would put us back */
	sigemptyset(&set);
	sigaddset(&set, sig);
	raise(sig);	/* a fault re-faults at the return, at SIG_DFL */
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	errno = e;
}

/* At start (and in each exec'd image: exec resets handlers): ours for the
 * fatal signals still at SIG_DFL; ignored or handled ones are left alone. */
static void catch_fatal(void)
{
	struct sigaction sa = { .sa_handler = fatal_flush,
				.sa_flags = SA_ONSTACK | SA_RESTART }, old;

	if (!real.sigaction || !real.signal)
		return;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(fatal_sigs); i++) {
		if (real.sigaction(fatal_sigs[i], NULL, &old) || old.sa_handler != SIG_DFL)
			continue;
		real.sigaction(fatal_sigs[i], &sa, NULL);
	}
}

static bool is_fatal_sig(int sig)
{
	for (size_t i = 0; i < ARRAY_SIZE(fatal_sigs); i++)
		if (fatal_sigs[i] == sig)
			return true;
	return false;
}

/* Where the program asks for SIG_DFL on a fatal signal, fatal_flush
 * stands in (same end, buffers written first): a handler that cleans up,
 * resets SIG_DFL and re-raises keeps its events too. */
static bool stand_in(int sig, sighandler_fn h)
{
	return h == SIG_DFL && is_fatal_sig(sig) && atomic_load(&state) == 2 &&
	       real.sigaction && real.signal;
}

/* What the program reads back: SIG_DFL where fatal_flush stands. */
static void hide_ours(struct sigaction *old)
{
	if (old->sa_handler == fatal_flush) {
		old->sa_handler = SIG_DFL;
		old->sa_flags = 0;
		sigemptyset(&old->sa_mask);
	}
}

__visible int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	struct sigaction mine;
	int rc;

	if (unlikely(!real.sigaction)) {
		/* before record_init (another constructor): resolve only */
		real.sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
		if (!real.sigaction) {
			errno = ENOSYS;
			return -1;
		}
	}
	if (act && stand_in(sig, act->sa_handler)) {
		mine = (struct sigaction){ .sa_handler = fatal_flush,
					   .sa_flags = SA_ONSTACK | SA_RESTART };
		sigemptyset(&mine.sa_mask);
		act = &mine;
	}
	rc = real.sigaction(sig, act, oact);
	if (!rc && oact)
		hide_ours(oact);
	return rc;
}

__visible sighandler_fn signal(int sig, sighandler_fn h)
{
	sighandler_fn old;

	if (unlikely(!real.signal)) {
		real.signal = (signal_fn)dlsym(RTLD_NEXT, "signal");
		if (!real.signal) {
			errno = ENOSYS;
			return SIG_ERR;
		}
	}
	old = real.signal(sig, stand_in(sig, h) ? fatal_flush : h);
	return old == fatal_flush ? SIG_DFL : old;
}

/* The other names of signal(): the same stand-in, each its own libc entry. */
static sighandler_fn signal_as(signal_fn fn, int sig, sighandler_fn h)
{
	sighandler_fn old;

	if (!fn) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	old = fn(sig, stand_in(sig, h) ? fatal_flush : h);
	return old == fatal_flush ? SIG_DFL : old;
}

/* declared by <signal.h> only for old X/Open levels */
sighandler_fn bsd_signal(int sig, sighandler_fn h);

__visible sighandler_fn bsd_signal(int sig, sighandler_fn h)
{
	return signal_as(REAL(bsd_signal), sig, h);
}

__visible sighandler_fn sysv_signal(int sig, sighandler_fn h)
{
	return signal_as(REAL(sysv_signal), sig, h);
}

__visible sighandler_fn sigset(int sig, sighandler_fn h)
{
	return signal_as(REAL(sigset), sig, h);
}

/* Everything buffered, and the maps: at exit, quick_exit, _exit, a raw exit. */
static void flush_at_end(void)
{
	if (atomic_load(&state) != 2 || getpid() != owner_pid)
		return;
	WRITE_ONCE(exiting, true);
	flush_all();
	dump_maps();
}

/* Registered first, so it runs after the program's at_quick_exit handlers. */
static void record_quick_exit(void)
{
	flush_at_end();
}

static __attribute__((destructor)) void record_fini(void)
{
	flush_at_end();
}

static void *boot_alloc(size_t size, size_t align)
{
	size_t old, start;

	if (align < 16)
		align = 16;
	do {
		old = atomic_load(&boot_used);
		start = ALIGN_UP(old, align);
		if (start + size > sizeof(boot_heap))
			return NULL;
	} while (!atomic_compare_exchange_weak(&boot_used, &old, start + size));
	return boot_heap + start;
}

static bool is_boot(const void *p)
{
	return (const char *)p >= boot_heap &&
	       (const char *)p < boot_heap + sizeof(boot_heap);
}

static void *sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void note_own_malloc(void);

static __slowpath void record_init(void)
{
	int expect = 0;
	const char *dir;

	if (!atomic_compare_exchange_strong(&state, &expect, 1)) {
		/* Another thread is resolving: wait (rare; before main). */
		while (atomic_load(&state) == 1)
			__builtin_ia32_pause();
		return;
	}
	real.malloc = (malloc_fn)sym("malloc");
	real.free = (free_fn)sym("free");
	real.calloc = (calloc_fn)sym("calloc");
	real.realloc = (realloc_fn)sym("realloc");
	real.memalign = (memalign_fn)sym("memalign");
	real.posix_memalign = (posix_memalign_fn)sym("posix_memalign");
	real.aligned_alloc = (memalign_fn)sym("aligned_alloc");
	real.valloc = (malloc_fn)sym("valloc");
	real.pvalloc = (malloc_fn)sym("pvalloc");
	real.execve = (exec_fn)sym("execve");
	real.execvpe = (exec_fn)sym("execvpe");
	real.posix_spawn = (spawn_fn)sym("posix_spawn");
	real.posix_spawnp = (spawn_fn)sym("posix_spawnp");
	real.sigaction = (sigaction_fn)sym("sigaction");
	real.signal = (signal_fn)sym("signal");
	real.bsd_signal = (signal_fn)sym("bsd_signal");
	real.sysv_signal = (signal_fn)sym("sysv_signal");
	real.sigset = (signal_fn)sym("sigset");
	real.close = (close_fn)sym("close");
	real.close_range = (close_range_fn)sym("close_range");
	real.closefrom = (closefrom_fn)sym("closefrom");
	real.dup2 = (dup2_fn)sym("dup2");
	real.dup3 = (dup3_fn)sym("dup3");
	real.fexecve = (fexecve_fn)sym("fexecve");
	real.execveat = (execveat_fn)sym("execveat");
	real.syscall = (syscall_fn)sym("syscall");
	real._exit = (exit_fn)sym("_exit");
	real._Exit = (exit_fn)sym("_Exit");
	dir = getenv(REC_ENV_DIR);
	if (!real.malloc || !real.free || !real.calloc || !real.realloc ||
	    !dir || !*dir || strlen(dir) >= sizeof(rec_dir)) {
		atomic_store(&state, real.malloc ? 3 : 0);
		return;
	}
	strcpy(rec_dir, dir);
	owner_pid = getpid();
	if (getenv(REC_ENV_STACKS)) {
		unsigned long d = strtoul(getenv(REC_ENV_STACKS), NULL, 10);
		Dl_info di;

		want_stacks = true;
		if (d >= 1 && d < REC_STACK_MAX)
			stack_depth = (uint32_t)d;
		if (dladdr((void *)record_init, &di))
			dl_iterate_phdr(find_self, di.dli_fbase);
		/* each thread its own unwind cache: no lock on the way (as
		 * heaptrack sets it) */
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	}
	pthread_key_create(&thread_key, thread_exit);
	/* flush_all's barrier: the cheap one when the kernel has it */
	if (real.syscall)
		membarrier_private = !real.syscall(SYS_membarrier,
					MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	at_quick_exit(record_quick_exit);
	/* Every image gets its raw file (and so its table entry) at start,
	 * even one that never allocates. */
	spin_lock(&open_lock);
	if (raw_fd < 0)
		open_raw_locked();
	spin_unlock(&open_lock);
	atomic_store(&state, 2);
	catch_fatal();
	dump_maps();
	note_own_malloc();
}

static __attribute__((constructor)) void record_ctor(void)
{
	if (!atomic_load(&state))
		record_init();
}

/*
 * Wrapper entry: 1 when this call is recorded (busy set), 0 when it passes
 * straight through (nested, not set up, disabled).
 */
static __always_inline int enter(void)
{
	if (unlikely(atomic_load_explicit(&state, memory_order_relaxed) != 2)) {
		if (atomic_load(&state) == 0)
			record_init();
		if (atomic_load(&state) != 2)
			return 0;
	}
	if (unlikely(self.busy))
		return 0;
	self.busy = true;
	return 1;
}

static __always_inline void leave(void)
{
	self.busy = false;
}

/* ---- The malloc family ------------------------------------------------- */

/* Stamped after the allocation exists (see the top of the file). */
static void record_alloc(uint8_t op, void *p, size_t size, size_t align)
{
	if (unlikely(want_stacks)) {
		uint64_t frames[REC_STACK_MAX];
		struct rec_event def;
		uint32_t sid = capture_stack(&def, frames);

		emit_stack(op, now_ns(), p, NULL, size, align, sid, def.op ? &def : NULL);
		return;
	}
	emit(op, now_ns(), p, NULL, size, align);
}

__visible void *malloc(size_t size)
{
	void *p;

	if (unlikely(atomic_load_explicit(&state, memory_order_relaxed) == 1))
		return boot_alloc(size, 16);
	if (!enter())
		return real.malloc ? real.malloc(size) : boot_alloc(size, 16);
	p = real.malloc(size);
	record_alloc(TRACE_OP_MALLOC, p, size, 0);
	leave();
	return p;
}

__visible void free(void *p)
{
	if (unlikely(is_boot(p)))
		return;
	if (!enter()) {
		if (real.free)
			real.free(p);
		return;
	}
	/* Stamped before the memory can be handed out again. */
	if (unlikely(attached))
		emit(REC_OP_FREE_USABLE, now_ns(), p, NULL,
		     p && real.usable ? real.usable(p) : 0, 0);
	else
		emit(TRACE_OP_FREE, now_ns(), p, NULL, 0, 0);
	real.free(p);
	leave();
}

__visible void *calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (unlikely(atomic_load_explicit(&state, memory_order_relaxed) == 1)) {
		if (__builtin_mul_overflow(n, size, &total))
			return NULL;
		return boot_alloc(total, 16);	/* static: already zero */
	}
	if (!enter()) {
		if (real.calloc)
			return real.calloc(n, size);
		if (__builtin_mul_overflow(n, size, &total))
			return NULL;
		return boot_alloc(total, 16);
	}
	p = real.calloc(n, size);
	if (__builtin_mul_overflow(n, size, &total))
		total = SIZE_MAX;
	record_alloc(TRACE_OP_CALLOC, p, total, 0);
	leave();
	return p;
}

static void *realloc_boot(void *old, size_t size)
{
	size_t avail = (size_t)(boot_heap + sizeof(boot_heap) - (char *)old);
	void *p = real.malloc ? real.malloc(size) : boot_alloc(size, 16);

	if (p)
		memcpy(p, old, size < avail ? size : avail);
	return p;
}

__visible void *realloc(void *old, size_t size)
{
	void *p;

	if (unlikely(is_boot(old)))
		return realloc_boot(old, size);
	if (!enter()) {
		if (real.realloc)
			return real.realloc(old, size);
		return old ? NULL : boot_alloc(size, 16);
	}
	/* Two stamps: @old may be reused as soon as the call frees it, and the
	 * result may be memory another thread freed during the call. */
	if (old)
		emit(REC_OP_REALLOC_OLD, now_ns(), old, NULL,
		     unlikely(attached) && real.usable ? real.usable(old) : 0, 0);
	p = real.realloc(old, size);
	if (unlikely(want_stacks)) {
		uint64_t frames[REC_STACK_MAX];
		struct rec_event def;
		uint32_t sid = capture_stack(&def, frames);

		emit_stack(TRACE_OP_REALLOC, now_ns(), p, old, size, 0, sid,
			   def.op ? &def : NULL);
	} else {
		emit(TRACE_OP_REALLOC, now_ns(), p, old, size, 0);
	}
	leave();
	return p;
}

__visible void *reallocarray(void *old, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(old, total);
}

static void *aligned_common(uint8_t op, memalign_fn fn, size_t align,
			    size_t size)
{
	void *p;

	if (unlikely(atomic_load_explicit(&state, memory_order_relaxed) == 1))
		return boot_alloc(size, align);
	if (!enter())
		return fn ? fn(align, size) : boot_alloc(size, align);
	p = fn(align, size);
	record_alloc(op, p, size, align);
	leave();
	return p;
}

__visible void *memalign(size_t align, size_t size)
{
	if (!real.memalign && atomic_load(&state) == 0)
		record_init();
	return aligned_common(TRACE_OP_MEMALIGN, real.memalign, align, size);
}

__visible void *aligned_alloc(size_t align, size_t size)
{
	if (!real.aligned_alloc && atomic_load(&state) == 0)
		record_init();
	return aligned_common(TRACE_OP_ALIGNED_ALLOC, real.aligned_alloc,
			      align, size);
}

__visible int posix_memalign(void **res, size_t align, size_t size)
{
	int rc;

	if (unlikely(atomic_load_explicit(&state, memory_order_relaxed) == 1)) {
		*res = boot_alloc(size, align);
		return *res ? 0 : ENOMEM;
	}
	if (!enter()) {
		if (real.posix_memalign)
			return real.posix_memalign(res, align, size);
		*res = boot_alloc(size, align);
		return *res ? 0 : ENOMEM;
	}
	rc = real.posix_memalign(res, align, size);
	record_alloc(TRACE_OP_POSIX_MEMALIGN, rc ? NULL : *res, size, align);
	leave();
	return rc;
}

/* valloc and pvalloc (@fn: the slot of libc's in `real`, read after
 * enter(), which may fill it): page-aligned, recorded as such. */
static void *page_aligned(malloc_fn *fn, uint8_t op, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	if (!enter())
		return *fn ? (*fn)(size) : boot_alloc(size, page);
	p = (*fn)(size);
	record_alloc(op, p, size, page);
	leave();
	return p;
}

__visible void *valloc(size_t size)
{
	return page_aligned(&real.valloc, TRACE_OP_VALLOC, size);
}

__visible void *pvalloc(size_t size)
{
	return page_aligned(&real.pvalloc, TRACE_OP_PVALLOC, size);
}

/* ---- uslab's kernel API (a program linked to libuslab.so) -------------
 *
 * A program of the kernel API (uslab-kv) calls kmalloc, kmem_cache_alloc,
 * kfree... of libuslab.so, never malloc. Under preload these wrappers come
 * before libuslab.so's definitions (RTLD_NEXT finds them; a program without
 * libuslab.so never calls them); under `record -p` the same GOT patching as
 * for malloc points the program's slots at them. Events: kmalloc, kzalloc,
 * kcalloc, kmalloc_array -> kmalloc (size asked); krealloc -> realloc;
 * kfree, kfree_sensitive, kvfree_rcu_mightsleep -> kfree; __kfree_rcu
 * (kfree_rcu()) -> kfree at the call, when the program gives the object
 * up (the reclaim after the grace period is the library's own kfree);
 * kmem_cache_alloc/zalloc (and _bulk, one event per object) ->
 * kmem_cache_alloc of the cache's object size, naming the cache (format
 * 1.2); kmem_cache_free(_bulk) -> kmem_cache_free.
 *
 * The library's own calls are not recorded: a call made inside a wrapper
 * (malloc of libuslab.so on top of kmalloc) passes through (self.busy),
 * and so does a call whose return address lies in libuslab.so (its RCU
 * worker's kfree after a grace period, its malloc calling kmalloc through
 * its own PLT).
 */
struct kmem_cache;
typedef unsigned int rec_gfp_t;

/* libuslab.so's declarations (include/uslab/slab.h), repeated: this
 * library links nothing of uslab */
void *kmalloc(size_t size, rec_gfp_t flags);
void *kzalloc(size_t size, rec_gfp_t flags);
void *kmalloc_array(size_t n, size_t size, rec_gfp_t flags);
void *kcalloc(size_t n, size_t size, rec_gfp_t flags);
void *krealloc(const void *p, size_t new_size, rec_gfp_t flags);
void kfree(const void *p);
void kfree_sensitive(const void *p);
void kvfree_rcu_mightsleep(const void *p);
void __kfree_rcu(void *head, size_t offset);
void *kmem_cache_alloc(struct kmem_cache *s, rec_gfp_t flags);
void *kmem_cache_zalloc(struct kmem_cache *s, rec_gfp_t flags);
void kmem_cache_free(struct kmem_cache *s, void *obj);
int kmem_cache_alloc_bulk(struct kmem_cache *s, rec_gfp_t flags, size_t nr, void **p);
void kmem_cache_free_bulk(struct kmem_cache *s, size_t nr, void **p);
void kmem_cache_destroy(struct kmem_cache *s);

static struct {
	void *(*kmalloc)(size_t, rec_gfp_t);
	void *(*kzalloc)(size_t, rec_gfp_t);
	void *(*kmalloc_array)(size_t, size_t, rec_gfp_t);
	void *(*kcalloc)(size_t, size_t, rec_gfp_t);
	void *(*krealloc)(const void *, size_t, rec_gfp_t);
	void (*kfree)(const void *);
	void (*kfree_sensitive)(const void *);
	void (*kvfree_rcu_mightsleep)(const void *);
	void (*__kfree_rcu)(void *, size_t);
	size_t (*ksize)(const void *);
	void *(*kmem_cache_alloc)(struct kmem_cache *, rec_gfp_t);
	void *(*kmem_cache_zalloc)(struct kmem_cache *, rec_gfp_t);
	void (*kmem_cache_free)(struct kmem_cache *, void *);
	int (*kmem_cache_alloc_bulk)(struct kmem_cache *, rec_gfp_t, size_t, void **);
	void (*kmem_cache_free_bulk)(struct kmem_cache *, size_t, void **);
	void (*kmem_cache_destroy)(struct kmem_cache *);
	unsigned int (*kmem_cache_size)(struct kmem_cache *);
	const char *(*kmem_cache_name)(const struct kmem_cache *);
	uintptr_t lo, hi;	/* libuslab.so's text: its own calls */
	atomic_int ready;	/* 0 not resolved, 1 resolving, 2 resolved */
} kreal;

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t base = (uintptr_t)arg;

	(void)size;
	if (info->dlpi_addr != base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!kreal.lo || base + ph->p_vaddr < kreal.lo)
			kreal.lo = base + ph->p_vaddr;
		if (base + ph->p_vaddr + ph->p_memsz > kreal.hi)
			kreal.hi = base + ph->p_vaddr + ph->p_memsz;
	}
	return 1;
}

static void *real_sym(const char *name);

/* libuslab.so's functions: the next definition under preload, the
 * process's own under record -p. Before it is resolved (or without
 * libuslab.so) a wrapper only passes through. */
static void kreal_resolve(void)
{
	int expect = 0;
	Dl_info di;

	if (!atomic_compare_exchange_strong(&kreal.ready, &expect, 1)) {
		while (atomic_load(&kreal.ready) == 1)
			__builtin_ia32_pause();
		return;
	}
#define KSYM(n) (kreal.n = (__typeof__(kreal.n))(attached ? real_sym(#n) : dlsym(RTLD_NEXT, #n)))
	KSYM(kmalloc); KSYM(kzalloc); KSYM(kmalloc_array); KSYM(kcalloc);
	KSYM(krealloc); KSYM(kfree); KSYM(kfree_sensitive); KSYM(kvfree_rcu_mightsleep);
	KSYM(__kfree_rcu); KSYM(ksize); KSYM(kmem_cache_alloc); KSYM(kmem_cache_zalloc);
	KSYM(kmem_cache_free); KSYM(kmem_cache_alloc_bulk); KSYM(kmem_cache_free_bulk);
	KSYM(kmem_cache_destroy); KSYM(kmem_cache_size); KSYM(kmem_cache_name);
#undef KSYM
	if (kreal.kfree && dladdr((void *)kreal.kfree, &di))
		dl_iterate_phdr(find_text, di.dli_fbase);
	atomic_store(&kreal.ready, 2);
}

#define KREAL(name) ({								\
	if (unlikely(atomic_load_explicit(&kreal.ready, memory_order_acquire) != 2))	\
		kreal_resolve();							\
	kreal.name;								\
})

/* Recorded: set up, not nested, not the library calling itself. */
static __always_inline int kenter(const void *ret)
{
	if ((uintptr_t)ret >= kreal.lo && (uintptr_t)ret < kreal.hi)
		return 0;
	return enter();
}

/*
 * The caches named so far in this image's side file (REC_CACHES_SUFFIX), by
 * address: open addressing, lock-free lookups, a slot claimed by CAS; a
 * destroyed cache's slot is emptied to a tombstone so a new cache at its
 * address is named again. Full: caches past it stay unnamed.
 */

static unsigned int kcache_hash(uintptr_t a)
{
	return (unsigned int)((a >> 4) * 0x9e3779b97f4a7c15ull >> 54) & (KCACHE_SLOTS - 1);
}

static __slowpath void kcache_name(struct kmem_cache *s, unsigned int size)
{
	const char *name = kreal.kmem_cache_name ? kreal.kmem_cache_name(s) : NULL;
	char path[sizeof(raw_path) + 16], line[512];
	size_t pos = 0, n;
	int fd;

	if (!name || !*name || !strncmp(name, "kmalloc-", 8) || !raw_path[0])
		return;
	pos = put_u64(line, pos, sizeof(line), now_ns());
	pos = put_str(line, pos, sizeof(line), " ");
	pos = put_u64(line, pos, sizeof(line), (uintptr_t)s);
	pos = put_str(line, pos, sizeof(line), " ");
	pos = put_u64(line, pos, sizeof(line), size);
	pos = put_str(line, pos, sizeof(line), " ");
	n = strnlen(name, 255);
	for (size_t i = 0; i < n && pos < sizeof(line) - 1; i++)
		line[pos++] = name[i] == '\n' ? '?' : name[i];
	line[pos++] = '\n';
	put_str(path, put_str(path, 0, sizeof(path), raw_path), sizeof(path), REC_CACHES_SUFFIX);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	write_full(fd, line, pos);
	rec_close(fd);
}

/* Name @s in the side file the first time this image meets it. */
static __always_inline void kcache_meet(struct kmem_cache *s, unsigned int size)
{
	uintptr_t a = (uintptr_t)s;
	unsigned int h = kcache_hash(a);

	for (unsigned int i = 0; i < 64; i++, h = (h + 1) & (KCACHE_SLOTS - 1)) {
		uintptr_t v = atomic_load_explicit(&kcache_seen[h], memory_order_relaxed);

		if (likely(v == a))
			return;
		if (v == 0 || v == KCACHE_GONE) {
			if (atomic_compare_exchange_strong(&kcache_seen[h], &v, a)) {
				kcache_name(s, size);
				return;
			}
			if (v == a)
				return;
		}
	}
}

static void kcache_forget(struct kmem_cache *s)
{
	unsigned int h = kcache_hash((uintptr_t)s);

	for (unsigned int i = 0; i < 64; i++, h = (h + 1) & (KCACHE_SLOTS - 1)) {
		uintptr_t v = atomic_load(&kcache_seen[h]);

		if (v == (uintptr_t)s) {
			atomic_store(&kcache_seen[h], KCACHE_GONE);
			return;
		}
		if (!v)
			return;
	}
}

/* An allocation, stamped after it exists (as record_alloc); @cache: the
 * kmem_cache of a kmem_cache_alloc, in old_addr. */
static void krecord_alloc(uint8_t op, void *p, size_t size, const void *cache)
{
	if (unlikely(want_stacks)) {
		uint64_t frames[REC_STACK_MAX];
		struct rec_event def;
		uint32_t sid = capture_stack(&def, frames);

		emit_stack(op, now_ns(), p, cache, size, 0, sid, def.op ? &def : NULL);
		return;
	}
	emit(op, now_ns(), p, cache, size, 0);
}

/* A kfree, stamped before the memory can be handed out again. */
static void krecord_kfree(const void *p)
{
	if (unlikely(attached))
		emit(REC_OP_KFREE_USABLE, now_ns(), p, NULL,
		     p && kreal.ksize ? kreal.ksize(p) : 0, 0);
	else
		emit(TRACE_OP_KFREE, now_ns(), p, NULL, 0, 0);
}

static void krecord_cache_free(struct kmem_cache *s, const void *p)
{
	if (unlikely(attached)) {
		/* a cache whose objects all predate the attach: named here */
		unsigned int size = kreal.kmem_cache_size ? kreal.kmem_cache_size(s) : 0;

		kcache_meet(s, size);
		emit(REC_OP_CFREE_USABLE, now_ns(), p, s, size, 0);
	} else
		emit(TRACE_OP_CACHE_FREE, now_ns(), p, NULL, 0, 0);
}

/* kmalloc(0)'s ZERO_SIZE_PTR (16) and its kfree hold no memory: not
 * recorded (NULL, a failure, is) */
#define K_ZERO(p)	((uintptr_t)(p) - 1 < 16)

static void *kalloc_common(void *p, size_t size)
{
	if (!K_ZERO(p))
		krecord_alloc(TRACE_OP_KMALLOC, p, size, NULL);
	leave();
	return p;
}

/* kmalloc and kzalloc through the real @fn, called from @ret (as karray()). */
static void *kalloc(void *(*fn)(size_t, rec_gfp_t), size_t size, rec_gfp_t flags,
		    const void *ret)
{
	if (!fn)
		return NULL;
	if (!kenter(ret))
		return fn(size, flags);
	return kalloc_common(fn(size, flags), size);
}

__visible void *kmalloc(size_t size, rec_gfp_t flags)
{
	return kalloc(KREAL(kmalloc), size, flags, __builtin_return_address(0));
}

__visible void *kzalloc(size_t size, rec_gfp_t flags)
{
	return kalloc(KREAL(kzalloc), size, flags, __builtin_return_address(0));
}

static void *karray(void *(*fn)(size_t, size_t, rec_gfp_t), size_t n, size_t size,
		    rec_gfp_t flags, const void *ret)
{
	size_t total;

	if (!fn)
		return NULL;
	if (!kenter(ret))
		return fn(n, size, flags);
	if (__builtin_mul_overflow(n, size, &total))
		total = SIZE_MAX;
	return kalloc_common(fn(n, size, flags), total);
}

__visible void *kmalloc_array(size_t n, size_t size, rec_gfp_t flags)
{
	return karray(KREAL(kmalloc_array), n, size, flags, __builtin_return_address(0));
}

__visible void *kcalloc(size_t n, size_t size, rec_gfp_t flags)
{
	return karray(KREAL(kcalloc), n, size, flags, __builtin_return_address(0));
}

__visible void *krealloc(const void *old, size_t size, rec_gfp_t flags)
{
	void *(*fn)(const void *, size_t, rec_gfp_t) = KREAL(krealloc);
	void *p;

	if (!fn)
		return NULL;
	if (!kenter(__builtin_return_address(0)))
		return fn(old, size, flags);
	if (old && !K_ZERO(old))
		emit(REC_OP_REALLOC_OLD, now_ns(), old, NULL,
		     unlikely(attached) && kreal.ksize ? kreal.ksize(old) : 0, 0);
	p = fn(old, size, flags);
	if (K_ZERO(old))
		old = NULL;
	/* krealloc(p, 0) frees p and returns ZERO_SIZE_PTR or NULL: a realloc
	 * to size 0 says the same */
	if (unlikely(want_stacks)) {
		uint64_t frames[REC_STACK_MAX];
		struct rec_event def;
		uint32_t sid = capture_stack(&def, frames);

		emit_stack(TRACE_OP_REALLOC, now_ns(), K_ZERO(p) ? NULL : p, old, size, 0,
			   sid, def.op ? &def : NULL);
	} else {
		emit(TRACE_OP_REALLOC, now_ns(), K_ZERO(p) ? NULL : p, old, size, 0);
	}
	leave();
	return p;
}

static void kfree_common(void (*fn)(const void *), const void *p, const void *ret)
{
	if (!fn)
		return;
	if (!kenter(ret)) {
		fn(p);
		return;
	}
	if (!K_ZERO(p) && p)
		krecord_kfree(p);
	fn(p);
	leave();
}

__visible void kfree(const void *p)
{
	kfree_common(KREAL(kfree), p, __builtin_return_address(0));
}

__visible void kfree_sensitive(const void *p)
{
	kfree_common(KREAL(kfree_sensitive), p, __builtin_return_address(0));
}

__visible void kvfree_rcu_mightsleep(const void *p)
{
	kfree_common(KREAL(kvfree_rcu_mightsleep), p, __builtin_return_address(0));
}

__visible void __kfree_rcu(void *head, size_t offset)
{
	void (*fn)(void *, size_t) = KREAL(__kfree_rcu);

	if (!fn)
		return;
	if (!kenter(__builtin_return_address(0))) {
		fn(head, offset);
		return;
	}
	krecord_kfree((char *)head - offset);
	fn(head, offset);
	leave();
}

static void *kcache_alloc_common(void *(*fn)(struct kmem_cache *, rec_gfp_t),
				 struct kmem_cache *s, rec_gfp_t flags, const void *ret)
{
	unsigned int size;
	void *p;

	if (!fn)
		return NULL;
	if (!kenter(ret))
		return fn(s, flags);
	p = fn(s, flags);
	size = kreal.kmem_cache_size ? kreal.kmem_cache_size(s) : 0;
	kcache_meet(s, size);
	krecord_alloc(TRACE_OP_CACHE_ALLOC, p, size, s);
	leave();
	return p;
}

__visible void *kmem_cache_alloc(struct kmem_cache *s, rec_gfp_t flags)
{
	return kcache_alloc_common(KREAL(kmem_cache_alloc), s, flags,
				   __builtin_return_address(0));
}

__visible void *kmem_cache_zalloc(struct kmem_cache *s, rec_gfp_t flags)
{
	return kcache_alloc_common(KREAL(kmem_cache_zalloc), s, flags,
				   __builtin_return_address(0));
}

__visible void kmem_cache_free(struct kmem_cache *s, void *p)
{
	void (*fn)(struct kmem_cache *, void *) = KREAL(kmem_cache_free);

	if (!fn)
		return;
	if (!kenter(__builtin_return_address(0))) {
		fn(s, p);
		return;
	}
	if (p)
		krecord_cache_free(s, p);
	fn(s, p);
	leave();
}

__visible int kmem_cache_alloc_bulk(struct kmem_cache *s, rec_gfp_t flags, size_t nr, void **p)
{
	int (*fn)(struct kmem_cache *, rec_gfp_t, size_t, void **) = KREAL(kmem_cache_alloc_bulk);
	unsigned int size;
	int got;

	if (!fn)
		return 0;
	if (!kenter(__builtin_return_address(0)))
		return fn(s, flags, nr, p);
	got = fn(s, flags, nr, p);
	size = kreal.kmem_cache_size ? kreal.kmem_cache_size(s) : 0;
	kcache_meet(s, size);
	for (int i = 0; i < got; i++)
		krecord_alloc(TRACE_OP_CACHE_ALLOC, p[i], size, s);
	leave();
	return got;
}

__visible void kmem_cache_free_bulk(struct kmem_cache *s, size_t nr, void **p)
{
	void (*fn)(struct kmem_cache *, size_t, void **) = KREAL(kmem_cache_free_bulk);

	if (!fn)
		return;
	if (!kenter(__builtin_return_address(0))) {
		fn(s, nr, p);
		return;
	}
	for (size_t i = 0; i < nr; i++)
		if (p[i])
			krecord_cache_free(s, p[i]);
	fn(s, nr, p);
	leave();
}

__visible void kmem_cache_destroy(struct kmem_cache *s)
{
	void (*fn)(struct kmem_cache *) = KREAL(kmem_cache_destroy);

	if (s)
		kcache_forget(s);
	if (fn)
		fn(s);
}

/* ---- exec: flush first, so nothing buffered is lost with the image ----- */

static bool env_has(char *const envp[], const char *key, const char *needle)
{
	size_t kl = strlen(key);

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], key, kl) && envp[i][kl] == '=')
			return strstr(envp[i] + kl + 1, needle) != NULL;
	return false;
}

/* The file execvp would run: @file itself when it has a slash, else the
 * first executable match on $PATH. Return: false when none is found. */
static bool resolve_path(const char *file, char *buf, size_t cap)
{
	const char *path = getenv("PATH"), *p, *colon;

	if (strchr(file, '/')) {
		put_str(buf, 0, cap, file);
		return true;
	}
	for (p = path ? path : "/bin:/usr/bin"; *p; p = *colon ? colon + 1 : colon) {
		size_t pos;

		colon = strchr(p, ':');
		if (!colon)
			colon = p + strlen(p);
		if ((size_t)(colon - p) + strlen(file) + 2 > cap)
			continue;
		memcpy(buf, p, (size_t)(colon - p));
		pos = (size_t)(colon - p);
		if (!pos)
			buf[pos++] = '.';
		buf[pos++] = '/';
		put_str(buf, pos, cap, file);
		if (!access(buf, X_OK))
			return true;
	}
	return false;
}

/*
 * Before an exec or spawn: a note for `uslab record` when the new program
 * will not be recorded (static, or the recorder's environment is gone).
 */
static const char *check_exec(const char *file, char *const envp[], char *path,
			      size_t cap)
{
	const char *why = NULL;
	int fd;

	if (atomic_load(&state) != 2)
		return NULL;
	if (!env_has(envp, "LD_PRELOAD", REC_LIB_NAME) ||
	    !env_has(envp, REC_ENV_DIR, ""))
		why = "noenv ";
	if (!resolve_path(file, path, cap))
		return NULL;	/* the exec fails: nothing to say */
	if (!why) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return NULL;
		if (rec_elf_is_static(fd))
			why = "static ";
		close(fd);
	}
	return why;
}

/* The note itself: "KIND PID PPID MONO PATH", one write. */
static void write_note(const char *why, pid_t pid, pid_t ppid, const char *path)
{
	char line[1200], notes[640];
	size_t pos;
	int fd;

	pos = put_str(line, 0, sizeof(line), why);
	pos = put_u64(line, pos, sizeof(line), (uint64_t)pid);
	pos = put_str(line, pos, sizeof(line), " ");
	pos = put_u64(line, pos, sizeof(line), (uint64_t)ppid);
	pos = put_str(line, pos, sizeof(line), " ");
	pos = put_u64(line, pos, sizeof(line), now_ns());
	pos = put_str(line, pos, sizeof(line), " ");
	pos = put_str(line, pos, sizeof(line) - 1, path);
	line[pos++] = '\n';
	put_str(notes, put_str(notes, 0, sizeof(notes), rec_dir), sizeof(notes), "/" REC_NOTES);
	fd = open(notes, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	write_full(fd, line, pos);
	close(fd);
}

/*
 * A program that defines malloc itself (linked with libuslab.a, a static
 * jemalloc or tcmalloc, its own allocator) is found before the preloaded
 * recorder: its calls, and the C library's, never reach the wrappers, and
 * the trace would be empty without a word. The note "ownmalloc PID PPID
 * MONO OBJECT" names the object whose malloc the process runs on; the
 * collector warns (uslab-record(1), DESCRIPTION). Attached (-p), the GOT
 * slots catch the other objects' calls: "ownmalloc-p" only when the
 * program itself defines malloc (its own calls use no slot).
 */
static void note_own_malloc(void)
{
	void *m = dlsym(RTLD_DEFAULT, "malloc");
	Dl_info own, di;
	char path[PATH_MAX], exe[PATH_MAX];
	ssize_t len;

	if (!m || !dladdr((void *)record_init, &own) || !dladdr(m, &di) ||
	    di.dli_fbase == own.dli_fbase)
		return;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = 0;
	/* the program itself: ld.so names it "" or as it was started
	 * ("./prog"); PATH_MAX fits: realpath() writes no more */
	if (!di.dli_fname || !di.dli_fname[0] || !realpath(di.dli_fname, path))
		put_str(path, 0, sizeof(path), exe);	/* ends it */
	/* -p: the GOT slots catch every object's calls through them, but not
	 * the program's own calls of a malloc it defines */
	if (attached && strcmp(path, exe))
		return;
	write_note(attached ? "ownmalloc-p " : "ownmalloc ", getpid(), getppid(), path);
}

/* exec keeps the pid: the note goes first (the exec may not return). */
static void note_exec(const char *file, char *const envp[])
{
	char path[1024];
	const char *why = check_exec(file, envp, path, sizeof(path));

	if (why)
		write_note(why, getpid(), getppid(), path);
}

/*
 * Every exec: note a child the recorder will lose, and flush first (the
 * exec drops this image's buffers) unless this is a vfork child, whose
 * buffers are its parent's. @fn: the slot of libc's function in `real`.
 */
static int do_exec(exec_fn *fn, const char *file, char *const argv[], char *const envp[])
{
	if (!*fn)
		record_init();
	if (atomic_load(&state) == 2) {
		note_exec(file, envp);
		if (getpid() == owner_pid) {	/* not in a vfork child */
			flush_all();
			dump_maps();
		}
	}
	if (!*fn) {
		errno = ENOSYS;
		return -1;
	}
	return (*fn)(file, argv, envp);
}

__visible int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_exec(&real.execve, path, argv, envp);
}

__visible int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

__visible int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return do_exec(&real.execvpe, file, argv, envp);
}

__visible int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* The path of what @dirfd and @path name, for the note (check_exec reads it). */
static void at_path(char *buf, size_t cap, int dirfd, const char *path, int flags)
{
	size_t pos;

	if (path && path[0] == '/') {
		put_str(buf, 0, cap, path);
		return;
	}
	pos = put_str(buf, 0, cap, "/proc/self/fd/");
	if (dirfd == AT_FDCWD) {
		put_str(buf, 0, cap, path ? path : "");
		return;
	}
	pos = put_u64(buf, pos, cap, (uint64_t)dirfd);
	if (path && path[0] && !(flags & AT_EMPTY_PATH)) {
		pos = put_str(buf, pos, cap, "/");
		put_str(buf, pos, cap, path);
	}
}

/* fexecve, execveat: the same as do_exec, the file named by a descriptor. */
static void before_exec_at(int dirfd, const char *path, int flags, char *const envp[])
{
	char file[1024];

	if (atomic_load(&state) == 0)
		record_init();
	if (atomic_load(&state) != 2)
		return;
	at_path(file, sizeof(file), dirfd, path, flags);
	note_exec(file, envp);
	if (getpid() == owner_pid) {
		flush_all();
		dump_maps();
	}
}

__visible int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn fn = REAL(fexecve);

	before_exec_at(fd, "", AT_EMPTY_PATH, envp);
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(fd, argv, envp);
}

__visible int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	execveat_fn fn = REAL(execveat);

	before_exec_at(dirfd, path, flags, envp);
	if (!fn)
		return (int)REAL(syscall)(SYS_execveat, dirfd, path, argv, envp, flags);
	return fn(dirfd, path, argv, envp, flags);
}

/*
 * syscall(): the raw calls that end the image (exit_group, exit of the last
 * thread, execve, execveat) flush first, and those that close or replace a
 * descriptor go through the wrappers above. A system call made by an
 * instruction of the program's own (inline assembly, a static runtime such
 * as Go's) is not seen: what its threads buffered is lost, as at SIGKILL.
 */
__visible long syscall(long nr, ...)
{
	syscall_fn fn = REAL(syscall);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	switch (nr) {
	case SYS_exit_group:
		flush_at_end();
		break;
	case SYS_exit:		/* this thread's own buffer (the process's, if last) */
		if (atomic_load(&state) == 2 && getpid() == owner_pid && self.buf)
			flush_buf(self.buf);
		break;
	case SYS_execve:
		if (atomic_load(&state) == 2) {
			note_exec((const char *)a[0], (char *const *)a[2]);
			if (getpid() == owner_pid) {
				flush_all();
				dump_maps();
			}
		}
		break;
	case SYS_execveat:
		before_exec_at((int)a[0], (const char *)a[1], (int)a[4], (char *const *)a[3]);
		break;
	case SYS_close:
		return close((int)a[0]);
	case SYS_close_range:
		return rec_close_range((unsigned int)a[0], (unsigned int)a[1], (int)a[2]);
#ifdef SYS_dup2		/* not on every architecture */
	case SYS_dup2:
		return dup2((int)a[0], (int)a[1]);
#endif
	case SYS_dup3:
		return dup3((int)a[0], (int)a[1], (int)a[2]);
	}
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* execl family: collect the arguments, then one of the above. */
static int collect_args(const char *arg0, va_list ap, char **argv,
			char ***envp)
{
	int n = 0;
	const char *a = arg0;

	while (a) {
		if (n == MAX_EXEC_ARGS - 1) {
			errno = E2BIG;
			return -1;
		}
		argv[n++] = (char *)a;
		a = va_arg(ap, const char *);
	}
	argv[n] = NULL;
	if (envp)
		*envp = va_arg(ap, char **);
	return 0;
}

/*
 * The execl family's arguments into @argv (with @envp: the environment
 * after them), collected in the variadic function's own frame, where
 * va_start must run. Value: 0, or -1 with errno E2BIG.
 */
#define COLLECT_ARGS(arg, argv, envp) ({				\
	va_list ap_;							\
	int rc_;							\
									\
	va_start(ap_, arg);						\
	rc_ = collect_args(arg, ap_, argv, envp);			\
	va_end(ap_);							\
	rc_;								\
})

__visible int execl(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXEC_ARGS];

	if (COLLECT_ARGS(arg, argv, NULL))
		return -1;
	return execve(path, argv, environ);
}

__visible int execlp(const char *file, const char *arg, ...)
{
	char *argv[MAX_EXEC_ARGS];

	if (COLLECT_ARGS(arg, argv, NULL))
		return -1;
	return execvpe(file, argv, environ);
}

__visible int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXEC_ARGS];
	char **envp;

	if (COLLECT_ARGS(arg, argv, &envp))
		return -1;
	return execve(path, argv, envp);
}

/*
 * posix_spawn and posix_spawnp run the child's exec inside libc, past the
 * wrappers above: the note is written here, for the child. @fn: the slot of
 * libc's function in `real`.
 */
static int do_spawn(spawn_fn *fn, pid_t *pid, const char *file,
		    const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		    char *const argv[], char *const envp[])
{
	if (!*fn)
		record_init();
	if (!*fn)
		return ENOSYS;
	char buf[1024];
	const char *why = check_exec(file, envp, buf, sizeof(buf));
	pid_t child;
	int rc;

	rc = (*fn)(&child, file, fa, attr, argv, envp);
	if (!rc && why)
		write_note(why, child, getpid(), buf);
	if (!rc && pid)
		*pid = child;
	return rc;
}

__visible int posix_spawn(pid_t *pid, const char *path,
			  const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[],
			  char *const envp[])
{
	return do_spawn(&real.posix_spawn, pid, path, fa, attr, argv, envp);
}

__visible int posix_spawnp(pid_t *pid, const char *file,
			   const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[],
			   char *const envp[])
{
	return do_spawn(&real.posix_spawnp, pid, file, fa, attr, argv, envp);
}

/* _exit skips the destructor: flush here, so a child that ends with _exit
 * (the usual end of a forked worker) keeps its events. Not in a vfork child:
 * the buffers are its parent's. */
static __attribute__((noreturn)) void exit_now(exit_fn fn, int status)
{
	flush_at_end();
	if (fn)
		fn(status);
	REAL(syscall)(SYS_exit_group, status);
	__builtin_unreachable();
}

__visible void _exit(int status)
{
	exit_now(real._exit, status);
}

__visible void _Exit(int status)
{
	exit_now(real._Exit, status);
}

/* ---- `uslab record -p`: attach to a running process --------------------- */

/* The wrappers under local names: their own addresses, never the GOT's. */
#define REC_LOCAL(name) \
	extern __typeof__(name) rec_local_##name \
	__attribute__((alias(#name), copy(name), visibility("hidden")))
REC_LOCAL(malloc);
REC_LOCAL(free);
REC_LOCAL(calloc);
REC_LOCAL(realloc);
REC_LOCAL(reallocarray);
REC_LOCAL(memalign);
REC_LOCAL(aligned_alloc);
REC_LOCAL(posix_memalign);
REC_LOCAL(valloc);
REC_LOCAL(pvalloc);
REC_LOCAL(kmalloc);
REC_LOCAL(kzalloc);
REC_LOCAL(kmalloc_array);
REC_LOCAL(kcalloc);
REC_LOCAL(krealloc);
REC_LOCAL(kfree);
REC_LOCAL(kfree_sensitive);
REC_LOCAL(kvfree_rcu_mightsleep);
REC_LOCAL(__kfree_rcu);
REC_LOCAL(kmem_cache_alloc);
REC_LOCAL(kmem_cache_zalloc);
REC_LOCAL(kmem_cache_free);
REC_LOCAL(kmem_cache_alloc_bulk);
REC_LOCAL(kmem_cache_free_bulk);
REC_LOCAL(kmem_cache_destroy);

/*
 * The process's own @name, the one its calls reach: the first definition in
 * the global scope. A non-PIE executable that takes a function's address
 * "defines" it as its PLT entry (st_shndx undefined), which jumps through
 * the GOT slot we redirect: then the next object that defines it.
 */
static void *real_sym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name), *h;
	const ElfW(Sym) *sym = NULL;
	struct link_map *lm = NULL;
	Dl_info di;

	if (!p || !dladdr1(p, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    sym->st_shndx != SHN_UNDEF)
		return p;
	h = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm)
		return NULL;
	for (lm = lm->l_next; lm; lm = lm->l_next) {
		void *lh = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
		Dl_info d2;

		if (!lh)
			continue;
		p = dlsym(lh, name);
		dlclose(lh);
		sym = NULL;
		if (p && dladdr1(p, &d2, (void **)&sym, RTLD_DL_SYMENT) && sym &&
		    sym->st_shndx != SHN_UNDEF && d2.dli_fbase == (void *)lm->l_addr)
			return p;
		if (p && sym && sym->st_shndx != SHN_UNDEF && d2.dli_fbase != di.dli_fbase)
			return p;
	}
	return NULL;
}

/*
 * uslab_record_attach - start recording this process into @dir (with call
 * stacks of @depth frames when @depth is not 0), from its next malloc on.
 * Called by `uslab record -p` through gdb, once this library is dlopen'd
 * (RTLD_LOCAL: its malloc interposes nothing); the malloc it records is the
 * one the process already uses, whichever it is (glibc's, jemalloc's...).
 * Return: the GOT slots redirected (>= 0), or -errno.
 */
__visible long uslab_record_attach(const char *dir, unsigned int depth)
{
	static const char *const names[] = {
		"malloc", "free", "calloc", "realloc", "reallocarray", "memalign",
		"aligned_alloc", "posix_memalign", "valloc", "pvalloc",
		/* uslab's kernel API: slots exist only in a program linked to
		 * libuslab.so (and in libuslab.so, whose own calls the wrappers
		 * pass through) */
		"kmalloc", "kzalloc", "kmalloc_array", "kcalloc", "krealloc", "kfree",
		"kfree_sensitive", "kvfree_rcu_mightsleep", "__kfree_rcu",
		"kmem_cache_alloc", "kmem_cache_zalloc", "kmem_cache_free",
		"kmem_cache_alloc_bulk", "kmem_cache_free_bulk", "kmem_cache_destroy",
	};
	void *const fns[] = {
		(void *)rec_local_malloc, (void *)rec_local_free, (void *)rec_local_calloc,
		(void *)rec_local_realloc, (void *)rec_local_reallocarray,
		(void *)rec_local_memalign, (void *)rec_local_aligned_alloc,
		(void *)rec_local_posix_memalign, (void *)rec_local_valloc,
		(void *)rec_local_pvalloc,
		(void *)rec_local_kmalloc, (void *)rec_local_kzalloc,
		(void *)rec_local_kmalloc_array, (void *)rec_local_kcalloc,
		(void *)rec_local_krealloc, (void *)rec_local_kfree,
		(void *)rec_local_kfree_sensitive, (void *)rec_local_kvfree_rcu_mightsleep,
		(void *)rec_local___kfree_rcu, (void *)rec_local_kmem_cache_alloc,
		(void *)rec_local_kmem_cache_zalloc, (void *)rec_local_kmem_cache_free,
		(void *)rec_local_kmem_cache_alloc_bulk, (void *)rec_local_kmem_cache_free_bulk,
		(void *)rec_local_kmem_cache_destroy,
	};
	uintptr_t skip[1] = { 0 };
	Dl_info di;
	long n;

	if (atomic_load(&state) == 2)
		return -EBUSY;		/* preloaded, or attached already */
	if (!dir || !*dir || strlen(dir) >= sizeof(rec_dir))
		return -EINVAL;
	real.usable = (usable_fn)real_sym("malloc_usable_size");
	real.malloc = (malloc_fn)real_sym("malloc");
	real.free = (free_fn)real_sym("free");
	real.calloc = (calloc_fn)real_sym("calloc");
	real.realloc = (realloc_fn)real_sym("realloc");
	real.memalign = (memalign_fn)real_sym("memalign");
	real.posix_memalign = (posix_memalign_fn)real_sym("posix_memalign");
	real.aligned_alloc = (memalign_fn)real_sym("aligned_alloc");
	real.valloc = (malloc_fn)real_sym("valloc");
	real.pvalloc = (malloc_fn)real_sym("pvalloc");
	if (!real.malloc || !real.free || !real.calloc || !real.realloc)
		return -ENOENT;
	strcpy(rec_dir, dir);
	owner_pid = getpid();
	attached = true;
	if (dladdr((void *)uslab_record_attach, &di))
		skip[0] = (uintptr_t)di.dli_fbase;
	if (depth) {
		want_stacks = true;
		if (depth < REC_STACK_MAX)
			stack_depth = depth;
		if (skip[0])
			dl_iterate_phdr(find_self, di.dli_fbase);
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	}
	/* no fork handlers, no fatal-signal handlers: the process's own stay
	 * as they are (its forked children are not recorded) */
	pthread_key_create(&thread_key, thread_exit);
	spin_lock(&open_lock);
	if (raw_fd < 0)
		open_raw_locked();
	spin_unlock(&open_lock);
	if (raw_fd < 0)
		return -errno;
	dump_maps();
	kreal_resolve();	/* libuslab.so's, if the process has it */
	atomic_store(&state, 2);
	note_own_malloc();
	n = rec_got_patch(names, fns, ARRAY_SIZE(names), skip, skip[0] ? 1 : 0);
	return n < 0 ? -ENOMEM : n;
}

/*
 * uslab_record_detach - stop: the GOT slots back, then every thread's
 * buffer written and the raw file closed. Calls already inside a wrapper
 * finish through the allocator's own functions; nothing is opened again
 * (a thread that exits later writes nothing). The library stays loaded:
 * a thread may still be returning through it.
 */
__visible int uslab_record_detach(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	if (!attached || atomic_load(&state) != 2)
		return -EINVAL;
	rec_got_restore();
	atomic_store(&state, 3);
	nanosleep(&ts, NULL);	/* wrappers in flight finish their event */
	flush_all();
	dump_maps();
	spin_lock(&open_lock);
	owner_pid = -1;		/* raw_file() opens nothing any more */
	if (raw_fd >= 0)
		close(raw_fd);
	raw_fd = -1;
	spin_unlock(&open_lock);
	return 0;
}
