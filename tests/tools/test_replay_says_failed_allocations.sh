#!/usr/bin/env bash
# uslab replay says when allocations the recording made fail in the replay
# (the allocator under test out of memory, an address-space limit) and
# exits 1: the figures it printed are of another run than the recorded
# one. Before, a trace whose 1 TiB and 16 GiB mallocs (recorded as
# succeeded) all failed replayed "successfully", exit 0, with the figures
# of a run that allocated nothing; --runs and tune took them as measured.
# And a trace that holds more live bytes than the machine has memory is
# not replayed with its pages written (--touch=first would write one byte
# of each page: a 16 GiB malloc event would take most of a 23 GiB machine);
# --touch=none replays it.
. "$(dirname "$0")/../lib.sh"
F=$O/tests/trace/trace_forge
[ -x "$F" ] || fail "$F not built"
# The replayer gets 600 MiB of address space: the large blocks fail on
# every allocator, whatever the machine's overcommit policy.
replay() { ( ulimit -v 600000; exec timeout -s KILL 120 "$U" replay "$@" ); }

printf 'malloc 1 0 1 0 1099511627776 0\nfree 1 0 1 0 0 0\nmalloc 1 0 2 0 100 0\nfree 1 0 2 0 0 0\nmalloc 1 0 3 0 17179869184 0\nfree 1 0 3 0 0 0\n' |
	"$F" "$T/big.ustr" || fail "trace_forge"
printf 'malloc 1 0 1 0 1000 0\nfree 1 0 1 0 0 0\n' | "$F" "$T/small.ustr" || fail "trace_forge"

# more than the machine's memory: refused before anything is allocated
# (the refusal does not depend on the ulimit; the ulimit keeps a replayer
# without the check from writing 16 GiB)
run_rc replay -a glibc "$T/big.ustr" >"$T/out" 2>"$T/err"
[ "$rc" -eq 1 ] || fail "1 TiB live, --touch=first: exit $rc, not 1: $(cat "$T/err")"
grep -q "big.ustr: the recording holds 1048576 MiB live at once (at event 0), more than this machine's [0-9]* MiB of memory: not replayed with --touch=first" "$T/err" ||
	fail "1 TiB live, --touch=first: not said: $(cat "$T/err")"
[ -s "$T/out" ] && fail "1 TiB live, --touch=first: figures printed: $(cat "$T/out")"

for a in glibc uslab; do
	run_rc replay -a $a --touch=none "$T/big.ustr" >"$T/out" 2>"$T/err"
	[ "$rc" -eq 1 ] || fail "-a $a: exit $rc with allocations failing, not 1: $(cat "$T/err")"
	grep -q '2 allocations the recording made failed here (NULL; the first: malloc of 1099511627776 bytes' "$T/err" ||
		fail "-a $a: not said: $(cat "$T/err")"
	run_rc replay -a $a "$T/small.ustr" >"$T/out" 2>"$T/err"
	[ "$rc" -eq 0 ] || fail "-a $a: a trace that fits: exit $rc: $(cat "$T/err")"
	grep -q 'failed here' "$T/err" && fail "-a $a: a trace that fits: $(cat "$T/err")"
done
run_rc replay -a uslab --touch=none --runs 3 "$T/big.ustr" >"$T/out" 2>"$T/err"
[ "$rc" -eq 1 ] || fail "--runs 3: exit $rc, not 1: $(cat "$T/err")"
grep -q 'failed here' "$T/err" || fail "--runs 3: not said: $(cat "$T/err")"
grep -q '^medians' "$T/out" && fail "--runs 3: medians of failed runs: $(cat "$T/out")"
echo "replay refuses to write more live bytes than the machine holds; says and exits 1 when allocations the recording made fail; a trace that fits: exit 0, nothing said"
