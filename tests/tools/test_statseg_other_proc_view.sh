#!/usr/bin/env bash
# Issue 20 finding 8: a reader with another view of /proc (another PID
# namespace, or no /proc at all) never deletes the segment of a live
# process: it says why it cannot read it and leaves the file. What it
# removes is only what is provably stale (nobody holds the alive lock,
# lib/shmseg.h), from wherever it looks.
# Needs root (unshare of the PID and mount namespaces).
. "$(dirname "$0")/../lib.sh"
set +e
[ "$(id -u)" = 0 ] || skip "not root: unshare needs it"
unshare --pid --fork --mount-proc true 2>/dev/null ||
	skip "unshare --pid --mount-proc is not permitted here: no other view of /proc to test from"
pids=()
trap 'for p in "${pids[@]}"; do kill -9 $p 2>/dev/null; done; rm -f /dev/shm/uslab.4100000; rm -rf "$T"' EXIT

env USLAB_OPTIONS=stats_shm LD_PRELOAD="$LIBUSLAB" sleep 60 & live=$!; pids+=($live)
for _ in $(seq 100); do [ -e /dev/shm/uslab.$live ] && break; sleep 0.05; done
[ -e /dev/shm/uslab.$live ] || fail "no /dev/shm/uslab.$live with USLAB_OPTIONS=stats_shm"

# Another PID namespace with its own /proc: pid $live is not there (or is
# another process).
unshare --pid --fork --mount-proc "$U" slabinfo -p $live >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 1 ] || bad "slabinfo -p from another PID namespace: exit $rc: $(cat "$T/err")"
[ -e /dev/shm/uslab.$live ] || bad "a reader in another PID namespace removed the live segment of $live ($(cat "$T/err"))"
# No /proc at all.
unshare --mount sh -c 'umount -l /proc && exec "$@"' sh "$U" slabinfo -p $live >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 1 ] || bad "slabinfo -p without /proc: exit $rc: $(cat "$T/err")"
grep -q "cannot read /proc/$live" "$T/err" || bad "slabinfo -p without /proc: not said: $(cat "$T/err")"
[ -e /dev/shm/uslab.$live ] || bad "a reader without /proc removed the live segment of $live ($(cat "$T/err"))"
unshare --mount sh -c 'umount -l /proc && exec "$@"' sh "$U" top -p $live -o -d 0.1 >"$T/out" 2>"$T/err"
[ -e /dev/shm/uslab.$live ] || bad "top -p without /proc removed the live segment of $live"
# The live process is still served from the usual view.
"$U" slabinfo -p $live >"$T/out" 2>"$T/err" || bad "slabinfo -p after the other views: $(cat "$T/err")"
head -1 "$T/out" | grep -q '^slabinfo - version: 2.1$' || bad "slabinfo -p after the other views: $(head -2 "$T/out")"

# A stale segment (a copy: a file nobody holds the lock of, for a pid past
# pid_max) is removed by a reader without /proc.
cp /dev/shm/uslab.$live /dev/shm/uslab.4100000
unshare --mount sh -c 'umount -l /proc && exec "$@"' sh "$U" slabinfo -p $live >/dev/null 2>&1
[ -e /dev/shm/uslab.4100000 ] && bad "a reader without /proc left a provably stale segment"
[ -e /dev/shm/uslab.$live ] || bad "the live segment went with the stale one"
exit $failed
