#!/usr/bin/env bash
# make install PREFIX=<temp>, then, as a user outside the tree with nothing
# but the install and pkg-config:
#   - libuslab.so exports exactly the kernel API listed in
#     malloc/libuslab.map (version USLAB_0.1) and the malloc API
#     (unversioned, so that a preload interposes glibc's);
#   - every installed header compiles alone;
#   - a program using the kernel API (kmem_cache with a constructor and
#     SLAB_TYPESAFE_BY_RCU, kmalloc family, kfree_rcu, the page allocator,
#     slabinfo) and malloc builds with the README's shared and static
#     commands, taken from README.md itself, and runs;
#   - one calling only the kernel API, static, reads USLAB_OPTIONS;
#   - the installed `uslab replay --allocator uslab` finds PREFIX/lib/libuslab.so.
set -u
O=${O:-build}
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath "$O")
prefix=$(mktemp -d "${TMPDIR:-/tmp}/uslab-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

make -s -C "$src" O="$out" install PREFIX="$prefix" >"$prefix/make.log" 2>&1 ||
	{ tail -20 "$prefix/make.log"; fail "make install failed"; }
for f in lib/libuslab.so lib/libuslab.a lib/pkgconfig/uslab.pc \
	 lib/pkgconfig/uslab-static.pc include/uslab/malloc.h include/uslab/slab.h \
	 include/uslab/autoconf.h include/uslab/kernel/linux/slab.h bin/uslab; do
	[ -e "$prefix/$f" ] || fail "make install did not install $f"
done

# --- the exported set ---------------------------------------------------------
malloc_api="aligned_alloc calloc cfree free free_aligned_sized free_sized mallinfo
mallinfo2 malloc malloc_info malloc_stats malloc_trim malloc_usable_size memalign posix_memalign pvalloc
realloc reallocarray valloc __libc_calloc __libc_cfree __libc_free __libc_malloc
__libc_memalign __libc_pvalloc __libc_realloc __libc_valloc __posix_memalign"
map_api=$(sed -e 's|/\*.*\*/||' "$src/malloc/libuslab.map" |
	  sed -n '/{/,/}/p' | grep -Eo '^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*;' | tr -d ' \t;')
[ "$(echo "$map_api" | wc -l)" -ge 40 ] || fail "could not read the symbol list of libuslab.map"
nm -D --defined-only "$prefix/lib/libuslab.so" | awk '$2 ~ /^[TtWwDdBbVvi]$/ { print $3 }' |
	sort >"$prefix/exported"
{ for s in $malloc_api; do echo "$s"; done
  for s in $map_api; do echo "$s@@USLAB_0.1"; done; } | sort >"$prefix/expected"
diff "$prefix/expected" "$prefix/exported" >"$prefix/sym.diff" || {
	cat "$prefix/sym.diff"
	fail "libuslab.so exports differ from malloc/libuslab.map + the malloc API (< missing, > extra)"
}

# --- from here on: outside the tree, the install and pkg-config only -----------
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
work=$prefix/work
mkdir -p "$work" && cd "$work" || fail "cd $work"
pkg-config --exists uslab uslab-static || fail "pkg-config does not find uslab and uslab-static"
case " $(pkg-config --cflags uslab) " in
*" -I$src"*) fail "pkg-config --cflags points into the source tree" ;;
esac

# Every installed header alone, strict C11 and with warnings as errors,
# through pkg-config --cflags and nothing else (no -D_GNU_SOURCE, no -include).
nh=0
while read -r h; do
	rel=${h#"$prefix/include/"}
	case "$rel" in uslab/kernel/*) inc=${rel#uslab/kernel/} ;; *) inc=$rel ;; esac
	printf '#include <%s>\nint main(void) { return 0; }\n' "$inc" >one.c
	for std in gnu11 c11; do
		cc -std=$std -Wall -Wextra -Werror -c -o one.o one.c $(pkg-config --cflags uslab) 2>err.txt ||
			{ head -8 err.txt; fail "installed <$inc> does not compile alone (-std=$std)"; }
	done
	# and as C++ (the declarations in extern "C", no C-only syntax)
	cp one.c one.cc
	for std in c++11 c++17; do
		g++ -std=$std -Wall -Werror -c -o one.o one.cc $(pkg-config --cflags uslab) 2>err.txt ||
			{ head -8 err.txt; fail "installed <$inc> does not compile alone as C++ (-std=$std)"; }
	done
	nh=$((nh + 1))
done < <(find "$prefix/include/uslab" -name '*.h' | sort)
[ "$nh" -ge 8 ] || fail "only $nh installed headers found"

# The commands, exactly as README.md has them.
shared_cmd=$(grep -E '^cc -o app app\.c .*# shared$' "$src/README.md")
static_cmd=$(grep -E '^cc -o app app\.c .*# static$' "$src/README.md")
[ "$(echo "$shared_cmd" | wc -l)" = 1 ] && [ -n "$shared_cmd" ] || fail "README: no single '# shared' cc line"
[ "$(echo "$static_cmd" | wc -l)" = 1 ] && [ -n "$static_cmd" ] || fail "README: no single '# static' cc line"

cat >app.c <<'C'
/* A kernel-API + malloc program, as a service would write it. */
#include <linux/slab.h>
#include <linux/rcupdate.h>
#include <uslab/page_alloc.h>
#include <uslab/malloc.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item {
	unsigned long magic;
	struct rcu_head rcu;
	char key[40];
};

static int ctor_calls;

static void item_ctor(void *p)
{
	((struct item *)p)->magic = 0x5157;
	ctor_calls++;
}

#define CHECK(c) do { if (!(c)) { printf("check failed: %s (line %d)\n", #c, __LINE__); return 1; } } while (0)

int main(void)
{
	struct kmem_cache *c = kmem_cache_create("app_item", sizeof(struct item), 0,
						 SLAB_HWCACHE_ALIGN | SLAB_TYPESAFE_BY_RCU,
						 item_ctor);
	struct item *it[100];
	char *info, *s, *m;
	struct page *pg;
	unsigned long addr;
	int i;

	CHECK(c != NULL);
	CHECK(strcmp(kmem_cache_name(c), "app_item") == 0);
	for (i = 0; i < 100; i++) {
		it[i] = kmem_cache_alloc(c, GFP_KERNEL);
		CHECK(it[i] && it[i]->magic == 0x5157);
		snprintf(it[i]->key, sizeof(it[i]->key), "key-%d", i);
	}
	CHECK(ctor_calls >= 100);
	for (i = 0; i < 100; i++)
		kmem_cache_free(c, it[i]);

	s = kmalloc(100, GFP_KERNEL);
	CHECK(s && ksize(s) >= 100);
	strcpy(s, "kmalloc");
	s = krealloc(s, 5000, GFP_KERNEL);
	CHECK(s && strcmp(s, "kmalloc") == 0 && ksize(s) >= 5000);
	kfree(s);
	s = kzalloc(64, GFP_KERNEL);
	CHECK(s && s[0] == 0 && s[63] == 0);
	kfree(s);

	rcu_register_thread();
	rcu_read_lock();
	s = kcalloc(4, 16, GFP_KERNEL);
	rcu_read_unlock();
	rcu_unregister_thread();
	CHECK(s != NULL);
	kfree(s);
	{
		struct item *r = kmalloc(sizeof(*r), GFP_KERNEL);

		CHECK(r != NULL);
		kfree_rcu(r, rcu);
		kfree_rcu_barrier();
	}

	pg = alloc_pages(GFP_KERNEL | __GFP_ZERO, 2);
	CHECK(pg != NULL);
	m = page_address(pg);
	CHECK(page_alloc_owns(m) && virt_to_page(m) == pg && m[4 * 4096 - 1] == 0);
	memset(m, 1, 4 * 4096);
	__free_pages(pg, 2);
	addr = __get_free_pages(GFP_KERNEL, 0);
	CHECK(addr != 0);
	free_pages(addr, 0);

	/* malloc is uslab's: its blocks live in the page allocator's range. */
	m = malloc(200);
	CHECK(m && page_alloc_owns(m) && malloc_usable_size(m) >= 200);
	m = realloc(m, 3000);
	CHECK(m && page_alloc_owns(m));
	free(m);

	info = malloc(1 << 16);
	CHECK(info && slabinfo_show(info, 1 << 16) > 0);
	CHECK(strstr(info, "slabinfo - version: 2.1") && strstr(info, "\napp_item "));
	free(info);
	kmem_cache_destroy(c);
	puts("kernel API and malloc: ok");
	return 0;
}
C

(eval "$shared_cmd") >cc.txt 2>&1 || { cat cc.txt; fail "README's shared command failed: $shared_cmd"; }
readelf -d app | grep -q 'NEEDED.*libuslab\.so' || fail "shared app does not need libuslab.so"
readelf -V app | grep -q 'USLAB_0.1' || fail "shared app does not record the USLAB_0.1 symbol version"
res=$(env -u LD_LIBRARY_PATH ./app) || fail "shared app failed: $res"
[ "$res" = "kernel API and malloc: ok" ] || fail "shared app printed '$res'"
env -u LD_LIBRARY_PATH ldd ./app | grep -q "$prefix/lib/libuslab.so" ||
	fail "shared app does not resolve the installed libuslab.so without LD_LIBRARY_PATH"

rm -f app
(eval "$static_cmd") >cc.txt 2>&1 || { cat cc.txt; fail "README's static command failed: $static_cmd"; }
ldd ./app | grep -q libuslab && fail "static app still needs libuslab.so"
res=$(./app) || fail "static app failed: $res"
[ "$res" = "kernel API and malloc: ok" ] || fail "static app printed '$res'"

# A program that calls only the kernel API, linked with libuslab.a (issue
# 20, finding 6): the options are read (a warning for an unknown item,
# stats at exit naming its cache) and malloc is uslab's, as when linked
# shared; the archive member that reads them used to stay out.
cat >kapp.c <<'C'
#include <linux/slab.h>
#include <stdio.h>

int main(void)
{
	struct kmem_cache *c = kmem_cache_create("kapi_only", 100, 0, 0, NULL);
	void *o = c ? kmem_cache_alloc(c, GFP_KERNEL) : NULL;

	if (!o)
		return 1;
	kmem_cache_free(c, o);
	puts("kernel API only: ok");
	return 0;
}
C
kcmd=$(echo "$static_cmd" | sed 's/\bapp\b/kapp/g')
(eval "$kcmd") >cc.txt 2>&1 || { cat cc.txt; fail "kernel-API program, static: $kcmd failed"; }
res=$(USLAB_OPTIONS=stats,no_such_item ./kapp 2>kerr.txt) || fail "static kernel-API app failed: $res"
[ "$res" = "kernel API only: ok" ] || fail "static kernel-API app printed '$res'"
grep -qF "ignoring option 'no_such_item' (unknown option)" kerr.txt ||
	{ head -5 kerr.txt; fail "static kernel-API app ignored USLAB_OPTIONS (no warning for an unknown item)"; }
grep -qE '^kapi_only ' kerr.txt ||
	{ head -5 kerr.txt; fail "static kernel-API app printed no stats at exit (USLAB_OPTIONS=stats)"; }
nm kapp | grep -qE ' T malloc$' || fail "static kernel-API app's malloc is not uslab's"

# The installed CLI finds the installed library (PREFIX/lib, not PREFIX/bin).
"$prefix/bin/uslab" replay "$src/traces/default.ustr" --allocator uslab >replay.txt 2>&1 ||
	{ head -5 replay.txt; fail "installed uslab replay --allocator uslab failed"; }
grep -Eq "^malloc from: $prefix/(bin/\.\./)?lib/libuslab\.so" replay.txt ||
	{ grep '^malloc from' replay.txt; fail "installed replay does not preload $prefix/lib/libuslab.so"; }

# Every command the installed CLI lists has its installed manual page, and
# `uslab help CMD` shows it from the install (share/man/man1 beside bin/).
ncmd=0
for c in "" $("$prefix/bin/uslab" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
	ncmd=$((ncmd + 1))
	page=uslab${c:+-$c}.1
	[ -s "$prefix/share/man/man1/$page" ] || fail "make install did not install $page"
	"$prefix/bin/uslab" help $c >help.txt 2>help.err || fail "installed uslab help $c failed: $(cat help.err)"
	[ ! -s help.err ] || fail "installed uslab help $c: $(cat help.err)"
	grep -q "^NAME" help.txt && grep -q "uslab${c:+-$c} - " help.txt ||
		fail "installed uslab help $c: not its manual page: $(head -3 help.txt)"
done
[ "$ncmd" -ge 12 ] || fail "uslab --help lists $((ncmd - 1)) commands, expected 11 or more"

# One version: pkg-config's is the release `uslab --version` and the
# library's uslab_version() start with (they add the git description).
pcv=$(pkg-config --modversion uslab)
clv=$("$prefix/bin/uslab" --version)
case "$clv" in "uslab $pcv (git "*) ;; *) fail "uslab --version '$clv' is not release $pcv + git" ;; esac
cat > ver.c <<'C'
#include <stdio.h>
#include <uslab/malloc.h>
int main(void) { puts(uslab_version()); return 0; }
C
gcc ver.c $(pkg-config --cflags --libs uslab) -Wl,-rpath,"$prefix/lib" -o ver || fail "uslab_version program"
libv=$(./ver)
# A C++ program on the kernel API links with C names (before, only malloc.h
# said extern "C": kmalloc(unsigned long, unsigned int) was undefined)
cat > kapi.cc <<'C'
#include <cstdio>
#include <linux/slab.h>
#include <uslab/page_alloc.h>
int main()
{
	struct kmem_cache *c = kmem_cache_create("cxx-48", 48, 0, 0, nullptr);
	void *p = kmalloc(100, GFP_KERNEL), *q = c ? kmem_cache_alloc(c, GFP_KERNEL) : nullptr;

	if (!p || !q)
		return 1;
	kfree(p);
	kmem_cache_free(c, q);
	kmem_cache_destroy(c);
	std::puts("cxx ok");
	return 0;
}
C
g++ kapi.cc $(pkg-config --cflags --libs uslab) -Wl,-rpath,"$prefix/lib" -o kapi 2>err.txt ||
	{ head -8 err.txt; fail "a C++ kernel-API program does not build against the install"; }
[ "$(./kapi)" = "cxx ok" ] || fail "the C++ kernel-API program failed"
[ "uslab $libv (trace format ${clv##*(trace format }" = "$clv" ] ||
	fail "library version '$libv' differs from uslab --version '$clv'"

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
cxx_new_only() {
mkdir -p "$prefix/cxx" && cd "$prefix/cxx" || fail "cd $prefix/cxx"
cxx_shared=$(grep -E '^cc -o app app\.c .*# shared$' "$src/README.md")
cxx_static=$(grep -E '^cc -o app app\.c .*# static$' "$src/README.md")
[ -n "$cxx_shared" ] && [ -n "$cxx_static" ] || fail "README: no '# shared' or '# static' cc line"
grep -q 'g++` in place of `cc`' "$src/README.md" || fail "README no longer says g++ in place of cc"
# README: "The headers are C11 and C++11 alike (`g++` in place of `cc` below)."
cxx_shared=$(echo "$cxx_shared" | sed 's/^cc /g++ /; s/ app\.c / app.cc /')
cxx_static=$(echo "$cxx_static" | sed 's/^cc /g++ /; s/ app\.c / app.cc /')

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

cxx_check() {	# check LINE-NAME: ./app built, runs on uslab
	local what=$1 res
	res=$(env -u LD_PRELOAD -u LD_LIBRARY_PATH USLAB_OPTIONS=stats ./app 2>err.txt) ||
		{ head -5 err.txt; fail "$what: the program failed"; }
	[ "$res" = "5000 300" ] || fail "$what: the program printed '$res'"
	grep -qE '^malloc: allocated [0-9]+ KiB' err.txt ||
		{ head -3 err.txt; fail "$what: no uslab statistics at exit under USLAB_OPTIONS=stats: the program ran on another malloc"; }
	grep -qE '^kmalloc-32 +[0-9]+ +[0-9]+' err.txt ||
		fail "$what: uslab's statistics show no kmalloc-32 (the strings' blocks)"
}

(eval "$cxx_shared") >cc.txt 2>&1 || { cat cc.txt; fail "README's shared line, g++: $cxx_shared"; }
readelf -d app | grep -q 'NEEDED.*libuslab\.so' ||
	fail "shared: g++ $(pkg-config --libs uslab) dropped libuslab.so (no NEEDED entry; --as-needed)"
cxx_check "shared"

rm -f app
(eval "$cxx_static") >cc.txt 2>&1 || { cat cc.txt; fail "README's static line, g++: $cxx_static"; }
nm app | grep -qE ' T malloc$' ||
	fail "static: libuslab.a was not linked in (no malloc defined in the program)"
cxx_check "static"

}
(cxx_new_only) || exit 1

echo "install: ok ($nh headers alone, as C and C++; kernel API + malloc program shared and static from README.md; a C++ program with only new/delete on uslab, shared and static; replay; help of $((ncmd - 1)) commands)"
