// SPDX-License-Identifier: MIT
/*
 * malloc conformance suite. Plain C against the C library's API only, so the
 * same program runs on glibc (to prove the suite itself right), preloaded
 * with libuslab.so, and linked statically against libuslab.a.
 *
 *   conform [test-name...]		run all tests, or the named ones
 *
 * Prints one line per test and a closing "N passed, N failed" line; exits
 * non-zero when anything failed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tests/testutil.h"

/* Present only when uslab is the allocator (preloaded or linked). */
extern void uslab_malloc_stats(int fd) __attribute__((weak));
/* C23 sized frees: glibc 2.36 has neither, uslab has both. */
extern void free_sized(void *p, size_t size) __attribute__((weak));
extern void free_aligned_sized(void *p, size_t align, size_t size)
	__attribute__((weak));

static bool on_uslab;
static int test_failures;
static const char *test_name;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		if (test_failures++ < 10) {				\
			printf("    %s:%d: %s: check failed: %s: ",	\
			       __FILE__, __LINE__, test_name, #cond);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	}								\
} while (0)

/* Seeded, so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t xrnd(void)
{
	return xorshift64(&rng_state);
}

/* Hide a constant from the compiler, which would warn or fold the call. */
static size_t opaque(size_t x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}

static bool aligned(const void *p, size_t a)
{
	return ((uintptr_t)p & (a - 1)) == 0;
}

static size_t min_align(size_t size)
{
	return size >= 16 ? 16 : 8;
}

/* Fill with a pattern derived from @tag; check it. */
static void fill(void *p, size_t n, unsigned tag)
{
	unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		c[i] = (unsigned char)(tag + i * 7);
}

static bool verify(const void *p, size_t n, unsigned tag)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i] != (unsigned char)(tag + i * 7))
			return false;
	return true;
}

/* ---------------------------------------------------------------------- */

static void test_sizes(void)
{
	enum { N = 512 };
	static void *ptr[N];
	static size_t sz[N];
	size_t big;

	/* Every size from 0 to 4 KiB + a bit, live together: no overlap. */
	for (size_t base = 0; base < 8300; base += N) {
		for (size_t i = 0; i < N; i++) {
			sz[i] = base + i;
			ptr[i] = malloc(sz[i]);
			CHECK(ptr[i], "malloc(%zu) = NULL", sz[i]);
			if (!ptr[i])
				return;
			CHECK(aligned(ptr[i], min_align(sz[i])),
			      "malloc(%zu) = %p misaligned", sz[i], ptr[i]);
			CHECK(malloc_usable_size(ptr[i]) >= sz[i],
			      "usable %zu < %zu", malloc_usable_size(ptr[i]), sz[i]);
			fill(ptr[i], sz[i], (unsigned)i);
		}
		for (size_t i = 0; i < N; i++) {
			CHECK(verify(ptr[i], sz[i], (unsigned)i),
			      "block of %zu overwritten", sz[i]);
			free(ptr[i]);
		}
	}
	/* Powers of two and their neighbours up to 64 MiB. */
	for (big = 1; big <= (64u << 20); big <<= 1) {
		for (int d = -1; d <= 1; d++) {
			size_t s = big + (size_t)d;
			unsigned char *p = malloc(s);

			CHECK(p, "malloc(%zu) = NULL", s);
			if (!p)
				continue;
			CHECK(aligned(p, min_align(s)), "malloc(%zu) misaligned", s);
			CHECK(malloc_usable_size(p) >= s, "usable < %zu", s);
			if (s) {
				p[s / 2] = 3;
				p[0] = 1;
				p[s - 1] = 2;
				CHECK((s == 1 || p[0] == 1) && p[s - 1] == 2, "ends of %zu", s);
			}
			free(p);
		}
	}
	/* malloc(0): unique, freeable; free(NULL) is a no-op. */
	void *a = malloc(0), *b = malloc(0);

	CHECK(a && b && a != b, "malloc(0) = %p, %p", a, b);
	free(a);
	free(b);
	free(NULL);
	CHECK(malloc_usable_size(NULL) == 0, "usable(NULL)");
}

static void test_random_model(void)
{
	enum { SLOTS = 4096, STEPS = 300000 };
	static void *ptr[SLOTS];
	static size_t sz[SLOTS];

	for (int step = 0; step < STEPS; step++) {
		unsigned i = (unsigned)(xrnd() % SLOTS);

		if (ptr[i]) {
			CHECK(verify(ptr[i], sz[i] < 64 ? sz[i] : 64, i),
			      "slot %u (%zu bytes) overwritten", i, sz[i]);
			if (xrnd() & 1) {
				free(ptr[i]);
				ptr[i] = NULL;
				continue;
			}
			size_t ns = xrnd() % 3 ? xrnd() % 512 : xrnd() % 70000;
			void *q = realloc(ptr[i], ns);

			if (!ns) {
				ptr[i] = NULL;	/* glibc: freed, NULL returned */
				continue;
			}
			CHECK(q, "realloc to %zu", ns);
			size_t keep = sz[i] < ns ? sz[i] : ns;

			CHECK(verify(q, keep < 64 ? keep : 64, i),
			      "realloc %zu -> %zu lost content", sz[i], ns);
			ptr[i] = q;
			sz[i] = ns;
			fill(q, ns < 64 ? ns : 64, i);
		} else {
			sz[i] = xrnd() % 4 ? xrnd() % 256 : xrnd() % 40000;
			ptr[i] = malloc(sz[i]);
			CHECK(ptr[i], "malloc(%zu)", sz[i]);
			fill(ptr[i], sz[i] < 64 ? sz[i] : 64, i);
		}
	}
	for (unsigned i = 0; i < SLOTS; i++)
		free(ptr[i]), ptr[i] = NULL;
}

static void test_calloc(void)
{
	static const size_t sizes[] = { 1, 8, 16, 24, 100, 512, 4000, 8192,
					20000, 300000, 5 << 20 };
	enum { N = 64 };
	void *p[N];

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t s = sizes[k];
		int n = s > 100000 ? 4 : N;

		/* Dirty blocks of this size, free them, calloc them back. */
		for (int i = 0; i < n; i++) {
			p[i] = malloc(s);
			CHECK(p[i], "malloc(%zu)", s);
			if (p[i])
				memset(p[i], 0xa5, s);
		}
		for (int i = 0; i < n; i++)
			free(p[i]);
		for (int i = 0; i < n; i++) {
			unsigned char *c = calloc(1, s);
			size_t nz = 0;

			CHECK(c, "calloc(1, %zu)", s);
			if (!c)
				continue;
			for (size_t j = 0; j < s; j++)
				nz += c[j] != 0;
			CHECK(nz == 0, "calloc(1, %zu): %zu non-zero bytes", s, nz);
			p[i] = c;
		}
		for (int i = 0; i < n; i++)
			free(p[i]);
	}
	/* Element count times size overflowing size_t. */
	errno = 0;
	CHECK(calloc(opaque(SIZE_MAX / 2), 3) == NULL && errno == ENOMEM, "overflow 1");
	errno = 0;
	CHECK(calloc(opaque((size_t)1 << 33), (size_t)1 << 33) == NULL && errno == ENOMEM,
	      "overflow 2");
	void *z = calloc(0, 16);

	CHECK(z != NULL, "calloc(0, 16)");
	free(z);
}

/*
 * A block beyond the heap's largest order grown by realloc moves its pages
 * (glibc: mremap of its mmapped chunk; uslab: page_alloc's
 * realloc_pages_large()): the old and the new block are never both
 * resident. A copy peaks at 512 MiB here (the old 256 and the new 256
 * being copied into), a move at the new block's 288 MiB.
 */
static void test_realloc_large_moves(void)
{
	size_t big = 256u << 20, more = 288u << 20, peak;
	unsigned char *p = malloc(big), *q;

	CHECK(p, "malloc %zu", big);
	if (!p)
		return;
	memset(p, 0x5a, big);
	q = realloc(p, more);
	CHECK(q, "realloc %zu -> %zu", big, more);
	if (!q) {
		free(p);
		return;
	}
	CHECK(q[0] == 0x5a && q[big / 2] == 0x5a && q[big - 1] == 0x5a,
	      "realloc %zu -> %zu lost content", big, more);
	memset(q + big, 0x5b, more - big);
	peak = test_peak_rss_bytes();
	CHECK(peak && peak < big + more - (64u << 20),
	      "peak RSS %zu MiB after growing %zu MiB to %zu: copied, not moved",
	      peak >> 20, big >> 20, more >> 20);
	free(q);
}

static void test_realloc(void)
{
	size_t s = 1, prev = 0;
	unsigned char *p = NULL, *q;

	/* Grow 1 byte -> 16 MiB by x1.5 steps, content kept each time. */
	while (s <= (16u << 20)) {
		q = realloc(p, s);

		CHECK(q, "realloc grow to %zu", s);
		if (!q)
			break;
		CHECK(verify(q, prev, 0x33), "grow %zu -> %zu lost content", prev, s);
		CHECK(malloc_usable_size(q) >= s, "usable after grow");
		fill(q, s, 0x33);
		p = q;
		prev = s;
		s = s + s / 2 + 1;
	}
	/* And shrink back down. */
	for (s = prev; s > 0; s /= 3) {
		q = realloc(p, s);

		CHECK(q, "realloc shrink to %zu", s);
		if (!q)
			break;
		CHECK(verify(q, s, 0x33), "shrink to %zu lost content", s);
		CHECK(malloc_usable_size(q) >= s, "usable after shrink");
		p = q;
	}
	free(p);

	/* realloc(NULL, n) is malloc; reallocarray overflow keeps the block. */
	p = realloc(NULL, 100);
	CHECK(p, "realloc(NULL, 100)");
	fill(p, 100, 9);
	errno = 0;
	q = reallocarray(p, opaque(SIZE_MAX / 4), 8);
	CHECK(q == NULL && errno == ENOMEM, "reallocarray overflow");
	if (q)
		p = q;
	CHECK(verify(p, 100, 9), "reallocarray failure damaged the block");
	errno = 0;
	q = realloc(p, opaque(SIZE_MAX - 4096));
	CHECK(q == NULL && errno == ENOMEM, "realloc huge");
	if (q)
		p = q;
	CHECK(verify(p, 100, 9), "failed realloc damaged the block");
	q = reallocarray(p, 50, 4);

	CHECK(q && verify(q, 100, 9), "reallocarray 200");
	free(q);
}

static void test_memalign(void)
{
	for (size_t a = sizeof(void *); a <= (8u << 20); a <<= 1) {
		static const size_t sizes[] = { 0, 1, 16, 100, 4096, 70000 };

		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			size_t s = sizes[k];
			void *p = NULL;
			int err = posix_memalign(&p, a, s);

			CHECK(err == 0 && p, "posix_memalign(%zu, %zu) = %d", a, s, err);
			if (p) {
				CHECK(aligned(p, a), "posix_memalign(%zu) = %p", a, p);
				CHECK(malloc_usable_size(p) >= s, "usable");
				memset(p, 1, s);
				free(p);
			}
			p = memalign(a, s);
			CHECK(p && aligned(p, a), "memalign(%zu, %zu) = %p", a, s, p);
			if (p)
				memset(p, 2, s);
			free(p);
			p = aligned_alloc(a, s ? s : a);
			CHECK(p && aligned(p, a), "aligned_alloc(%zu) = %p", a, p);
			free(p);
		}
	}
	/* Bad alignments: posix_memalign says EINVAL and leaves *out alone. */
	static const size_t bad[] = { 0, 1, 2, 3, 4, 12, 24, 48, 100,
				      SIZE_MAX, ((size_t)1 << 63) + 8 };

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		void *p = (void *)0x1234;
		int err = posix_memalign(&p, bad[k], 64);

		CHECK(err == EINVAL && p == (void *)0x1234,
		      "posix_memalign(align %zu) = %d", bad[k], err);
	}
	/* memalign rounds a non-power-of-two alignment up, as glibc does. */
	void *p = memalign(24, 100);

	CHECK(p && aligned(p, 32), "memalign(24) = %p", p);
	free(p);
	errno = 0;
	CHECK(memalign(opaque(((size_t)1 << 63) + 1), 16) == NULL && errno == EINVAL,
	      "memalign huge alignment");
	/* alignments from 2^62 + 1 to 2^63 round to a power of two that is
	 * possible as an alignment: too much memory, ENOMEM, as glibc says */
	errno = 0;
	CHECK(memalign(opaque((size_t)1 << 63), 10) == NULL && errno == ENOMEM,
	      "memalign(2^63) errno %d, not ENOMEM", errno);
	errno = 0;
	CHECK(aligned_alloc(opaque(((size_t)1 << 62) + 1), 10) == NULL && errno == ENOMEM,
	      "aligned_alloc(2^62 + 1) errno %d, not ENOMEM", errno);
	void *q = NULL;

	CHECK(posix_memalign(&q, 64, opaque(SIZE_MAX - 4096)) == ENOMEM && !q,
	      "posix_memalign huge size");

	long pg = sysconf(_SC_PAGESIZE);

	p = valloc(10);
	CHECK(p && aligned(p, (size_t)pg), "valloc = %p", p);
	free(p);
	p = pvalloc(10);
	CHECK(p && aligned(p, (size_t)pg) && malloc_usable_size(p) >= (size_t)pg,
	      "pvalloc = %p", p);
	free(p);
}

static void test_enomem(void)
{
	static const size_t huge[] = { SIZE_MAX, SIZE_MAX - 8192,
				       (size_t)PTRDIFF_MAX + 1, (size_t)1 << 50 };

	for (size_t k = 0; k < sizeof(huge) / sizeof(huge[0]); k++) {
		errno = 0;
		void *p = malloc(opaque(huge[k]));

		CHECK(p == NULL && errno == ENOMEM, "malloc(%zu) = %p errno %d",
		      huge[k], p, errno);
		free(p);
	}
	/* Still usable afterwards. */
	void *p = malloc(64);

	CHECK(p, "malloc after ENOMEM");
	free(p);
}

/*
 * A cap on memory: uslab's limit_mb option, and RLIMIT_AS for glibc (which
 * uslab is immune to: its range is reserved up front). Runs in a re-executed
 * child, because options are read at start-up.
 */
static int enomem_limit_child(void)
{
	enum { MAX = 2048 };
	static void *blk[MAX];
	int n = 0;

	for (n = 0; n < MAX; n++) {
		errno = 0;
		blk[n] = malloc(1 << 20);
		if (!blk[n])
			break;
		memset(blk[n], 1, 1 << 20);
	}
	if (n == MAX || errno != ENOMEM) {
		printf("    no ENOMEM after %d MiB (errno %d)\n", n, errno);
		return 1;
	}
	if (n > 200) {
		printf("    cap of 64 MiB let %d MiB through\n", n);
		return 1;
	}
	/* Small ones fail too once the cap is reached, and nothing breaks. */
	for (int i = 0; i < n; i++)
		free(blk[i]);
	void *again = malloc(1 << 20);

	if (!again) {
		printf("    malloc fails after freeing everything\n");
		return 1;
	}
	free(again);
	printf("    capped after %d MiB\n", n);
	return 0;
}

static void test_enomem_limit(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct rlimit rl;
		char *argv[] = { "conform", "--limit-child", NULL };
		long vm = 0;
		FILE *f = fopen("/proc/self/statm", "r");

		if (f && fscanf(f, "%ld", &vm) == 1) {
			rl.rlim_cur = rl.rlim_max = (rlim_t)vm * 4096 + (96ul << 20);
			if (!on_uslab)
				setrlimit(RLIMIT_AS, &rl);
		}
		setenv("USLAB_OPTIONS", "limit_mb=64", 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "limit child status 0x%x", status);
}

/* ---------------------------------------------------------------------- */
/* Producer -> consumer: blocks allocated on one thread, freed on another. */

static struct test_ring ring = TEST_RING_INIT;
static atomic_long xthread_bad;

static void *producer(void *arg)
{
	uint64_t seed = (uintptr_t)arg * 2654435761u + 1;

	for (int i = 0; i < 100000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		size_t s = 8 + (seed >> 33) % 2000;
		void *p = malloc(s);

		if (!p) {
			atomic_fetch_add(&xthread_bad, 1);
			continue;
		}
		fill(p, s < 32 ? s : 32, (unsigned)s);
		test_ring_put(&ring, p, s);
	}
	test_ring_done(&ring);
	return NULL;
}

static void *consumer(void *arg)
{
	void *p;
	size_t s;

	while (test_ring_get(&ring, &p, &s)) {
		if (!verify(p, s < 32 ? s : 32, (unsigned)s))
			atomic_fetch_add(&xthread_bad, 1);
		free(p);
	}
	return NULL;
}

static void test_cross_thread(void)
{
	pthread_t t[4];

	ring.producers_left = 2;
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, producer, (void *)i);
	for (int i = 2; i < 4; i++)
		pthread_create(&t[i], NULL, consumer, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(atomic_load(&xthread_bad) == 0, "%ld bad blocks",
	      atomic_load(&xthread_bad));
	CHECK(ring.head == 200000 && ring.tail == 200000, "%u produced, %u consumed",
	      ring.head, ring.tail);
}

/* ---------------------------------------------------------------------- */
/* fork() while other threads allocate: the child must allocate freely. */

static atomic_bool stop_churn;

static void *alloc_loop(void *arg)
{
	uint64_t seed = (uintptr_t)arg + 7;
	void *keep[64] = { 0 };

	while (!atomic_load_explicit(&stop_churn, memory_order_relaxed)) {
		seed = seed * 6364136223846793005ull + 1;
		unsigned i = (unsigned)(seed >> 58);
		free(keep[i]);
		keep[i] = malloc((seed >> 20) % 3000 + 1);
		if ((seed & 0xff) == 0) {
			free(keep[i]);
			keep[i] = malloc(((seed >> 20) % 200) << 10);
		}
	}
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	return NULL;
}

static void *child_thread(void *arg)
{
	for (int i = 0; i < 1000; i++)
		free(malloc((size_t)i * 13 % 5000 + 1));
	return arg;
}

static void test_fork(void)
{
	pthread_t t[4];
	int bad = 0;

	atomic_store(&stop_churn, false);
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, alloc_loop, (void *)i);
	for (int k = 0; k < 40; k++) {
		int status;
		pid_t pid = fork();

		if (pid == 0) {
			pthread_t ct;
			void *v[256];

			alarm(20);	/* a deadlock shows as SIGALRM */
			for (int i = 0; i < 256; i++) {
				v[i] = malloc((size_t)i * 97 + 1);
				if (!v[i])
					_exit(2);
				memset(v[i], i, (size_t)i * 97 + 1);
			}
			for (int i = 0; i < 256; i++)
				free(v[i]);
			/* The child can start threads that allocate, too. */
			if (pthread_create(&ct, NULL, child_thread, NULL))
				_exit(3);
			pthread_join(ct, NULL);
			void *big = malloc(8 << 20);

			if (!big)
				_exit(4);
			free(big);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			bad++;
			CHECK(0, "fork %d: child status 0x%x", k, status);
		}
		usleep(1000);
	}
	atomic_store(&stop_churn, true);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(bad == 0, "%d children failed", bad);
}

/* ---------------------------------------------------------------------- */
/* Thousands of short-lived threads: RSS must stay bounded. */

static void *short_thread(void *arg)
{
	void *v[32];

	for (int i = 0; i < 32; i++) {
		v[i] = malloc((size_t)(i + 1) * 40);
		if (v[i])
			memset(v[i], i, (size_t)(i + 1) * 40);
	}
	/* Free half here and hand the other half to the parent. */
	for (int i = 0; i < 32; i += 2)
		free(v[i]);
	void **out = malloc(16 * sizeof(void *));

	if (out)
		for (int i = 0; i < 16; i++)
			out[i] = v[2 * i + 1];
	return out;
}

static void churn_threads(int n)
{
	for (int i = 0; i < n; i += 8) {
		pthread_t t[8];
		void *r[8];

		for (int j = 0; j < 8; j++)
			if (pthread_create(&t[j], NULL, short_thread, NULL))
				t[j] = 0;
		for (int j = 0; j < 8; j++) {
			if (!t[j] || pthread_join(t[j], &r[j]))
				continue;
			if (r[j]) {
				for (int k = 0; k < 16; k++)
					free(((void **)r[j])[k]);
				free(r[j]);
			}
		}
	}
}

static void test_thread_churn(void)
{
	size_t after_warmup, after;

	churn_threads(400);
	after_warmup = test_rss_bytes();
	churn_threads(4000);
	after = test_rss_bytes();
	printf("    RSS after 400 threads %zu KiB, after 4400 threads %zu KiB\n",
	       after_warmup >> 10, after >> 10);
	CHECK(after < after_warmup + (16u << 20),
	      "RSS grew by %zu KiB over 4000 short threads",
	      (after - after_warmup) >> 10);
}

/* ---------------------------------------------------------------------- */
/* RSS falls after a large free at once, and after small frees on trim. */

/*
 * 200000 small blocks of @size + (i % @kinds) * @step bytes, each touched,
 * then all freed: the RSS before them (after a malloc_trim, so that earlier
 * tests' free memory does not hide the rise) and at their peak. False if
 * the array of blocks could not be had.
 */
static bool rss_small_blocks(size_t size, size_t step, int kinds, size_t *base,
			     size_t *peak)
{
	enum { N = 200000 };
	void **v = malloc(N * sizeof(void *));

	CHECK(v, "array");
	if (!v)
		return false;
	malloc_trim(0);
	*base = test_rss_bytes();
	for (int i = 0; i < N; i++) {
		size_t s = size + (size_t)(i % kinds) * step;

		v[i] = malloc(s);
		if (v[i])
			memset(v[i], 1, s);
	}
	*peak = test_rss_bytes();
	for (int i = 0; i < N; i++)
		free(v[i]);
	free(v);
	return true;
}

static void test_rss_falls(void)
{
	size_t base, peak, after;
	size_t big = 256u << 20;
	char *p = malloc(big);

	CHECK(p, "malloc(256 MiB)");
	if (!p)
		return;
	base = test_rss_bytes();
	memset(p, 1, big);
	peak = test_rss_bytes();
	free(p);
	after = test_rss_bytes();
	printf("    large: RSS %zu -> %zu -> %zu MiB\n", base >> 20, peak >> 20,
	       after >> 20);
	CHECK(peak > base + (200u << 20), "touching 256 MiB did not raise RSS");
	CHECK(after < base + (32u << 20), "RSS did not fall after free(256 MiB)");

	/* 200000 small blocks, about 100 MiB; freed; then malloc_trim(0). */
	if (!rss_small_blocks(200, 100, 7, &base, &peak))
		return;
	malloc_trim(0);
	after = test_rss_bytes();
	printf("    small: RSS %zu -> %zu -> %zu MiB after malloc_trim\n",
	       base >> 20, peak >> 20, after >> 20);
	CHECK(peak > base + (64u << 20), "small blocks did not raise RSS");
	CHECK(after < base + (peak - base) / 4,
	      "RSS did not fall after freeing small blocks and malloc_trim");
}

/*
 * Small frees with no malloc_trim: uslab must bring RSS down by itself
 * (empty slabs back to page_alloc, pages beyond the resident watermark to
 * the OS, the reaper for what magazines and depots hold) within seconds.
 * glibc keeps freed fastbin and tcache chunks until malloc_trim, so there
 * this test only reports.
 */
static void test_rss_no_trim(void)
{
	size_t base, peak, after = 0;
	int waited_ms = 0;

	if (!rss_small_blocks(64, 64, 5, &base, &peak))
		return;
	for (; waited_ms <= (on_uslab ? 10000 : 0); waited_ms += 250) {
		after = test_rss_bytes();
		if (after < base + (peak - base) / 4)
			break;
		usleep(250000);
	}
	printf("    RSS %zu -> %zu -> %zu MiB, %d ms after the frees\n",
	       base >> 20, peak >> 20, after >> 20, waited_ms);
	CHECK(peak > base + (32u << 20), "small blocks did not raise RSS");
	if (!on_uslab) {
		printf("    (not checked on the C library)\n");
		return;
	}
	/* Set by the test script for presets built to keep memory (unlimited). */
	if (getenv("CONFORM_KEEPS_MEMORY")) {
		printf("    (not checked: this configuration keeps free memory)\n");
		return;
	}
	CHECK(after < base + (peak - base) / 4,
	      "RSS still %zu MiB 10 s after the frees (base %zu, peak %zu)",
	      after >> 20, base >> 20, peak >> 20);
}

static void test_misc(void)
{
	void *p = malloc(1000);
	struct mallinfo2 mi = mallinfo2();

	CHECK(mi.arena + mi.hblkhd > 0, "mallinfo2 shows nothing held");
	free(p);
	/* free_sized / free_aligned_sized are C23; glibc 2.36 lacks them. */
	void (*fs)(void *, size_t) = free_sized;
	void (*fas)(void *, size_t, size_t) = free_aligned_sized;

	if (!fs)
		fs = (void (*)(void *, size_t))dlsym(RTLD_DEFAULT, "free_sized");
	if (!fas)
		fas = (void (*)(void *, size_t, size_t))dlsym(RTLD_DEFAULT,
							      "free_aligned_sized");

	if (on_uslab)
		CHECK(fs && fas, "uslab without free_sized/free_aligned_sized");
	if (fs && fas) {
		fs(malloc(40), 40);
		fas(aligned_alloc(256, 512), 256, 512);
	}
	/* The __libc_ names reach the same allocator. */
	void *(*lm)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "__libc_malloc");

	if (lm) {
		void *q = lm(100);

		CHECK(q && malloc_usable_size(q) >= 100, "__libc_malloc");
		free(q);
	}
	CHECK(malloc_trim(0) >= 0, "malloc_trim");
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "sizes", test_sizes },
	{ "random_model", test_random_model },
	{ "calloc", test_calloc },
	{ "realloc", test_realloc },
	{ "realloc_large_moves", test_realloc_large_moves },
	{ "memalign", test_memalign },
	{ "enomem", test_enomem },
	{ "enomem_limit", test_enomem_limit },
	{ "cross_thread", test_cross_thread },
	{ "fork", test_fork },
	{ "thread_churn", test_thread_churn },
	{ "rss_falls", test_rss_falls },
	{ "rss_no_trim", test_rss_no_trim },
	{ "misc", test_misc },
};

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--limit-child"))
		return enomem_limit_child();
	on_uslab = uslab_malloc_stats || dlsym(RTLD_DEFAULT, "uslab_malloc_stats");
	printf("malloc conformance suite on %s\n", on_uslab ? "uslab" : "the C library");
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		bool wanted = argc == 1;

		for (int a = 1; a < argc; a++)
			wanted |= !strcmp(argv[a], tests[i].name);
		if (!wanted)
			continue;
		test_name = tests[i].name;
		test_failures = 0;
		printf("  %s\n", test_name);
		tests[i].fn();
		if (test_failures) {
			printf("  FAIL %s (%d checks failed)\n", test_name, test_failures);
			failed++;
		} else {
			printf("  ok   %s\n", test_name);
			passed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
