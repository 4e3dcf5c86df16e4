#!/usr/bin/env bash
# Well-formed but hostile extension tables and call-site reports (issue 20,
# findings 12-16): the process, stack and mapping tables of a trace whose
# checksums are right are input all the same. tests/trace/trace_forge.c
# writes them (--stack/--object through the real writer, --record as raw
# record bytes). Each case failed on the tree before its fix (gigabytes, a
# run of hours, a reader blocked on a FIFO, a wrapped bound, hundreds of MiB
# for a table script never uses); now each tool runs in memory and time that
# follow what the file holds, or refuses the field by its byte offset.
. "$(dirname "$0")/hostile.sh"
# The header of trace_forge's traces: 76 bytes, "forged", the checksum; a
# record spliced after it has its payload 24 bytes later.
REC=$((76 + 6 + 4 + 24))

# --- 12. report --sort callsite sized an array by the largest object id
# (16 bytes an id): id 2^30 - 1 in a 236-byte trace asked for 16 GiB, and a
# larger id was refused as "too large". Now a keyed table of the live ones.
for id in 1073741823 1099511627776 4611686018427387904; do
	printf 'malloc 0 0 %s 0 16 0 1 1\nmalloc 0 0 7 0 40 0 1 1\nfree 0 0 %s 0 0 0\n' $id $id |
		"$F" "$T/f12.ustr" --stack '0 0x401000'
	expect_ok "12 report --sort callsite id $id" $MEM "$U" report --sort callsite "$T/f12.ustr"
	# two allocations, 56 bytes, peak 56, 40 leaked, none temporary
	grep -q '^ *2 *56 *56 *40 *0  ?? \[0x401000\]$' "$T/out" ||
		{ [ $rc -eq 0 ] && fail "12 report callsite id $id: $(cat "$T/out")"; }
	expect_ok "12 report --sort callsite,size id $id" $MEM "$U" report --sort callsite,size "$T/f12.ustr"
	grep -q '^ *1 *16 *16 *0 *0  16 *?? \[0x401000\]$' "$T/out" &&
		grep -q '^ *1 *40 *40 *40 *0  40 *?? \[0x401000\]$' "$T/out" ||
		{ [ $rc -eq 0 ] && fail "12 report callsite,size id $id: $(cat "$T/out")"; }
done

# --- 13. report --sort callsite,size looked every event's call site up
# again: a scan of the mapping table and a symbolization per event (one
# million events and 100,000 mappings: hours). Now each distinct frame is
# symbolized once, mappings found by binary search, a stack's rows once.
printf 'malloc 0 0 0 0 16 0 1000000 1\nmalloc 0 0 1 0 24 0 1 2\nfree 0 0 1 0 0 0\n' |
	"$F" "$T/f13.ustr" --stack '0 0x401000' --stack '0 0x5000 0x401000' \
		--record 'UMAP 100000 100000 v0 v4096 v16 v0 sx'
[ "$(stat -c %s "$T/f13.ustr")" -lt 65536 ] || fail "13 trace is $(stat -c %s "$T/f13.ustr") bytes"
for sort in callsite callsite,size; do
	expect_ok "13 report --sort $sort 1M events x 100,000 mappings" $MEM "$U" report --sort $sort "$T/f13.ustr"
done
grep -q '^ *1000000 *16000000 .* 16 *?? \[0x401000\]$' "$T/out" || fail "13 callsite,size rows: $(cat "$T/out")"
expect_ok "13 report --children 1M events x 100,000 mappings" $MEM "$U" report --sort callsite --children "$T/f13.ustr"
grep -q '^ *1000001 *16000024 .* ?? \[0x401000\]$' "$T/out" || fail "13 --children rows: $(cat "$T/out")"

# --- 14. a path of the mapping table was opened as it came: a FIFO blocked
# report forever, and paths and symbols were printed raw (terminal escape
# sequences passed through). Only a regular file is read now (O_NONBLOCK,
# fstat on what was opened), and names are printed escaped.
mkfifo "$T/fifo"
esc=$'\e]0;owned\a\e[31mred'
printf 'malloc 0 0 1 0 16 0 1 1\nmalloc 0 0 2 0 16 0 1 2\nmalloc 0 0 3 0 16 0 1 3\n' |
	"$F" "$T/f14.ustr" --stack '0 0x401010' --stack '0 0x601010' --stack '0 0x801010' \
		--object "0 0x401000 0x1000 0 $T/fifo" --object "0 0x601000 0x1000 0 /dev/zero" \
		--object "0 0x801000 0x1000 0 $T/$esc"
for sort in callsite callsite,size; do
	expect_ok "14 report --sort $sort FIFO, device, escapes" $MEM "$U" report --sort $sort "$T/f14.ustr"
	grep -q 'fifo+0x10$' "$T/out" || fail "14 $sort FIFO row: $(cat "$T/out")"
	grep -q 'zero+0x10$' "$T/out" || fail "14 $sort device row: $(cat "$T/out")"
	grep -q $'\e' "$T/out" && fail "14 $sort: an escape character reached the output"
	grep -qF '\x1b]0;owned\x07\x1b[31mred+0x10' "$T/out" || fail "14 $sort escaped row: $(cat -v "$T/out")"
done

# --- 15. the process-table bound first_tid + nthreads wrapped in 64 bits:
# first_tid 2^64 - 2^32 + 1 with nthreads 2^32 - 1 passed as 0 <= 2^20.
# Each is bounded on its own now, and refused at the table's offset.
proc() { echo "UPRC 1 1 v1 v0 v0 v0 v$1 v$2 v0 v0 v1 v0 sa s s"; }
printf 'free 1 0 0 0 0 0\n' | "$F" "$T/f15.ustr" --record "$(proc 18446744069414584321 4294967295)"
for cmd in script report sim replay; do
	expect_refused "15 $cmd first_tid + nthreads wrapping" \
		"byte offset $REC: process table entry 0, decoded byte [0-9]*: expected a valid first_tid" \
		$MEM "$U" $cmd "$T/f15.ustr"
done
printf 'free 1 0 0 0 0 0\n' | "$F" "$T/f15b.ustr" --record "$(proc 1 1048576)"
expect_refused "15 script nthreads past 2^20" \
	"byte offset $REC: process table entry 0, decoded byte [0-9]*: expected a valid nthreads" \
	$MEM "$U" script "$T/f15b.ustr"
printf 'free 1 0 0 0 0 0\n' | "$F" "$T/f15c.ustr" --record "$(proc 1 1048575)"
expect_ok "15 script the largest range" $MEM "$U" script "$T/f15c.ustr"

# --- 16. every reader decoded the stack table at open, 8 bytes a frame: a
# 64 MiB table in a 6 KiB file made script take 590 MiB. It is checked at
# open and decoded only by the readers that symbolize.
printf 'malloc 0 0 1 0 16 0\nfree 0 0 1 0 0 0\n' |
	"$F" "$T/f16.ustr" --record 'USTK 520000 520000 v0 v127 v0*127'
[ "$(stat -c %s "$T/f16.ustr")" -lt 16384 ] || fail "16 trace is $(stat -c %s "$T/f16.ustr") bytes"
for cmd in script report sim replay; do
	expect_ok "16 $cmd 64 MiB stack table, 6 KiB file" 250000 "$U" $cmd "$T/f16.ustr"
done
# a damaged table is still refused at open, by every reader
printf 'malloc 0 0 1 0 16 0\n' | "$F" "$T/f16b.ustr" --record 'USTK 2 1 v0 v2 v1 v1 v0 v300'
for cmd in script report; do
	expect_refused "16 $cmd damaged stack table" \
		"byte offset $REC: stack table entry 1, decoded byte 7: expected a process index and a frame count <= 256" \
		$MEM "$U" $cmd "$T/f16b.ustr"
done

# --- 16 (the stack views). report --folded, --flamegraph, --callsite N and
# --timeline decoded the whole stack table (8 bytes a frame: ~530 MiB for
# this 64 MiB table in a 6 KiB file) and kept state for every stack of the
# table (596 MiB here). They read the stacks their events name, one at a
# time, as --sort callsite does: the same table costs them what it costs
# it (70 MiB). The table goes through the writer (--stacks repeats the
# stack of 127 frames 520,000 times), so events can name its last stack.
printf 'malloc 0 0 1 0 16 0 1 1\nmalloc 0 0 2 0 24 0 1 520000\nfree 0 0 1 0 0 0\n' |
	"$F" "$T/f16s.ustr" --stack "0$(printf ' 0%.0s' $(seq 127))" --stacks 520000
[ "$(stat -c %s "$T/f16s.ustr")" -lt 32768 ] || fail "16 views trace is $(stat -c %s "$T/f16s.ustr") bytes"
expect_ok "16 report --sort callsite 64 MiB stack table" $MEM "$U" report --sort callsite "$T/f16s.ustr"
expect_ok "16 report --folded 64 MiB stack table" $MEM "$U" report --folded "$T/f16s.ustr"
# the two stacks, 127 unmapped frames each: one folded line, two allocations
line=$(printf '?? [0x0];%.0s' $(seq 126))'?? [0x0] 2'
[ $rc -eq 0 ] && { [ "$(cat "$T/out")" = "$line" ] || fail "16 --folded: $(head -c 300 "$T/out")"; }
expect_ok "16 report --folded --weight leaked 64 MiB stack table" $MEM "$U" report --folded --weight leaked "$T/f16s.ustr"
[ $rc -eq 0 ] && { [ "$(cat "$T/out")" = "${line% 2} 24" ] || fail "16 --folded --weight leaked: $(head -c 300 "$T/out")"; }
expect_ok "16 report --callsite 1 64 MiB stack table" $MEM "$U" report --callsite 1 "$T/f16s.ustr"
[ $rc -eq 0 ] && { grep -q 'from 2 distinct call stacks' "$T/out" || fail "16 --callsite 1: $(head -c 300 "$T/out")"; }
expect_ok "16 report --flamegraph 64 MiB stack table" $MEM "$U" report --flamegraph "$T/f16s.svg" "$T/f16s.ustr"
[ $rc -eq 0 ] && { grep -q '</svg>' "$T/f16s.svg" || fail "16 --flamegraph: no SVG written"; }
expect_ok "16 report --timeline 64 MiB stack table" $MEM "$U" report --timeline "$T/f16s-tl.svg" "$T/f16s.ustr"
[ $rc -eq 0 ] && { grep -q '</svg>' "$T/f16s-tl.svg" || fail "16 --timeline: no SVG written"; }

# --- 13 (the stack views). They looked each frame's mapping up by a scan
# of the mapping table (--sort callsite too, for the allocation wrappers):
# 500,000 distinct stacks named by events x 400,000 mappings ran for
# minutes. A binary search over the sorted table now (report_maps.c).
seq 500000 | awk '{ print "malloc 0 0 " $1 " 0 16 0 1 " $1 }' |
	"$F" "$T/f13s.ustr" --stack '0 0x401000' --stacks 500000 \
		--record 'UMAP 400000 400000 v0 v4096 v16 v0 sx'
for view in "--sort callsite" "--folded" "--callsite 1" "--flamegraph $T/f13s.svg" "--timeline $T/f13s-tl.svg"; do
	expect_ok "13 report $view 500,000 stacks x 400,000 mappings" $MEM "$U" report $view "$T/f13s.ustr"
	case $view in
	--sort*) grep -q '^ *500000 *8000000 .* ?? \[0x401000\]$' "$T/out" ;;
	--folded) [ "$(cat "$T/out")" = '?? [0x401000] 500000' ] ;;
	--callsite*) grep -q 'from 500000 distinct call stacks' "$T/out" ;;
	*) grep -qs '</svg>' "${view#* }" ;;
	esac || { [ $rc -eq 0 ] && fail "13 report $view: $(head -c 300 "$T/out")"; }
done

# --- A frame at address 0xffffffffffffffff (the one key the views' hash
# maps cannot hold; found by fuzz_report): --folded, --callsite and
# --flamegraph said "Cannot allocate memory" (and leaked the frame's
# names), --timeline "uslab: no error", each exiting 1. It is a frame as
# any other (but the last of a stack: the recorder's cut mark): named,
# drawn, counted.
printf 'malloc 0 0 1 0 16 0 1 1\nmalloc 0 0 2 0 24 0 1 2\n' |
	"$F" "$T/fmax.ustr" --stack '0 0xffffffffffffffff 0x401000' --stack '0 0xffffffffffffffff 0x402000'
for view in "--folded" "--callsite 1" "--flamegraph $T/fmax.svg" "--timeline $T/fmax-tl.svg" "--sort callsite"; do
	expect_ok "frame 0xffffffffffffffff: report $view" $MEM "$U" report $view "$T/fmax.ustr"
	case $view in
	--folded) [ "$(cat "$T/out")" = "$(printf '?? [0x401000];?? [0xffffffffffffffff] 1\n?? [0x402000];?? [0xffffffffffffffff] 1')" ] ;;
	--callsite*) grep -q '#0   ?? \[0xffffffffffffffff\]  <- call site' "$T/out" ;;
	--sort*) grep -q '^ *2 *40 .* ?? \[0xffffffffffffffff\]$' "$T/out" ;;
	*) grep -qs '</svg>' "${view#* }" ;;
	esac || { [ $rc -eq 0 ] && fail "frame 0xffffffffffffffff: report $view: $(head -c 300 "$T/out")"; }
done
grep -qs '0xffffffffffffffff' "$T/fmax-tl.svg" || fail "frame 0xffffffffffffffff: --timeline does not name the site"

[ $nfail -eq 0 ] && echo "hostile tables: every report ran in bounded memory and time or refused the field by its offset"
[ $nfail -eq 0 ]
