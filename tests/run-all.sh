#!/usr/bin/env bash
# Runs every Check suite and shell test given as arguments, each to the end
# even when an earlier one fails, then prints one summary line per test and a
# closing "N passed, N failed" line. Exit status: 0 only if all passed.
set -u
# Tests run their own builds (redis): they must not inherit our make flags
# (--no-builtin-variables would take CC and AR away from them).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
O=${O:-build}
export O
pass=0; fail=0; failed=()
log=$O/test-logs
mkdir -p "$log"
start_all=$(date +%s)
for t in "$@"; do
	name=$(basename "$t")
	start=$(date +%s)
	case "$t" in
	*.sh) cmd=(bash "$t") ;;
	*) cmd=("$t") ;;
	esac
	# CK_FORK=yes isolates test cases; suites may override per case. A
	# suite past TEST_TIMEOUT gets SIGTERM, and SIGKILL 10 s later.
	limit=${TEST_TIMEOUT:-300}
	rc=0
	CK_FORK=${CK_FORK:-yes} timeout -k 10 "$limit" "${cmd[@]}" >"$log/$name.log" 2>&1 || rc=$?
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); res=PASS
	else
		fail=$((fail + 1)); res=FAIL; failed+=("$name")
	fi
	end=$(date +%s)
	# Check prints "NN%: Checks: X, Failures: Y, Errors: Z"; show it. A
	# suite stopped at its limit says so (timeout: 124, or 137 after KILL).
	summary=$(grep -E '^[0-9]+%: Checks:' "$log/$name.log" | tail -1)
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		summary="timed out after $limit s (TEST_TIMEOUT; tests/README.md)"
		echo "run-all: $name timed out after $limit s" >>"$log/$name.log"
	fi
	printf '  %-4s %-28s %4ss  %s\n' "$res" "$name" "$((end - start))" "$summary"
	if [ "$res" = FAIL ]; then
		tail -n 30 "$log/$name.log" | sed 's/^/       | /'
	fi
done
echo "  total time: $(( $(date +%s) - start_all ))s (logs in $log/)"
[ ${#failed[@]} -gt 0 ] && echo "  failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
