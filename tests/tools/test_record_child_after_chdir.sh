#!/usr/bin/env bash
# `uslab record -o FILE -- CMD` records the processes CMD starts after it
# changed directory: `make -C DIR` (every compiler it runs), a shell script
# that cd's first. The raw files' folder is named to the processes by
# absolute path; before, it was FILE.rec.XXXXXX relative to where record
# ran, so a process started elsewhere could not open it and was dropped
# without a word (`record -- make -C srcdir` kept make alone: "2
# processes").
. "$(dirname "$0")/../lib.sh"
U=$(realpath "$U")

cat >"$T/mk" <<'MK'
all:
	ls / >/dev/null
	cat /dev/null
MK
mkdir "$T/sub"
# the comm column of the report's process table (two fields after share)
comms() { awk '/^#/ { for (i = 2; i < NF; i++) if ($i ~ /%$/) { print $(i + 2); break } }' "$1"; }
cd "$T"
# the output named relative to here, the command run from elsewhere
"$U" record -q -o rel.ustr -- sh -c 'cd / && ls >/dev/null && cd /tmp && cat /dev/null' 2>err ||
	fail "record sh: exit $?: $(cat err)"
"$U" report rel.ustr >rep 2>&1 || fail "report: $(cat rep)"
for c in sh ls cat; do
	comms rep | grep -qx "$c" || fail "cd then $c: not recorded: $(grep '^#' rep)"
done
"$U" record -q -o make.ustr -- make -s -C sub -f ../mk 2>err || fail "record make -C: exit $?: $(cat err)"
"$U" report make.ustr >rep 2>&1 || fail "report: $(cat rep)"
for c in make sh ls cat; do
	comms rep | grep -qx "$c" || fail "make -C, $c: not recorded: $(grep '^#' rep)"
done
ls | grep -q '\.rec\.' && fail "a raw folder is left: $(ls)"
echo "processes started after a chdir are recorded (sh -c 'cd /; ls', make -C)"
