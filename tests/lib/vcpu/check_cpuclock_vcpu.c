// SPDX-License-Identifier: MIT
/*
 * lib/cpuclock.h's virtual backend (built with USLAB_VCPU=1, linked with
 * libuslab-core-vcpu.a): the CPU is the one the simulator named, and the
 * virtual clock runs periodic work at its deadlines, in deadline order
 * (ties: the order the works were first started), each seeing its own
 * deadline as the time. Each test runs in its own process (Check's fork):
 * the schedule starts empty.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "lib/cpuclock.h"
#include "lib/thread.h"
#include "tests/suite.h"

#define MS	1000000ull

/* What ran: work letter and the time it saw. */
static char ran[64];
static uint64_t ran_at[64];
static unsigned int nran;

static void note(char who)
{
	ck_assert_uint_lt(nran, sizeof(ran) - 1);
	ran[nran] = who;
	ran_at[nran++] = uslab_now_ns();
}

static int state_a, state_b, state_c;
static struct uslab_periodic work_c;

static void run_a(void) { note('a'); }
static void run_b(void) { note('b'); }
static void run_c(void) { note('c'); }

static struct uslab_periodic work_a = {
	.name = "a", .fn = run_a, .state = &state_a, .period_ns = 3 * MS,
};
static struct uslab_periodic work_b = {
	.name = "b", .fn = run_b, .state = &state_b, .period_ns = 2 * MS,
};
static struct uslab_periodic work_c = {
	.name = "c", .fn = run_c, .state = &state_c, .period_ns = 1 * MS,
};

TEST(core, test_vclock_runs_work_in_deadline_order)
{
	static const uint64_t at[] = { 2, 3, 4, 6, 6, 8, 9 };
	unsigned int i;

	ck_assert_int_eq(uslab_periodic_start(&work_a, USLAB_THREAD_NONE), 0);
	ck_assert_int_eq(uslab_periodic_start(&work_b, USLAB_THREAD_NONE), 0);
	/* started once: a second start finds it running */
	ck_assert_int_eq(uslab_periodic_start(&work_a, USLAB_THREAD_NONE), -EALREADY);
	ck_assert_int_eq(state_a, USLAB_THREAD_RUNNING);
	ck_assert_int_eq(uslab_vclock_set(1 * MS), 0);
	ck_assert_uint_eq(nran, 0);
	/* one jump over many deadlines runs each at its own time */
	ck_assert_int_eq(uslab_vclock_set(9 * MS + 1), 0);
	ran[nran] = '\0';
	/* at 6 ms both are due: a was started first */
	ck_assert_str_eq(ran, "bababba");
	for (i = 0; i < nran; i++)
		ck_assert_uint_eq(ran_at[i], at[i] * MS);
	ck_assert_uint_eq(uslab_now_ns(), 9 * MS + 1);
	/* never backwards, and nothing runs then */
	ck_assert_int_eq(uslab_vclock_set(5 * MS), -EINVAL);
	ck_assert_uint_eq(uslab_now_ns(), 9 * MS + 1);
}
END_TEST

/* A work that starts another from inside its run (as the reaper's pass
 * polls page_alloc's decay): the new one is due a period after that run. */
static void run_a_starts_c(void)
{
	note('a');
	uslab_periodic_start(&work_c, USLAB_THREAD_WANTED);
}

TEST(core, test_vclock_work_started_inside_work)
{
	work_a.fn = run_a_starts_c;
	state_c = USLAB_THREAD_WANTED;
	ck_assert_int_eq(uslab_periodic_start(&work_a, USLAB_THREAD_NONE), 0);
	ck_assert_int_eq(uslab_vclock_set(6 * MS), 0);
	ran[nran] = '\0';
	/* a@3 starts c: c@4, c@5, then at 6 a (started first) before c */
	ck_assert_str_eq(ran, "accac");
	ck_assert_uint_eq(ran_at[1], 4 * MS);
	ck_assert_uint_eq(ran_at[3], 6 * MS);
	ck_assert_uint_eq(ran_at[4], 6 * MS);
}
END_TEST

TEST(core, test_vclock_cancel_and_period)
{
	ck_assert_int_eq(uslab_periodic_start(&work_b, USLAB_THREAD_NONE), 0);
	ck_assert_int_eq(uslab_vclock_set(2 * MS), 0);
	ck_assert_uint_eq(nran, 1);
	/* the new period counts from the next deadline on */
	uslab_periodic_set_period(&work_b, 5 * MS);
	ck_assert_int_eq(uslab_vclock_set(9 * MS), 0);
	ck_assert_uint_eq(nran, 3);	/* 4 ms, then 9 ms */
	ck_assert_uint_eq(ran_at[2], 9 * MS);
	uslab_periodic_cancel(&work_b);
	ck_assert_int_eq(uslab_vclock_set(100 * MS), 0);
	ck_assert_uint_eq(nran, 3);
}
END_TEST

TEST(core, test_vcpu_is_the_simulators)
{
	ck_assert_int_eq(uslab_cpu_id(), 0);
	ck_assert_uint_eq(uslab_vcpu_nr(), 64);
	ck_assert_int_eq(uslab_vcpu_set(5), 0);
	ck_assert_int_eq(uslab_cpu_id(), 5);
	ck_assert_int_eq(uslab_vcpu_set(-1), -EINVAL);
	ck_assert_int_eq(uslab_vcpu_set(64), -EINVAL);
	ck_assert_int_eq(uslab_cpu_id(), 5);
	ck_assert_int_eq(uslab_vcpu_set_nr(0), -EINVAL);
	ck_assert_int_eq(uslab_vcpu_set_nr(USLAB_MAX_VCPUS + 1), -EINVAL);
	/* fewer CPUs: one out of range is no longer the current one */
	ck_assert_int_eq(uslab_vcpu_set_nr(4), 0);
	ck_assert_int_eq(uslab_cpu_id(), 0);
	ck_assert_int_eq(uslab_vcpu_set(4), -EINVAL);
	ck_assert_int_eq(uslab_vcpu_set(3), 0);
	ck_assert_int_eq(uslab_cpu_id(), 3);
}
END_TEST

static const struct test_case cases[] = {
	{ .name = "core", .timeout = 30 },
};

int main(void)
{
	return test_run_suite(test_suite("cpuclock_vcpu", cases, ARRAY_SIZE(cases)));
}
