#!/usr/bin/env bash
# A C++ program that never calls malloc itself (std::vector, std::string,
# new and delete: only libstdc++ calls malloc) built with README's two
# link lines, `g++ in place of cc`, against a fresh `make install`, runs on
# uslab's malloc, as README promises of "link shared" and "link static".
#
# Before (journey8's finding): Debian's gcc links with --as-needed, so the
# shared line's -luslab, which satisfied no reference of the program's own
# objects, was dropped (no NEEDED libuslab.so); the static line's archive
# member was never pulled in (the linker takes an archive member only for
# an undefined reference of the program). Both programs ran on glibc's
# malloc without a word. The check: USLAB_OPTIONS=stats makes uslab (and
# only uslab) print its counters at exit, and new's blocks are uslab's.
set -u
O=${O:-build}
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath "$O")
prefix=$(mktemp -d "${TMPDIR:-/tmp}/uslab-cxx.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

make -s -C "$src" O="$out" install PREFIX="$prefix" >"$prefix/make.log" 2>&1 ||
	{ tail -20 "$prefix/make.log"; fail "make install failed"; }
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cd "$prefix" || fail "cd $prefix"

shared_cmd=$(grep -E '^cc -o app app\.c .*# shared$' "$src/README.md")
static_cmd=$(grep -E '^cc -o app app\.c .*# static$' "$src/README.md")
[ -n "$shared_cmd" ] && [ -n "$static_cmd" ] || fail "README: no '# shared' or '# static' cc line"
grep -q 'g++` in place of `cc`' "$src/README.md" || fail "README no longer says g++ in place of cc"
# README: "The headers are C11 and C++11 alike (`g++` in place of `cc` below)."
shared_cmd=$(echo "$shared_cmd" | sed 's/^cc /g++ /; s/ app\.c / app.cc /')
static_cmd=$(echo "$static_cmd" | sed 's/^cc /g++ /; s/ app\.c / app.cc /')

cat >app.cc <<'CXX'
// Only the C++ library allocates: no malloc, no uslab call in this file.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

int main()
{
	std::vector<std::string> v;
	std::map<int, std::unique_ptr<int[]>> m;

	for (int i = 0; i < 5000; i++) {
		v.push_back(std::string(i % 200 + 20, 'x'));
		m[i % 300].reset(new int[i % 50 + 1]);
	}
	std::printf("%zu %zu\n", v.size(), m.size());
	return 0;
}
CXX

check() {	# check LINE-NAME: ./app built, runs on uslab
	local what=$1 res
	res=$(env -u LD_PRELOAD -u LD_LIBRARY_PATH USLAB_OPTIONS=stats ./app 2>err.txt) ||
		{ head -5 err.txt; fail "$what: the program failed"; }
	[ "$res" = "5000 300" ] || fail "$what: the program printed '$res'"
	grep -qE '^malloc: allocated [0-9]+ KiB' err.txt ||
		{ head -3 err.txt; fail "$what: no uslab statistics at exit under USLAB_OPTIONS=stats: the program ran on another malloc"; }
	grep -qE '^kmalloc-32 +[0-9]+ +[0-9]+' err.txt ||
		fail "$what: uslab's statistics show no kmalloc-32 (the strings' blocks)"
}

(eval "$shared_cmd") >cc.txt 2>&1 || { cat cc.txt; fail "README's shared line, g++: $shared_cmd"; }
readelf -d app | grep -q 'NEEDED.*libuslab\.so' ||
	fail "shared: g++ $(pkg-config --libs uslab) dropped libuslab.so (no NEEDED entry; --as-needed)"
check "shared"

rm -f app
(eval "$static_cmd") >cc.txt 2>&1 || { cat cc.txt; fail "README's static line, g++: $static_cmd"; }
nm app | grep -qE ' T malloc$' ||
	fail "static: libuslab.a was not linked in (no malloc defined in the program)"
check "static"

echo "PASS: a C++ program that only uses new/delete runs on uslab, linked shared and static"
