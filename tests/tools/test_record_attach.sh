#!/usr/bin/env bash
# uslab record -p: a python3 started without uslab (glibc's malloc) is
# recorded for 2 s with -g while it runs; it keeps running (its heartbeat
# advances) after the recorder detaches; the 100 KB blocks it allocated
# before the attach and frees during it are in the trace as alive at
# attach, so report finds no frees of unknown ids, and report, replay and
# sim accept the trace. Skipped only where ptrace is not permitted (said).
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || fail "$PY not installed"
command -v gdb >/dev/null || fail "gdb not installed (scripts/deps.sh tools)"

run_rc "$U" record --duration 2 -- true
[ "$rc" -eq 2 ] || fail "--duration without -p: exit $rc, not 2"
run_rc "$U" record -p 1 -- true
[ "$rc" -eq 2 ] || fail "-p with a command: exit $rc, not 2"
for d in 0 -1 5x 1e9h; do
	run_rc "$U" record -p 1 --duration "$d"
	[ "$rc" -eq 2 ] || fail "--duration $d: exit $rc, not 2"
done
run_rc "$U" record -p 999999999 -o "$T/none.ustr"
[ "$rc" -eq 1 ] || fail "-p of no process: exit $rc, not 1"
[ ! -e "$T/none.ustr" ] || fail "-p of no process wrote a trace"

cat > "$T/serve.py" <<'PY'
import sys, time
keep = [bytearray(100000) for _ in range(50)]	# alive before the attach
sys.stdout.write("ready\n"); sys.stdout.flush()
n = 0
while True:
    for k in range(5):	# frees five older blocks: all 50 within 10 rounds,
        keep[(5 * n + k) % 50] = bytearray(100000 + n % 7)	# however slow a loaded machine runs it
    n += 1
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(n))
    import os; os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(0.005)
PY
"$PY" "$T/serve.py" "$T/hb" > "$T/py.out" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$T"' EXIT
for _ in $(seq 100); do grep -q ready "$T/py.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$T/py.out" || fail "python3 did not start"

probe=$(gdb -nx -batch -p "$pid" -ex detach 2>&1 || true)
case $probe in
*"Operation not permitted"*) skip "ptrace is not permitted here: $(echo "$probe" | grep -m1 'not permitted')" ;;
esac

"$U" record -p "$pid" --duration 2s -g -o "$T/a.ustr" 2>"$T/rec.err" || { cat "$T/rec.err"; fail "record -p"; }
cat "$T/rec.err"
kill -0 "$pid" || fail "python3 died"
a=$(cat "$T/hb"); sleep 0.5; b=$(cat "$T/hb")
[ "$b" -gt "$a" ] || fail "python3 stopped serving after the detach (heartbeat $a, then $b)"
alive=$(sed -n 's/.* \([0-9]*\) blocks alive at attach.*/\1/p' "$T/rec.err")
[ -n "$alive" ] && [ "$alive" -ge 40 ] || fail "blocks alive at attach: '$alive', expected >= 40 of the 50"

"$U" report "$T/a.ustr" > "$T/rep" 2>&1 || { cat "$T/rep"; fail "report"; }
grep -Eq 'frees [0-9]+ \(of NULL [0-9]+, of unknown ids 0\)' "$T/rep" || { cat "$T/rep"; fail "report: frees of unknown ids"; }
grep -q "still running at the end" "$T/rep" || fail "report: the process is not marked running"
allocs=$(sed -n 's/^  allocations \([0-9]*\) .*/\1/p' "$T/rep")
[ "$allocs" -ge 100 ] || fail "only $allocs allocations recorded in 2 s"
"$U" report --sort callsite "$T/a.ustr" > /dev/null 2>&1 || fail "report --sort callsite"
"$U" replay "$T/a.ustr" > "$T/replay" 2>&1 || { cat "$T/replay"; fail "replay"; }
"$U" sim "$T/a.ustr" > "$T/sim" 2>&1 || { cat "$T/sim"; fail "sim"; }
kill "$pid"
echo ok
