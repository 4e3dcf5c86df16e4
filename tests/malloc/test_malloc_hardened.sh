#!/usr/bin/env bash
# Hardened frees in the default build (issue 11, finding 3): a double free
# and a free inside a block stop with one line naming the cache and the
# object, then abort, before any block is handed out twice; a free of a
# pointer uslab did not hand out stays ignored (preloaded libuslab.so).
set -u
O=${O:-build}
misuse=$O/tests/malloc/misuse
lib=$PWD/$O/libuslab.so
if ! grep -q '^CONFIG_SLAB_FREE_HARDENED=y' "$O/auto.conf"; then
	echo "CONFIG_SLAB_FREE_HARDENED is off: nothing to test"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }

# expect MODE WHAT: SIGABRT, and stderr is exactly one line, the report on
# the object the program printed.
expect() {
	local mode=$1 what=$2 st obj
	LD_PRELOAD=$lib "$misuse" "$mode" >"$work/out" 2>"$work/err"
	st=$?
	obj=$(sed -n 's/^object 0x\([0-9a-f]*\)$/\1/p' "$work/out")
	[ "$st" -eq 134 ] || bad "$mode: exit status $st, not SIGABRT"
	[ "$(wc -l < "$work/err")" -eq 1 ] || bad "$mode: not one line"
	if grep -qxE "uslab: (kfree|kmem_cache_free)\(kmalloc-[0-9]+\): $what" \
		"$work/err" && grep -q "0x$obj\b" "$work/err" && [ -n "$obj" ]; then
		echo "ok   $mode: $(cat "$work/err")"
	else
		bad "$mode: report (object 0x$obj):"; cat "$work/err"
	fi
}
expect double-next "double free of object 0x[0-9a-f]+"
expect double-late "double free of object 0x[0-9a-f]+"
expect interior "invalid pointer 0x[0-9a-f]+ \(not at an object boundary\)"

LD_PRELOAD=$lib "$misuse" foreign >"$work/out" 2>"$work/err"
st=$?
if [ "$st" -eq 0 ] && [ ! -s "$work/err" ] && grep -q "done foreign" "$work/out"; then
	echo "ok   foreign pointers ignored"
else
	bad "foreign: status $st"; cat "$work/err"
fi
exit $fail
