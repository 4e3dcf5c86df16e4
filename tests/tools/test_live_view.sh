#!/usr/bin/env bash
# uslab slabinfo -p / uslab top -p on running processes (USLAB_OPTIONS=stats_shm):
# uslab-kv under redis-benchmark load (its named caches, live counts and
# rates; a -w write that the process applies), a preloaded python3, and the
# one-line errors for a process not on uslab, one without the option, and
# one that has gone.
set -u
O=${O:-build}
uslab=$O/uslab
kv=$O/examples/uslab-kv
lib=$(realpath "$O/libuslab.so")
pids=()
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT

# --- uslab-kv under load ------------------------------------------------------
. "$(dirname "$0")/../../examples/kv/start.sh"
kv_start "$tmp/kv.out" "" env USLAB_OPTIONS=stats_shm "$kv" --threads 2
[ -n "$kvpid" ] || fail "uslab-kv did not start: $(cat "$tmp/kv.out")"
pids+=($kvpid)
[ -e /dev/shm/uslab.$kvpid ] || fail "no /dev/shm/uslab.$kvpid with USLAB_OPTIONS=stats_shm"
# -l: the load runs until the checks below are done (a fixed count ended
# before top's interval on a quiet machine: 850k requests/s).
timeout 120 redis-benchmark -p $port -t set,get -n 400000 -P 16 -r 100000 -c 20 -q -l \
	>"$tmp/bench" 2>&1 &
bpid=$!; pids+=($bpid)
sleep 1.5

"$uslab" slabinfo -p $kvpid >"$tmp/si1" 2>"$tmp/err" || fail "slabinfo -p under load: $(cat "$tmp/err")"
head -1 "$tmp/si1" | grep -q '^slabinfo - version: 2.1$' || fail "slabinfo -p: not slabinfo 2.1: $(head -2 "$tmp/si1")"
for c in kv_conn kv_req kv_item; do
	grep -q "^$c " "$tmp/si1" || fail "slabinfo -p: no $c row"
done
items=$(awk '$1 == "kv_item" { print $2 }' "$tmp/si1")
[ "${items:-0}" -gt 0 ] || fail "slabinfo -p: kv_item has no active objects under SET load"

"$uslab" top -p $kvpid -o -d 0.5 -s r >"$tmp/top" 2>"$tmp/err" || fail "top -o: $(cat "$tmp/err")"
grep -q "uslab top - pid $kvpid" "$tmp/top" || fail "top: no header: $(head -3 "$tmp/top")"
grep -q 'REFILL/s' "$tmp/top" && grep -q 'HIT%' "$tmp/top" || fail "top: no rate columns"
row=$(awk '$NF == "kv_item"' "$tmp/top")
[ -n "$row" ] || fail "top: no kv_item row: $(cat "$tmp/top")"
# rseq-mode hits are counted only with CONFIG_PERCPU_HIT_STATS (the hit path
# carries no counter by default, docs/percpu.md "Statistics"): then top says so
# A build without magazines (debug-on-boot caches: debug_defconfig, or
# PERCPU_CACHE=n) counts every operation on the slow path: no hit at all.
if grep -q '^CONFIG_SLAB_DEBUG_ON=y' "$O/auto.conf" || ! grep -q '^CONFIG_PERCPU_CACHE=y' "$O/auto.conf"; then
	grep -Eq 'Magazine hit rate +: 0\.00% of [1-9][0-9]* operations' "$tmp/top" ||
		fail "top: hits counted in a build without magazines: $(grep 'hit rate' "$tmp/top")"
elif grep -q '^CONFIG_PERCPU_HIT_STATS=y' "$O/auto.conf" || [ "$(sed -n 's/.*per-CPU mode \([a-z]*\),.*/\1/p' "$tmp/top")" != rseq ]; then
	grep -Eq 'Magazine hit rate +: [0-9.]+% of [0-9]+ operations' "$tmp/top" ||
		fail "top: no hit rate over the interval under load: $(grep 'hit rate' "$tmp/top")"
else
	grep -Eq 'Magazine hit rate +: - \(rseq-mode hits not counted: CONFIG_PERCPU_HIT_STATS\)' "$tmp/top" ||
		fail "top: rseq-mode hits uncounted but not said so: $(grep 'hit rate' "$tmp/top")"
fi
# Sorted by refills/s: the first row has the most.
awk '/^ +OBJS/ { on = 1; next } on && NF { print $7 }' "$tmp/top" >"$tmp/refills"
sort -g -r -c "$tmp/refills" 2>/dev/null || fail "top -s r: not sorted by REFILL/s: $(head -5 "$tmp/refills" | tr '\n' ' ')"
# Two frames in batch mode, -n.
"$uslab" top -p $kvpid -d 0.2 -n 2 >"$tmp/top2" 2>"$tmp/err" || fail "top -n 2: $(cat "$tmp/err")"
[ "$(grep -c 'uslab top - pid' "$tmp/top2")" = 2 ] || fail "top -n 2: not two frames"

# The kernel's slabinfo write, applied by the process; it prints nothing
# (a write to /proc/slabinfo says nothing either), the next read shows it.
"$uslab" slabinfo -p $kvpid -w 'kv_item 64 32 8' >"$tmp/w" 2>"$tmp/err" || fail "slabinfo -w: $(cat "$tmp/err")"
[ ! -s "$tmp/w" ] && [ ! -s "$tmp/err" ] || fail "slabinfo -w printed: $(cat "$tmp/w" "$tmp/err" | head -3)"
"$uslab" slabinfo -p $kvpid >"$tmp/si2" 2>"$tmp/err" || fail "slabinfo after -w: $(cat "$tmp/err")"
awk '$1 == "kv_item"' "$tmp/si2" | grep -Eq 'tunables +64 +32 +8 ' ||
	fail "slabinfo -w 'kv_item 64 32 8' not applied: $(awk '$1 == "kv_item"' "$tmp/si2")"
"$uslab" slabinfo -p $kvpid -w 'no_such_cache 64 32 8' >/dev/null 2>"$tmp/err" &&
	fail "slabinfo -w of a cache that does not exist succeeded"
grep -q 'no_such_cache' "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] ||
	fail "slabinfo -w, unknown cache: not one line naming it: $(cat "$tmp/err")"
# A value out of range: exit 2 (as uslab(1) promises), the field and its
# range named, the process not asked.
for w in 'kv_item 5000 32 8:LIMIT: expected 1 to 4096' 'kv_item 64 100 8:BATCHCOUNT: expected 1 to 64' \
	 'kv_item 64 32 9999:SHAREDFACTOR: expected 0 to 4096' 'kv_item 64 32:SHAREDFACTOR: expected 0 to 4096, found nothing'; do
	rc=0; "$uslab" slabinfo -p $kvpid -w "${w%%:*}" >/dev/null 2>"$tmp/err" || rc=$?
	[ "$rc" = 2 ] || fail "slabinfo -w '${w%%:*}': exit $rc, not 2"
	grep -qF -- "${w#*:}" "$tmp/err" || fail "slabinfo -w '${w%%:*}': said '$(cat "$tmp/err")', expected '${w#*:}'"
done
kill $bpid 2>/dev/null; wait $bpid 2>/dev/null
kill -0 $kvpid 2>/dev/null || fail "uslab-kv died under load: $(tail -3 "$tmp/kv.out")"
grep -qiE 'error|ERR' "$tmp/bench" && fail "redis-benchmark saw errors: $(grep -iE 'error|ERR' "$tmp/bench" | head -2)"

# --- a preloaded python3 ------------------------------------------------------
# PYTHONMALLOC=malloc: small objects from malloc, not pymalloc's own arenas.
USLAB_OPTIONS=stats_shm PYTHONMALLOC=malloc LD_PRELOAD=$lib python3 -c '
import sys, time
data = [str(i) * 3 for i in range(200000)]
print("ready", flush=True)
time.sleep(30)' >"$tmp/py.out" 2>&1 &
pypid=$!; pids+=($pypid)
for _ in $(seq 100); do grep -q ready "$tmp/py.out" && break; sleep 0.1; done
grep -q ready "$tmp/py.out" || fail "python3 did not start: $(cat "$tmp/py.out")"
"$uslab" slabinfo -p $pypid >"$tmp/si3" 2>"$tmp/err" || fail "slabinfo -p python3: $(cat "$tmp/err")"
active=$(awk '$1 ~ /^kmalloc-/ { s += $2 } END { print s + 0 }' "$tmp/si3")
[ "$active" -gt 200000 ] || fail "python3 holds 200000 strings, slabinfo shows $active active kmalloc objects"
"$uslab" top -p $pypid -o -d 0.2 >"$tmp/top3" 2>"$tmp/err" || fail "top -p python3: $(cat "$tmp/err")"
grep -q ' kmalloc-' "$tmp/top3" || fail "top -p python3: no kmalloc rows"
# Killed by a signal, it cannot remove its segment: the next reader says it
# has gone, in one line, and clears the file.
kill $pypid; wait $pypid 2>/dev/null
"$uslab" slabinfo -p $pypid >/dev/null 2>"$tmp/err" && fail "slabinfo -p on a killed python3 succeeded"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "no process $pypid" "$tmp/err" ||
	fail "slabinfo -p on a killed python3: $(cat "$tmp/err")"
[ -e /dev/shm/uslab.$pypid ] && fail "the stale /dev/shm/uslab.$pypid was not removed"

# --- errors: one line each ------------------------------------------------------
sleep 30 & other=$!; pids+=($other)
check_err() {	# WHAT PID PATTERN
	"$uslab" top -p "$2" -o -d 0.1 >"$tmp/out" 2>"$tmp/err" && fail "top -p on $1 succeeded"
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "$3" "$tmp/err" ||
		fail "top -p on $1: expected one line matching '$3', got: $(cat "$tmp/err")"
	[ -s "$tmp/out" ] && fail "top -p on $1 printed a frame"
	"$uslab" slabinfo -p "$2" >/dev/null 2>"$tmp/err" && fail "slabinfo -p on $1 succeeded"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "slabinfo -p on $1: not one line: $(cat "$tmp/err")"
}
check_err "a process not on uslab" $other "not running on uslab"
LD_PRELOAD=$lib sleep 30 & plain=$!; pids+=($plain)
sleep 0.3
check_err "a uslab process without stats_shm" $plain "USLAB_OPTIONS=stats_shm"
kill $other; wait $other 2>/dev/null
check_err "a process that has gone" $other "no process"
"$uslab" top -p abc >/dev/null 2>&1; [ $? = 2 ] || fail "top -p abc: expected usage error 2"

kill -TERM $kvpid; wait $kvpid
[ -e /dev/shm/uslab.$kvpid ] && fail "uslab-kv exited and left /dev/shm/uslab.$kvpid"
echo "live view: slabinfo -p, top -p and -w on uslab-kv under load and on python3; errors ok"
