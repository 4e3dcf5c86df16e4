#!/usr/bin/env bash
# --comm on a trace without a process table (one process, its command line
# in the header, as traces/default.ustr): a name that is not the command's
# is refused with the command named, as on a trace with a table. Before,
# --comm was ignored there: `replay --comm nosuch` replayed the whole trace,
# and with --runs a failure said "a replay (USLAB_OPTIONS='as set') failed:"
# before its reason.
. "$(dirname "$0")/../lib.sh"
TR=$(dirname "$0")/../../traces/default.ustr
[ -s "$TR" ] || fail "no bundled trace at $TR"
"$U" report "$TR" 2>/dev/null | grep -q '^# command: /usr/bin/python3' ||
	fail "the bundled trace's command is not python3's: $("$U" report "$TR" | head -3)"
for cmd in "replay --comm nosuch" "replay --runs 2 --comm nosuch" "sim --comm nosuch" \
	"report --comm nosuch"; do
	# shellcheck disable=SC2086
	run_rc "$U" $cmd "$TR" >"$T/out" 2>"$T/err"
	[ "$rc" -eq 1 ] || fail "$cmd: exit $rc, not 1"
	grep -q "no process named nosuch in the trace: it holds one process, '/usr/bin/python3 work.py'" \
		"$T/err" || fail "$cmd: the reason is not said: $(cat "$T/err")"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$cmd: more than the reason: $(cat "$T/err")"
	grep -q '^run 1' "$T/out" && fail "$cmd: replayed anyway"
done
# the command's own name still selects the whole trace
"$U" sim --comm python3 "$TR" >"$T/out" 2>"$T/err" || fail "sim --comm python3: $(cat "$T/err")"
grep -q "^events: 981532 " "$T/out" ||
	fail "sim --comm python3 did not read every event: $(head -5 "$T/out")"
echo "--comm on a one-process trace: checked against its command line"
