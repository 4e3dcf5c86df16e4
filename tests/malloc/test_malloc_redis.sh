#!/usr/bin/env bash
# redis-server (Debian's source, MALLOC=libc, built once into $O/redis/ by
# scripts/redis-build.sh) preloaded with libuslab.so on a loopback port,
# driven by redis-benchmark with a bounded request count, replies checked
# with redis-cli. The server is always stopped at the end.
set -u
O=${O:-build}
src=$(cd "$(dirname "$0")/../.." && pwd)
lib=$(realpath "$O/libuslab.so") || { echo "missing $O/libuslab.so"; exit 1; }
unset USLAB_OPTIONS
server=$(bash "$src/scripts/redis-build.sh" "$O") || {
	echo "FAIL: could not build redis-server from Debian's source (see above)"
	exit 1
}
work=$(mktemp -d "${TMPDIR:-/tmp}/uslab-redis.XXXXXX")
port=$((20000 + $$ % 20000))
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
		sleep 0.2
		kill "$pid" 2>/dev/null
		sleep 0.5
		# A server hung inside malloc may block SIGTERM.
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
cli() { timeout -k 2 60 redis-cli -p "$port" "$@"; }
fail() { echo "FAIL: $*"; tail -20 "$work/server.log"; exit 1; }

LD_PRELOAD="$lib" "$server" --port "$port" --bind 127.0.0.1 --save '' \
	--appendonly no --dir "$work" --logfile "$work/server.log" &
pid=$!
for _ in $(seq 1 100); do
	[ "$(cli ping 2>/dev/null)" = PONG ] && break
	sleep 0.1
done
[ "$(cli ping 2>/dev/null)" = PONG ] || fail "server did not answer PING"
grep -q libuslab.so "/proc/$pid/maps" || fail "server is not running on uslab"
cli info memory | grep -q '^mem_allocator:libc' || fail "server not built with MALLOC=libc"

# Known values, small to large, written and read back.
for i in $(seq 1 200); do
	echo "SET k:$i v$((i * i))-$(printf '%*s' $((i * 37)) '' | tr ' ' x)"
done | cli >/dev/null
head -c 3000000 /dev/urandom | base64 -w0 >"$work/big"
cli -x set big <"$work/big" >/dev/null
for i in $(seq 1 200); do
	echo "GET k:$i"
done | cli >"$work/got"
for i in $(seq 1 200); do
	echo "v$((i * i))-$(printf '%*s' $((i * 37)) '' | tr ' ' x)"
done >"$work/want"
cmp -s "$work/got" "$work/want" || fail "GET replies differ from what was SET"
cli --raw get big | tr -d '\n' | cmp -s - "$work/big" || fail "3 MB value came back different"

timeout -k 2 180 redis-benchmark -p "$port" -q -n 20000 -c 20 -r 1000 -t set,get,lpush,lpop \
	>"$work/bench" 2>&1 || fail "redis-benchmark failed"
tr '\r' '\n' <"$work/bench" | grep -E 'requests per second' | sed 's/^/  /'
[ "$(tr '\r' '\n' <"$work/bench" | grep -c 'requests per second')" -eq 4 ] ||
	fail "redis-benchmark did not finish all four tests"

# Still consistent after the load: our keys intact, DBSIZE sane.
for i in 1 50 200; do
	[ "$(cli get k:$i)" = "$(sed -n "${i}p" "$work/want")" ] || fail "k:$i changed"
done
n=$(cli dbsize)
[ "$n" -ge 201 ] && [ "$n" -le 1203 ] || fail "DBSIZE $n, expected 201..1203"
echo "  DBSIZE $n, server RSS $(awk '/VmRSS/ {print $2, $3}' "/proc/$pid/status")"
cli shutdown nosave >/dev/null 2>&1
for _ in $(seq 1 50); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$pid" 2>/dev/null && fail "server did not stop on SHUTDOWN"
wait "$pid"
st=$?
pid=
[ "$st" -eq 0 ] || fail "server exited with status $st"
echo "redis on uslab: ok"
