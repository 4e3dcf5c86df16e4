#!/usr/bin/env bash
# Output files never clobber: every writer (here `uslab gen`, `import` and
# `record`, all through the trace writer) replaces a regular file only by
# rename when complete, follows a symlink to its target, writes a FIFO, a
# device or a socket in place, refuses a directory, fails cleanly in a
# directory it cannot write, and takes "-" for standard output.
set -eu
O=${O:-build}
U=$(realpath "$O/uslab")
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
gen() { "$U" gen rpmalloc -t 1 -b 200 -l 20 "$@"; }
valid() { "$U" report "$1" >/dev/null 2>&1; }

# A regular file: replaced whole, its mode kept, no temporary left.
echo old > "$T/reg.ustr"
chmod 640 "$T/reg.ustr"
gen -o "$T/reg.ustr" 2>/dev/null || fail "regular: gen failed"
valid "$T/reg.ustr" || fail "regular: not a trace"
[ "$(stat -c %a "$T/reg.ustr")" = 640 ] || fail "regular: mode $(stat -c %a "$T/reg.ustr"), expected 640 kept"
ls "$T" | grep -q tmp && fail "regular: temporary left: $(ls "$T")"

# A failed run leaves the old file untouched.
printf 'not an mtrace log\n@ x:[0x1] + 0xzz 0x10\n' > "$T/bad.log"
cp "$T/reg.ustr" "$T/keep.ustr"
"$U" import mtrace "$T/bad.log" -o "$T/reg.ustr" 2>/dev/null && fail "bad input: import succeeded"
cmp -s "$T/reg.ustr" "$T/keep.ustr" || fail "failed import changed the existing file"
ls "$T" | grep -q tmp && fail "failed import: temporary left"

# A symlink: followed; the link stays a link, its target gets the trace.
mkdir "$T/real"
echo old > "$T/real/target.ustr"
ln -s real/target.ustr "$T/link.ustr"
gen -o "$T/link.ustr" 2>/dev/null || fail "symlink: gen failed"
[ -L "$T/link.ustr" ] || fail "symlink: replaced by a regular file"
valid "$T/real/target.ustr" || fail "symlink: target is not the trace"
# a dangling symlink: its target is created through it
ln -s real/new.ustr "$T/dangling.ustr"
gen -o "$T/dangling.ustr" 2>/dev/null || fail "dangling symlink: gen failed"
[ -L "$T/dangling.ustr" ] && valid "$T/real/new.ustr" || fail "dangling symlink: target not written"

# A FIFO (and so any device node such as /dev/null): written in place.
mkfifo "$T/fifo"
cat "$T/fifo" > "$T/from-fifo.ustr" &
gen -o "$T/fifo" 2>/dev/null || fail "fifo: gen failed"
wait $!
[ -p "$T/fifo" ] || fail "fifo: replaced by a regular file"
valid "$T/from-fifo.ustr" || fail "fifo: the reader did not get a trace"
# the real /dev/null stays a device (written in place, never renamed over)
gen -o /dev/null 2>/dev/null || fail "/dev/null: gen failed"
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
ls /dev | grep -q 'null\.tmp\|null\.rec' && fail "/dev: temporary left"

# A socket: connected to and written in place.
python3 - "$T/sock" "$T/from-sock.ustr" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
open(sys.argv[1] + ".ready", "w").close()
c, _ = s.accept()
with open(sys.argv[2], "wb") as f:
    while True:
        b = c.recv(65536)
        if not b:
            break
        f.write(b)
PY
for i in $(seq 50); do [ -e "$T/sock.ready" ] && break; sleep 0.1; done
gen -o "$T/sock" 2>/dev/null || fail "socket: gen failed"
wait $!
[ -S "$T/sock" ] || fail "socket: replaced"
valid "$T/from-sock.ustr" || fail "socket: the listener did not get a trace"

# A directory: an error naming it, exit non-zero, nothing written into it.
mkdir "$T/dir.ustr"
set +e
gen -o "$T/dir.ustr" 2>"$T/dir.err"; rc=$?
set -e
[ $rc -ne 0 ] || fail "directory: gen succeeded"
grep -q "dir.ustr: Is a directory" "$T/dir.err" || fail "directory: message: $(cat "$T/dir.err")"
[ -z "$(ls -A "$T/dir.ustr")" ] || fail "directory: something written into it"
# record checks its output before running the command
set +e
"$U" record -o "$T/dir.ustr" -- touch "$T/ran" 2>"$T/rec.err"; rc=$?
set -e
[ $rc -ne 0 ] && [ ! -e "$T/ran" ] || fail "record: ran the command though -o is a directory"

# A read-only directory: a clear error, nothing left behind. As root the
# mode bits do not bind, so the writer runs as nobody.
mkdir "$T/ro"
chmod 555 "$T/ro"
chmod 755 "$T"
as_user=()
[ "$(id -u)" -eq 0 ] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
set +e
"${as_user[@]}" "$U" gen rpmalloc -t 1 -b 200 -l 20 -o "$T/ro/t.ustr" 2>"$T/ro.err"; rc=$?
set -e
[ $rc -ne 0 ] || fail "read-only directory: gen succeeded"
grep -q "ro: cannot create files in this directory: Permission denied" "$T/ro.err" ||
	fail "read-only directory: message: $(cat "$T/ro.err")"
[ -z "$(ls -A "$T/ro")" ] || fail "read-only directory: something left"

# "-" is standard output, not a file named "-".
(cd "$T" && gen -o - > "$T/stdout.ustr" 2>/dev/null) || fail "-o -: gen failed"
[ -e "$T/-" ] && fail "-o - wrote a file named -"
valid "$T/stdout.ustr" || fail "-o -: standard output is not a trace"
# ... and readers take "-" for standard input
"$U" report - < "$T/stdout.ustr" >/dev/null 2>&1 || fail "report - (stdin)"
"$U" script - < "$T/stdout.ustr" | head -1 | grep -q malloc || fail "script - (stdin)"

echo "no-clobber: regular, failed run, symlink, FIFO, /dev/null, socket, directory, read-only directory, -"
