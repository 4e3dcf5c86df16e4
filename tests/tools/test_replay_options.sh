#!/usr/bin/env bash
# uslab replay measures the allocator, not the replayer (issue 19, item 4):
# its own structures come from mmap, so the RSS it starts from is the same
# whichever allocator serves the run (before, the decoded trace and the
# slots came from the allocator under test: 34 MiB on glibc, 46 MiB on
# uslab for the bundled python3 trace); --touch=first|all|none says what
# the program writes of each block; --runs N prints medians with bootstrap
# 95% intervals; -a PATH preloads any malloc library; the options in effect
# are printed.
. "$(dirname "$0")/../lib.sh"
set +e
F=$O/tests/trace/trace_forge
[ -x "$F" ] || fail "$F not built"
replay() { timeout -s KILL 300 "$U" replay "$@"; }

# The replayer's own RSS at the start: within 10% across allocators.
base() { replay traces/python3-json-threads.ustr -a "$1" |
	sed -n "s/.*KiB above the replayer's own \([0-9]*\) KiB at the start.*/\1/p"; }
g=$(base glibc); u=$(base uslab)
[ -n "$g" ] && [ -n "$u" ] || fail "no baseline (glibc '$g', uslab '$u')"
echo "replayer's own RSS at the start: glibc $g KiB, uslab $u KiB"
d=$(( g > u ? g - u : u - g ))
[ $(( d * 10 )) -le "$g" ] || bad "the baseline depends on the allocator: glibc $g KiB, uslab $u KiB"

# --touch: one block of 8 MiB. first (the default) and all write its pages,
# none leaves them free; the options line says which. The bar is 7 MiB,
# not 8: peak minus the start's RSS came out 7888-7960 KiB at load 9-13
# (the start's own pages are not all there at the peak); none stays <= 2.
printf 'malloc 0 0 1 0 8388608 0\nfree 0 0 1 0 0 0\n' | "$F" "$T/big.ustr" || fail "forge"
for t in first all none; do
	replay "$T/big.ustr" -a uslab --touch=$t > "$T/$t.txt" 2>&1 || bad "--touch=$t: $(tail -2 "$T/$t.txt")"
	grep -q "^options: -a uslab, threads as recorded, --touch=$t, USLAB_OPTIONS=" "$T/$t.txt" ||
		bad "--touch=$t: no options line: $(grep options "$T/$t.txt")"
done
replay "$T/big.ustr" -a uslab > "$T/default.txt" 2>&1
grep -q -- '--touch=first,' "$T/default.txt" || bad "the default is not --touch=first"
above() { sed -n 's/^peak RSS: [0-9]* KiB (\([0-9]*\) KiB above.*/\1/p' "$1"; }
[ "$(above "$T/first.txt")" -ge 7168 ] || bad "--touch=first: $(above "$T/first.txt") KiB above the start, the block has 8192"
[ "$(above "$T/all.txt")" -ge 7168 ] || bad "--touch=all: $(above "$T/all.txt") KiB"
[ "$(above "$T/none.txt")" -le 2048 ] || bad "--touch=none: $(above "$T/none.txt") KiB above the start"
run_rc "$U" replay "$T/big.ustr" --touch=some 2> "$T/err"
[ "$rc" -eq 2 ] && grep -q -- "--touch: expected first, all or none, found 'some'" "$T/err" ||
	bad "--touch=some: exit $rc, $(head -1 "$T/err")"

# -a PATH: the library named by its path serves malloc; a missing one is named.
replay "$T/big.ustr" -a "$LIBUSLAB" > "$T/path.txt" 2>&1 || bad "-a PATH: $(tail -2 "$T/path.txt")"
grep -q "^malloc from: $LIBUSLAB$" "$T/path.txt" || bad "-a PATH: $(grep 'malloc from' "$T/path.txt")"
run_rc "$U" replay "$T/big.ustr" -a "$T/none/libx.so" > /dev/null 2> "$T/err"
[ "$rc" -eq 1 ] && grep -q "$T/none/libx.so" "$T/err" || bad "-a missing path: exit $rc, $(cat "$T/err")"
run_rc "$U" replay "$T/big.ustr" -a nosuch 2> "$T/err"
[ "$rc" -eq 2 ] || bad "-a nosuch: exit $rc"

# --runs 3: each run, then the medians inside their intervals.
replay traces/gcc-O2-cc1.ustr -a uslab --runs 3 > "$T/runs.txt" 2>&1 || bad "--runs: $(tail -2 "$T/runs.txt")"
[ "$(grep -c '^run [123]: CPU [0-9.]* s, wall [0-9.]* s, peak RSS +[0-9]* KiB, mean RSS +[0-9]* KiB$' "$T/runs.txt")" -eq 3 ] ||
	bad "--runs 3: not three run lines"
grep -q '^options: -a uslab, .*, --runs 3 (each a fresh process)$' "$T/runs.txt" || bad "--runs: no options line"
/usr/bin/python3 - "$T/runs.txt" <<'PY' || bad "--runs: the medians: $(tail -4 "$T/runs.txt")"
import re, sys
n = 0
for l in open(sys.argv[1]):
    m = re.match(r'  (CPU time|wall time|peak RSS|mean RSS).* ([\d.]+) (s|KiB) \[([\d.]+), ([\d.]+)\]$', l)
    if m:
        assert float(m[4]) <= float(m[2]) <= float(m[5]), l
        n += 1
assert n == 4, n
PY
[ "$failed" -eq 0 ] && echo "replay: its own memory from mmap, --touch, -a PATH, --runs with intervals, options printed"
exit $failed
