#!/usr/bin/env bash
# make check-sanitize: the layer suites under ASan+UBSan, and the
# concurrent parts (depot, fallback mode, reaper, drain) under TSan.
#   ASan+UBSan: this config with CONFIG_DEBUG_SANITIZE=y in $O/asan; every
#               Check suite of the core library (tests/*/check_*.c), in
#               rseq mode, and percpu, stress and slab under the
#               seccomp launcher (fallback mode). halt_on_error: a report
#               fails the suite.
#   TSan:       this config built with -fsanitize=thread in $O/tsan; the
#               percpu suite and the stress (threads, drains, resizes,
#               reaper) in fallback mode (TSan does not understand rseq
#               critical sections: the seccomp launcher refuses rseq).
# Usage: percpu/check-sanitize.sh BUILD   (run by `make check-sanitize`)
set -u
O=$1
ASAN=$O/asan
TSAN=$O/tsan
noseq=$O/tests/percpu/percpu_no_rseq
# every Check suite of the core library (tests/LAYER/check_*.c), as LAYER/check_NAME
suites=$(cd tests && ls */check_*.c | sed 's/\.c$//')
fail=0
mk() {		# mk DIR EXTRA-CONFIG-LINE MAKE-ARGS...
	local dir=$1 line=$2
	shift 2
	mkdir -p "$dir"
	cp "${KCONFIG_CONFIG:-.config}" "$dir/.config"
	[ -n "$line" ] && echo "$line" >> "$dir/.config"
	make --no-print-directory O="$dir" KCONFIG_CONFIG="$dir/.config" "$@" \
		$(for s in $suites; do echo "$dir/tests/$s"; done) \
		"$dir/tests/percpu/percpu_no_rseq" >"$dir/build.log" 2>&1 ||
		{ echo "FAIL build in $dir:"; tail -20 "$dir/build.log"; exit 1; }
}
run() {		# run WHAT CMD...
	local what=$1 log
	shift
	log=$O/test-logs/sanitize-$(echo "$what" | tr ' /' '__').log
	mkdir -p "$O/test-logs"
	# (sanitized code is several times slower: Check's timeouts too)
	if CK_FORK=yes CK_TIMEOUT_MULTIPLIER=6 USLAB_STRESS_SECONDS=${USLAB_STRESS_SECONDS:-2} \
	   "$@" >"$log" 2>&1 &&
	   ! grep -qE '^(==[0-9]+==ERROR|WARNING: ThreadSanitizer|SUMMARY: (Address|Undefined|Thread)Sanitizer)|runtime error:' "$log"; then
		echo "ok   $what: $(grep -E '^[0-9]+%: Checks' "$log" | tail -1)"
	else
		echo "FAIL $what (log: $log)"
		grep -m5 -E 'ERROR|WARNING: ThreadSanitizer|runtime error|SUMMARY|Checks' "$log"
		fail=1
	fi
}

echo "== ASan + UBSan ($ASAN)"
mk "$ASAN" "CONFIG_DEBUG_SANITIZE=y"
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for s in $suites; do
	run "asan $s" "$ASAN/tests/$s"
done
run "asan check_percpu fallback" "$noseq" "$ASAN/tests/percpu/check_percpu"
run "asan check_percpu_stress fallback" "$noseq" "$ASAN/tests/percpu/check_percpu_stress"
run "asan check_slab fallback" "$noseq" "$ASAN/tests/slab/check_slab"

echo "== TSan ($TSAN)"
mk "$TSAN" "" EXTRA_CFLAGS="-fsanitize=thread -O1" EXTRA_LDFLAGS=-fsanitize=thread
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
run "tsan check_percpu fallback" "$noseq" "$TSAN/tests/percpu/check_percpu"
run "tsan check_percpu_stress fallback" "$noseq" "$TSAN/tests/percpu/check_percpu_stress"
# fallback mode's thread caches (the suite runs itself under the launcher
# beside it, $TSAN/tests/percpu/percpu_no_rseq)
run "tsan check_percpu_tcache fallback" "$noseq" "$TSAN/tests/percpu/check_percpu_tcache"
exit $fail
