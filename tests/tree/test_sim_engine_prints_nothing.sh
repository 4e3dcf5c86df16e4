#!/usr/bin/env bash
# The engine in sim/ prints nothing (issue 21, item 3): it takes an open
# reader, returns 0 or -errno and leaves its words in sim_result.err /
# tune.err; tools/uslab/ says them after its own name. nm over the engine's
# objects: none calls a stdio output function or names stdout/stderr.
# sim/calibrate.c is uslab-calibrate, a program of its own: it may print.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O=$src/$O ;; esac
fail() { echo "FAIL: $*"; exit 1; }
n=0
for c in "$src"/sim/*.c; do
	b=$(basename "$c" .c)
	[ "$b" = calibrate ] && continue
	o=$O/sim/$b.o
	[ -f "$o" ] || fail "$o not built (make first)"
	n=$((n + 1))
	out=$(nm -u "$o" | awk '{ print $NF }' | sed 's/@.*//' |
	      grep -xE 'v?f?printf|__v?f?printf_chk|dprintf|__dprintf_chk|puts|fputs|fputc|putc|putchar|fwrite|perror|psignal|stdout|stderr' | tr '\n' ' ')
	[ -z "$out" ] || fail "sim/$b.o prints: $out"
done
[ $n -ge 5 ] || fail "only $n engine objects found"
echo "sim: $n engine objects, none prints"
