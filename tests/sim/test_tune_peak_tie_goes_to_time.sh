#!/usr/bin/env bash
# Two settings that hold the same resident pages at their peak: tune ranks
# the faster first (memory is counted in whole pages, ties go to modelled
# time). Before, such a tie went to the sweep's order, and --goal memory
# recommended `mag=4 depot=0` over `mag=4 depot=-1` at the same peak and
# about a fifth more modelled time. The results come from uslab sim --result (the
# lines --jobs prints), with the second setting's peak set to the first's.
. "$(dirname "$0")/../lib.sh"
need_magazines tune
sweep=(--mag-sizes 4,64 --depot-limits 0,-1 --no-compose)

"$U" gen prodcons -t 2 -l 2000 -o "$T/pc.ustr" 2>/dev/null || fail "gen prodcons"
"$U" tune "$T/pc.ustr" --jobs "${sweep[@]}" > "$T/jobs.txt" 2> "$T/err" || fail "--jobs: $(cat "$T/err")"
bash "$T/jobs.txt" > "$T/results.txt" 2> "$T/sim.err" || fail "the jobs: $(tail -3 "$T/sim.err")"
field() { grep -F " $1 " "$T/results.txt" | sed -n "s/.* $2=\([^ ]*\) .*/\1/p"; }
peak0=$(field "mag=4 depot=0" res_peak)
cost0=$(field "mag=4 depot=0" cost_ns)
cost1=$(field "mag=4 depot=-1" cost_ns)
[ -n "$peak0" ] && [ -n "$cost1" ] || fail "no results for mag=4: $(cat "$T/results.txt")"
awk -v a="$cost1" -v b="$cost0" 'BEGIN { exit !(a < b) }' ||
	fail "the trace no longer makes depot=-1 the faster at mag=4 ($cost1 vs $cost0 ns)"
# the same peak, a mean a page higher
awk -v p="$peak0" '/ mag=4 depot=-1 / { sub(" res_peak=[^ ]*", " res_peak=" p);
	match($0, / res_mean=[0-9]+/); m = substr($0, RSTART + 10, RLENGTH - 10) + 4096;
	sub(" res_mean=[^ ]*", " res_mean=" m) } 1' "$T/results.txt" > "$T/tie.txt"
grep -F " mag=4 depot=-1 " "$T/tie.txt" | grep -q " res_peak=$peak0 " || fail "the tie was not made"
"$U" tune "$T/pc.ustr" --merge "$T/tie.txt" "${sweep[@]}" --goal memory --model-only \
	> "$T/out" 2> "$T/err" || fail "tune --merge: $(cat "$T/err")"
grep -q 'recommended by the model alone: mag=4 depot=-1$' "$T/out" ||
	fail "the peak tie did not go to the faster: $(grep -i 'recommend\|keep' "$T/out")"
echo "a tie on peak resident pages goes to the faster setting"
