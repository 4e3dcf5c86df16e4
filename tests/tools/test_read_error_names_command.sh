#!/usr/bin/env bash
# A damaged or truncated trace read by `uslab report` (every view) or
# `uslab script` is said under the command's name, as sim, replay and tune
# say it: "uslab report: T: byte offset N: ...", "uslab script: warning:
# ...". Before, these readers (tools/lib/cmd.c cmd_read_error) said
# "uslab: ..." alone.
. "$(dirname "$0")/../lib.sh"
F=$O/tests/trace/trace_forge
[ -x "$F" ] || fail "$F not built"
awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "malloc 1 0 %d 0 %d 0\n", i, 16 + i % 500
	for (i = 1; i <= 3000; i++) printf "free 1 0 %d 0 0 0\n", i }' | "$F" "$T/t.ustr" ||
	fail "forge"
size=$(stat -c %s "$T/t.ustr")
# damaged: a byte of the last 100 before the trailer's 44 flipped (a chunk's payload)
cp "$T/t.ustr" "$T/bad.ustr"
off=$((size - 44 - 50))
b=$(od -An -tu1 -j "$off" -N1 "$T/bad.ustr" | tr -d ' ')
printf "$(printf '\\%03o' $((b ^ 255)))" | dd of="$T/bad.ustr" bs=1 seek="$off" conv=notrunc 2>/dev/null
# truncated: the trailer cut
head -c $((size - 5)) "$T/t.ustr" > "$T/cut.ustr"

for view in "report" "report --timeline $T/x.svg" "script"; do
	cmd=${view%% *}
	run_rc "$U" $view "$T/bad.ustr" >/dev/null 2>"$T/err"
	[ "$rc" -eq 1 ] || fail "$view of a damaged trace: exit $rc: $(head -2 "$T/err")"
	grep -q "^uslab $cmd: $T/bad.ustr: byte offset [0-9]*: " "$T/err" ||
		fail "$view of a damaged trace: not said under 'uslab $cmd': $(head -2 "$T/err")"
	run_rc "$U" $view "$T/cut.ustr" >/dev/null 2>"$T/err"
	[ "$rc" -eq 3 ] || fail "$view of a truncated trace: exit $rc: $(head -2 "$T/err")"
	grep -q "^uslab $cmd: warning: $T/cut.ustr: byte offset [0-9]*: " "$T/err" ||
		fail "$view of a truncated trace: not said under 'uslab $cmd': $(head -2 "$T/err")"
done
echo "report and script say a trace's damage under their own names"
