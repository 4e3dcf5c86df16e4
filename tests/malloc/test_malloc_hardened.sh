#!/usr/bin/env bash
# Hardened frees in the default build (issue 11, finding 3): a double free
# and a free inside a block stop with one line naming the cache and the
# object, then abort, before any block is handed out twice; a free of a
# pointer uslab did not hand out stays ignored (preloaded libuslab.so).
# realloc and malloc_usable_size check their pointer as free does.
. "$(dirname "$0")/../lib.sh"
set +e	# every case runs; bad notes a failure
config SLAB_FREE_HARDENED || skip "CONFIG_SLAB_FREE_HARDENED is off: nothing to test"
misuse=$O/tests/malloc/misuse

# expect MODE WHAT: SIGABRT, and stderr is exactly one line, the report on
# the object the program printed. (tests/slab/test_slab_debug.sh's expect
# is its multi-line form, with slab_debug's call sites.)
expect() {
	local mode=$1 what=$2 cache=${3:-kmalloc-[0-9]+} by=${4:-kfree|kmem_cache_free}
	preload_abort "$misuse" "$mode" || return
	[ "$(wc -l < "$T/err")" -eq 1 ] || bad "$mode: not one line"
	if grep -qxE "uslab: ($by)\($cache\): $what" \
		"$T/err" && grep -q "0x$obj\b" "$T/err"; then
		echo "ok   $mode: $(cat "$T/err")"
	else
		bad "$mode: report (object 0x$obj):"; cat "$T/err"
	fi
}
expect double-next "double free of object 0x[0-9a-f]+"
expect double-late "double free of object 0x[0-9a-f]+"
# a write into a freed block's first word reads as a double free does
# (its free mark gone): the line names both causes and the word found
expect write-freed "double free of object 0x[0-9a-f]+, or a write into it after its free \(its free mark reads 0x746972777265766f\)"
expect interior "invalid pointer 0x[0-9a-f]+ \(not at an object boundary\)"
# classes above 1 KiB keep the mark outside the block (page_alloc's
# shadow): the same reports
for size in 4096 20480; do
	export MISUSE_SIZE=$size
	cache=kmalloc-$((size / 1024))k
	expect double-next "double free of object 0x[0-9a-f]+" $cache
	expect double-late "double free of object 0x[0-9a-f]+" $cache
	expect interior "invalid pointer 0x[0-9a-f]+ \(not at an object boundary\)" $cache
	expect usable-freed "invalid pointer 0x[0-9a-f]+ \(object already freed\)" \
		$cache malloc_usable_size
	expect realloc-freed "invalid pointer 0x[0-9a-f]+ \(object already freed\)" \
		$cache realloc
done
unset MISUSE_SIZE
# blocks of the page allocator (above the kmalloc caches) alike
expect double-large "double free of block 0x[0-9a-f]+ \(no block is allocated there\)" kmalloc-large
expect interior-large "invalid pointer 0x[0-9a-f]+ \(inside a block\)" kmalloc-large

# realloc and malloc_usable_size make the same checks (issue 20, finding
# 1): a freed block is not kept or handed out twice, a pointer inside a
# block is not copied from (an 8 MiB block's interior was copied 4 MiB
# past its end).
expect realloc-freed "invalid pointer 0x[0-9a-f]+ \(object already freed\)" \
	kmalloc-32 realloc
expect usable-freed "invalid pointer 0x[0-9a-f]+ \(object already freed\)" \
	kmalloc-32 malloc_usable_size
expect realloc-interior "invalid pointer 0x[0-9a-f]+ \(not at an object boundary\)" \
	kmalloc-32 realloc
expect realloc-freed-large "invalid pointer 0x[0-9a-f]+ \(no block is allocated there\)" \
	kmalloc-large realloc
expect realloc-interior-large "invalid pointer 0x[0-9a-f]+ \(inside a block\)" \
	kmalloc-large realloc
expect usable-interior-large "invalid pointer 0x[0-9a-f]+ \(inside a block\)" \
	kmalloc-large malloc_usable_size
LD_PRELOAD=$LIBUSLAB "$misuse" realloc-good >"$T/out" 2>"$T/err"
st=$?
if [ "$st" -eq 0 ] && [ ! -s "$T/err" ] && grep -q "done realloc-good" "$T/out"; then
	echo "ok   correct reallocs pass the checks"
else
	bad "realloc-good: status $st"; cat "$T/err"
fi

LD_PRELOAD=$LIBUSLAB "$misuse" foreign >"$T/out" 2>"$T/err"
st=$?
if [ "$st" -eq 0 ] && [ ! -s "$T/err" ] && grep -q "done foreign" "$T/out"; then
	echo "ok   foreign pointers ignored"
else
	bad "foreign: status $st"; cat "$T/err"
fi
exit $failed
