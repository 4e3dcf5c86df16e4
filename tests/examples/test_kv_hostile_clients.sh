#!/usr/bin/env bash
# examples/kv against hostile clients (issue 20, findings 18-20), each case
# failing on the server before its fix:
#   18  clients that ask for a large value and never read: replies waiting
#       to be sent are bounded per client and in total (the server grew by
#       16 x the value); a client over a limit is disconnected, the others
#       get their reply whole.
#   19  "*N" and "$N" lengths are parsed within the received line (strtoll
#       ran on bytes without a NUL: it skipped whitespace and signs, past
#       the line and past the buffer): anything but digits is a protocol
#       error; the same lines through an AddressSanitizer build of the server.
#   20  out of descriptors (a low RLIMIT_NOFILE), accept4's EMFILE left the
#       listening socket readable and the worker spun at 66% of a CPU: the
#       waiting connections are now closed and the server stays idle.
set -u
O=${O:-build}
kv=${KV:-$O/examples/uslab-kv}
T=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$T"' EXIT
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
[ -x "$kv" ] || { echo "FAIL: $kv not built"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 missing (scripts/deps.sh core)"; exit 1; }
. "$(dirname "$0")/../../examples/kv/start.sh"
rss_kib() { awk '/^VmRSS:/ { print $2 }' /proc/$1/status; }
cpu_ticks() { awk '{ print $14 + $15 }' /proc/$1/stat; }
stop() { kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; pid=; }
# serve N WHAT ERR CMD...: the server under CMD (stderr in ERR), its pid in
# $pid; one that does not start is case N's failure (false).
serve() {
	local n=$1 what=$2 err=$3
	shift 3
	kv_start "$T/out" "$err" "$@"
	pid=$kvpid
	[ -n "$pid" ] || { fail "$n: $what did not start: $(cat "$err")"; return 1; }
}

# --- 18. 16 clients send "GET big" (8 MiB: more than the kernel's socket
# buffers take) and never read. Limits: 12 MiB a client, 32 MiB in all.
# Unbounded, each held a 16 MiB reply buffer: 256 MiB.
if serve 18 "the server with output limits" "$T/err" "$kv" --threads 2 --client-output-limit 12582912 --output-limit 33554432; then
	python3 - "$port" "$pid" <<'PY' || fail "18: output limits (see above)"
import socket, sys, time
port, pid = int(sys.argv[1]), sys.argv[2]
def rss():
    for l in open("/proc/%s/status" % pid):
        if l.startswith("VmRSS:"):
            return int(l.split()[1])
def cmd(*a):
    return b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a)
def reply(s, n):
    got = b""
    s.settimeout(20)
    while len(got) < n:
        d = s.recv(1 << 20)
        if not d:
            break
        got += d
    return got
big, huge = b"b" * (8 << 20), b"h" * (13 << 20)
s = socket.create_connection(("127.0.0.1", port))
for k, v in ((b"big", big), (b"huge", huge)):
    s.sendall(cmd(b"SET", k, v))
    assert reply(s, 5) == b"+OK\r\n", "SET %s" % k
# a value larger than one client's limit: that client is disconnected
s.sendall(cmd(b"GET", b"huge"))
r = reply(s, 1)
if r:
    print("18: GET of a 13 MiB value over a 12 MiB client limit answered %r" % r[:20]); sys.exit(1)
s.close()
time.sleep(0.5)
before = rss()
clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
for c in clients:
    c.sendall(b"GET big\r\n")
time.sleep(2)
grown = rss() - before
want = b"$%d\r\n" % len(big) + big + b"\r\n"
served = dropped = 0
for c in clients:
    r = reply(c, len(want))
    if r == want:
        served += 1
    elif r == b"":
        dropped += 1
    else:
        print("18: a reply of %d bytes, neither whole nor none" % len(r)); sys.exit(1)
print("18: server grew by %d KiB with 16 clients not reading; %d served, %d disconnected" % (grown, served, dropped))
if grown > 32768 + 8192:
    print("18: grew by %d KiB, the limit is 32768 KiB" % grown); sys.exit(1)
if not served or not dropped:
    print("18: %d served, %d disconnected: expected both" % (served, dropped)); sys.exit(1)
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"PING\r\n")
assert reply(s, 7) == b"+PONG\r\n", "PING after the flood"
PY
	stop
fi

# --- 19. length lines: digits only, within the line.
check_lengths() {
	python3 - "$1" <<'PY'
import socket, sys
port = int(sys.argv[1])
bad = [b"* 1\r\n$4\r\nPING\r\n", b"*+1\r\n$4\r\nPING\r\n", b"*1x\r\n$4\r\nPING\r\n",
       b"*1\r\n$ 4\r\nPING\r\n", b"*1\r\n$+4\r\nPING\r\n", b"*1\r\n$4 \r\nPING\r\n",
       b"*\r\n", b"*1\r\n$\r\nPING\r\n", b"*-1\r\n", b"*99999999999999999999999\r\n",
       b"*\n" + b"\n" * 20000 + b"1\r\n$4\r\nPING\r\n", b"*1\r\n$\t\n\n\n\n4\r\nPING\r\n"]
rc = 0
for req in bad:
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(req)
    s.settimeout(10)
    got = b""
    try:
        while True:
            d = s.recv(4096)
            if not d:
                break
            got += d
    except OSError:
        got += b" (no end: the connection was left open)"
    if got != b"-ERR Protocol error\r\n":
        print("19: %r answered %r, expected a protocol error" % (req[:24], got[:40])); rc = 1
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0003\r\nabc\r\n")
s.settimeout(20)
got = b""
while len(got) < 16:
    d = s.recv(4096)
    if not d:
        break
    got += d
if got != b"+PONG\r\n$3\r\nabc\r\n":
    print("19: well-formed lengths answered %r" % got); rc = 1
sys.exit(rc)
PY
}
if serve 19 "the server" "$T/err" "$kv" --threads 1; then
	check_lengths $port || fail "19: length lines (see above)"
	stop
fi
# the same lines through the malloc build under AddressSanitizer
if gcc -std=gnu11 -O1 -g -fsanitize=address -fno-omit-frame-pointer -pthread \
	-o "$T/kv-asan" examples/kv/kv.c $(pkg-config --cflags --libs liburcu-memb) 2>"$T/cc"; then
	if serve 19 "the AddressSanitizer build" "$T/asan" env ASAN_OPTIONS=detect_leaks=0 "$T/kv-asan" --threads 1; then
		check_lengths $port || fail "19: length lines, AddressSanitizer build"
		stop
		grep -q AddressSanitizer "$T/asan" && fail "19: $(grep -A8 AddressSanitizer "$T/asan" | head -12)"
	fi
else
	fail "19: cannot build the AddressSanitizer server: $(tail -3 "$T/cc")"
fi

# --- 20. 40 descriptors: 60 clients connect. The waiting ones are closed
# (none left hanging), the server's CPU time stays that of an idle one
# (0.00 s of 3; spinning took 66% of a CPU, and still 0.3 s of 2 on a
# loaded machine), and it serves again after.
if serve 20 "the server under ulimit -n 40" "$T/err" bash -c 'ulimit -n 40 && exec "$0" "$@"' "$kv" --threads 2; then
	python3 - "$port" "$pid" <<'PY' || fail "20: descriptors exhausted (see above)"
import os, socket, sys, time
port, pid = int(sys.argv[1]), sys.argv[2]
hz = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz
clients = []
for _ in range(60):
    clients.append(socket.create_connection(("127.0.0.1", port)))
time.sleep(0.5)
t0 = cpu()
time.sleep(3)
used = cpu() - t0
closed = served = hanging = 0
for c in clients:
    c.settimeout(3)
    try:
        c.sendall(b"PING\r\n")
        r = c.recv(64)
    except socket.timeout:
        r = None
    except OSError:
        r = b""
    if r == b"+PONG\r\n":
        served += 1
    elif r == b"":
        closed += 1
    elif r is None:
        hanging += 1
print("20: %.2f s of CPU in 3 s with 60 clients on 40 descriptors; %d served, %d closed, %d left hanging" % (used, served, closed, hanging))
rc = 0
if used > 0.1:
    print("20: the server spun: %.2f s of CPU in 3 s" % used); rc = 1
if not served or not closed or served + closed != 60:
    print("20: %d served, %d closed, %d hanging of 60" % (served, closed, hanging)); rc = 1
for c in clients:
    c.close()
time.sleep(0.5)
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(10)
s.sendall(b"PING\r\n")
if s.recv(64) != b"+PONG\r\n":
    print("20: no PONG once descriptors were free again"); rc = 1
sys.exit(rc)
PY
	grep -q 'out of file descriptors' "$T/err" || fail "20: the server did not say it ran out of descriptors: $(cat "$T/err")"
	stop
fi

[ $nfail -eq 0 ] && echo "kv: output bounded, lengths parsed in bounds, EMFILE handled without spinning"
[ $nfail -eq 0 ]
