#!/usr/bin/env bash
# The seeds' thread-cache study (seed 000, rpmalloc's shape: 150,000 blocks
# of 16..16,000 B per thread, linear falloff, LOOPS loops) on uslab builds
# and the peers, preloaded, interleaved within each round, medians.
#   bench/study.sh [-r RUNS] [-l LOOPS] [-t "1 2"] [NAME=LIBUSLAB.so ...]
# Without NAME=LIB pairs, uslab is $O/libuslab.so. Prints per thread count
# Mops per CPU-second, peak RSS, and the ratios to the best peer (speed)
# and to the lowest peer (RSS). Raw samples: $O/bench/study-samples.tsv.
set -eu
O=${O:-build}
RUNS=5 LOOPS=50 THREADS="1 2"
while getopts r:l:t: o; do
	case $o in
	r) RUNS=$OPTARG ;; l) LOOPS=$OPTARG ;; t) THREADS=$OPTARG ;;
	*) echo "usage: $0 [-r RUNS] [-l LOOPS] [-t THREADS] [NAME=LIB...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
. "$(dirname "$0")/lib.sh"
bench_allocators "$O" "$@"
bench_samples study
# one_run T A: one sample of T threads on allocator A
one_run() {
	local line
	line=$(on "$2" "$O/bench/alloc_bench" study "$1" "$LOOPS")
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$(field "$line" study_mops_cpu)" \
		"$(field "$line" peak_rss_kb)" >>"$samples"
}
each_run "$THREADS" one_run
python3 - "$samples" "${ours[@]}" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    t, a, m, k = l.split()
    d[(int(t), a)].append((float(m), int(k)))
ours = set(sys.argv[2:])
print("| threads | allocator | Mops/cpu-s | peak RSS MiB | speed / best peer | RSS / lowest peer |")
print("|---|---|---|---|---|---|")
for t in sorted({k[0] for k in d}):
    rows = {a: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
            for (tt, a), v in d.items() if tt == t}
    best = max(v[0] for a, v in rows.items() if a not in ours)
    low = min(v[1] for a, v in rows.items() if a not in ours)
    for a, (m, k) in rows.items():
        print(f"| {t} | {a} | {m:.2f} | {k / 1024:.0f} | {m / best:.2f} | {k / low:.2f} |")
PY
