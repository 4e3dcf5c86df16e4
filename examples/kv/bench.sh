#!/usr/bin/env bash
# `make bench-kv` (also run by `make bench`): the kv server under
# redis-benchmark, one table:
#   kmem_cache        build/examples/uslab-kv (named caches, kmalloc values)
#   malloc+glibc      build/examples/uslab-kv-malloc on the C library's malloc
#   malloc+uslab      the same, libuslab.so preloaded
#   malloc+jemalloc, malloc+tcmalloc, malloc+mimalloc   the same, each peer
#                     preloaded (Debian's libjemalloc2, libtcmalloc-minimal4,
#                     libmimalloc2.0)
# Load: redis-benchmark -t set,get -n $KV_N -P 16 -r 100000 -c 50 against a
# server with $KV_THREADS threads; $KV_RUNS rounds, configurations
# interleaved within each round; medians. Requests/s and p50/p99 from
# redis-benchmark's summary, p99.9 from its percentile distribution (the
# first step at or above 99.9%, which is 99.902%), peak RSS (VmHWM) of the
# server. Results: $O/bench/kv.txt, raw samples $O/bench/kv-samples.tsv.
set -u
O=${O:-build}
KV_RUNS=${KV_RUNS:-3}
KV_N=${KV_N:-200000}
KV_THREADS=${KV_THREADS:-2}
out=$O/bench
mkdir -p "$out"
libdir=/usr/lib/x86_64-linux-gnu
kv=$O/examples/uslab-kv
kvm=$O/examples/uslab-kv-malloc
configs=(kmem_cache malloc+glibc malloc+uslab malloc+jemalloc malloc+tcmalloc malloc+mimalloc)
declare -A bin=([kmem_cache]=$kv) pre=(
	[kmem_cache]= [malloc+glibc]= [malloc+uslab]=$(realpath "$O/libuslab.so")
	[malloc+jemalloc]=$libdir/libjemalloc.so.2
	[malloc+tcmalloc]=$libdir/libtcmalloc_minimal.so.4
	[malloc+mimalloc]=$libdir/libmimalloc.so.2)
for c in "${configs[@]}"; do
	[ -n "${bin[$c]:-}" ] || bin[$c]=$kvm
	[ -x "${bin[$c]}" ] || { echo "bench-kv: ${bin[$c]} not built" >&2; exit 1; }
	[ -z "${pre[$c]}" ] || [ -e "${pre[$c]}" ] || { echo "bench-kv: missing ${pre[$c]}" >&2; exit 1; }
done
command -v redis-benchmark >/dev/null || { echo "bench-kv: redis-benchmark missing (redis-tools)" >&2; exit 1; }
unset USLAB_OPTIONS
samples=$out/kv-samples.tsv
: >"$samples"
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null' EXIT

. "$(dirname "$0")/start.sh"
start_server() {	# CONFIG: sets pid and port
	local c=$1

	kv_start "$out/kv-server.out" "" env ${pre[$c]:+LD_PRELOAD=${pre[$c]}} \
		"${bin[$c]}" --threads "$KV_THREADS" && pid=$kvpid && return 0
	echo "bench-kv: $c: server did not start: $(cat "$out/kv-server.out")" >&2
	return 1
}

for round in $(seq "$KV_RUNS"); do
	for c in "${configs[@]}"; do
		start_server "$c" || exit 1
		res=$out/kv-run.txt
		timeout 600 redis-benchmark -p $port -t set,get -n "$KV_N" -P 16 -r 100000 -c 50 \
			>"$res" 2>&1 || { echo "bench-kv: $c: redis-benchmark failed" >&2; tail -3 "$res" >&2; exit 1; }
		if tr '\r' '\n' <"$res" | grep -qi 'error'; then
			echo "bench-kv: $c: error replies" >&2; exit 1
		fi
		hwm=$(awk '/^VmHWM:/ { print $2 }' /proc/$pid/status)
		kill $pid; wait $pid 2>/dev/null; pid=
		# Sections start with "====== SET ======"; the summary has
		# "throughput summary: N requests per second" and a line of
		# avg min p50 p95 p99 max under "latency summary (msec):".
		tr '\r' '\n' <"$res" | awk -v c="$c" -v hwm="$hwm" '
			/^====== / { t = $2; next }
			/throughput summary:/ { rps[t] = $3 }
			/latency summary/ { getline; getline; p50[t] = $3; p99[t] = $5 }
			/^ *[0-9.]+% <= / && !(t in p999) { sub("%", "", $1); if ($1 + 0 >= 99.9) p999[t] = $3 }
			END { for (t in rps) printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				c, t, rps[t], p50[t], p99[t], p999[t], hwm }' >>"$samples"
		printf '  bench-kv round %d/%d %-16s done\n' "$round" "$KV_RUNS" "$c" >&2
	done
done

# Medians per configuration and test.
{
	echo "kv server under redis-benchmark -t set,get -n $KV_N -P 16 -r 100000 -c 50, $KV_THREADS server threads"
	echo "medians of $KV_RUNS rounds, configurations interleaved; latency in ms; RSS = peak VmHWM of the server"
	printf '%-16s %-4s %12s %8s %8s %8s %9s %9s\n' config test 'requests/s' p50 p99 p99.9 'RSS MiB' 'rps/glibc'
	python3 - "$samples" "${configs[@]}" <<'PY'
import sys, statistics, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
order = sys.argv[2:]
d = collections.defaultdict(list)
for c, t, rps, p50, p99, p999, hwm in rows:
    d[(c, t)].append((float(rps), float(p50), float(p99), float(p999 or "nan"), float(hwm) / 1024))
med = {k: [statistics.median(x[i] for x in v) for i in range(5)] for k, v in d.items()}
for t in ("SET", "GET"):
    base = med.get(("malloc+glibc", t), [0])[0]
    for c in order:
        if (c, t) not in med:
            continue
        m = med[(c, t)]
        print("%-16s %-4s %12.0f %8.3f %8.3f %8.3f %9.1f %9.2f" % (c, t, m[0], m[1], m[2], m[3], m[4],
              m[0] / base if base else float("nan")))
PY
} | tee "$out/kv.txt"
