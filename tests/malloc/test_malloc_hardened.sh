#!/usr/bin/env bash
# Hardened frees in the default build (issue 11, finding 3): a double free
# and a free inside a block stop with one line naming the cache and the
# object, then abort, before any block is handed out twice; a free of a
# pointer uslab did not hand out stays ignored (preloaded libuslab.so).
. "$(dirname "$0")/../lib.sh"
set +e	# every case runs; bad notes a failure
config SLAB_FREE_HARDENED || skip "CONFIG_SLAB_FREE_HARDENED is off: nothing to test"
misuse=$O/tests/malloc/misuse

# expect MODE WHAT: SIGABRT, and stderr is exactly one line, the report on
# the object the program printed. (tests/slab/test_slab_debug.sh's expect
# is its multi-line form, with slab_debug's call sites.)
expect() {
	local mode=$1 what=$2 cache=${3:-kmalloc-[0-9]+}
	preload_abort "$misuse" "$mode" || return
	[ "$(wc -l < "$T/err")" -eq 1 ] || bad "$mode: not one line"
	if grep -qxE "uslab: (kfree|kmem_cache_free)\($cache\): $what" \
		"$T/err" && grep -q "0x$obj\b" "$T/err"; then
		echo "ok   $mode: $(cat "$T/err")"
	else
		bad "$mode: report (object 0x$obj):"; cat "$T/err"
	fi
}
expect double-next "double free of object 0x[0-9a-f]+"
expect double-late "double free of object 0x[0-9a-f]+"
expect interior "invalid pointer 0x[0-9a-f]+ \(not at an object boundary\)"
# blocks of the page allocator (above the kmalloc caches) alike
expect double-large "double free of block 0x[0-9a-f]+ \(no block is allocated there\)" kmalloc-large
expect interior-large "invalid pointer 0x[0-9a-f]+ \(inside a block\)" kmalloc-large

LD_PRELOAD=$LIBUSLAB "$misuse" foreign >"$T/out" 2>"$T/err"
st=$?
if [ "$st" -eq 0 ] && [ ! -s "$T/err" ] && grep -q "done foreign" "$T/out"; then
	echo "ok   foreign pointers ignored"
else
	bad "foreign: status $st"; cat "$T/err"
fi
exit $failed
