#!/usr/bin/env bash
# The slab suite, percpu's own suite and its thread caches' (fallback
# mode's, percpu/tcache.c) under valgrind (memcheck), in one
# process each (CK_FORK=no) so that every error is caught and reported.
# valgrind cannot run rseq critical sections: uslab sees RUNNING_ON_VALGRIND
# and runs in fallback mode, which the percpu suite checks. Any memcheck
# error fails the test (--error-exitcode=1). USLAB_TEST_LIGHT shortens the
# loops whose rounds all assert the same thing (tests/testutil.h,
# test_iters()): every case still runs and asserts, in fewer rounds, so the
# test holds its budget on a loaded machine (489 s alone before, when a
# thread handoff under --fair-sched waited for a CPU each time).
set -u
O=${O:-build}
if ! command -v valgrind >/dev/null; then
	echo "valgrind is not installed (scripts/deps.sh installs it)"
	exit 1
fi
mode=fallback
grep -q '^CONFIG_PERCPU_CACHE=y' "$O/auto.conf" || mode=off
vg=(valgrind -q --error-exitcode=1 --fair-sched=yes --leak-check=no)
fail=0
for suite in percpu/check_percpu percpu/check_percpu_tcache slab/check_slab; do
	log=$O/test-logs/valgrind-${suite#*/}.log
	mkdir -p "$O/test-logs"
	start=$(date +%s)
	if USLAB_EXPECT_PCP_MODE=$mode USLAB_TEST_LIGHT=1 CK_FORK=no CK_DEFAULT_TIMEOUT=600 \
	   "${vg[@]}" "$O/tests/$suite" >"$log" 2>&1; then
		echo "ok   $suite under valgrind ($(( $(date +%s) - start ))s): $(grep -E '^[0-9]+%: Checks' "$log")"
	else
		echo "FAIL $suite under valgrind"
		tail -40 "$log"
		fail=1
	fi
done
exit $fail
