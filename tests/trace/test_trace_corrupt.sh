#!/usr/bin/env bash
# Damaged input for every reader and importer: truncated and bit-flipped
# traces, foreign files, broken mtrace and perf text. Each must fail with a
# non-zero exit and name the byte offset (traces) or line (text), and an
# import that fails must leave neither TRACE nor TRACE.tmp behind.
set -u
O=${O:-build}
U=$O/uslab
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
u32() { od -An -tu4 -j"$2" -N4 "$1" | tr -d ' '; }

# expect_err FILE WHAT PATTERN: script and report both fail, message matches.
expect_err() {
	local f=$1 what=$2 pat=$3 cmd rc
	for cmd in script report; do
		timeout 20 "$U" $cmd "$f" > /dev/null 2> "$T/err"
		rc=$?
		if [ $rc -eq 0 ] || [ $rc -ge 124 ]; then
			fail "$what: uslab $cmd exit $rc"
		elif ! grep -q -- "$pat" "$T/err"; then
			fail "$what: uslab $cmd said '$(cat "$T/err")', expected '$pat'"
		fi
	done
}

# A trace of a few chunks, from a synthetic mtrace log.
awk 'BEGIN { print "= Start"; for (i = 0; i < 300000; i++) {
	a = 4096 + (i % 5000) * 64
	if (i % 3 == 2) printf "- 0x%x\n", 4096 + ((i - 1) % 5000) * 64
	else printf "@ ./prog:[0x4011a6] + 0x%x 0x%x\n", a, 16 + i % 2000 } }' > "$T/big.log"
"$U" import -q mtrace "$T/big.log" -o "$T/good.ustr" || { echo "FAIL: import"; exit 1; }
"$U" script "$T/good.ustr" > /dev/null || { echo "FAIL: good trace unreadable"; exit 1; }
size=$(stat -c %s "$T/good.ustr")
H=$((80 + $(u32 "$T/good.ustr" 72)))		# first chunk
C=$(u32 "$T/good.ustr" $((H + 4)))		# its compressed size
H2=$((H + 40 + C))				# second chunk
END=$((size - 48))				# trailer
[ "$(u32 "$T/good.ustr" $H2)" = "$(u32 "$T/good.ustr" $H)" ] || { echo "FAIL: want two chunks"; exit 1; }

cut() { head -c "$1" "$T/good.ustr" > "$T/cut.ustr"; }
cut 0;              expect_err "$T/cut.ustr" "empty file" "byte offset 0:"
cut 5;              expect_err "$T/cut.ustr" "cut in magic" "byte offset 0:"
cut 50;             expect_err "$T/cut.ustr" "cut in header" "byte offset 8:"
cut $((H - 2));     expect_err "$T/cut.ustr" "cut in header crc" "byte offset $((H - 4)):"
cut $H;             expect_err "$T/cut.ustr" "cut before first chunk" "byte offset $H:.*truncated"
cut $((H + 20));    expect_err "$T/cut.ustr" "cut in chunk header" "byte offset $((H + 4)):"
cut $((H + 500));   expect_err "$T/cut.ustr" "cut in payload" "byte offset $((H + 40)):"
cut $((H2 + 100));  expect_err "$T/cut.ustr" "cut in 2nd payload" "byte offset $((H2 + 40)):"
cut $END;           expect_err "$T/cut.ustr" "cut before trailer" "byte offset $END:.*truncated"
cut $((size - 1));  expect_err "$T/cut.ustr" "cut in trailer" "byte offset $((END + 4)):"

flip() {	# flip OFFSET: xor one byte with 0x5a
	cp "$T/good.ustr" "$T/flip.ustr"
	local b
	b=$(od -An -tu1 -j"$1" -N1 "$T/good.ustr" | tr -d ' ')
	printf "$(printf '\\%03o' $((b ^ 0x5a)))" |
		dd of="$T/flip.ustr" bs=1 seek="$1" conv=notrunc status=none
}
flip 2;             expect_err "$T/flip.ustr" "magic" "byte offset 0:.*not a uslab trace"
flip 8;             expect_err "$T/flip.ustr" "version" "byte offset 8:.*version"
flip 78;            expect_err "$T/flip.ustr" "command line" "byte offset $((H - 4)):.*checksum"
flip $((H + 14));   expect_err "$T/flip.ustr" "chunk event count" "byte offset $((H + 36)):.*checksum"
flip $((H + 300));  expect_err "$T/flip.ustr" "payload" "byte offset $((H + 40)):.*checksum"
flip $((H2 + 1));   expect_err "$T/flip.ustr" "2nd chunk magic" "byte offset $H2:"
flip $((H2 + 900)); expect_err "$T/flip.ustr" "2nd payload" "byte offset $((H2 + 40)):"
flip $((END + 9));  expect_err "$T/flip.ustr" "trailer count" "byte offset $((END + 44)):.*checksum"
cp "$T/good.ustr" "$T/extra.ustr"; echo junk >> "$T/extra.ustr"
expect_err "$T/extra.ustr" "bytes after the trailer" "byte offset $((END + 48))"

expect_err /bin/true "ELF file" "byte offset 0:"
expect_err tests/trace/data/perf-kmem.txt "text file" "byte offset 0:"
expect_err "$T/big.log" "mtrace log as a trace" "byte offset 0:"
expect_err "$T/none.ustr" "missing file" "No such file"

# Importers: errors name the line; nothing is written.
expect_import() {	# FORMAT INPUT PATTERN WHAT
	rm -f "$T/out.ustr" "$T/out.ustr.tmp"
	timeout 20 "$U" import "$1" "$2" -o "$T/out.ustr" 2> "$T/err"
	local rc=$?
	if [ $rc -eq 0 ] || [ $rc -ge 124 ]; then
		fail "$4: import exit $rc"
	elif ! grep -q -- "$3" "$T/err"; then
		fail "$4: said '$(cat "$T/err")', expected '$3'"
	fi
	[ -e "$T/out.ustr" ] && fail "$4: output left behind"
	[ -e "$T/out.ustr.tmp" ] && fail "$4: temporary left behind"
}
printf '= Start\n+ 0x1000 0x10\n+ 0xzz 0x10\n' > "$T/m1"
expect_import mtrace "$T/m1" "m1:3: expected an address" "mtrace bad address"
printf '= Start\n+ 0x1000 0x10\n< 0x1000\n- 0x1000\n' > "$T/m2"
expect_import mtrace "$T/m2" "m2:4: expected \"> 0xADDR" "mtrace < without >"
printf '= Start\n+ 0x1000 0x10\n< 0x1000\n' > "$T/m3"
expect_import mtrace "$T/m3" "m3:4: log ends after" "mtrace truncated realloc"
printf '= Start\n+ 0x1000\n' > "$T/m4"
expect_import mtrace "$T/m4" "m4:2: expected a size" "mtrace missing size"
printf '= Start\n+ 0x1000 0x10 trailing\n' > "$T/m5"
expect_import mtrace "$T/m5" "m5:2: unexpected text" "mtrace trailing junk"
printf '= Start\n+ 0x1000 0x10\n- 0x1\0000\n' > "$T/m6"
expect_import mtrace "$T/m6" "m6:3: NUL byte" "mtrace NUL"
printf '+ 0x12345678901234567 0x10\n' > "$T/m7"
expect_import mtrace "$T/m7" "m7:1: expected an address" "mtrace 68-bit address"
expect_import mtrace /bin/true "true:1:" "mtrace on an ELF file"
: > "$T/m8"
expect_import mtrace "$T/m8" "m8:1: empty" "mtrace empty"
expect_import mtrace "$T/no-such" "No such file" "mtrace missing input"

head -4 tests/trace/data/perf-kmem.txt > "$T/p1"
echo "this is not perf output" >> "$T/p1"
expect_import perf "$T/p1" "p1:5: expected a perf script event line" "perf junk line"
echo "   bash  1 [000]  1.000001: kmem:kmalloc: call_site=x bytes_req=3" > "$T/p2"
expect_import perf "$T/p2" "p2:1: expected ptr=" "perf missing ptr"
echo "   bash  1 [000]  1.000001: kmem:kmalloc: call_site=x ptr=0x1000 bytes_req=big" > "$T/p3"
expect_import perf "$T/p3" "p3:1: expected bytes_req=" "perf bad size"
echo "   bash  1 [0x0]  1.000001: kmem:kfree: call_site=x ptr=0x1000" > "$T/p4"
expect_import perf "$T/p4" "p4:1: expected \[CPU\]" "perf bad cpu"
echo "   bash  1 [000]  1.000001: sched:sched_switch: prev_comm=a" > "$T/p5"
expect_import perf "$T/p5" "p5:2: no kmem events" "perf no kmem events"
expect_import perf /bin/true "true:1:" "perf on an ELF file"

[ $nfail -eq 0 ] && echo "corrupt input: every case failed cleanly with its offset or line"
[ $nfail -eq 0 ]
