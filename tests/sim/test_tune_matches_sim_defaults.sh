#!/usr/bin/env bash
# `uslab tune`'s row for the library's defaults has the resident peak and
# the page faults `uslab sim` gives for the same run (the last command
# line of `tune --jobs`). tune's forked children take their own copies of
# the program's writable pages before simulating and uslab sim did not:
# the defaults run's first write to one of them counted in sim alone (on
# a prodcons trace sim said 1220 KiB and 305 faults, tune 1216 and 304;
# the uniform settings agreed: test_tune_matches_sim_memory).
. "$(dirname "$0")/../lib.sh"
need_magazines tune
sweep=(--mag-sizes 4 --depot-limits 0 --no-adapt --no-compose)

"$U" gen prodcons -t 2 -l 3000 -o "$T/pc.ustr" 2>/dev/null || fail "gen prodcons"
"$U" tune "$T/pc.ustr" --jobs "${sweep[@]}" > "$T/jobs.txt" 2> "$T/err" || fail "--jobs: $(cat "$T/err")"
job=$(tail -1 "$T/jobs.txt")
case "$job" in *--mag-size*) fail "--jobs: the last line is not the defaults: $job" ;; esac
eval "$job" > "$T/sim.txt" 2> "$T/err" || fail "$job: $(cat "$T/err")"
grep -q ' mag=-1 depot=default ' "$T/sim.txt" || fail "not the defaults' result: $(cat "$T/sim.txt")"
peak=$(sed -n 's/.* res_peak=\([0-9]*\) .*/\1/p' "$T/sim.txt")
faults=$(sed -n 's/.* faults=\([0-9]*\) .*/\1/p' "$T/sim.txt")
[ -n "$peak" ] && [ "$peak" -gt 0 ] && [ -n "$faults" ] && [ "$faults" -gt 0 ] ||
	fail "sim: no res_peak or faults: $(cat "$T/sim.txt")"
want=$(awk -v b="$peak" 'BEGIN { printf "%.1f", b / 1024 }')

for i in 1 2; do
	"$U" tune "$T/pc.ustr" -j 1 "${sweep[@]}" --model-only --all > "$T/tune.txt" 2> "$T/err" ||
		fail "tune: $(cat "$T/err")"
	# "[model only]  res_peak_KiB res_mean_KiB time hit% faults library defaults (Kconfig)"
	row=$(awk '/ library defaults \(Kconfig\)/ && $3 ~ /^[0-9.]+$/ { print $3, $7; exit }' "$T/tune.txt")
	[ -n "$row" ] || fail "tune run $i: no row for the defaults: $(cat "$T/tune.txt")"
	[ "$row" = "$want $faults" ] ||
		fail "tune run $i: the defaults at res_peak KiB, faults = $row; uslab sim says $want $faults"
done
echo "tune's defaults row is sim's: $want KiB resident peak, $faults faults, on 2 runs"
