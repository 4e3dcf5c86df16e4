#!/usr/bin/env bash
# uslab tune --jobs prints the sweep's command lines and stops, so --merge,
# --svg, --png and --verify-grid beside it would never be done: a usage
# error naming the option (exit 2), nothing printed. Before, they were
# dropped silently (exit 0, no picture, no merge).
. "$(dirname "$0")/../lib.sh"
set +e

"$U" gen rpmalloc -t 1 -b 200 -l 5 -o "$T/t.ustr" 2>/dev/null || fail "gen"
for c in "--merge $T/r.txt" "--svg $T/f.svg" "--png $T/f.png" "--verify-grid"; do
	run_rc "$U" tune --jobs $c "$T/t.ustr" > "$T/out" 2> "$T/err"
	[ "$rc" -eq 2 ] || bad "--jobs $c: exit $rc, not 2"
	grep -q -- "--jobs .*not with ${c%% *}" "$T/err" || bad "--jobs $c: $(head -1 "$T/err")"
	[ -s "$T/out" ] && bad "--jobs $c: printed $(head -1 "$T/out")"
done
"$U" tune --jobs "$T/t.ustr" > "$T/out" 2>/dev/null || bad "--jobs alone failed"
grep -q -- "--result" "$T/out" || bad "--jobs alone: no command lines"
[ "$failed" -eq 0 ] && echo "tune --jobs refuses --merge, --svg, --png and --verify-grid"
exit $failed
