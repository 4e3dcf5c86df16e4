#!/usr/bin/env bash
# Output says what it knows and no more: a trace without a clock (an mtrace
# import) shows event indices, never seconds; sim's "all caches" row sums
# allocs under allocs and frees under frees; tune's progress ends at its
# total; `make help` lists every target and preset; an unknown preset says
# which presets exist.
. "$(dirname "$0")/../lib.sh"

# A clockless trace, as glibc's mtrace writes it.
{
	echo "= Start"
	for i in $(seq 1 200); do printf '@ ./p:[0x1] + 0x%x 0x%x\n' $((0x10000 + i * 64)) $((16 + i % 40)); done
	for i in $(seq 1 150); do printf '@ ./p:[0x1] - 0x%x\n' $((0x10000 + i * 64)); done
	echo "= End"
} > "$T/mt.log"
"$U" import -q mtrace "$T/mt.log" -o "$T/mt.ustr"
"$U" report "$T/mt.ustr" > "$T/report.txt"
grep -q "^# 350 events (the trace has no clock: times are event indices)" "$T/report.txt" ||
	fail "report: event total without a clock: $(grep '^# [0-9]' "$T/report.txt")"
grep -E "[0-9] s\b|[0-9] s\)" "$T/report.txt" && fail "report shows seconds for a clockless trace"
grep -Eq "^  (ns|time) " "$T/report.txt" && fail "report shows lifetimes in time without a clock"
grep -q "peak live .* at event [0-9]*; " "$T/report.txt" || fail "report: peak not given as an event index"
"$U" script "$T/mt.ustr" > "$T/script.txt"
awk 'NR == 1 && $1 != "0" { exit 1 } NR == 350 && $1 != "349" { exit 1 } $1 ~ /\./ { exit 1 }' "$T/script.txt" ||
	fail "script: time column is not the event index: $(head -2 "$T/script.txt")"
"$U" sim --timeline "$T/tl.csv" "$T/mt.ustr" > "$T/sim.txt" 2>/dev/null
grep -q "^over time:" "$T/sim.txt" && { grep -A1 "^over time:" "$T/sim.txt" | grep -q " event " || fail "sim: time column not labelled as event index"; }
grep -q "time_ms" "$T/sim.txt" && fail "sim: time_ms column for a clockless trace"
head -1 "$T/tl.csv" | grep -q "^event_index," || fail "sim --timeline: header $(head -1 "$T/tl.csv")"

# The "all caches" row: the per-cache allocs and frees, summed per column.
"$U" gen rpmalloc -t 2 -b 2000 -l 30 -o "$T/g.ustr" 2>/dev/null
"$U" sim "$T/g.ustr" > "$T/g.txt" 2>/dev/null
awk '/^per cache/ { on = 1; getline; next }
     on && /^  all caches/ { ta = $3; tf = $4; on = 0 }
     on && /^  kmalloc/ { a += $4; f += $5 }
     END { if (ta != a || tf != f || a == 0) { printf "row %s %s, sums %d %d\n", ta, tf, a, f; exit 1 } }' "$T/g.txt" ||
	fail "sim: the all caches row is not the column sums"

# tune's progress (shown on a terminal) never passes its total.
if command -v script >/dev/null; then
	script -qc "$U tune -j 2 --mag-sizes 8,32 --depot-limits 0,8 $T/g.ustr" /dev/null 2>&1 |
		tr '\r' '\n' | grep -o '[0-9]*/[0-9]* configurations' > "$T/prog.txt" || true
	[ -s "$T/prog.txt" ] || fail "tune: no progress shown on a terminal"
	awk -F'[/ ]' '$1 > $2 { bad = 1 } END { exit bad }' "$T/prog.txt" || fail "tune progress passes its total: $(tail -1 "$T/prog.txt")"
	last=$(tail -1 "$T/prog.txt")
	[ "${last%%/*}" = "$(echo "${last#*/}" | cut -d' ' -f1)" ] || fail "tune progress does not end at its total: $last"
fi

# make help: every phony target and every preset; unknown presets named.
make -s help > "$T/help.txt"
for t in all check install clean distclean defconfig menuconfig olddefconfig savedefconfig bench stress fuzz run help; do
	grep -q "^  $t " "$T/help.txt" || fail "make help does not list $t"
done
for p in configs/*_defconfig; do
	p=$(basename "$p" _defconfig)
	grep -q "^presets:.*\b$p\b" "$T/help.txt" || fail "make help does not list preset $p"
done
set +e
make -s nosuchpreset_defconfig > /dev/null 2> "$T/preset.err"
rc=$?
set -e
[ $rc -ne 0 ] || fail "make nosuchpreset_defconfig succeeded"
grep -q "no preset 'nosuchpreset': configs/ has .*performance_defconfig" "$T/preset.err" ||
	fail "unknown preset: $(cat "$T/preset.err")"
echo "honest output: clockless traces, all-caches row, tune progress, make help, presets"
