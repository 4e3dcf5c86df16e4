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
 * Fork: the child gets its own raw file (and so its own trace). Exec: the
 * buffers are flushed first; the new image is recorded as long as the
 * environment keeps LD_PRELOAD and USLAB_RECORD_DIR.
 */
#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <time.h>
#include <unistd.h>
#include "tools/record/record.h"

#define MAX_EXEC_ARGS	4096

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void *(*memalign_fn)(size_t, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);

static struct {
	malloc_fn malloc;
	free_fn free;
	calloc_fn calloc;
	realloc_fn realloc;
	memalign_fn memalign;
	posix_memalign_fn posix_memalign;
	memalign_fn aligned_alloc;
	malloc_fn valloc;
	malloc_fn pvalloc;
	execve_fn execve;
	execvpe_fn execvpe;
} real;

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
	struct rec_state st;
	bool in_use;
	struct rec_buf *next_all;
	struct rec_buf *next_free;
};

struct rec_self {
	struct rec_buf *buf;
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
static bool exiting;
static pthread_key_t thread_key;
static char rec_dir[512];

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
		raw_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND |
			      O_CLOEXEC, 0600);
		if (raw_fd >= 0) {
			put_str(path, pos, sizeof(path), REC_META_SUFFIX);
			write_meta(path, mono);
			return 0;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

static int raw_file(void)
{
	int fd = READ_ONCE(raw_fd);

	if (likely(fd >= 0))
		return fd;
	spin_lock(&open_lock);
	if (raw_fd < 0)
		open_raw_locked();
	fd = raw_fd;
	spin_unlock(&open_lock);
	return fd;
}

/* One write of header + events: O_APPEND keeps blocks whole. */
static void write_block(struct rec_block *hdr, uint32_t tid, uint64_t fill)
{
	int fd;

	if (!fill)
		return;
	fd = raw_file();
	if (fd < 0)
		return;
	hdr->magic = REC_BLOCK_MAGIC;
	hdr->tid = tid;
	hdr->count = (uint32_t)(fill >> 32);
	hdr->bytes = (uint32_t)fill;
	write_full(fd, hdr, sizeof(*hdr) + hdr->bytes);
}

static void flush_buf(struct rec_buf *b)
{
	write_block(&b->hdr, b->hdr.tid, atomic_exchange(&b->fill, 0));
}

/* exit, exec: every buffer (others' threads may lose an event in flight). */
static void flush_all(void)
{
	spin_lock(&pool_lock);
	for (struct rec_buf *b = all_bufs; b; b = b->next_all)
		if (b->in_use)
			flush_buf(b);
	spin_unlock(&pool_lock);
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

static __slowpath void write_direct(const struct rec_event *ev)
{
	struct {
		struct rec_block hdr;
		uint8_t data[REC_EVENT_MAX];
	} one;
	struct rec_state st = { 0 };
	size_t n = rec_encode(one.data, &st, ev);

	write_block(&one.hdr, self.tid, (uint64_t)1 << 32 | n);
}

/*
 * Append: a clock read (vDSO), one load from the rseq area, about 10 bytes
 * of varints into the thread's block; one write(2) per 32 KiB (about 3000
 * events). No lock, no atomic read-modify-write.
 */
static __always_inline void emit(uint8_t op, uint64_t t, const void *addr,
				 const void *old, uint64_t size, uint64_t align)
{
	struct rec_buf *b = self.buf;
	struct rec_event e = {
		.time = t, .size = size, .addr = (uintptr_t)addr,
		.old_addr = (uintptr_t)old, .align = (uint32_t)align,
		.cpu = current_cpu(), .op = op,
	};
	uint64_t fill;
	size_t n;

	if (unlikely(!b)) {
		b = thread_start();
		if (!b) {
			write_direct(&e);
			return;
		}
	}
	fill = atomic_load_explicit(&b->fill, memory_order_relaxed);
	if (!fill)
		b->st = (struct rec_state){ 0 };
	n = rec_encode(b->data + (uint32_t)fill, &b->st, &e);
	fill += ((uint64_t)1 << 32) + n;
	atomic_store_explicit(&b->fill, fill, memory_order_release);
	if (unlikely((uint32_t)fill + REC_EVENT_MAX > REC_BLOCK_BYTES ||
		     READ_ONCE(exiting)))
		flush_buf(b);
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
		close(raw_fd);
	raw_fd = -1;
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

static __attribute__((destructor)) void record_fini(void)
{
	if (atomic_load(&state) != 2)
		return;
	WRITE_ONCE(exiting, true);
	flush_all();
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
	real.execve = (execve_fn)sym("execve");
	real.execvpe = (execvpe_fn)sym("execvpe");
	dir = getenv(REC_ENV_DIR);
	if (!real.malloc || !real.free || !real.calloc || !real.realloc ||
	    !dir || !*dir || strlen(dir) >= sizeof(rec_dir)) {
		atomic_store(&state, real.malloc ? 3 : 0);
		return;
	}
	strcpy(rec_dir, dir);
	pthread_key_create(&thread_key, thread_exit);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	atomic_store(&state, 2);
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
		emit(REC_OP_REALLOC_OLD, now_ns(), old, NULL, 0, 0);
	p = real.realloc(old, size);
	emit(TRACE_OP_REALLOC, now_ns(), p, old, size, 0);
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

__visible void *valloc(size_t size)
{
	void *p;
	long page = sysconf(_SC_PAGESIZE);

	if (!enter())
		return real.valloc ? real.valloc(size) : boot_alloc(size, (size_t)page);
	p = real.valloc(size);
	record_alloc(TRACE_OP_VALLOC, p, size, (size_t)page);
	leave();
	return p;
}

__visible void *pvalloc(size_t size)
{
	void *p;
	long page = sysconf(_SC_PAGESIZE);

	if (!enter())
		return real.pvalloc ? real.pvalloc(size) : boot_alloc(size, (size_t)page);
	p = real.pvalloc(size);
	record_alloc(TRACE_OP_PVALLOC, p, size, (size_t)page);
	leave();
	return p;
}

/* ---- exec: flush first, so nothing buffered is lost with the image ----- */

__visible int execve(const char *path, char *const argv[], char *const envp[])
{
	if (!real.execve)
		record_init();
	if (atomic_load(&state) == 2)
		flush_all();
	if (!real.execve) {
		errno = ENOSYS;
		return -1;
	}
	return real.execve(path, argv, envp);
}

__visible int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

__visible int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (!real.execvpe)
		record_init();
	if (atomic_load(&state) == 2)
		flush_all();
	if (!real.execvpe) {
		errno = ENOSYS;
		return -1;
	}
	return real.execvpe(file, argv, envp);
}

__visible int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
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

__visible int execl(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXEC_ARGS];
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect_args(arg, ap, argv, NULL);
	va_end(ap);
	return rc ? rc : execve(path, argv, environ);
}

__visible int execlp(const char *file, const char *arg, ...)
{
	char *argv[MAX_EXEC_ARGS];
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect_args(arg, ap, argv, NULL);
	va_end(ap);
	return rc ? rc : execvpe(file, argv, environ);
}

__visible int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXEC_ARGS];
	char **envp;
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect_args(arg, ap, argv, &envp);
	va_end(ap);
	return rc ? rc : execve(path, argv, envp);
}
