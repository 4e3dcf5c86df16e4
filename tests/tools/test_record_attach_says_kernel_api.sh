#!/usr/bin/env bash
# uslab record -p of a program that allocates through uslab's kernel API
# (examples/kv's uslab-kv: kmem_cache_alloc, kmalloc, kfree_rcu; no malloc
# in steady state) records 0 events, as the recorder redirects the malloc
# family only. The summary says so and where its caches are shown instead
# (issue 22: before, a bare "0 events"); the malloc build of the same
# server records events. Skipped only where ptrace is not permitted (said).
. "$(dirname "$0")/../lib.sh"
command -v gdb >/dev/null || fail "gdb not installed (scripts/deps.sh tools)"
command -v redis-cli >/dev/null || fail "redis-cli not installed (scripts/deps.sh)"
. examples/kv/start.sh
KV=$O/examples/uslab-kv
[ -x "$KV" ] || fail "$KV not built"
kv_start "$T/kv.out" "$T/kv.err" "$KV" --threads 1 || fail "uslab-kv did not start"
trap 'kill $kvpid 2>/dev/null || true; rm -rf "$T"' EXIT

probe=$(gdb -nx -batch -p "$kvpid" -ex detach 2>&1 || true)
case $probe in
*"Operation not permitted"*) skip "ptrace is not permitted here: $(echo "$probe" | grep -m1 'not permitted')" ;;
esac

# traffic while recorded: items, buffers and connections from its caches
( for i in $(seq 200); do redis-cli -p "$port" set "k$i" "v$i" >/dev/null; done ) &
load=$!
"$U" record -p "$kvpid" --duration 1s -o "$T/kv.ustr" 2> "$T/rec.err" || { cat "$T/rec.err"; fail "record -p"; }
wait $load
grep -q " 0 events," "$T/rec.err" || fail "expected 0 events: $(cat "$T/rec.err")"
grep -q "note: $kvpid made no malloc-family call while recorded; it runs on libuslab.so" "$T/rec.err" ||
	fail "the summary does not say why 0 events: $(cat "$T/rec.err")"
grep -q "uslab top -p $kvpid" "$T/rec.err" || fail "the summary does not say where the caches are"
[ "$(redis-cli -p "$port" get k7)" = v7 ] || fail "uslab-kv stopped serving after the detach"
echo "record -p of a kernel-API program says why it saw no malloc call"
