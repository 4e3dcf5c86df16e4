#!/usr/bin/env bash
# uslab report --folded / --flamegraph / --callsite N on a program of ours
# recorded with `record -g --max-stack 20`: the exact folded stacks under
# every weight (allocations, bytes, peak, leaked) and --children; strdup's
# frame inside libc charged to its caller (and kept with --wrappers none);
# a stack deeper than --max-stack kept cut and marked; the flame graph's
# boxes carry the same weights, and (where Chromium is installed) its
# script labels them in a headless browser; --callsite N is row N of
# --sort callsite with its backtraces.
. "$(dirname "$0")/../lib.sh"

cat > "$T/fg.c" <<'C'
#include <stdlib.h>
#include <string.h>
static void *keep[64];
static int nkeep;
__attribute__((noinline)) void *leaf(size_t n) { return malloc(n); }
__attribute__((noinline)) void mid_a(void) { for (int i = 0; i < 10; i++) keep[nkeep++] = leaf(100); }
__attribute__((noinline)) void mid_b(void) { for (int i = 0; i < 5; i++) free(leaf(1000)); }
__attribute__((noinline)) void dup_names(void) { for (int i = 0; i < 7; i++) keep[nkeep++] = strdup("seven bytes"); }
__attribute__((noinline)) void deep(int n) { if (n) { deep(n - 1); __asm__ volatile(""); } else keep[nkeep++] = malloc(8); }
int main(void)
{
	mid_a();
	mid_b();
	dup_names();
	deep(80);
	return 0;
}
C
gcc -g -O1 -fno-builtin -fno-optimize-sibling-calls -o "$T/fg" "$T/fg.c"

run_rc "$U" record --max-stack 20 -o "$T/x.ustr" -- "$T/fg"
[ "$rc" -eq 2 ] || fail "record --max-stack without -g: exit $rc, not 2"
"$U" record -g --max-stack 20 -q -o "$T/fg.ustr" -- "$T/fg" || fail "record -g --max-stack 20"

# the frames outside main (_start, libc's start) are the same for every
# stack: checked once, then cut off so the stacks below are exact
folded() {
	"$U" report --folded "$@" "$T/fg.ustr" > "$T/raw" 2>"$T/err" || { cat "$T/err"; fail "report --folded $*"; }
	grep -v '^\[cut' "$T/raw" | sed 's/;main;.*//' | sort -u > "$T/outer"
	[ "$(wc -l < "$T/outer")" -eq 1 ] || { cat "$T/raw"; fail "--folded $*: stacks start differently"; }
	grep -q '_start' "$T/outer" || fail "--folded $*: no _start at the root: $(cat "$T/outer")"
	sed 's/^.*;main;/main;/' "$T/raw"
}
deep20=$(printf ';deep%.0s' $(seq 20))
expect() {
	local got
	got=$(folded "$@")
	[ "$got" = "$(cat "$T/want")" ] || { echo "got:"; echo "$got"; echo "expected:"; cat "$T/want"; fail "report --folded $*"; }
}
printf '%s\n' "[cut at 20 frames]$deep20 1" "main;dup_names 7" "main;mid_a;leaf 10" "main;mid_b;leaf 5" > "$T/want"
expect
expect --weight allocations
printf '%s\n' "[cut at 20 frames]$deep20 8" "main;dup_names 84" "main;mid_a;leaf 1000" "main;mid_b;leaf 5000" > "$T/want"
expect --weight bytes
# the peak (2000 bytes) is inside mid_b: mid_a's ten blocks and one of mid_b's
printf '%s\n' "main;mid_a;leaf 1000" "main;mid_b;leaf 1000" > "$T/want"
expect --weight peak
printf '%s\n' "[cut at 20 frames]$deep20 8" "main;dup_names 84" "main;mid_a;leaf 1000" > "$T/want"
expect --weight leaked

# --children: from the call site outwards
"$U" report --folded --children "$T/fg.ustr" > "$T/ch" || fail "--folded --children"
grep -qx 'leaf;mid_a;main;.*_start 10' "$T/ch" || { cat "$T/ch"; fail "--children: leaf;mid_a;main...;_start 10 missing"; }
grep -qx "deep${deep20#;deep};\[cut at 20 frames\] 1" "$T/ch" || { cat "$T/ch"; fail "--children: the cut mark is not outermost"; }

# --wrappers none: strdup's own frame (in libc) is the call site again
"$U" report --folded --wrappers none "$T/fg.ustr" > "$T/nw" || fail "--wrappers none"
grep -Eq ';main;dup_names;[_a-z]*strdup[^;]* 7$' "$T/nw" || { cat "$T/nw"; fail "--wrappers none: no strdup frame"; }
"$U" report --sort callsite "$T/fg.ustr" > "$T/cs" || fail "--sort callsite"
grep -Eq '^ +7 +84 +84 +84 +0 +dup_names \(.*fg\.c:[0-9]+\)$' "$T/cs" ||
	{ cat "$T/cs"; fail "--sort callsite: strdup not charged to dup_names"; }
! grep -q strdup "$T/cs" || fail "--sort callsite: a strdup row remains"

# --callsite N: row N of the table, with every stack behind it
row1=$(grep -E '^ +[0-9]' "$T/cs" | head -1 | sed -E 's/^ +([0-9]+ +){5}//')
"$U" report --callsite 1 "$T/fg.ustr" > "$T/c1" || fail "--callsite 1"
head -1 "$T/c1" | grep -qF "# row 1 of --sort callsite: $row1" || { cat "$T/c1"; fail "--callsite 1 is not '$row1'"; }
grep -q '^# 15 allocations, 6000 bytes, peak live 2000, leaked 1000, from 2 distinct call stacks$' "$T/c1" ||
	{ cat "$T/c1"; fail "--callsite 1: totals"; }
grep -Eq '^  #1 +mid_a \(.*fg\.c:[0-9]+\)$' "$T/c1" || fail "--callsite 1: no mid_a frame"
grep -Eq '^  #1 +mid_b \(.*fg\.c:[0-9]+\)$' "$T/c1" || fail "--callsite 1: no mid_b frame"
grep -Eq '^  #0 +leaf \(.*fg\.c:[0-9]+\)  <- call site$' "$T/c1" || fail "--callsite 1: call site not marked"
r=$(grep -E '^ +[0-9]' "$T/cs" | grep -n 'deep (' | cut -d: -f1)
"$U" report --callsite "$r" "$T/fg.ustr" > "$T/cd" || fail "--callsite $r"
grep -q '^  \.\.\. cut at 20 frames' "$T/cd" || { cat "$T/cd"; fail "--callsite: the cut stack is not marked"; }
"$U" report --callsite 1 --wrappers none "$T/fg.ustr" >/dev/null || fail "--callsite --wrappers none"
run_rc "$U" report --callsite 99 "$T/fg.ustr"
[ "$rc" -eq 1 ] || fail "--callsite 99 of 3 rows: exit $rc"
run_rc "$U" report --weight bytes "$T/fg.ustr"
[ "$rc" -eq 2 ] || fail "--weight alone: exit $rc, not 2"
run_rc "$U" report --weight size --folded "$T/fg.ustr"
[ "$rc" -eq 2 ] || fail "--weight size: exit $rc, not 2"

# the flame graph: the same weights on its boxes
"$U" report --flamegraph "$T/fg.svg" --weight bytes "$T/fg.ustr" 2>"$T/err" || { cat "$T/err"; fail "--flamegraph"; }
python3 - "$T/fg.svg" <<'PY' || fail "flame graph boxes"
import sys, xml.etree.ElementTree as ET
ns = {'s': 'http://www.w3.org/2000/svg'}
root = ET.parse(sys.argv[1]).getroot()
boxes = {}
for g in root.iter('{http://www.w3.org/2000/svg}g'):
    if g.get('class') != 'f':
        continue
    name = g.find('s:title', ns).text
    boxes.setdefault(name, []).append((int(g.get('data-d')), int(g.get('data-w'))))
assert boxes['all'] == [(0, 6092)], boxes['all']
assert sorted(w for d, w in boxes['leaf']) == [1000, 5000], boxes['leaf']
assert boxes['main'][0][1] == 6084, boxes['main']
assert boxes['dup_names'][0][1] == 84, boxes['dup_names']
assert len(boxes['deep']) == 20 and boxes['[cut at 20 frames]'] == [(1, 8)]
assert root.find('s:script', ns) is not None
PY
run_rc "$U" report --flamegraph "$T" "$T/fg.ustr"
[ "$rc" -ne 0 ] || fail "--flamegraph to a directory succeeded"
if command -v chromium >/dev/null; then
	# the script ran: it writes every box's label
	timeout 120 chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$T/fg.svg" \
		> "$T/dom" 2>/dev/null || fail "chromium --dump-dom"
	grep -q '>mid_b</text>' "$T/dom" || fail "the flame graph's script did not label the boxes in Chromium"
else
	echo "(chromium not installed: the flame graph's script not run in a browser)"
fi
echo "ok"
