#!/usr/bin/env bash
# examples/kv: the Redis-protocol server on kmem_caches, driven by the real
# clients (redis-cli, redis-benchmark from Debian's redis-tools) and by a
# pipelining client that checks every reply byte for byte. At exit
# (USLAB_OPTIONS=stats) its named caches must appear in slabinfo.
set -u
O=${O:-build}
kv=$O/examples/uslab-kv
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; exit 1; }
[ -x "$kv" ] || fail "$kv not built"
command -v redis-benchmark >/dev/null && command -v redis-cli >/dev/null ||
	fail "redis-tools not installed (scripts/deps.sh installs it)"
tmp=$(mktemp -d); trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
pid=

# A free port: the server says so when it cannot listen.
. "$(dirname "$0")/../../examples/kv/start.sh"
kv_start "$tmp/out" "$tmp/err" env USLAB_OPTIONS=stats "$kv" --threads 2
pid=$kvpid
[ -n "$pid" ] || fail "uslab-kv did not start: $(cat "$tmp/err")"
grep -q 'objects from kmem_cache' "$tmp/out" || fail "not the kmem_cache build: $(cat "$tmp/out")"
cli() { redis-cli -p $port "$@"; }

# redis-cli: real values, each reply checked.
[ "$(cli ping)" = PONG ] || fail "PING"
[ "$(cli set greeting 'hello world')" = OK ] || fail "SET"
[ "$(cli get greeting)" = "hello world" ] || fail "GET after SET: '$(cli get greeting)'"
head -c 300000 /dev/urandom | base64 -w0 >"$tmp/big"
[ "$(cli -x set big <"$tmp/big")" = OK ] || fail "SET of a 400 KB value"
cli --no-raw get big | sed -e 's/^"//' -e 's/"$//' >"$tmp/big.back"
cmp -s <(tr -d '\n' <"$tmp/big") <(tr -d '\n' <"$tmp/big.back") || fail "400 KB value differs after GET"
[ "$(cli incr counter)" = 1 ] && [ "$(cli incr counter)" = 2 ] || fail "INCR"
cli incr greeting | grep -q 'not an integer' || fail "INCR of a string: no error"
[ "$(cli exists greeting counter nokey)" = 2 ] || fail "EXISTS"
[ "$(cli del greeting counter nokey)" = 2 ] || fail "DEL"
[ -z "$(cli get greeting)" ] || fail "GET after DEL is not nil"
cli frobnicate | grep -q "unknown command 'frobnicate'" || fail "unknown command"

# Pipelining, byte for byte: 5000 commands in one write, replies in order.
python3 - "$port" <<'PY' || fail "pipelined replies differ"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
def cmd(*a):
    return b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a)
req, want = [], []
for i in range(1000):
    k, v = b"pk:%d" % i, b"value-%d-" % i * (i % 7 + 1)
    req += [cmd(b"SET", k, v), cmd(b"GET", k), cmd(b"INCR", b"pc:%d" % (i % 10)),
            cmd(b"DEL", b"pk:%d" % (i - 1) if i else b"none"), cmd(b"GET", b"pk:%d" % (i - 1))]
    want += [b"+OK\r\n", b"$%d\r\n%s\r\n" % (len(v), v), b":%d\r\n" % (i // 10 + 1),
             b":%d\r\n" % (1 if i else 0), b"$-1\r\n"]
s.sendall(b"".join(req))
want = b"".join(want); got = b""
s.settimeout(20)
while len(got) < len(want):
    d = s.recv(1 << 16)
    if not d: break
    got += d
if got != want:
    n = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
    print("first difference at byte %d: got %r want %r" % (n, got[n:n+40], want[n:n+40])); sys.exit(1)
PY

# redis-benchmark: SET and GET, 200000 requests each, pipelines of 16.
timeout 240 redis-benchmark -p $port -t set,get -n 200000 -P 16 -r 100000 -c 50 -q \
	>"$tmp/bench" 2>&1 || fail "redis-benchmark failed: $(tail -3 "$tmp/bench")"
tr '\r' '\n' <"$tmp/bench" | grep -qi 'error' && fail "redis-benchmark saw errors: $(tr '\r' '\n' <"$tmp/bench" | grep -i error | head -3)"
for t in SET GET; do
	tr '\r' '\n' <"$tmp/bench" | grep -Eq "^$t: [0-9.]+ requests per second" ||
		fail "redis-benchmark: no $t result: $(tr '\r' '\n' <"$tmp/bench" | tail -3)"
done
keys=$(cli dbsize)
[ "$keys" -gt 50000 ] || fail "after 200000 random SETs over 100000 keys, DBSIZE is $keys"
v=$(cli get key:000000000042)
[ -z "$v" ] || [ ${#v} = 3 ] || fail "benchmark key holds '$v', expected its 3-byte value"

# Stop; the exit statistics list the service's own caches.
kill -TERM $pid; wait $pid; rc=$?; pid=
[ $rc = 0 ] || fail "uslab-kv exited with $rc: $(tail -3 "$tmp/err")"
for c in kv_conn kv_req kv_item; do
	grep -q "^$c " "$tmp/err" || fail "slabinfo at exit has no $c row"
done
echo "kv: redis-cli, pipelined replies and redis-benchmark (SET $(tr '\r' '\n' <"$tmp/bench" | grep -Eo '^SET: [0-9.]+' | cut -d' ' -f2) rps) ok"
