#!/usr/bin/env bash
# uslab tune of a trace whose process made no allocation (a program on its
# own malloc records none, and so does one that never allocates or whose
# calls all failed) refuses,
# exit 1, naming the trace: "nothing to tune". Before (journey8's finding)
# --model-only recommended "mag=4 depot=0" with "modelled: time 0.000 ms
# (-100.0%)", a gain on 0 events, and the real mode replayed nothing 7
# times a configuration to say "keep the defaults". A trace with events is
# tuned as before.
. "$(dirname "$0")/../lib.sh"
F=$O/tests/trace/trace_forge
[ -x "$F" ] || fail "$F not built"

: | "$F" "$T/empty.ustr" || fail "forge an empty trace"
"$U" sim "$T/empty.ustr" >/dev/null 2>&1 || fail "sim of the empty trace failed (it should simulate 0 events)"
for mode in "--model-only -j 1" "-j 1 --runs 3" "--jobs"; do
	run_rc "$U" tune $mode "$T/empty.ustr" >"$T/out" 2>"$T/err"
	[ "$rc" = 1 ] || { cat "$T/out" "$T/err"; fail "tune $mode of an empty trace: exit $rc, not 1"; }
	grep -qxF "uslab tune: $T/empty.ustr: the process read allocated nothing: nothing to tune" "$T/err" ||
		{ cat "$T/err"; fail "tune $mode: not the 'nothing to tune' message"; }
	grep -q 'recommend\|USLAB_OPTIONS=' "$T/out" && { cat "$T/out"; fail "tune $mode of an empty trace recommended something"; }
done

# Failed calls only (id NULL: calloc's overflow, posix_memalign's EINVAL)
# allocate nothing either.
printf 'calloc 0 0 0 0 100 0\nmalloc 0 0 0 0 200 0\n' | "$F" "$T/failed.ustr" || fail "forge failed.ustr"
run_rc "$U" tune --model-only -j 1 "$T/failed.ustr" >"$T/out" 2>"$T/err"
[ "$rc" = 1 ] && grep -q 'nothing to tune' "$T/err" ||
	{ cat "$T/out" "$T/err"; fail "tune of a trace of failed calls only: exit $rc, not 'nothing to tune'"; }

# One allocation is something to model: tune runs and decides.
printf 'malloc 0 0 1 0 64 0\nfree 0 0 1 0 0 0\n' | "$F" "$T/one.ustr" || fail "forge one.ustr"
run_rc "$U" tune --model-only -j 1 "$T/one.ustr" >"$T/out" 2>"$T/err"
[ "$rc" = 0 ] || { cat "$T/err"; fail "tune --model-only of a 2-event trace: exit $rc"; }
grep -q 'USLAB_OPTIONS=' "$T/out" || fail "tune of a 2-event trace printed no option string"
echo "PASS: tune refuses a trace with no allocation events, tunes one with two"
