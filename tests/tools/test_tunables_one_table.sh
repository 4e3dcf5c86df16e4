#!/usr/bin/env bash
# One table of tunables (issue 21, item 2): every front end reads the rows
# of include/uslab/tunables.h and hands on parsed values. `uslab replay`
# asks the preloaded library what it parsed of USLAB_OPTIONS (before, it
# read the text again with its own list and took "stats,stats=0" for stats
# on); `uslab sim` and `uslab tune` refuse values with the rows' bounds;
# USLAB_OPTIONS=help prints each row's bounds and default, the reaper's
# the one fallback of percpu/ (PCP_REAPER_PERIOD_MS). Adaptive magazines
# (issue 23) are four rows too: adapt 0..1, adapt_min and adapt_max
# 8..2^30 bytes, adapt_budget_kb 16..2^30 KiB, read by USLAB_OPTIONS, sim
# and tune alike.
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

run_rc "$U" sim "$T/t.ustr" --adapt 2 2>"$T/err" >/dev/null
[ "$rc" -eq 2 ] && grep -q "^uslab sim: --adapt: expected 0..1, found '2'" "$T/err" ||
	bad "sim --adapt 2: exit $rc, $(head -1 "$T/err")"
run_rc "$U" sim "$T/t.ustr" --adapt-budget 15 2>"$T/err" >/dev/null
[ "$rc" -eq 2 ] && grep -q "^uslab sim: --adapt-budget: expected KiB 16..1073741824, found '15'" "$T/err" ||
	bad "sim --adapt-budget 15: exit $rc, $(head -1 "$T/err")"
run_rc "$U" sim "$T/t.ustr" --adapt-min 1073741825 2>"$T/err" >/dev/null
[ "$rc" -eq 2 ] && grep -q "^uslab sim: --adapt-min: expected bytes 8..1073741824, found '1073741825'" "$T/err" ||
	bad "sim --adapt-min 2^30+1: exit $rc, $(head -1 "$T/err")"
run_rc "$U" tune "$T/t.ustr" --adapt-max 4096,7 2>"$T/err" >/dev/null
[ "$rc" -eq 2 ] && grep -q "expected up to 16 numbers 8..1073741824, comma-separated, found '4096,7'" "$T/err" ||
	bad "tune --adapt-max 4096,7: exit $rc, $(head -1 "$T/err")"
run_rc "$U" tune "$T/t.ustr" --adapt-budgets 15 2>"$T/err" >/dev/null
[ "$rc" -eq 2 ] && grep -q "expected up to 16 numbers 16..1073741824, comma-separated, found '15'" "$T/err" ||
	bad "tune --adapt-budgets 15: exit $rc, $(head -1 "$T/err")"

# adapt: parsed once by its row, the last item wins (the stats table has
# grow and shrink columns only when magazines adapt).
if config PERCPU_CACHE; then
	USLAB_OPTIONS=stats,adapt=0,adapt=1 timeout 120 "$U" replay "$T/t.ustr" -a uslab >"$T/a1.txt" 2>&1 ||
		bad "replay adapt=0,adapt=1: $(tail -2 "$T/a1.txt")"
	grep -qE "depot_put .* grow shrink" "$T/a1.txt" ||
		bad "replay: adapt=0,adapt=1 gave no adaptive columns"
	USLAB_OPTIONS=stats,adapt=1,adapt=0 timeout 120 "$U" replay "$T/t.ustr" -a uslab >"$T/a0.txt" 2>&1 ||
		bad "replay adapt=1,adapt=0: $(tail -2 "$T/a0.txt")"
	grep -q "depot_put" "$T/a0.txt" && ! grep -qE "depot_put .* grow" "$T/a0.txt" ||
		bad "replay: adapt=1,adapt=0 printed adaptive columns (or no table)"
	# the replay's own table of the replayed events: its header has the
	# columns its rows (the library's) have, whatever uslab's own copy
	# of the allocator was built with (the adaptive preset printed them
	# over rows without, the others none over rows with)
	rphead() { sed -n '/^replayed events only/{n;p;q}' "$1"; }
	# (debug-on caches have no magazines: no adaptive rows, no columns)
	if config SLAB_DEBUG_ON; then
		rphead "$T/a1.txt" | grep -q "depot_put" && ! rphead "$T/a1.txt" | grep -q "grow" ||
			bad "replay's table, adapt=0,adapt=1, no magazines: header: $(rphead "$T/a1.txt")"
	else
		rphead "$T/a1.txt" | grep -qE "depot_put .* grow shrink" ||
			bad "replay's table, adapt=0,adapt=1: header without grow/shrink: $(rphead "$T/a1.txt")"
	fi
	rphead "$T/a0.txt" | grep -q "depot_put" && ! rphead "$T/a0.txt" | grep -q "grow" ||
		bad "replay's table, adapt=1,adapt=0: header: $(rphead "$T/a0.txt")"
	USLAB_OPTIONS=adapt=2,adapt_budget_kb=15 LD_PRELOAD="$LIBUSLAB" /bin/true 2>"$T/bad"
	grep -q "ignoring option 'adapt=2' (value out of range)" "$T/bad" &&
		grep -q "ignoring option 'adapt_budget_kb=15' (value out of range)" "$T/bad" ||
		bad "USLAB_OPTIONS adapt=2,adapt_budget_kb=15: $(cat "$T/bad")"
fi

# help: bounds and defaults from the rows.
USLAB_OPTIONS=help LD_PRELOAD="$LIBUSLAB" /bin/true 2>"$T/help"
# Kconfig's PERCPU_MAG_SIZE, "by size" when 0 (the unlimited preset: 1024)
m=$(sed -n 's/^CONFIG_PERCPU_MAG_SIZE=//p' "$O/auto.conf")
[ "${m:-0}" = 0 ] && m="by size"
grep -qE "^  mag_size +default $m +0 \.\. 4096: " "$T/help" || bad "help: mag_size row, not Kconfig's $m: $(grep mag_size "$T/help")"
grep -qE "^  depot_limit +default by size +-1 \.\. 65536: " "$T/help" || bad "help: depot_limit row"
if config PERCPU_REAPER; then
	p=$(sed -n 's/^CONFIG_PERCPU_REAPER_PERIOD_MS=//p' "$O/auto.conf")
	grep -qE "^  reaper_ms +default $p +0 or 10 \.\. 600000: " "$T/help" ||
		bad "help: reaper_ms default is not Kconfig's $p: $(grep reaper_ms "$T/help")"
else
	grep -qE "^  reaper_ms +default none " "$T/help" || bad "help: reaper_ms without a reaper"
fi
if config PERCPU_CACHE; then
	a=0; config PERCPU_ADAPT && a=1
	grep -qE "^  adapt +default $a +0 \.\. 1: " "$T/help" ||
		bad "help: adapt default is not Kconfig's $a: $(grep '^  adapt ' "$T/help")"
	for r in adapt_min:MIN_BYTES:8 adapt_max:MAX_BYTES:8 adapt_budget_kb:BUDGET_KB:16; do
		n=${r%%:*}; k=${r#*:}; lo=${k#*:}; k=${k%%:*}
		d=$(sed -n "s/^CONFIG_PERCPU_ADAPT_$k=//p" "$O/auto.conf")
		grep -qE "^  $n +default $d +$lo \.\. 1073741824: " "$T/help" ||
			bad "help: $n row is not Kconfig's $d, $lo .. 2^30: $(grep "^  $n " "$T/help")"
	done
fi
exit $failed
