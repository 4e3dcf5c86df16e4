#!/usr/bin/env bash
# `make bench`: uslab against glibc, jemalloc, tcmalloc and mimalloc in one
# run, each preloaded into the same programs. Every case runs $RUNS times
# (default 5), allocators interleaved within each round; medians are
# reported, with uslab's figure as a ratio to each peer's, plus perf stat
# software counters (task-clock, page-faults, context-switches).
# Results: $O/bench/results.txt (raw samples in $O/bench/samples.tsv).
set -u
O=${O:-build}
RUNS=${RUNS:-5}
REDIS_RUNS=${REDIS_RUNS:-3}
REDIS_N=${REDIS_N:-100000}
src=$(cd "$(dirname "$0")/.." && pwd)
out=$O/bench
mkdir -p "$out"
bench=$O/bench/alloc_bench
libdir=/usr/lib/x86_64-linux-gnu
declare -A lib=(
	[uslab]=$(realpath "$O/libuslab.so")
	[glibc]=
	[jemalloc]=$libdir/libjemalloc.so.2
	[tcmalloc]=$libdir/libtcmalloc_minimal.so.4
	[mimalloc]=$libdir/libmimalloc.so.2
)
allocs=(uslab glibc jemalloc tcmalloc mimalloc)
for a in "${allocs[@]}"; do
	[ -z "${lib[$a]}" ] || [ -e "${lib[$a]}" ] || { echo "bench: missing ${lib[$a]}" >&2; exit 1; }
done
unset USLAB_OPTIONS
samples=$out/samples.tsv
: >"$samples"
perf_ok=1
perf stat -x, -e task-clock -o /dev/null true 2>/dev/null || perf_ok=0

# sample CASE ALLOC KEY VALUE
sample() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$samples"; }

# run_case CASE ALLOC ARGS...: one run, key=value results and perf counters.
run_case() {
	local c=$1 a=$2; shift 2
	local pf=$out/perf.$$ line
	if [ "$perf_ok" = 1 ]; then
		line=$(perf stat -x, -e task-clock,page-faults,context-switches -o "$pf" \
			env ${lib[$a]:+LD_PRELOAD=${lib[$a]}} "$bench" "$@") || {
			echo "bench: $c on $a failed" >&2; return 1; }
		awk -F, -v c="$c" -v a="$a" '$3 ~ /task-clock|page-faults|context-switches/ {
			printf "%s\t%s\t%s\t%s\n", c, a, $3, $1 }' "$pf" >>"$samples"
		rm -f "$pf"
	else
		line=$(env ${lib[$a]:+LD_PRELOAD=${lib[$a]}} "$bench" "$@") || return 1
	fi
	for kv in $line; do
		sample "$c" "$a" "${kv%%=*}" "${kv#*=}"
	done
}

echo "bench: $RUNS runs of pair, churn, prodcons, threads on ${allocs[*]}"
for r in $(seq 1 "$RUNS"); do
	for a in "${allocs[@]}"; do
		run_case pair "$a" pair 50000000
		run_case churn "$a" churn 20
		run_case prodcons "$a" prodcons 2000000
		run_case threads "$a" threads 64
	done
	echo "  round $r done"
done

# redis: server preloaded with each allocator, redis-benchmark on loopback.
server=$(bash "$src/scripts/redis-build.sh" "$O") || { echo "bench: no redis-server" >&2; exit 1; }
port=$((40000 + $$ % 10000))
spid=
stop_server() {
	if [ -n "$spid" ]; then
		redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
		wait "$spid" 2>/dev/null
		spid=
	fi
}
trap stop_server EXIT
echo "bench: redis-benchmark -n $REDIS_N x $REDIS_RUNS runs per allocator"
for r in $(seq 1 "$REDIS_RUNS"); do
	for a in "${allocs[@]}"; do
		env ${lib[$a]:+LD_PRELOAD=${lib[$a]}} "$server" --port "$port" \
			--bind 127.0.0.1 --save '' --appendonly no --logfile /dev/null &
		spid=$!
		for _ in $(seq 1 100); do
			[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break
			sleep 0.1
		done
		redis-benchmark -p "$port" -q -n "$REDIS_N" -c 50 -r 100000 -d 256 \
			-t set,get,lpush,lpop 2>/dev/null | tr '\r' '\n' |
			awk -v a="$a" '/requests per second/ {
				sub(":", "", $1); printf "redis\t%s\t%s_rps\t%s\n", a, $1, $2 }' >>"$samples"
		sample redis "$a" server_rss_kb "$(awk '/VmRSS/ {print $2}' /proc/$spid/status)"
		sample redis "$a" server_peak_rss_kb "$(awk '/VmHWM/ {print $2}' /proc/$spid/status)"
		stop_server
	done
	echo "  redis round $r done"
done

/usr/bin/python3 "$src/bench/report.py" "$samples" "$RUNS" >"$out/results.txt"
cat "$out/results.txt"
echo "bench: results in $out/results.txt"
