#!/usr/bin/env bash
# Sweeps at fleet scale on an existing engine (issue 19, item 7): `uslab
# tune --jobs` prints round 1 of the sweep as independent command lines,
# GNU parallel runs them here (as it would across machines with
# --sshlogin), and `uslab tune --merge` reads their results back: the same
# configurations, the same simulated counts as tune's own sweep, and a
# verdict. A damaged or foreign result line is named with its line number.
. "$(dirname "$0")/../lib.sh"
set +e
command -v parallel > /dev/null || fail "GNU parallel is missing (scripts/deps.sh test)"
need_magazines tune
sweep=(--mag-sizes 4,64 --depot-limits 0,-1)

"$U" gen prodcons -t 2 -l 3000 -o "$T/pc.ustr" 2>/dev/null || fail "gen prodcons"
"$U" tune "$T/pc.ustr" --jobs "${sweep[@]}" > "$T/jobs.txt" 2> "$T/err" || fail "--jobs: $(cat "$T/err")"
[ "$(wc -l < "$T/jobs.txt")" -eq 5 ] || fail "--jobs: $(wc -l < "$T/jobs.txt") lines, expected 2 x 2 + the defaults"
grep -vq -- ' sim .* --result$' "$T/jobs.txt" && fail "--jobs: a line that is not a sim job"
parallel -j 2 --halt now,fail=1 < "$T/jobs.txt" > "$T/results.txt" 2> "$T/par.err" ||
	fail "parallel: $(tail -3 "$T/par.err")"
[ "$(grep -c '^uslab-sim-result v1 ' "$T/results.txt")" -eq 5 ] || fail "not 5 results"

"$U" tune "$T/pc.ustr" --merge "$T/results.txt" --model-only > "$T/merged.txt" 2> "$T/err" ||
	fail "--merge: $(cat "$T/err")"
grep -q '^\[model only\] merged 5 configurations' "$T/merged.txt" || fail "--merge: not 5 merged"
grep -Eq '^\[model only\] (recommended by the model alone: |keep the defaults)' "$T/merged.txt" ||
	fail "--merge: no verdict"
# the same simulation as tune's own sweep: equal hit rates per configuration
"$U" tune "$T/pc.ustr" -j 2 "${sweep[@]}" --no-compose --model-only --all > "$T/direct.txt" 2>/dev/null ||
	fail "tune (direct)"
# (the marks at a row's end go first: "<- the model's knee" may mark
# another row in each, the model's time following the address layout)
rows() { sed 's/ *<-.*//; s/ (not on the frontier)//' "$1" |
	sed -n 's/^\[model only\] \+[0-9.]\+ \+[0-9.]\+ \+[0-9.]\+ \+\([0-9.]\+\) \+[0-9]\+ \+\(.*\)$/\2 \1/p' | sort; }
rows "$T/merged.txt" > "$T/m.rows"
rows "$T/direct.txt" > "$T/d.rows"
[ -s "$T/m.rows" ] || fail "no frontier rows from --merge"
# every frontier row of --merge is a configuration tune's own sweep found
# with the same hit rate
while read -r line; do
	grep -qxF "$line" "$T/d.rows" || fail "--merge row '$line' is not in tune's own sweep: $(cat "$T/d.rows")"
done < "$T/m.rows"

# a damaged line: named, exit 1
sed '2s/cost_ns=[0-9.]*/cost_ns=x/' "$T/results.txt" > "$T/bad.txt"
run_rc "$U" tune "$T/pc.ustr" --merge "$T/bad.txt" --model-only > /dev/null 2> "$T/err"
[ "$rc" -eq 1 ] && grep -q -- "--merge $T/bad.txt:2: not a result line" "$T/err" ||
	fail "damaged result: exit $rc, $(cat "$T/err")"
# a depot limit that is not one (was read as 0) or out of range: named
for d in abc 12x 99999999; do
	awk -v d="$d" '!done && /depot=0 /{ sub(/depot=0 /, "depot=" d " "); done = 1 } 1' \
		"$T/results.txt" > "$T/baddepot.txt"
	grep -q "depot=$d " "$T/baddepot.txt" || fail "no depot=0 line to damage"
	run_rc "$U" tune "$T/pc.ustr" --merge "$T/baddepot.txt" --model-only > /dev/null 2> "$T/err"
	[ "$rc" -eq 1 ] && grep -q -- "--merge $T/baddepot.txt:[0-9]*: depot=$d is not a depot limit" "$T/err" ||
		fail "depot=$d: exit $rc, $(cat "$T/err")"
done
# no defaults: said
grep -v 'depot=default' "$T/results.txt" > "$T/nodef.txt"
run_rc "$U" tune "$T/pc.ustr" --merge "$T/nodef.txt" --model-only > /dev/null 2> "$T/err"
[ "$rc" -eq 1 ] && grep -q "no result for the library's defaults" "$T/err" ||
	fail "no defaults: exit $rc, $(cat "$T/err")"
echo "tune --jobs through GNU parallel, --merge: 5 configurations, the same counts as tune's own sweep"
