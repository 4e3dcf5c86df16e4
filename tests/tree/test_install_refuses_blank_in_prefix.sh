#!/usr/bin/env bash
# make install with a blank in PREFIX or DESTDIR stops before anything is
# built or made (when make reads the Makefile), naming the path: the
# recipe's `install -d` split it (PREFIX='/opt/my lib' made /opt/my, and
# lib/... relative to the tree), and the pkg-config flags README's `cc`
# lines expand unquoted would split it again. The second word here is
# absolute, so the old recipe scattered folders inside the scratch folder,
# not the tree. A relative PREFIX is refused too.
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
# A relative PREFIX: the .pc files said prefix=rel, so pkg-config's flags
# (-Irel/include) and the rpath worked from the tree's top alone.
rc=0
make -s --no-print-directory O="$O" install PREFIX=rel-j6 > "$T/out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || { rm -rf rel-j6; fail "make install PREFIX=rel-j6: exit 0"; }
grep -q "is not an absolute path" "$T/out" || fail "PREFIX=rel-j6: not said: $(tail -3 "$T/out")"
[ ! -e rel-j6 ] || { rm -rf rel-j6; fail "PREFIX=rel-j6 made rel-j6/"; }
echo "make install refuses a PREFIX or DESTDIR with a blank and a relative PREFIX, making nothing"
