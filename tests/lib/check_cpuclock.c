// SPDX-License-Identifier: MIT
/*
 * lib/cpuclock.h's real backend (libuslab-core.a): the CPU is the kernel's,
 * the clock CLOCK_MONOTONIC, and a periodic work runs on a thread of its
 * own with every signal blocked until it is cancelled (after which none of
 * its runs begins, and the one in progress has ended). The simulator's
 * driving calls are refused here. Each test runs in its own process.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "lib/cpuclock.h"
#include "lib/thread.h"
#include "tests/suite.h"

#define MS	1000000ull

TEST(core, test_real_cpu_is_the_kernels)
{
	cpu_set_t set;
	int cpu;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
		;
	ck_assert_int_lt(cpu, CPU_SETSIZE);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
	sched_yield();	/* on that CPU from here on */
	ck_assert_int_eq(uslab_cpu_id(), cpu);
	ck_assert_int_eq(uslab_cpu_id(), sched_getcpu());
	/* the simulator's calls are the virtual backend's only */
	ck_assert_int_eq(uslab_vcpu_set(0), -EOPNOTSUPP);
	ck_assert_int_eq(uslab_vclock_set(1), -EOPNOTSUPP);
	ck_assert_int_eq(uslab_vcpu_set_nr(2), -EOPNOTSUPP);
}
END_TEST

TEST(core, test_real_clock_is_monotonic)
{
	struct timespec ts = { 0, 2 * MS };
	uint64_t a = uslab_now_ns(), b;

	nanosleep(&ts, NULL);
	b = uslab_now_ns();
	ck_assert_uint_ge(b - a, 2 * MS);
}
END_TEST

static int runs, in_run, blocked_ok = 1;
static int work_state;

static void count_run(void)
{
	sigset_t cur;

	__atomic_store_n(&in_run, 1, __ATOMIC_SEQ_CST);
	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	if (!sigismember(&cur, SIGINT) || !sigismember(&cur, SIGTERM))
		blocked_ok = 0;
	usleep(2000);	/* a cancel meanwhile must wait for this run */
	__atomic_add_fetch(&runs, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&in_run, 0, __ATOMIC_SEQ_CST);
}

static struct uslab_periodic work = {
	.name = "test", .fn = count_run, .state = &work_state,
	.period_ns = 5 * MS,
};

TEST(core, test_real_periodic_thread_runs_until_cancelled)
{
	int i, n;

	ck_assert_int_eq(uslab_periodic_start(&work, USLAB_THREAD_NONE), 0);
	ck_assert_int_eq(work_state, USLAB_THREAD_RUNNING);
	ck_assert_int_eq(uslab_periodic_start(&work, USLAB_THREAD_NONE), -EALREADY);
	/* a few periods (bounded: 5 s) */
	for (i = 0; i < 5000 && __atomic_load_n(&runs, __ATOMIC_SEQ_CST) < 3; i++)
		usleep(1000);
	ck_assert_int_ge(runs, 3);
	ck_assert_int_eq(blocked_ok, 1);	/* every signal blocked there */
	work_state = USLAB_THREAD_NR_STATES;	/* the owner's "stopped" */
	uslab_periodic_cancel(&work);
	/* joined: no run in progress, and none begins after */
	ck_assert_int_eq(in_run, 0);
	n = runs;
	usleep(30000);
	ck_assert_int_eq(runs, n);
}
END_TEST

static const struct test_case cases[] = {
	{ .name = "core", .timeout = 30 },
};

int main(void)
{
	return test_run_suite(test_suite("cpuclock", cases, ARRAY_SIZE(cases)));
}
