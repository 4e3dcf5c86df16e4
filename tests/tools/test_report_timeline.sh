#!/usr/bin/env bash
# uslab report --timeline: live bytes over time from a program of ours with
# a known peak (64 blocks of 64 KiB held, then freed), drawn as SVG (the
# peak's label names its exact size, the top call site is the one that
# held them) and as PNG where python3-matplotlib is installed; another
# extension is refused (exit 2) and nothing is written.
. "$(dirname "$0")/../lib.sh"

cat > "$T/tl.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void *keep[64];
__attribute__((noinline)) void hold(int i) { keep[i] = malloc(65536); memset(keep[i], 1, 64); }
int main(void)
{
	for (int i = 0; i < 64; i++) {
		hold(i);
		usleep(1000);
	}
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	return 0;
}
C
gcc -g -O1 -fno-builtin -o "$T/tl" "$T/tl.c"
"$U" record -g -q -o "$T/tl.ustr" -- "$T/tl" || fail "record -g"
"$U" report "$T/tl.ustr" > "$T/rep" || fail "report"
peak=$(sed -n 's/^  peak live  \([0-9.]*\) KiB.*/\1/p' "$T/rep")
[ -n "$peak" ] || { cat "$T/rep"; fail "no peak in the report"; }
"$U" report --timeline "$T/tl.svg" "$T/tl.ustr" || fail "--timeline svg"
python3 - "$T/tl.svg" "$peak" <<'PY' || fail "the timeline SVG"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = '{http://www.w3.org/2000/svg}'
texts = [t.text or '' for t in root.iter(ns + 'text')]
peak = [t for t in texts if t.startswith('peak ')]
assert peak and peak[0].startswith('peak %s KiB at ' % sys.argv[2]), (peak, sys.argv[2])
assert any(t.startswith('hold (tl.c:') for t in texts), texts
lines = list(root.iter(ns + 'polyline'))
assert len(lines) >= 2, 'total and one call site'
PY
# without call stacks: the kmalloc classes with the highest peaks
"$U" record -q -o "$T/nog.ustr" -- "$T/tl" || fail "record"
"$U" report --timeline "$T/nog.svg" "$T/nog.ustr" || fail "--timeline without stacks"
grep -Eq '>(kmalloc-[0-9]+ class|above kmalloc-[0-9]+)</text>' "$T/nog.svg" || fail "no kmalloc class series without stacks"
run_rc "$U" report --timeline "$T/tl.pdf" "$T/tl.ustr"
[ "$rc" -eq 2 ] || fail "--timeline .pdf: exit $rc, not 2"
[ ! -e "$T/tl.pdf" ] || fail "--timeline .pdf wrote a file"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	"$U" report --timeline "$T/tl.png" "$T/tl.ustr" || fail "--timeline png"
	[ "$(head -c 8 "$T/tl.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] || fail "tl.png is not a PNG"
else
	echo "(python3-matplotlib not installed: the PNG not drawn)"
fi
echo ok
