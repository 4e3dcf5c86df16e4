#!/usr/bin/env bash
# USLAB_OPTIONS: the help table, one warning per bad item (defaults stand),
# statistics at exit, magazine settings visible in slabinfo's tunables, and
# the debug switch catching overflow, use after free and double free.
set -u
O=${O:-build}
lib=$(realpath "$O/libuslab.so") || { echo "missing $O/libuslab.so"; exit 1; }
misuse=$O/tests/malloc/misuse
work=$(mktemp -d "${TMPDIR:-/tmp}/uslab-opts.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# timeout: a hang inside the allocator may block SIGTERM.
pre() { timeout -k 5 60 env LD_PRELOAD="$lib" "$@"; }

# help: every option of the table, one a line; and README.md's table of
# USLAB_OPTIONS lists exactly the options help lists (the rows whose first
# cell is `name` or `name=...`, not the per-cache `name.<cache>=N` forms),
# so the two cannot drift apart.
USLAB_OPTIONS=help pre /bin/true 2>"$work/help"
for o in mag_size batch depot_limit reaper_ms trim limit_mb stats stats_shm debug \
	 slab_debug fail_slab fail_page help; do
	grep -qE "^  $o +default " "$work/help" || bad "help does not list $o"
done
src=$(cd "$(dirname "$0")/../.." && pwd)
sed -n 's/^  \([a-z_]*\) \{1,\}default .*/\1/p' "$work/help" | sort >"$work/help.names"
awk '/^\| option \| default \| meaning \|/ { on = 1; next }
     on && !/^\|/ { exit }
     on && /^\| `/ { split($0, c, "`"); n = c[2]; if (n ~ /\./) next; sub(/=.*/, "", n); print n }' \
	"$src/README.md" | sort >"$work/readme.names"
[ "$(wc -l <"$work/help.names")" -ge 13 ] || bad "help table: $(wc -l <"$work/help.names") options read"
diff "$work/help.names" "$work/readme.names" >"$work/names.diff" ||
	bad "README.md's USLAB_OPTIONS table differs from USLAB_OPTIONS=help (< help, > README): $(tr '\n' ' ' <"$work/names.diff")"

# Bad items: one warning each, naming it; the good ones and the program run.
# A build without magazines (PERCPU_CACHE=n, or SLAB_DEBUG_ON: every cache
# debugged) refuses per-cache magazine settings at start, saying so.
mags=true
grep -q '^CONFIG_PERCPU_CACHE=y' "$O/auto.conf" && ! grep -q '^CONFIG_SLAB_DEBUG_ON=y' "$O/auto.conf" || mags=false
nomag="(no per-CPU magazines in this build)"
USLAB_OPTIONS='bogus=1,mag_size=abc,trim=64,stats=maybe,limit_mb=-5,,mag_size.nosuch=3' \
	pre /usr/bin/seq 3 >"$work/out" 2>"$work/err"
st=$?
[ "$st" -eq 0 ] || bad "program failed ($st) with bad options"
[ "$(cat "$work/out")" = "$(printf '1\n2\n3')" ] || bad "program output changed"
want=4; $mags || want=5
[ "$(wc -l <"$work/err")" -eq $want ] || { bad "expected $want warnings:"; cat "$work/err"; }
$mags || grep -qF "ignoring option 'mag_size.nosuch=3' $nomag" "$work/err" || bad "no warning for mag_size.nosuch=3 $nomag"
for item in "'bogus=1' (unknown option)" "'mag_size=abc' (malformed value)" \
	    "'stats=maybe' (malformed value)" "'limit_mb=-5' (value out of range)"; do
	grep -qF "ignoring option $item" "$work/err" || bad "no warning for $item"
done
# A setting for a cache that does not exist yet is kept, not refused; one
# that named no cache by exit is reported once then, under stats.
USLAB_OPTIONS='mag_size.nosuch=3,mag_size.conn_cache=64,stats' \
	pre /usr/bin/seq 3 >/dev/null 2>"$work/err"
if $mags; then
	grep -q "ignoring option" "$work/err" && { bad "cache settings refused at start:"; cat "$work/err"; }
	[ "$(grep -c 'named no cache' "$work/err")" -eq 1 ] &&
		grep -qF 'mag_size.nosuch=3, mag_size.conn_cache=64 named no cache' "$work/err" ||
		{ bad "unmatched settings not reported once at exit:"; grep 'named' "$work/err"; }
	USLAB_OPTIONS='mag_size.nosuch=3' pre /usr/bin/seq 3 >/dev/null 2>"$work/err"
	[ -s "$work/err" ] && { bad "unmatched setting reported without stats:"; cat "$work/err"; }
else
	for item in mag_size.nosuch=3 mag_size.conn_cache=64; do
		grep -qF "ignoring option '$item' $nomag" "$work/err" || bad "no warning for $item $nomag"
	done
	grep -q 'named no cache' "$work/err" && bad "refused settings reported again at exit"
fi
# stats at exit (ls closes stderr itself: the copy taken at start-up is used).
USLAB_OPTIONS=stats pre /bin/ls / >/dev/null 2>"$work/stats"
grep -q '^slabinfo - version: 2.1' "$work/stats" || bad "stats: no slabinfo"
grep -q '^malloc: allocated' "$work/stats" || bad "stats: no malloc counters"
# the per-cache table `uslab sim` prints, and the page allocator's line
if grep -q '^CONFIG_PERCPU_STATS=y' "$O/auto.conf" 2>/dev/null; then
	grep -qE '^  cache +object +mag +allocs +frees +hit% +refills +flushes +depot_get +depot_put +peak_slabKiB$' \
		"$work/stats" || bad "stats: no per-cache table header"
	# rseq-mode hits are counted only with CONFIG_PERCPU_HIT_STATS (and in
	# fallback mode): otherwise allocs, frees and hit% read "-", and the
	# refills show the traffic
	grep -qE '^  kmalloc-[0-9]+k? +[0-9]+ +[0-9]+ +([1-9][0-9]* +[0-9]+ +[0-9.]+ +[0-9]+|- +- +- +[1-9][0-9]*) ' \
		"$work/stats" || bad "stats: no kmalloc row with allocations (or, uncounted, refills)"

	grep -qE '^page allocator: [1-9][0-9]* block allocations, .* peak held [0-9.]+ KiB$' \
		"$work/stats" || bad "stats: no page allocator line"
else
	grep -q 'statistics are compiled out of this build' "$work/stats" ||
		bad "stats: a build without counters does not say so"
fi
tun() { awk -v c="$1" '$1 == c { for (i = 1; i <= NF; i++) if ($i == "tunables") print $(i+1), $(i+2) }' "$work/stats"; }
lim64=$(tun kmalloc-64 | cut -d' ' -f1)

if [ "${lim64:-0}" -gt 0 ]; then
	# Magazine sizes for every cache, by cache name and by size.
	# The caches are created on first use, after the options are read: the
	# settings wait for them. python3 mallocs 40, 120 and 250 bytes.
	USLAB_OPTIONS='stats,mag_size=24,batch=6,mag_size.kmalloc-256=7,mag_size.120=9' \
		pre /usr/bin/python3 -c 'import ctypes; m = ctypes.CDLL(None).malloc
for n in (40, 120, 250): m(n)' >/dev/null 2>"$work/stats"
	[ "$(tun kmalloc-64)" = "24 6" ] || bad "kmalloc-64 tunables '$(tun kmalloc-64)', want '24 6'"
	[ "$(tun kmalloc-256)" = "7 6" ] || bad "kmalloc-256 tunables '$(tun kmalloc-256)', want '7 6'"
	[ "$(tun kmalloc-128)" = "9 6" ] || bad "kmalloc-128 tunables '$(tun kmalloc-128)', want '9 6'"
	# batch alone keeps each cache's magazine size.
	USLAB_OPTIONS='stats,batch=5' pre /bin/ls / >/dev/null 2>"$work/stats"
	[ "$(tun kmalloc-64)" = "$lim64 5" ] || bad "batch=5 alone: kmalloc-64 tunables '$(tun kmalloc-64)'"
	# A clean string says nothing.
	USLAB_OPTIONS='trim=0,mag_size=16,depot_limit=-1,depot_limit=4' pre /bin/true 2>"$work/err"
	[ -s "$work/err" ] && { bad "good options warned:"; cat "$work/err"; }
else
	# No magazines in this build (nocache, debug): the magazine options say so.
	echo "(no per-CPU magazines in this build)"
	USLAB_OPTIONS='trim=0,mag_size=16,depot_limit=4' pre /bin/true 2>"$work/err"
	[ "$(grep -c 'no per-CPU magazines in this build' "$work/err")" -eq 2 ] ||
		{ bad "magazine options without magazines:"; cat "$work/err"; }
fi
# reaper_ms: accepted where the build has a reaper, one warning where not.
USLAB_OPTIONS='reaper_ms=100' pre /bin/true 2>"$work/err"
if grep -q '^CONFIG_PERCPU_REAPER=y' "$O/auto.conf" 2>/dev/null; then
	[ -s "$work/err" ] && { bad "reaper_ms=100 warned:"; cat "$work/err"; }
else
	grep -qF "'reaper_ms=100' (no reaper in this build)" "$work/err" ||
		bad "reaper_ms without a reaper not warned"
fi
USLAB_OPTIONS='reaper_ms=5' pre /bin/true 2>"$work/err"
grep -qF "'reaper_ms=5' (value out of range)" "$work/err" || bad "reaper_ms=5 not refused"
USLAB_OPTIONS='depot_limit=x' pre /bin/true 2>"$work/err"
grep -qF "'depot_limit=x' (malformed value)" "$work/err" || bad "depot_limit=x not warned"

# debug: each misuse is reported with the cache and the object, and stops
# the program; without debug the clean run still passes.
pre "$misuse" none >/dev/null || bad "misuse none failed"
USLAB_OPTIONS=debug pre "$misuse" none >/dev/null || bad "misuse none failed under debug"
check_misuse() {
	USLAB_OPTIONS=debug pre "$misuse" "$1" >/dev/null 2>"$work/m.$1"
	local st=$?
	[ "$st" -ne 0 ] || bad "debug: $1 not stopped"
	grep -qE "$2" "$work/m.$1" || { bad "debug: $1 report missing ($2)"; cat "$work/m.$1"; }
}
check_misuse overflow 'Redzone overwritten at 0x[0-9a-f]+ \(cache kmalloc-32, object 0x'
check_misuse uaf 'Poison overwritten at 0x[0-9a-f]+ \(cache kmalloc-32, object 0x'
check_misuse double 'double free of object 0x'
# The red zone starts at the size asked, as slab_debug's on a kmalloc cache
# (issue 20, finding 4): byte 24 of malloc(24) is inside its 32-byte class.
check_misuse overflow-asked 'Redzone overwritten at 0x[0-9a-f]+ \(cache kmalloc-32, object 0x'
USLAB_OPTIONS=debug pre "$misuse" realloc-good >/dev/null 2>"$work/m.good" ||
	{ bad "debug: correct reallocs stopped"; cat "$work/m.good"; }
[ "$fail" -eq 0 ] && echo "options: ok"
exit $fail
