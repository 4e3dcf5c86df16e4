#!/usr/bin/env bash
# A trace whose realloc(p, 0) kept its id (the recording's allocator handed
# back a block; uslab frees, as glibc) and then reallocs that id again:
# sim ends the id at the realloc(p, 0) and names the later event as the
# trace's error (exit 1). Before, sim kept the freed pointer and passed it
# to realloc again: the hardened check aborted the simulator (found by
# fuzz_sim; the fuzzer's input is fuzz/corpus/sim/realloc-size0-then-reuse,
# this trace is what fuzz/forge.h makes of it).
. "$(dirname "$0")/../lib.sh"
tr=$(dirname "$0")/data/realloc-size0-then-reuse.ustr
"$U" script "$tr" 2>/dev/null | grep -Eq 'realloc +id=9223372036854775639 old=9223372036854775639 size=0$' ||
	fail "the trace lost its realloc(p, 0) that keeps its id"
run_rc "$U" sim "$tr" --cpus 9 --mag-size 7 >"$T/out" 2>"$T/err"
[ "$rc" -eq 1 ] || fail "sim: exit $rc, not 1 (the trace's error)"
grep -q 'object state does not match the operation (realloc of id 9223372036854775639)' "$T/err" ||
	fail "sim did not name the realloc of the ended id: $(cat "$T/err")"
grep -q 'invalid pointer\|already freed' "$T/err" && fail "the library saw a freed pointer: $(cat "$T/err")"
echo "sim ends an id at realloc(p, 0) and names its later use"
