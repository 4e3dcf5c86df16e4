/* SPDX-License-Identifier: MIT */
/*
 * The main() of every Check suite, written once: run the suite, exit status
 * from its failures (CK_FORK and CK_DEFAULT_TIMEOUT from the environment, as
 * tests/run-all.sh sets them).
 */
#ifndef USLAB_TESTS_SUITE_H
#define USLAB_TESTS_SUITE_H

#include <check.h>
#include <stdlib.h>

static inline int test_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* USLAB_TESTS_SUITE_H */
