#!/usr/bin/env bash
# Layers only look down (shared/DESIGN.md): scripts/check-layers.sh passes on
# the tree, and fails on a small tree made to break each of its rules (an
# upward include, an upward call seen only by nm, a recorder that calls the
# trace library's objects), so a checker that lets everything through fails.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O=$src/$O ;; esac
cd "$src" && O=$O bash scripts/check-layers.sh || exit 1

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mk() {	# mk FILE TEXT: a source file of the synthetic tree
	mkdir -p "$T/$(dirname "$1")" && printf '%s\n' "$2" > "$T/$1"
}
obj() {	# obj FILE.c: compile it into $T/build/
	mkdir -p "$T/build/$(dirname "$1")" &&
		gcc -c -o "$T/build/${1%.c}.o" "$T/$1" || fail "cannot compile $1"
}
check() {	# check WANT: run the checker on the synthetic tree
	(cd "$T" && O=build bash "$src/scripts/check-layers.sh") > "$T/out" 2>&1
}

mk slab/slab_api.c 'int slab_stat(void) { return 1; }'
mk trace/reader.c 'int trace_read_one(void) { return 0; }'
mk sim/engine.c 'int trace_read_one(void); int run(void) { return trace_read_one(); }'
for f in slab/slab_api.c trace/reader.c sim/engine.c; do obj "$f"; done
check || { cat "$T/out"; fail "a tree that looks down is refused"; }

# A call upward that no include shows: only nm sees it.
mk trace/upcall.c 'int slab_stat(void); int trace_peek(void) { return slab_stat(); }'
obj trace/upcall.c
check && fail "trace/ calling slab/ passed"
grep -q 'trace/upcall.o calls slab_stat, defined in slab/slab_api.o' "$T/out" ||
	{ cat "$T/out"; fail "the upward call is not named"; }
rm "$T/build/trace/upcall.o" "$T/trace/upcall.c"

# An upward include.
mk page_alloc/zone.c '#include "slab/slab.h"'
check && fail "page_alloc/ including slab/ passed"
grep -q 'page_alloc/zone.c includes slab/slab.h' "$T/out" || { cat "$T/out"; fail "include not named"; }
rm "$T/page_alloc/zone.c"

# The preloaded recorder links libc only: not even trace/'s objects.
mk tools/record/preload.c 'int trace_read_one(void); int rec(void) { return trace_read_one(); }'
obj tools/record/preload.c
check && fail "tools/record/ calling trace/ objects passed"
grep -q 'tools/record/preload.o calls trace_read_one' "$T/out" || { cat "$T/out"; fail "recorder call not named"; }
echo "check-layers: passes the tree, refuses upward includes and calls"
