#!/usr/bin/env bash
# uslab tune's second round (per-class candidates composed from round 1)
# adds jobs while it reads round 1's class names through a pointer into the
# jobs array: when the array grew past 64 jobs, realloc moved it and the
# pointer read freed memory (journey8's finding: `uslab tune --model-only`
# of a recorded torture program died of SIGSEGV in tune_compose, every
# run; the bundled trace got away with it only because the freed block
# still held the old bytes). Here the tool runs preloaded with uslab's
# debug caches, which poison every freed block, so a stale read cannot
# pass unseen: the sweep must go past 64 configurations, compose per-class
# candidates, and end with its verdict.
. "$(dirname "$0")/../lib.sh"
need_magazines tune

run_rc env LD_PRELOAD="$LIBUSLAB" USLAB_OPTIONS=debug \
	"$U" tune --model-only -j 1 traces/default.ustr >"$T/out" 2>"$T/err"
[ "$rc" = 0 ] || { tail -5 "$T/out"; cat "$T/err"; fail "tune --model-only under poisoned frees: exit $rc"; }
n=$(sed -n 's/^\[model only\] swept \([0-9]*\) configurations (.*, \([0-9]*\) per-class, .*/\1 \2/p' "$T/out")
[ -n "$n" ] || fail "no 'swept N configurations' line"
set -- $n
[ "$1" -gt 64 ] || fail "only $1 configurations: the jobs array never grew past 64, nothing was checked"
[ "$2" -gt 0 ] || fail "no per-class candidate was composed"
grep -q '^\[model only\]   USLAB_OPTIONS=' "$T/out" || fail "no option string at the end"
grep -q 'kmalloc-\|mags ' "$T/out" || fail "no per-class sizes in the output"
echo "PASS: $1 configurations ($2 per-class) swept with poisoned frees"
