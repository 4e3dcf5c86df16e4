#!/usr/bin/env bash
# The collector of `uslab record` reads raw files the recorded processes
# wrote: input (issue 11). Commit 28615cc keyed its per-thread cursors by
# the raw threads met, not by the largest raw tid; this is its regression
# test. The command records a python3 run, then rewrites that run's raw
# file so its threads carry tids 2^24-1, 2^24-2, ... (the largest the
# collector accepts). The collector must take memory for the threads it
# met, not for the numbers: under a 1 GiB address-space limit it writes
# the whole trace (before the fix it asked for 2^24 cursors, ~11 GB, and
# failed with ENOMEM), and a tid of 2^24 is refused with the byte offset.
set -u
O=${O:-build}
U=$(realpath -m "$O/uslab")	# absolute: O may be out of tree (O=/tmp/x)
py=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
[ -x "$py" ] || { echo "SKIP: no $py"; exit 0; }

# cmd.sh TIDBASE: record python3, then rewrite its raw files' tids
tdir=$(cd "$(dirname "$0")" && pwd)	# rawfiles.py
cat > "$T/cmd.sh" <<EOS
#!/bin/bash
$py -c 'x = [bytes(2000) for i in range(20000)]; del x' &
p=\$!
wait \$p
$py - "\$USLAB_RECORD_DIR" "\$p" "\$1" <<'PY'
import struct, sys
sys.path.insert(0, "$tdir")
from rawfiles import raw_files
d, pid, base = sys.argv[1], sys.argv[2], int(sys.argv[3])
n = 0
for path, b, offs in raw_files(d, pid):
    tids = {}
    for off in offs:
        tid, = struct.unpack_from("<I", b, off + 4)
        struct.pack_into("<I", b, off + 4, tids.setdefault(tid, base - len(tids)))
        n += 1
    open(path, "wb").write(b)
print("cmd: rewrote", n, "raw blocks of pid", pid, file=sys.stderr)
PY
EOS
chmod +x "$T/cmd.sh"

# python3's allocations in a trace: the events of its process rows
py_events() { "$U" report "$1" 2>/dev/null |
	awk '/python3 -c/ { sub(/^# [* ] /, ""); if ($1 ~ /^[0-9]+$/) n += $3 } END { print n + 0 }'; }

(ulimit -v 1048576; "$U" record -o "$T/near.ustr" -- "$T/cmd.sh" $(((1 << 24) - 1))) 2>"$T/near.err"
st=$?
grep -q 'cmd: rewrote [1-9][0-9]* raw blocks' "$T/near.err" || { bad "the command rewrote nothing"; cat "$T/near.err"; }
[ "$st" -eq 0 ] || { bad "record with tids near 2^24 under ulimit -v 1 GiB: status $st"; tail -5 "$T/near.err"; }
grep -q 'expected a raw block header' "$T/near.err" && bad "tids below 2^24 refused"
n=$(py_events "$T/near.ustr")
[ "$n" -ge 20000 ] || bad "python3's events in the trace: $n, want >= 20000"
echo "tids near 2^24: status $st, python3 events $n"

# 2^24 itself is beyond the bound: refused with the byte offset, the rest kept.
(ulimit -v 1048576; "$U" record -o "$T/far.ustr" -- "$T/cmd.sh" $((1 << 24))) 2>"$T/far.err"
st=$?
[ "$st" -eq 0 ] || { bad "record with tid 2^24: status $st"; tail -5 "$T/far.err"; }
grep -qE 'raw\.[0-9]+\.[0-9]+: byte offset 0: expected a raw block header' "$T/far.err" ||
	{ bad "tid 2^24 not refused at byte offset 0"; cat "$T/far.err"; }
[ "$fail" -eq 0 ] && echo "record hostile tid: ok"
exit $fail
