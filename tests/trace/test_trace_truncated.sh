#!/usr/bin/env bash
# A truncated trace is read as far as it goes: report and script print
# what its complete chunks hold, warn with the byte offset where the file
# ends, and exit 3 (a complete trace: 0; a damaged one: 1). It gave no
# report at all.
. "$(dirname "$0")/../lib.sh"
u32() { od -An -tu4 -j"$2" -N4 "$1" | tr -d ' '; }
awk 'BEGIN { print "= Start"; for (i = 0; i < 300000; i++) {
	a = 4096 + (i % 5000) * 64
	if (i % 3 == 2) printf "- 0x%x\n", 4096 + ((i - 1) % 5000) * 64
	else printf "@ ./prog:[0x4011a6] + 0x%x 0x%x\n", a, 16 + i % 2000 } }' > "$T/big.log"
"$U" import -q mtrace "$T/big.log" -o "$T/good.ustr" || fail "import"
size=$(stat -c %s "$T/good.ustr")
H=$((80 + $(u32 "$T/good.ustr" 72)))		# first chunk
C=$(u32 "$T/good.ustr" $((H + 4)))
N1=$(u32 "$T/good.ustr" $((H + 12)))		# its events
H2=$((H + 40 + C))				# second chunk
END=$((size - 48))
[ "$N1" -gt 0 ] && [ "$N1" -lt 300000 ] || fail "want several chunks (first has $N1 events)"

"$U" report "$T/good.ustr" > /dev/null || fail "complete trace: exit $?"
head -c $((H2 + 100)) "$T/good.ustr" > "$T/cut.ustr"
for cmd in report script; do
	run_rc "$U" $cmd "$T/cut.ustr" > "$T/$cmd.out" 2> "$T/$cmd.err"
	[ "$rc" -eq 3 ] || { cat "$T/$cmd.err"; fail "$cmd of a truncated trace: exit $rc, not 3"; }
	grep -q "warning: .*byte offset $((H2 + 40)): .*truncated" "$T/$cmd.err" ||
		fail "$cmd: the warning does not name offset $((H2 + 40)): $(cat "$T/$cmd.err")"
done
grep -q "^# $N1 events " "$T/report.out" || { head -12 "$T/report.out"; fail "report: not the first chunk's $N1 events"; }
[ "$(wc -l < "$T/script.out")" -eq "$N1" ] || fail "script: $(wc -l < "$T/script.out") lines, expected $N1"
# cut before the trailer: every event, still said
head -c $END "$T/good.ustr" > "$T/cut2.ustr"
run_rc "$U" script "$T/cut2.ustr" > "$T/s2" 2>"$T/e2"
[ "$rc" -eq 3 ] || fail "cut before the trailer: exit $rc"
all=$("$U" script "$T/good.ustr" | wc -l)
[ "$(wc -l < "$T/s2")" -eq "$all" ] || fail "cut before the trailer: $(wc -l < "$T/s2") events of $all"
# damage is not truncation: a flipped payload byte stays an error
cp "$T/good.ustr" "$T/flip.ustr"
printf '\x5a' | dd of="$T/flip.ustr" bs=1 seek=$((H2 + 60)) conv=notrunc status=none
run_rc "$U" report "$T/flip.ustr" > /dev/null 2>&1
[ "$rc" -eq 1 ] || fail "damaged trace: exit $rc, not 1"
echo ok
