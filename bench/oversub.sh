#!/usr/bin/env bash
# Oversubscription: `alloc_bench threads T` (T threads churning 16..1024 B
# blocks through their caches) for T = 8 and 64 on a 2-CPU machine, on
# uslab and the peers, preloaded, interleaved, medians of wall seconds;
# once on the machine as it is and once with a CPU hog (one busy loop per
# CPU, same priority) running beside it.
#   bench/oversub.sh [-r RUNS] [NAME=LIBUSLAB.so ...]
set -eu
O=${O:-build}
RUNS=3
while getopts r: o; do
	case $o in r) RUNS=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
. "$(dirname "$0")/lib.sh"
bench_allocators "$O" "$@"
bench_samples oversub
hogs=()
stop_hogs() {
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done
	hogs=()
}
trap stop_hogs EXIT
# one_run T A: one sample of T threads on allocator A
one_run() {
	local line
	line=$(on "$2" "$O/bench/alloc_bench" threads "$1")
	printf '%s\t%s\t%s\t%s\n' "$hog" "$1" "$2" "$(field "$line" threads_s)" >>"$samples"
}
for hog in no yes; do
	if [ $hog = yes ]; then
		for _ in $(seq 1 "$(nproc)"); do
			(while :; do :; done) &
			hogs+=($!)
		done
	fi
	each_run "8 64" one_run
	stop_hogs
done
python3 - "$samples" "${ours[@]}" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    h, t, a, s = l.split()
    d[(h, int(t), a)].append(float(s))
ours = set(sys.argv[2:])
print("| hog | threads | allocator | wall s | best peer / this |")
print("|---|---|---|---|---|")
for h in ("no", "yes"):
    for t in (8, 64):
        rows = {a: statistics.median(v) for (hh, tt, a), v in d.items() if hh == h and tt == t}
        if not rows:
            continue
        best = min(v for a, v in rows.items() if a not in ours)
        for a, s in rows.items():
            print(f"| {h} | {t} | {a} | {s:.3f} | {best / s:.2f} |")
PY
