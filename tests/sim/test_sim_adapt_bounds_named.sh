#!/usr/bin/env bash
# Adaptive bounds that percpu/ refuses (pcp_adapt_set_bounds(): the
# smallest magazine above the largest, each as given or the build's
# default) are a bad option: `uslab sim` and `uslab tune` name the option,
# exit 2 and simulate nothing. Before, sim said "cannot set up the
# simulated allocator" (no option named) and tune "a simulation failed
# (Invalid argument)" for every adaptive configuration of its sweep.
. "$(dirname "$0")/../lib.sh"
F=$O/tests/trace/trace_forge
[ -x "$F" ] || fail "$F not built"
printf 'malloc 1 0 1 0 32 0\nmalloc 1 0 2 0 700 0\nfree 1 0 1 0 0 0\nfree 1 0 2 0 0 0\n' |
	"$F" "$T/t.ustr" || fail "forge"
min=$(sed -n 's/^CONFIG_PERCPU_ADAPT_MIN_BYTES=//p' "$O/auto.conf")
max=$(sed -n 's/^CONFIG_PERCPU_ADAPT_MAX_BYTES=//p' "$O/auto.conf")
[ -n "$min" ] && [ -n "$max" ] || fail "no adaptive bounds in $O/auto.conf"

refused() {	# WHAT OPTION-NAMED CMD...: exit 2, OPTION-NAMED on stderr
	local what=$1 named=$2
	shift 2
	run_rc "$U" "$@" >"$T/out" 2>"$T/err"
	[ "$rc" -eq 2 ] || fail "$what: exit $rc, not 2: $(head -3 "$T/err")"
	head -1 "$T/err" | grep -q -- "$named" ||
		fail "$what: the first line does not name $named: $(head -3 "$T/err")"
	grep -q 'cannot set up\|simulation failed' "$T/err" &&
		fail "$what: the run was attempted: $(head -3 "$T/err")"
	[ ! -s "$T/out" ] || fail "$what: printed a result: $(head -3 "$T/out")"
}

refused "sim min above max" '--adapt-min: 100000 is above --adapt-max 10' \
	sim --adapt 1 --adapt-min 100000 --adapt-max 10 "$T/t.ustr"
refused "sim min above the default max" "--adapt-min: $((max + 1)) is above .*$max" \
	sim --adapt 1 --adapt-min $((max + 1)) "$T/t.ustr"
refused "sim max below the default min" "--adapt-max: 8 is below .*$min" \
	sim --adapt 1 --adapt-max 8 "$T/t.ustr"
refused "tune max below the default min" "--adapt-max: .*smallest magazine, $min bytes" \
	tune --model-only -j 1 --mag-sizes 4 --depot-limits 0 --adapt-max 10 "$T/t.ustr"

# bounds percpu/ takes still run
"$U" sim --adapt 1 --adapt-min 8192 --adapt-max 8192 "$T/t.ustr" >/dev/null 2>"$T/err" ||
	fail "sim with equal bounds failed: $(cat "$T/err")"
"$U" sim --adapt 1 --adapt-max "$min" "$T/t.ustr" >/dev/null 2>"$T/err" ||
	fail "sim --adapt-max $min (the default min) failed: $(cat "$T/err")"
"$U" tune --model-only -j 1 --mag-sizes 4 --depot-limits 0 --adapt-max "$min" \
	"$T/t.ustr" >/dev/null 2>"$T/err" ||
	fail "tune --adapt-max $min failed: $(cat "$T/err")"
echo "sim and tune name the adaptive bound percpu/ would refuse"
