"""Turns bench/run.sh's samples (case, allocator, key, value) into the
results table: medians per allocator, and uslab's median as a ratio to each
peer's (below 1.0 is better for uslab except for requests per second)."""
import statistics
import sys
from collections import defaultdict

ALLOCS = ["uslab", "glibc", "jemalloc", "tcmalloc", "mimalloc"]
HIGHER_BETTER = ("_rps",)
UNITS = {
    "pair_ns": "ns per malloc(64)+free pair",
    "churn_s": "s, 150000 live blocks [16,16000], 20 loops of 50% realloc",
    "prodcons_ns": "ns per block, producer thread mallocs, consumer frees",
    "threads_rss_kb": "KiB RSS with 64 threads alive (2 CPUs)",
    "after_exit_rss_kb": "KiB RSS after the 64 threads exited",
    "peak_rss_kb": "KiB peak RSS",
    "server_rss_kb": "KiB redis-server RSS after the load",
    "server_peak_rss_kb": "KiB redis-server peak RSS",
    "task-clock": "ms task-clock (perf stat)",
    "page-faults": "page faults (perf stat)",
    "context-switches": "context switches (perf stat)",
}

# Parameters echoed by alloc_bench, not measurements.
PARAMS = {"n", "loops", "threads", "bad"}

data = defaultdict(list)
order = []
for line in open(sys.argv[1]):
    case, alloc, key, value = line.rstrip("\n").split("\t")
    try:
        v = float(value.replace(",", ""))
    except ValueError:
        continue
    if key == "bad" and v:
        print("WARNING: %s on %s reported %d corrupted blocks" % (case, alloc, v))
    if key in PARAMS:
        continue
    if (case, key) not in order:
        order.append((case, key))
    data[(case, key, alloc)].append(v)

print("uslab benchmark results: medians of %s runs per allocator "
      "(redis: see its run count); ratio = uslab / peer" % sys.argv[2])
print()
width = max(len(a) for a in ALLOCS)
for case, key in order:
    med = {}
    for a in ALLOCS:
        vals = data.get((case, key, a))
        if vals:
            med[a] = statistics.median(vals)
    if "uslab" not in med:
        continue
    better = "higher is better" if key.endswith(HIGHER_BETTER) else "lower is better"
    print("%s %s  (%s; %s)" % (case, key, UNITS.get(key, key), better))
    for a in ALLOCS:
        if a not in med:
            continue
        ratio = ""
        if a != "uslab" and med[a]:
            ratio = "   uslab/%s = %.2f" % (a, med["uslab"] / med[a])
        n = len(data[(case, key, a)])
        print("  %-*s %14.3f  (n=%d)%s" % (width, a, med[a], n, ratio))
    print()
