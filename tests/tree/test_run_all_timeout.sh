#!/usr/bin/env bash
# tests/run-all.sh with a test past TEST_TIMEOUT (issue 20, finding 21): the
# test's line says "timed out after N s" instead of a bare FAIL, both for a
# test that stops on SIGTERM and for one that ignores it (killed 10 s
# later), and the run goes on to the next test and counts the failures.
. "$(dirname "$0")/../lib.sh"
set +e
mkdir -p "$T/t"
printf '#!/bin/bash\nsleep 60\n' > "$T/t/test_sleeps.sh"
printf '#!/bin/bash\ntrap "" TERM\nfor i in $(seq 600); do sleep 0.1; done\n' > "$T/t/test_ignores_term.sh"
printf '#!/bin/bash\nexit 0\n' > "$T/t/test_passes.sh"
run_rc env O="$T/o" TEST_TIMEOUT=1 bash tests/run-all.sh "$T/t/test_sleeps.sh" \
	"$T/t/test_ignores_term.sh" "$T/t/test_passes.sh" > "$T/out" 2>&1
[ $rc -ne 0 ] || bad "run-all passed with two tests past their limit"
for t in test_sleeps.sh test_ignores_term.sh; do
	grep -q "^  FAIL $t .*timed out after 1 s" "$T/out" || bad "$t: $(grep "$t" "$T/out" | head -1)"
	grep -q "timed out after 1 s" "$T/o/test-logs/$t.log" || bad "$t: its log does not say it timed out"
done
grep -q '^  PASS test_passes.sh' "$T/out" || bad "the test after them did not run: $(cat "$T/out")"
grep -q '^1 passed, 2 failed$' "$T/out" || bad "summary: $(tail -1 "$T/out")"
[ $failed -eq 0 ] && echo "run-all: a test past TEST_TIMEOUT says it timed out"
exit $failed
