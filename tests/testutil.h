/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the tests (libc only, so the integration tests of
 * tests/malloc/ may include it too): a seed that can be set from the
 * environment to repeat a randomized run, a small seedable generator, the
 * process's RSS, a ring that hands blocks from producer threads to
 * consumer threads.
 */
#ifndef USLAB_TESTS_TESTUTIL_H
#define USLAB_TESTS_TESTUTIL_H

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * The seed of a randomized test: $@env if set, else time ^ pid. Printed
 * once so that a failing run can be repeated.
 */
static inline unsigned long test_seed_from_env(const char *env, const char *suite)
{
	static unsigned long seed;
	const char *val;

	if (seed)
		return seed;
	val = getenv(env);
	seed = val ? strtoul(val, NULL, 0) :
		     (unsigned long)time(NULL) ^ (unsigned long)getpid();
	if (!seed)
		seed = 1;
	fprintf(stderr, "%s: seed %lu (set %s to repeat)\n", suite, seed, env);
	return seed;
}

/*
 * Rounds of a loop whose every round asserts the same thing: @n, or
 * @light when USLAB_TEST_LIGHT is set. tests/percpu/test_percpu_valgrind.sh
 * sets it: under valgrind a round costs 20 to 50 times more (and a thread
 * handoff a scheduling round on a loaded machine), and the suite must stay
 * within its time budget (tests/README.md) while asserting the same.
 */
static inline unsigned int test_iters(unsigned int n, unsigned int light)
{
	static int on = -1;	/* threads of a test may race to set it */
	int v = __atomic_load_n(&on, __ATOMIC_RELAXED);

	if (v < 0) {
		v = getenv("USLAB_TEST_LIGHT") != NULL;
		__atomic_store_n(&on, v, __ATOMIC_RELAXED);
	}
	return v ? light : n;
}

/* The resident set of this process in bytes (/proc/self/statm, through
 * stdio: the allocator under test serves it), 0 if unreadable. */
static inline size_t test_rss_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	fclose(f);
	return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* The peak resident set (VmHWM of /proc/self/status) in bytes, 0 if
 * unreadable; read with open/read, so no allocation of the allocator
 * under test moves it. */
static inline size_t test_peak_rss_bytes(void)
{
	char buf[4096], *v;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	v = strstr(buf, "\nVmHWM:");
	return v ? (size_t)strtoul(v + 7, NULL, 10) << 10 : 0;
}

/* Marsaglia's xorshift64 (13, 7, 17): the generator whose sequences the
 * trace and malloc tests' seeds name; per caller state, never 0. */
static inline uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* xorshift64*: small, seedable, per caller state */
static inline uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/*
 * Cross-thread frees: producers put blocks (with their size) into a
 * bounded ring, waiting while it is full; consumers take them, waiting
 * while it is empty, until it is empty and every producer is done. Set
 * producers_left before the threads start. head and tail count the
 * blocks put and taken (both under the lock).
 */
#define TEST_RING_SLOTS 1024
struct test_ring {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void *slot[TEST_RING_SLOTS];
	size_t size[TEST_RING_SLOTS];
	unsigned int head, tail, producers_left;
};
#define TEST_RING_INIT { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER }

static inline void test_ring_put(struct test_ring *r, void *p, size_t size)
{
	pthread_mutex_lock(&r->lock);
	while (r->head - r->tail == TEST_RING_SLOTS)
		pthread_cond_wait(&r->cond, &r->lock);
	r->slot[r->head % TEST_RING_SLOTS] = p;
	r->size[r->head % TEST_RING_SLOTS] = size;
	r->head++;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* A producer has put its last block. */
static inline void test_ring_done(struct test_ring *r)
{
	pthread_mutex_lock(&r->lock);
	r->producers_left--;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* The next block and its size; false once none is left or coming. */
static inline bool test_ring_get(struct test_ring *r, void **p, size_t *size)
{
	pthread_mutex_lock(&r->lock);
	while (r->head == r->tail && r->producers_left)
		pthread_cond_wait(&r->cond, &r->lock);
	if (r->head == r->tail) {
		pthread_mutex_unlock(&r->lock);
		return false;
	}
	*p = r->slot[r->tail % TEST_RING_SLOTS];
	*size = r->size[r->tail % TEST_RING_SLOTS];
	r->tail++;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return true;
}

#endif /* USLAB_TESTS_TESTUTIL_H */
