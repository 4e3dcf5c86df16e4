#!/usr/bin/env bash
# make install PREFIX=<temp>: libuslab.so, libuslab.a and uslab.pc land
# there, and a program built with `pkg-config --cflags --libs uslab` links
# and runs on uslab, shared and static.
set -u
O=${O:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(mktemp -d "${TMPDIR:-/tmp}/uslab-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

make -s -C "$src" O="$(realpath "$O")" install PREFIX="$prefix" >"$prefix/make.log" 2>&1 ||
	{ tail -20 "$prefix/make.log"; fail "make install failed"; }
for f in lib/libuslab.so lib/libuslab.a lib/pkgconfig/uslab.pc include/uslab/malloc.h; do
	[ -e "$prefix/$f" ] || fail "make install did not install $f"
done
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cat >"$prefix/app.c" <<'C'
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uslab/malloc.h>

int main(void)
{
	char *p = malloc(100);
	void *q = aligned_alloc(4096, 8192);

	if (!p || malloc_usable_size(p) < 100 || !q || ((unsigned long)q & 4095))
		return 1;
	strcpy(p, "linked with uslab");
	puts(p);
	uslab_malloc_stats(-1);	/* only uslab has it; writes nowhere */
	free_sized(p, 100);
	free_aligned_sized(q, 4096, 8192);
	return 0;
}
C
cc -o "$prefix/app" "$prefix/app.c" $(pkg-config --cflags --libs uslab) ||
	fail "linking with pkg-config --cflags --libs uslab failed"
out=$(LD_LIBRARY_PATH=$prefix/lib "$prefix/app") || fail "shared app failed"
[ "$out" = "linked with uslab" ] || fail "shared app printed '$out'"
LD_LIBRARY_PATH=$prefix/lib ldd "$prefix/app" | grep -q "$prefix/lib/libuslab.so" ||
	fail "app is not linked against the installed libuslab.so"
cc -o "$prefix/app-static" "$prefix/app.c" $(pkg-config --cflags uslab) \
	"$prefix/lib/libuslab.a" $(pkg-config --static --libs-only-l uslab | sed 's/-luslab //') ||
	fail "static link against libuslab.a failed"
ldd "$prefix/app-static" | grep -q libuslab && fail "static app still needs libuslab.so"
out=$("$prefix/app-static") || fail "static app failed"
[ "$out" = "linked with uslab" ] || fail "static app printed '$out'"
echo "install: ok (shared and static, via pkg-config)"
