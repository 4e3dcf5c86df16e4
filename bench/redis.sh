#!/usr/bin/env bash
# The redis slot of `make bench` (bench/run.sh): Debian's redis-server
# (scripts/redis-build.sh) preloaded with each allocator on loopback,
# redis-benchmark against it, server RSS and peak RSS after the load, then
# RSS again 1, 2 and 5 s later (memory back to the OS after a load); then
# a fragmentation phase whose content is the same on every allocator (the
# load's is not: three concurrent clients' last writes win): EVAL fills
# REDIS_FRAG_N keys with values of nine sizes (8 B .. 9000 B) and hash
# fields, deletes two keys of three, waits 2 s, fills two thirds again with
# the sizes shifted; RSS after each step, used_memory after the fill, and
# DEBUG DIGEST must agree between allocators (a mismatch is an error).
# docs/benchmarks.md "Services preloaded (branch svc7)" has the study.
# The latency study with percentiles is engineer services' (examples/kv,
# make bench-kv).
#
#   bench/redis.sh O SAMPLES      appends case/alloc/key/value rows
set -u
O=$1
samples=$2
REDIS_RUNS=${REDIS_RUNS:-3}
REDIS_N=${REDIS_N:-100000}
REDIS_FRAG_N=${REDIS_FRAG_N:-60000}
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
# Lua 5.1 (redis' EVAL): keys ARGV[1]..i for i in ARGV[2]..ARGV[3], the
# value's size chosen by i + ARGV[4]; a hash per 1000 keys gets field i.
frag_fill='local sz = {8, 40, 100, 300, 700, 1500, 3000, 5000, 9000}
for i = tonumber(ARGV[2]), tonumber(ARGV[3]) do
	redis.call("set", ARGV[1] .. i, string.rep("v", sz[(i + tonumber(ARGV[4])) % 9 + 1]))
	redis.call("hset", ARGV[1] .. "h" .. (i % 1000), i, string.rep("h", math.floor(sz[(i * 7) % 9 + 1] / 4)))
end
return 0'
frag_del='for i = tonumber(ARGV[2]), tonumber(ARGV[3]) do
	if i % 3 ~= 0 then
		redis.call("del", ARGV[1] .. i)
		redis.call("hdel", ARGV[1] .. "h" .. (i % 1000), i)
	end
end
return 0'
# frag_range SCRIPT PREFIX N [SHIFT]: SCRIPT over keys 0..N-1, 10000 a call
frag_range() {
	local b
	for ((b = 0; b < $3; b += 10000)); do
		redis-cli -p "$port" eval "$1" 0 "$2" "$b" $((b + 9999 < $3 - 1 ? b + 9999 : $3 - 1)) ${4:+"$4"} >/dev/null ||
			return 1
	done
}
frag_digest=
frag_phase() {
	local d
	redis-cli -p "$port" flushall >/dev/null 2>&1
	frag_range "$frag_fill" k "$REDIS_FRAG_N" 0 || { echo "bench: redis EVAL failed" >&2; return; }
	sample redis "$1" frag_fill_rss_kb "$(rss)"
	sample redis "$1" frag_fill_used_kb $(($(redis-cli -p "$port" info memory |
		awk -F: '/^used_memory:/ {print $2 + 0}') / 1024))
	frag_range "$frag_del" k "$REDIS_FRAG_N"
	sleep 2
	sample redis "$1" frag_del_rss_kb "$(rss)"
	frag_range "$frag_fill" n $((REDIS_FRAG_N * 2 / 3)) 4
	sample redis "$1" frag_refill_rss_kb "$(rss)"
	d=$(redis-cli -p "$port" debug digest)
	: "${frag_digest:=$d}"
	[ "$d" = "$frag_digest" ] ||
		echo "bench: redis on $1: DEBUG DIGEST $d, other allocators $frag_digest: content differs" >&2
}
echo "bench: redis-benchmark -n $REDIS_N x $REDIS_RUNS runs per allocator"
for r in $(seq 1 "$REDIS_RUNS"); do
	for a in "${allocs[@]}"; do
		env ${lib[$a]:+LD_PRELOAD=${lib[$a]}} "$server" --port "$port" \
			--bind 127.0.0.1 --save '' --appendonly no --logfile /dev/null \
		--enable-debug-command local &
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
		frag_phase "$a"
		stop_server
	done
	echo "  redis round $r done"
done
