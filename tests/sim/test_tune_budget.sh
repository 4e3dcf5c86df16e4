#!/usr/bin/env bash
# Issue 20, finding 17: `uslab tune` decodes the whole trace into memory (32
# bytes an event) and had no budget: a trace of a few KiB that decodes to
# tens of millions of events grew it past 2 GiB. It now holds what replay
# holds, a quarter of physical memory or of the address-space limit, and
# refuses the event past it by its byte offset, before the machine swaps.
. "$(dirname "$0")/../lib.sh"
F=$O/tests/trace/trace_forge
[ -x "$F" ] || fail "$F not built"

# 20 million free(NULL) in a few KiB (the forge's repeat count).
printf 'free 0 0 0 0 0 0 20000000\n' | "$F" "$T/big.ustr" || fail "forge"
bytes=$(stat -c %s "$T/big.ustr")
events=20000000
[ "$bytes" -lt 65536 ] || fail "the forged trace is $bytes bytes, not a few KiB"

# Under a 400 MB address-space limit the budget is 100 MB / 32 B = about
# 3.1 million events: refused with the offset, not "out of memory" after
# growing to the limit.
run_rc bash -c "ulimit -v 400000; exec timeout -s KILL 120 \"$U\" tune --model-only -j 1 \
	--mag-sizes 4 --depot-limits 0 --no-compose \"$T/big.ustr\"" > "$T/out" 2> "$T/err"
[ "$rc" -eq 1 ] || fail "tune on $events events under 400 MB: exit $rc: $(tail -c 300 "$T/err")"
grep -q 'byte offset [0-9]*: .*more than [0-9]* events to hold: uslab tune decodes the whole trace into memory first' "$T/err" ||
	fail "tune did not refuse by the budget: $(tail -c 300 "$T/err")"
grep -q 'out of memory' "$T/err" && fail "tune ran out of memory instead: $(tail -c 300 "$T/err")"
# The same budget, said in events, for a smaller machine.
run_rc env USLAB_EVENT_BUDGET=1000000 "$U" tune --model-only -j 1 --mag-sizes 4 \
	--depot-limits 0 --no-compose "$T/big.ustr" > "$T/out" 2> "$T/err"
[ "$rc" -eq 1 ] && grep -q 'more than 1000000 events to hold' "$T/err" ||
	fail "USLAB_EVENT_BUDGET=1000000: exit $rc: $(tail -c 300 "$T/err")"
echo "tune: $events events in $bytes bytes refused at the budget, by byte offset"
