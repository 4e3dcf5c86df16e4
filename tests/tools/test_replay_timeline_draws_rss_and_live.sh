#!/usr/bin/env bash
# uslab replay --timeline FILE.svg|FILE.png: RSS above the start and live
# bytes over the run, drawn with report --timeline's chart (issue 22: no
# picture of memory over a replay): both series named, one point of each
# per RSS sample, and the live line follows the trace: a program of ours
# holds 64 x 64 KiB then frees them all, so its last point is 0 (the axis
# bottom). Another extension, or with --runs: exit 2, nothing written. The
# PNG is a PNG where python3-matplotlib is installed.
. "$(dirname "$0")/../lib.sh"

cat > "$T/h.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void *keep[64];
int main(void)
{
	for (int i = 0; i < 64; i++) {
		keep[i] = malloc(65536);
		memset(keep[i], 1, 64);
	}
	usleep(100000);
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	return 0;
}
C
gcc -O1 -fno-builtin -o "$T/h" "$T/h.c"
"$U" record -q -o "$T/h.ustr" -- "$T/h" || fail "record"
"$U" replay --touch=all --timeline "$T/r.svg" "$T/h.ustr" > "$T/out" 2> "$T/err" ||
	fail "replay --timeline svg: $(cat "$T/err")"
grep -q "^peak RSS" "$T/out" || fail "replay's own output not printed with --timeline"
python3 - "$T/r.svg" <<'PY' || fail "the replay timeline SVG"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = '{http://www.w3.org/2000/svg}'
texts = [t.text or '' for t in root.iter(ns + 'text')]
for name in ('RSS above the start', 'live (requested)'):
    assert name in texts, (name, texts)
assert any(t.startswith('peak ') for t in texts), texts
lines = list(root.iter(ns + 'polyline'))
assert len(lines) == 2, len(lines)
pts = [[tuple(map(float, p.split(','))) for p in l.get('points').split()] for l in lines]
assert len(pts[0]) == len(pts[1]) >= 2, 'one point of each per sample, a start and an end'
bottom = max(y for line in pts for _, y in line)
# the chart's axis bottom is 0: the last live point is there (all freed)
assert pts[1][-1][1] == bottom, ('live at the end is not 0', pts[1][-1], bottom)
PY
run_rc "$U" replay --timeline "$T/r.pdf" "$T/h.ustr"
[ "$rc" -eq 2 ] || fail "--timeline .pdf: exit $rc, not 2"
[ ! -e "$T/r.pdf" ] || fail "--timeline .pdf wrote a file"
run_rc "$U" replay --runs 3 --timeline "$T/r2.svg" "$T/h.ustr"
[ "$rc" -eq 2 ] || fail "--timeline with --runs: exit $rc, not 2"
[ ! -e "$T/r2.svg" ] || fail "--timeline with --runs wrote a file"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	"$U" replay -a uslab --timeline "$T/r.png" "$T/h.ustr" > /dev/null 2> "$T/err" ||
		fail "replay --timeline png: $(cat "$T/err")"
	[ "$(head -c 8 "$T/r.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] || fail "r.png is not a PNG"
else
	echo "(python3-matplotlib not installed: the PNG not drawn)"
fi
echo "replay --timeline: RSS and live over the run, live back to 0 at the end"
