/* SPDX-License-Identifier: MIT */
/*
 * How a Check suite is written, once: each test registers itself where it
 * is defined, so no list names the tests a second time (and none can be
 * left out of one):
 *
 *	TEST(core, test_name)
 *	{
 *		...
 *	}
 *	END_TEST
 *
 * TEST_IF(cond, core, name) adds the test only when @cond holds (a Kconfig
 * option, the environment), TEST_LOOP(core, name, lo, hi) runs it for _i
 * in [lo, hi), TEST_SIGNAL_IF(cond, core, name, sig) expects it to die of
 * @sig. The suite's test cases, in the order they run, with their timeout
 * (seconds, 0: CK_DEFAULT_TIMEOUT) and fixture, are one table:
 *
 *	static const struct test_case cases[] = {
 *		{ .name = "core", .timeout = 120 },
 *		{ .name = "debug", .timeout = 60, .skip = !IS_ENABLED(CONFIG_SLAB_DEBUG) },
 *	};
 *
 *	int main(void)
 *	{
 *		return test_run_suite(test_suite("slab", cases, ARRAY_SIZE(cases)));
 *	}
 *
 * A suite of one case needs no table: TEST_SUITE_MAIN("slab-rcu", "rcu", 120)
 * is that main().
 *
 * Within a case, tests run in the order of the file. test_run_suite() takes
 * CK_FORK and CK_DEFAULT_TIMEOUT from the environment, as tests/run-all.sh
 * sets them.
 */
#ifndef USLAB_TESTS_SUITE_H
#define USLAB_TESTS_SUITE_H

#include <check.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/compiler.h"
#include "lib/log.h"

struct test_case {
	const char *name;
	double timeout;			/* seconds; 0: Check's default */
	bool skip;			/* leave the whole case out */
	void (*setup)(void);		/* checked fixture, in the test's process */
	void (*teardown)(void);
};

/* One registered test (the TEST macros fill these, before main()). */
struct test_entry {
	const char *tcase;
	const TTest *const *test;
	bool enabled;
	int signal, loop_start, loop_end;
	struct test_entry *next;
};

static struct test_entry *test_entries;

static inline void test_register(struct test_entry *e)
{
	e->next = test_entries;
	test_entries = e;
}

#define TEST_FULL(tc, name, cond, sig, lo, hi)				\
	static const TTest *name;					\
	static struct test_entry name##_entry = {			\
		.tcase = #tc, .test = &name, .signal = (sig),		\
		.loop_start = (lo), .loop_end = (hi),			\
	};								\
	static void __attribute__((constructor)) name##_register(void)	\
	{								\
		name##_entry.enabled = (cond);				\
		test_register(&name##_entry);				\
	}								\
	START_TEST(name)

#define TEST(tc, name)			TEST_FULL(tc, name, true, 0, 0, 1)
#define TEST_IF(cond, tc, name)		TEST_FULL(tc, name, cond, 0, 0, 1)
#define TEST_LOOP(tc, name, lo, hi)	TEST_FULL(tc, name, true, 0, lo, hi)
#define TEST_SIGNAL_IF(cond, tc, name, sig) TEST_FULL(tc, name, cond, sig, 0, 1)

/* The registered tests of case @c, in the order of their source lines. */
static inline void test_add_case(TCase *tc, const struct test_case *c)
{
	int last = -1;

	for (;;) {
		const struct test_entry *next = NULL;

		for (const struct test_entry *e = test_entries; e; e = e->next)
			if (e->enabled && !strcmp(e->tcase, c->name) && (*e->test)->line > last &&
			    (!next || (*e->test)->line < (*next->test)->line))
				next = e;
		if (!next)
			return;
		_tcase_add_test(tc, *next->test, next->signal, 0, next->loop_start,
				next->loop_end);
		last = (*next->test)->line;
	}
}

/* main() of suite @suite with the one test case @tc, timeout @secs. */
#define TEST_SUITE_MAIN(suite, tc, secs)					\
	int main(void)							\
	{								\
		static const struct test_case cases[] = {		\
			{ .name = (tc), .timeout = (secs) },		\
		};							\
									\
		return test_run_suite(test_suite(suite, cases, ARRAY_SIZE(cases))); \
	}

static inline Suite *test_suite(const char *name, const struct test_case *cases, size_t n)
{
	Suite *s = suite_create(name);

	for (size_t i = 0; i < n; i++) {
		TCase *tc;

		if (cases[i].skip)
			continue;
		tc = tcase_create(cases[i].name);
		if (cases[i].timeout)
			tcase_set_timeout(tc, cases[i].timeout);
		if (cases[i].setup || cases[i].teardown)
			tcase_add_checked_fixture(tc, cases[i].setup, cases[i].teardown);
		test_add_case(tc, &cases[i]);
		suite_add_tcase(s, tc);
	}
	return s;
}

/*
 * Keep this thread on the CPU it runs on (per-CPU magazines: a test that
 * counts what its own frees make reusable must not migrate), @old saved
 * for test_unpin(). Return: the CPU.
 */
static inline int test_pin(cpu_set_t *old)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	ck_assert_int_eq(sched_getaffinity(0, sizeof(*old), old), 0);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
	return sched_getcpu();
}

static inline void test_unpin(const cpu_set_t *old)
{
	ck_assert_int_eq(sched_setaffinity(0, sizeof(*old), old), 0);
}

/*
 * A debug check's report, caught: run @fn(@fd, @arg) in a child whose log
 * (uslab_log_set_fd) goes to a pipe, @fd its write end, where the child may
 * first write what it expects. The child must die of SIGABRT (the check
 * fired); returning is a failure. What it wrote, NUL-terminated, is left in
 * @out (@size bytes) for the caller to match.
 */
static inline void test_catch_abort(void (*fn)(int fd, void *arg), void *arg,
				    char *out, size_t size)
{
	int fds[2], status;
	ssize_t n, len = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		cpu_set_t one;

		/*
		 * On the CPU it runs on: a double free's two copies must meet
		 * in one CPU's magazine, and a migration between the free and
		 * the allocation sent the second allocation to another CPU's
		 * (the check then never fired: "child did not abort", about 1
		 * run in 5 of test_percpu_modes' fallback runs).
		 */
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu(), &one);
		sched_setaffinity(0, sizeof(one), &one);
		close(fds[0]);
		uslab_log_set_fd(fds[1]);
		signal(SIGABRT, SIG_DFL);
		fn(fds[1], arg);
		_exit(0);	/* the check did not fire */
	}
	close(fds[1]);
	while ((n = read(fds[0], out + len, size - 1 - (size_t)len)) > 0)
		len += n;
	out[len] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		      "child did not abort; output: %s", out);
}

/* Run @s; @fork: CK_FORK always, or CK_FORK_GETENV (the environment). */
static inline int test_run_suite_fork(Suite *s, enum fork_status fork)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_set_fork_status(sr, fork);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

static inline int test_run_suite(Suite *s)
{
	return test_run_suite_fork(s, CK_FORK_GETENV);
}

#endif /* USLAB_TESTS_SUITE_H */
