#!/usr/bin/env bash
# A process that ends (exit_group) while another of its threads is inside
# write(2) stops that write between two pages of the file: the raw file's
# last block is then part-written, with nothing after it
# (test_record_exit_while_threads_allocate met it about once in 100
# recordings under load). The collector says so for what it is, "the last
# block is cut short", with its byte offset, and keeps every block before
# it; a damaged block with more behind it is still "expected a raw block
# header" at its offset. Raw files forged from a python3 recording: its
# last block cut 100 bytes short, cut inside its header, or a middle
# block's magic overwritten.
. "$(dirname "$0")/../lib.sh"
set +e	# every case runs; bad notes a failure
py=/usr/bin/python3
[ -x "$py" ] || skip "no $py"

# cmd.sh HOW: record python3, then damage its raw file (the one with the
# most blocks) as HOW says; prints the damaged block's offset on stderr
tdir=$(cd "$(dirname "$0")" && pwd)	# rawfiles.py
cat > "$T/cmd.sh" <<EOS
#!/bin/bash
$py -c 'x = [bytes(2000) for i in range(20000)]; del x' &
p=\$!
wait \$p
$py - "\$USLAB_RECORD_DIR" "\$p" "\$1" <<'PY'
import os, struct, sys
sys.path.insert(0, "$tdir")
from rawfiles import raw_files
d, pid, how = sys.argv[1], sys.argv[2], sys.argv[3]
best = None
for path, b, offs in raw_files(d, pid):
    if best is None or len(offs) > len(best[2]):
        best = (path, b, offs)
path, b, offs = best
assert len(offs) >= 3, offs
if how == "tail":
    at = offs[-1]; b = b[:-100]
elif how == "header":
    at = offs[-1]; b = b[:at + 10]
else:
    at = offs[1]; struct.pack_into("<I", b, at, 0x12345678)
open(path, "wb").write(b)
print("cmd: damaged", os.path.basename(path), "at", at, "of", len(offs), "blocks", file=sys.stderr)
PY
EOS
chmod +x "$T/cmd.sh"

for how in tail header middle; do
	"$U" record -o "$T/$how.ustr" -- "$T/cmd.sh" $how 2>"$T/$how.err"
	st=$?
	at=$(sed -n 's/^cmd: damaged .* at \([0-9]*\) of .*/\1/p' "$T/$how.err")
	[ -n "$at" ] || { bad "$how: the command damaged nothing"; cat "$T/$how.err"; continue; }
	[ "$st" -eq 0 ] || bad "$how: record status $st"
	case $how in
	tail|header)
		grep -qE "raw\.[0-9]+\.[0-9]+: byte offset $at: the last block is cut short \([0-9]+ bytes of it; the process ended while a thread wrote it\): keeping the events before it" "$T/$how.err" ||
			{ bad "$how: no 'cut short' at byte offset $at"; cat "$T/$how.err"; }
		grep -q "expected a raw block header" "$T/$how.err" &&
			bad "$how: a cut-short last block called a damaged header" ;;
	middle)
		grep -qE "raw\.[0-9]+\.[0-9]+: byte offset $at: expected a raw block header" "$T/$how.err" ||
			{ bad "middle: no 'expected a raw block header' at byte offset $at"; cat "$T/$how.err"; }
		grep -q "cut short" "$T/$how.err" && bad "middle: a damaged block called cut short" ;;
	esac
	"$U" report "$T/$how.ustr" >/dev/null 2>"$T/rerr" || bad "$how: report: $(head -2 "$T/rerr")"
	echo "$how: damaged at byte offset $at: $(grep -m1 -o 'byte offset [0-9]*: [a-z ]*' "$T/$how.err")"
done
[ "$failed" -eq 0 ] && echo "record last block cut short: ok"
exit $failed
