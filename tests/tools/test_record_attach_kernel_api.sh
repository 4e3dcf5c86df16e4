#!/usr/bin/env bash
# uslab record -p of a program that allocates through uslab's kernel API
# (examples/kv's uslab-kv: kmem_cache_alloc, kmalloc, kfree, kfree_rcu; no
# malloc in steady state), under a bounded redis-benchmark load: the
# kernel-API calls are recorded (before issue 22's fix: 0 events) as
# kmalloc/kfree/kmem_cache_alloc/kmem_cache_free, the caches by name
# (kv_req, kv_item: format 1.2's cache table), the objects allocated before
# the attach and freed during it as alive at attach (no frees of unknown
# ids); report, replay and sim accept the trace (sim keeps kv_req as a
# named cache); the server keeps answering after the detach. Skipped only
# where ptrace is not permitted (said).
. "$(dirname "$0")/../lib.sh"
command -v gdb >/dev/null || fail "gdb not installed (scripts/deps.sh tools)"
command -v redis-cli >/dev/null || fail "redis-cli not installed (scripts/deps.sh)"
command -v redis-benchmark >/dev/null || fail "redis-benchmark not installed (scripts/deps.sh)"
. examples/kv/start.sh
KV=$O/examples/uslab-kv
[ -x "$KV" ] || fail "$KV not built"
kv_start "$T/kv.out" "$T/kv.err" "$KV" --threads 2 || fail "uslab-kv did not start"
trap 'kill $kvpid $load 2>/dev/null || true; rm -rf "$T"' EXIT

probe=$(gdb -nx -batch -p "$kvpid" -ex detach 2>&1 || true)
case $probe in
*"Operation not permitted"*) skip "ptrace is not permitted here: $(echo "$probe" | grep -m1 'not permitted')" ;;
esac

# items stored before the attach: their values are kfree_rcu'd when the
# load overwrites them during it
for i in $(seq 50); do redis-cli -p "$port" set "k$i" "before$i" >/dev/null; done
# bounded load: at most 100,000 requests, stopped at the end in any case
redis-benchmark -p "$port" -n 100000 -c 4 -t set,get -d 100 -r 50 -q >/dev/null 2>&1 &
load=$!
sleep 0.3
"$U" record -p "$kvpid" --duration 2s -o "$T/kv.ustr" 2> "$T/rec.err" || { cat "$T/rec.err"; fail "record -p"; }
kill $load 2>/dev/null || true; wait $load 2>/dev/null || true
grep -q "calls redirected" "$T/rec.err" || fail "no attach line: $(cat "$T/rec.err")"
[ "$(redis-cli -p "$port" set hello world)" = OK ] || fail "uslab-kv stopped serving after the detach (set)"
[ "$(redis-cli -p "$port" get hello)" = world ] || fail "uslab-kv stopped serving after the detach (get)"

"$U" report "$T/kv.ustr" > "$T/report" 2>&1 || { cat "$T/report"; fail "report refused the trace"; }
for op in kmalloc kfree kmem_cache_alloc kmem_cache_free; do
	n=$(awk -v op="$op" '$1 == op { print $2 }' "$T/report")
	[ "${n:-0}" -gt 0 ] || bad "report: no $op events: $(sed -n '/operations/,/allocations/p' "$T/report")"
done
grep -q "of unknown ids 0)" "$T/report" || bad "report: frees of unknown ids: $(grep 'unknown ids' "$T/report")"
# the named caches: kv_req (a request, allocated and freed per command)
# and kv_item, each with its object size from kmem_cache_size()
awk '/^named caches/ { on = 1; next } on && /^$/ { exit } on' "$T/report" > "$T/named"
grep -Eq '^ +kv_req +[0-9]+ +[1-9]' "$T/named" || bad "report: no kv_req row: $(cat "$T/named")"
# the malloc-family ops are absent: uslab-kv's steady state makes none,
# and libuslab.so's own kmalloc calls are not recorded a second time
awk '$1 == "malloc" || $1 == "calloc" { print }' "$T/report" > "$T/mallocs"
[ ! -s "$T/mallocs" ] || bad "report: malloc-family events in a kernel-API server: $(cat "$T/mallocs")"

"$U" script "$T/kv.ustr" > "$T/script" 2>&1 || fail "script refused the trace"
grep -q "kmem_cache_alloc .*cache=kv_req" "$T/script" || bad "script: no kmem_cache_alloc names kv_req"

"$U" sim "$T/kv.ustr" > "$T/sim" 2>&1 || { cat "$T/sim"; fail "sim refused the trace"; }
grep -Eq '^ +kv_req +[0-9]+ ' "$T/sim" || bad "sim: kv_req is not a cache of its own: $(cat "$T/sim")"
"$U" replay "$T/kv.ustr" > "$T/replay" 2>&1 || { cat "$T/replay"; fail "replay refused the trace"; }
[ "$failed" = 0 ] || exit 1
echo "record -p of uslab-kv: $(grep -o '[0-9]* events' "$T/rec.err" | head -1), caches named, report/replay/sim accept, serving after"
