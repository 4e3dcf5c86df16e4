#!/usr/bin/env bash
# The malloc conformance suite (tests/malloc/conform.c) three times: on glibc
# (the suite itself must be right), preloaded with libuslab.so, and linked
# statically against libuslab.a. Each run must end in "N passed, 0 failed".
set -u
O=${O:-build}
conform=$O/tests/malloc/conform
static=$O/tests/malloc/conform-static
lib=$(realpath "$O/libuslab.so")
for f in "$conform" "$static" "$lib"; do
	[ -e "$f" ] || { echo "missing $f (run make O=$O first)"; exit 1; }
done
# Options from the caller's environment would change what is tested.
unset USLAB_OPTIONS
# Without the reaper, or with a big resident watermark (the unlimited
# preset), free memory stays by design: rss_no_trim only reports then.
unset CONFORM_KEEPS_MEMORY
if [ -f "$O/auto.conf" ]; then
	. <(grep -E '^CONFIG_(PERCPU_REAPER|PAGE_ALLOC_RESIDENT_FREE_KB)=' "$O/auto.conf")
	if [ "${CONFIG_PERCPU_REAPER:-n}" != y ] && [ -n "$(grep '^CONFIG_PERCPU_CACHE=y' "$O/auto.conf")" ] ||
	   [ "${CONFIG_PAGE_ALLOC_RESIDENT_FREE_KB:-0}" -gt 65536 ]; then
		export CONFORM_KEEPS_MEMORY=1
	fi
fi
fail=0
# A hang inside the allocator can block every signal (pthread_create does):
# kill with SIGKILL when SIGTERM is ignored.
tmo="timeout -k 5 ${CONFORM_TIMEOUT:-150}"
run() {
	local what=$1; shift
	echo "== $what"
	if "$@"; then
		echo "== $what: PASS"
	else
		echo "== $what: FAIL"
		fail=1
	fi
}
run "glibc" $tmo "$conform"
run "LD_PRELOAD=libuslab.so" $tmo env LD_PRELOAD="$lib" "$conform"
run "linked with libuslab.a" $tmo "$static"
# The preloaded run must really have been on uslab.
$tmo env LD_PRELOAD="$lib" "$conform" misc | grep -q 'suite on uslab' ||
	{ echo "preloaded run did not see uslab"; fail=1; }
exit $fail
