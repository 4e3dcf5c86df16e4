#!/usr/bin/env bash
# The redis slot of `make bench` (bench/run.sh): Debian's redis-server
# (scripts/redis-build.sh) preloaded with each allocator on loopback,
# redis-benchmark against it, server RSS and peak RSS after the load, then
# RSS again 1, 2 and 5 s later (memory back to the OS after a load).
# The latency study with percentiles is engineer services' (examples/kv,
# make bench-kv).
#
#   bench/redis.sh O SAMPLES      appends case/alloc/key/value rows
set -u
O=$1
samples=$2
REDIS_RUNS=${REDIS_RUNS:-3}
REDIS_N=${REDIS_N:-100000}
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/bench/lib.sh"
bench_allocators "$O"
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
sample() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$samples"; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$spid/status"; }
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
		sample redis "$a" server_rss_kb "$(rss)"
		sample redis "$a" server_peak_rss_kb "$(awk '/VmHWM/ {print $2}' "/proc/$spid/status")"
		# the load's keys deleted: how fast does RSS follow?
		redis-cli -p "$port" flushall >/dev/null 2>&1
		t0=$(date +%s%N)
		sample redis "$a" flush_rss_t0_kb "$(rss)"
		for ms in 1000 2000 5000; do
			while [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt $ms ]; do sleep 0.05; done
			sample redis "$a" "flush_rss_t${ms}_kb" "$(rss)"
		done
		stop_server
	done
	echo "  redis round $r done"
done
