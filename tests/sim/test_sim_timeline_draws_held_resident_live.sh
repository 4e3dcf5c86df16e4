#!/usr/bin/env bash
# uslab sim --timeline FILE.svg|FILE.png draws memory over time with the
# chart of report --timeline (issue 22: sim wrote CSV only): held by
# page_alloc, live and the heap's resident bytes, one line each, the held
# peak marked with the largest held figure of the samples (the CSV's);
# FILE.csv (and -) stay CSV; the PNG is a PNG where matplotlib is installed.
. "$(dirname "$0")/../lib.sh"

"$U" gen prodcons -t 2 -o "$T/p.ustr" 2>/dev/null || fail "gen"
"$U" sim --timeline "$T/p.csv" "$T/p.ustr" > /dev/null 2> "$T/err" || fail "sim --timeline csv: $(cat "$T/err")"
head -1 "$T/p.csv" | grep -q ',events,held_bytes,live_bytes,' || fail "p.csv: $(head -1 "$T/p.csv")"
"$U" sim --timeline "$T/p.svg" "$T/p.ustr" > "$T/out" 2> "$T/err" || fail "sim --timeline svg: $(cat "$T/err")"
grep -q "peak held by page_alloc" "$T/out" || fail "sim's own output not printed with --timeline svg"
python3 - "$T/p.svg" "$T/p.csv" <<'PY' || fail "the sim timeline SVG"
import csv, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = '{http://www.w3.org/2000/svg}'
texts = [t.text or '' for t in root.iter(ns + 'text')]
for name in ('held by page_alloc', 'live (requested)', 'resident (heap)'):
    assert name in texts, (name, texts)
lines = list(root.iter(ns + 'polyline'))
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(lines) == 3, len(lines)
assert all(len(l.get('points').split()) == len(rows) for l in lines), 'one point per sample'
held = max(int(r['held_bytes']) for r in rows)
unit, uname = (1 << 20, 'MiB') if held >= 10 << 20 else (1 << 10, 'KiB') if held >= 10 << 10 else (1, 'bytes')
want = 'peak %.1f %s at ' % (held / unit, uname)
peak = [t for t in texts if t.startswith('peak ')]
assert peak and peak[0].startswith(want), (peak, want)
PY
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	"$U" sim --timeline "$T/p.png" "$T/p.ustr" > /dev/null 2> "$T/err" || fail "sim --timeline png: $(cat "$T/err")"
	[ "$(head -c 8 "$T/p.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] || fail "p.png is not a PNG"
else
	echo "(python3-matplotlib not installed: the PNG not drawn)"
fi
echo "sim --timeline: SVG/PNG of held, resident, live; the CSV kept for .csv"
