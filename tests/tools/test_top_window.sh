#!/usr/bin/env bash
# uslab top on a terminal trims its cache rows to the window, as slabtop:
# in a 12-line terminal the frame (title, summary, column header, rows, key
# line) fits in 12 lines, the title first, with the 2 biggest caches; in 20
# lines every one of uslab-kv's 8 caches shows. It printed 40 rows (49
# lines) whatever the size, so the summary scrolled away.
set -u
O=${O:-build}
uslab=$O/uslab
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
kvpid=
trap '[ -n "$kvpid" ] && kill $kvpid 2>/dev/null; rm -rf "$tmp"' EXIT
command -v script >/dev/null || fail "script (util-linux) not installed"
. "$(dirname "$0")/../../examples/kv/start.sh"
kv_start "$tmp/kv.out" "" env USLAB_OPTIONS=stats_shm "$O/examples/uslab-kv" --threads 2
[ -n "$kvpid" ] || fail "uslab-kv did not start: $(cat "$tmp/kv.out")"
# top in a pseudo-terminal of ROWS lines, its screen as plain lines
screen() {
	script -qc "stty rows $1 cols 140; $uslab top -p $kvpid -d 0.2 -n 1" /dev/null </dev/null |
		tr -d '\r' | sed 's/\x1b\[[0-9;]*[HJ]//g' > "$tmp/s$1"
}
caches=$("$uslab" slabinfo -p $kvpid | grep -vc '^slabinfo\|^#')
[ "$caches" -ge 6 ] || fail "uslab-kv has $caches caches, want 6 or more"
screen 12
lines=$(awk 'END { print NR }' "$tmp/s12")
[ "$lines" -le 12 ] || { cat "$tmp/s12"; fail "12-line terminal: $lines lines"; }
head -1 "$tmp/s12" | grep -q "^ uslab top - pid $kvpid" || fail "12 lines: the title scrolled away: $(head -1 "$tmp/s12")"
rows=$(awk '/^ +OBJS/ { on = 1; next } on && NF >= 10 && !/sort:/' "$tmp/s12" | wc -l)
# with adapt=1 (the adaptive preset) the summary has one more line, the
# adaptive magazines': one row fewer
want=2
grep -q "^ Adaptive magazines" "$tmp/s12" && want=1
[ "$rows" -eq "$want" ] || { cat "$tmp/s12"; fail "12 lines: $rows cache rows, expected $want"; }
grep -q "(sort: " "$tmp/s12" || fail "12 lines: no key line"
screen 20
rows=$(awk '/^ +OBJS/ { on = 1; next } on && NF >= 10 && !/sort:/' "$tmp/s20" | wc -l)
[ "$rows" -eq "$caches" ] || { cat "$tmp/s20"; fail "20 lines: $rows cache rows, expected all $caches"; }
echo ok
