#!/usr/bin/env bash
# uslab replay -a PATH: when the C library still serves malloc after the
# preload (a file ld.so cannot preload: it only warns "cannot be
# preloaded ... ignored"; a library without malloc, such as libz), nothing
# is replayed and the command says where malloc comes from, exit 1. Before,
# the replay ran on glibc under the title "on PATH" and exited 0 (with
# --runs too). A real malloc library named by its path still replays.
. "$(dirname "$0")/../lib.sh"
set +e

"$U" gen rpmalloc -t 1 -b 200 -l 5 -o "$T/t.ustr" 2>/dev/null || fail "gen"
echo "not an ELF object" > "$T/notalib.so"
libz=$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ { print $NF; exit }')
[ -n "$libz" ] || libz=/lib/x86_64-linux-gnu/libz.so.1
[ -e "$libz" ] || fail "no libz.so.1 to preload"

for lib in "$T/notalib.so" "$libz"; do
	for runs in "" "--runs 3"; do
		run_rc "$U" replay -a "$lib" $runs "$T/t.ustr" > "$T/out" 2> "$T/err"
		[ "$rc" -eq 1 ] || bad "-a $lib $runs: exit $rc, not 1: $(head -3 "$T/out")"
		grep -q "malloc comes from the C library" "$T/err" ||
			bad "-a $lib $runs: not said: $(cat "$T/err")"
		grep -q "^wall time\|^medians" "$T/out" && bad "-a $lib $runs: a replay was reported"
	done
done

run_rc "$U" replay -a "$LIBUSLAB" "$T/t.ustr" > "$T/out" 2> "$T/err"
[ "$rc" -eq 0 ] || bad "-a $LIBUSLAB: exit $rc: $(cat "$T/err")"
grep -q "^malloc from: $LIBUSLAB" "$T/out" || bad "-a $LIBUSLAB: $(grep 'malloc from' "$T/out")"
[ "$failed" -eq 0 ] && echo "replay -a refuses a preload that leaves malloc to the C library; a real one replays"
exit $failed
