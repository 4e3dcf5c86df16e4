#!/usr/bin/env bash
# `uslab record -- CMD` with the recorder library at a path that holds a
# space or a colon: LD_PRELOAD splits its list there, so ld.so would name
# pieces that do not exist in every process and nothing would be recorded
# (qa10, 2026-11-28: a build tree under "my work" recorded nothing and
# record said nothing, exit 0). Now record refuses before it runs CMD,
# naming the path, exit 1, no output file.
. "$(dirname "$0")/../lib.sh"
lib=$(dirname "$U")/libuslab-record.so
[ -r "$lib" ] || fail "$lib not built"
for d in "with space" "with:colon"; do
	mkdir -p "$T/$d"
	cp "$lib" "$T/$d/"
	rm -f "$T/out.ustr"
	st=0
	USLAB_RECORD_LIB="$T/$d/libuslab-record.so" "$U" record -q -o "$T/out.ustr" -- true \
		>"$T/so" 2>"$T/err" || st=$?
	[ "$st" -eq 1 ] || fail "'$d': exit $st, not 1: $(cat "$T/err")"
	grep -qF "$T/$d/libuslab-record.so: LD_PRELOAD cannot name" "$T/err" ||
		fail "'$d': the error does not name the path: $(cat "$T/err")"
	[ ! -e "$T/out.ustr" ] || fail "'$d': an output file was written"
	echo "ok   '$d': $(cat "$T/err")"
done
# the same library at a plain path still records
USLAB_RECORD_LIB="$lib" "$U" record -q -o "$T/ok.ustr" -- true 2>"$T/err" ||
	fail "plain path: $(cat "$T/err")"
[ -s "$T/ok.ustr" ] || fail "plain path: no trace written"
echo "a library path LD_PRELOAD cannot name: refused, named, nothing written; a plain one records"
