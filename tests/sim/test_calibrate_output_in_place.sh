#!/usr/bin/env bash
# `uslab calibrate -o FILE` writes as every other -o of the CLI
# (trace/outfile.c): a FIFO or a device in place, a symlink followed (its
# target replaced, the link kept). Before, calibrate renamed its temporary
# over whatever stood at FILE: `calibrate -o /dev/full` run as root left a
# regular file where the device node was (and said "wrote /dev/full", exit
# 0); a FIFO became a regular file, a symlink a file of its own.
. "$(dirname "$0")/../lib.sh"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$T"' EXIT

# a FIFO: its reader gets the model, the FIFO stays
mkfifo "$T/fifo"
timeout 60 cat "$T/fifo" >"$T/got" &
reader=$!
run_rc "$U" calibrate -o "$T/fifo" >"$T/out" 2>"$T/err"
[ "$rc" -eq 0 ] || fail "-o FIFO: exit $rc: $(cat "$T/err")"
[ -p "$T/fifo" ] || fail "-o FIFO: the FIFO was replaced by: $(ls -l "$T/fifo")"
wait "$reader" || fail "-o FIFO: its reader got nothing (exit $?)"
grep -q '^hit_ns=' "$T/got" || fail "-o FIFO: the reader did not get the model: $(head -c 200 "$T/got")"
ls "$T" | grep -q 'fifo\.' && fail "-o FIFO: a temporary is left: $(ls "$T")"

# a symlink: the target gets the model, the link stays a link
echo old >"$T/target"
ln -s target "$T/link"
run_rc "$U" calibrate -o "$T/link" >"$T/out" 2>"$T/err"
[ "$rc" -eq 0 ] || fail "-o symlink: exit $rc: $(cat "$T/err")"
[ -L "$T/link" ] || fail "-o symlink: the link was replaced by: $(ls -l "$T/link")"
grep -q '^hit_ns=' "$T/target" || fail "-o symlink: the target holds: $(head -c 200 "$T/target")"
echo "calibrate -o writes a FIFO in place and follows a symlink, as every -o"
