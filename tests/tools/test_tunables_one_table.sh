#!/usr/bin/env bash
# One table of tunables (issue 21, item 2): every front end reads the rows
# of include/uslab/tunables.h and hands on parsed values. `uslab replay`
# asks the preloaded library what it parsed of USLAB_OPTIONS (before, it
# read the text again with its own list and took "stats,stats=0" for stats
# on); `uslab sim` and `uslab tune` refuse values with the rows' bounds;
# USLAB_OPTIONS=help prints each row's bounds and default, the reaper's
# the one fallback of percpu/ (PCP_REAPER_PERIOD_MS).
. "$(dirname "$0")/../lib.sh"
set +e
F=$O/tests/trace/trace_forge
[ -x "$F" ] || fail "$F not built"
printf 'malloc 0 0 1 0 64 0\nfree 0 0 1 0 0 0\n' | "$F" "$T/t.ustr" || fail "forge"

# replay: the library's parse decides, the last item wins.
USLAB_OPTIONS=stats,stats=0 timeout 120 "$U" replay "$T/t.ustr" -a uslab >"$T/off.txt" 2>&1 ||
	bad "replay stats,stats=0: $(tail -2 "$T/off.txt")"
! grep -q "replayed events only" "$T/off.txt" ||
	bad "replay printed the stats table though the library parsed stats=0 last"
USLAB_OPTIONS=stats=0,stats=on timeout 120 "$U" replay "$T/t.ustr" -a uslab >"$T/on.txt" 2>&1 ||
	bad "replay stats=0,stats=on: $(tail -2 "$T/on.txt")"
grep -q "replayed events only" "$T/on.txt" || bad "replay: stats=on gave no table"

# sim and tune: the rows' bounds, in the refusal.
run_rc "$U" sim "$T/t.ustr" --mag-size 4097 2>"$T/err" >/dev/null
[ "$rc" -eq 2 ] && grep -q "^uslab sim: --mag-size: expected N or CLASS=N (kmalloc-64=32 or 64=32), N 0..4096, found '4097'" "$T/err" ||
	bad "sim --mag-size 4097: exit $rc, $(head -1 "$T/err")"
run_rc "$U" sim "$T/t.ustr" --depot-limit -2 2>"$T/err" >/dev/null
[ "$rc" -eq 2 ] && grep -q "^uslab sim: --depot-limit: expected -1..65536 (-1 unlimited), found '-2'" "$T/err" ||
	bad "sim --depot-limit -2: exit $rc, $(head -1 "$T/err")"
run_rc "$U" tune "$T/t.ustr" --depot-limits 0,65537 2>"$T/err" >/dev/null
[ "$rc" -eq 2 ] && grep -q "expected up to 16 numbers -1..65536, comma-separated, found '0,65537'" "$T/err" ||
	bad "tune --depot-limits 0,65537: exit $rc, $(head -1 "$T/err")"

# help: bounds and defaults from the rows.
USLAB_OPTIONS=help LD_PRELOAD="$LIBUSLAB" /bin/true 2>"$T/help"
grep -qE "^  mag_size +default by size +0 \.\. 4096: " "$T/help" || bad "help: mag_size row: $(grep mag_size "$T/help")"
grep -qE "^  depot_limit +default by size +-1 \.\. 65536: " "$T/help" || bad "help: depot_limit row"
if config PERCPU_REAPER; then
	p=$(sed -n 's/^CONFIG_PERCPU_REAPER_PERIOD_MS=//p' "$O/auto.conf")
	grep -qE "^  reaper_ms +default $p +0 or 10 \.\. 600000: " "$T/help" ||
		bad "help: reaper_ms default is not Kconfig's $p: $(grep reaper_ms "$T/help")"
else
	grep -qE "^  reaper_ms +default none " "$T/help" || bad "help: reaper_ms without a reaper"
fi
exit $failed
