#!/usr/bin/env bash
# make install with a blank in PREFIX or DESTDIR stops before anything is
# made, naming the path: the recipe's `install -d` split it (PREFIX='/opt/my
# lib' made /opt/my, and lib/... relative to the tree), and the pkg-config
# flags README's `cc` lines expand unquoted would split it again. The
# second word here is absolute, so the old recipe scattered folders inside
# the scratch folder, not the tree.
set -u
cd "$(dirname "$0")/../.."
O=${O:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for v in "PREFIX=$T/a $T/b" "DESTDIR=$T/c $T/d"; do
	rc=0
	make -s --no-print-directory O="$O" install "$v" > "$T/out" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || fail "make install $v: exit 0"
	grep -q "holds a blank" "$T/out" || fail "make install $v: not said: $(tail -3 "$T/out")"
	made=$(cd "$T" && ls -d a b c d 2>/dev/null)
	[ -z "$made" ] || fail "make install $v made: $made ($(find "$T" -mindepth 1 -maxdepth 3 -not -name out | head -5))"
done
echo "make install refuses a PREFIX or DESTDIR with a blank, making nothing"
