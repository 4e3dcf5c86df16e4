#!/usr/bin/env bash
# `uslab tune`'s own sweep reports the resident peak `uslab sim` reports for
# the same setting (the command line `tune --jobs` prints for it), and the
# same on every run. Before, tune's forked children took the kernel's
# high-water mark (VmHWM: the whole process, the code pages a child faults
# in, the simulator's own tables): for mag=4 depot=0 on this trace 572-620
# KiB from run to run with address-space randomisation, 536 KiB without,
# where `uslab sim` said 416-436 KiB every time. The page faults too: the
# child counted 113-114 where sim counted 110.
. "$(dirname "$0")/../lib.sh"
need_magazines tune
sweep=(--mag-sizes 4 --depot-limits 0 --no-adapt)

"$U" gen prodcons -t 2 -l 3000 -o "$T/pc.ustr" 2>/dev/null || fail "gen prodcons"
"$U" tune "$T/pc.ustr" --jobs "${sweep[@]}" > "$T/jobs.txt" 2> "$T/err" || fail "--jobs: $(cat "$T/err")"
job=$(grep -- ' --mag-size 4 --depot-limit 0 --result$' "$T/jobs.txt")
[ -n "$job" ] || fail "--jobs: no line for mag=4 depot=0: $(cat "$T/jobs.txt")"
eval "$job" > "$T/sim.txt" 2> "$T/err" || fail "$job: $(cat "$T/err")"
peak=$(sed -n 's/.* res_peak=\([0-9]*\) .*/\1/p' "$T/sim.txt")
[ -n "$peak" ] && [ "$peak" -gt 0 ] || fail "sim: no res_peak: $(cat "$T/sim.txt")"
want=$(awk -v b="$peak" 'BEGIN { printf "%.1f", b / 1024 }')
faults=$(sed -n 's/.* faults=\([0-9]*\) .*/\1/p' "$T/sim.txt")
[ -n "$faults" ] && [ "$faults" -gt 0 ] || fail "sim: no faults: $(cat "$T/sim.txt")"

for i in 1 2 3; do
	"$U" tune "$T/pc.ustr" -j 1 "${sweep[@]}" --no-compose --model-only --all > "$T/tune.txt" 2> "$T/err" ||
		fail "tune: $(cat "$T/err")"
	# the row "[model only]  res_peak_KiB res_mean_KiB time hit% faults mag=4 depot=0"
	got=$(awk '/ mag=4 depot=0( |$)/ && $3 ~ /^[0-9.]+$/ { print $3; exit }' "$T/tune.txt")
	[ -n "$got" ] || fail "tune run $i: no row for mag=4 depot=0: $(cat "$T/tune.txt")"
	[ "$got" = "$want" ] ||
		fail "tune run $i: res_peak $got KiB for mag=4 depot=0, uslab sim says $want KiB ($peak bytes)"
	# and its page faults (they enter the modelled time): a forked child
	# took 3-4 more, first writes to pages shared with tune's parent
	gotf=$(awk '/ mag=4 depot=0( |$)/ && $3 ~ /^[0-9.]+$/ { print $7; exit }' "$T/tune.txt")
	[ "$gotf" = "$faults" ] ||
		fail "tune run $i: $gotf page faults for mag=4 depot=0, uslab sim says $faults"
done
echo "tune's resident peak and faults for mag=4 depot=0 are sim's, $want KiB and $faults, on 3 runs"
