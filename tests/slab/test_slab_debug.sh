#!/usr/bin/env bash
# slab_debug at run time (issue 11): USLAB_OPTIONS=slab_debug=FZPU,kmalloc-64
# on a preloaded program whose 50-byte blocks live in kmalloc-64. Each bug
# stops the program with the exact report: the cache, the object the
# program printed, what was overwritten, and (U) the allocating and
# freeing call sites by name (tests/malloc/slabdebug.c). Also: the kernel's
# list syntax, '-', correct programs running clean under full debugging,
# debug caches without magazines, and a bad letter named in a warning.
set -u
O=${O:-build}
prog=$O/tests/malloc/slabdebug
lib=$PWD/$O/libuslab.so
if ! grep -q '^CONFIG_SLAB_DEBUG=y' "$O/auto.conf"; then
	echo "CONFIG_SLAB_DEBUG is off: nothing to test"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
pre() { LD_PRELOAD=$lib "$@"; }
A='site_alloc\+0x[0-9a-f]+/0x[0-9a-f]+ \(slabdebug\)'
F='site_free\+0x[0-9a-f]+/0x[0-9a-f]+ \(slabdebug\)'
TR='age=[0-9]+ms cpu=-?[0-9]+ pid=[0-9]+'

# expect MODE OPTIONS LINE...: SIGABRT, and stderr is exactly these lines
# (extended regexes; OBJ and OBJ+N stand for the printed object's address).
expect() {
	local mode=$1 opts=$2 st obj i=0 line want
	shift 2
	USLAB_OPTIONS=$opts LD_PRELOAD=$lib "$prog" "$mode" >"$work/out" 2>"$work/err"
	st=$?
	obj=$(sed -n 's/^object 0x\([0-9a-f]*\)$/\1/p' "$work/out")
	[ -n "$obj" ] || { bad "$mode: no object printed"; return; }
	[ "$st" -eq 134 ] || bad "$mode: exit status $st, not SIGABRT"
	[ "$(wc -l < "$work/err")" -eq $# ] ||
		bad "$mode: $(wc -l < "$work/err") lines, want $#"
	while IFS= read -r line; do
		want=${1:-(no more lines)}
		[ $# -gt 0 ] && shift
		for off in 10 16 50; do
			want=${want//OBJ+$off/0x$(printf '%x' $((0x$obj + off)))}
		done
		want=${want//OBJ/0x$obj}
		echo "$line" | grep -qxE "uslab: $want" || bad "$mode line $((++i)): '$line' !~ '$want'"
	done < "$work/err"
	[ "$fail" -eq 0 ] && echo "ok   $mode"
}

expect overflow slab_debug=FZPU,kmalloc-64 \
	'Redzone overwritten at OBJ+50 \(cache kmalloc-64, object OBJ\)' \
	'First byte 0x78 instead of 0xcc, at offset 50 of the object' \
	"Allocated in $A $TR" \
	"Found by kfree called from $F"
expect uaf slab_debug=FZPU,kmalloc-64 \
	'Poison overwritten at OBJ+10 \(cache kmalloc-64, object OBJ\)' \
	'First byte 0x01 instead of 0x6b, at offset 10 of the object' \
	"Allocated in $A $TR" \
	"Freed in $F $TR" \
	"Found by an allocation called from $A"
expect double slab_debug=FZPU,kmalloc-64 \
	'kfree\(kmalloc-64\): double free of object OBJ' \
	"Allocated in $A $TR" \
	"Freed in $F $TR" \
	"Found by kfree called from $F"
expect interior slab_debug=FZPU,kmalloc-64 \
	'kfree\(kmalloc-64\): invalid pointer OBJ+16 \(not at an object boundary\)' \
	'Pointer is 16 bytes into object OBJ' \
	"Allocated in $A $TR" \
	"Found by kfree called from $F"
# The kernel's block syntax with a prefix; the per-cache form; Z alone
# reports without call sites.
expect overflow 'slab_debug=P;FZU,kmalloc-*' \
	'Redzone overwritten at OBJ+50 \(cache kmalloc-64, object OBJ\)' \
	'First byte 0x78 instead of 0xcc, at offset 50 of the object' \
	"Allocated in $A $TR" \
	"Found by kfree called from $F"
expect overflow slab_debug.kmalloc-64=Z \
	'Redzone overwritten at OBJ+50 \(cache kmalloc-64, object OBJ\)' \
	'First byte 0x78 instead of 0xcc, at offset 50 of the object'

# Without the option (or with kmalloc-64 switched off) the overflow goes
# unnoticed: the checks are the option's.
for opts in "" "slab_debug=FZPU;-,kmalloc-64"; do
	USLAB_OPTIONS=$opts pre "$prog" overflow >"$work/out" 2>"$work/err"
	grep -qx survived "$work/out" || { bad "overflow caught with '$opts'"; cat "$work/err"; }
done

# Correct programs run clean under full debugging of every cache, and the
# list ends where the next option begins (stats): debug caches show no
# magazines (tunables 0 0 0).
USLAB_OPTIONS=slab_debug pre "$prog" clean 2>"$work/err" || { bad "clean under slab_debug"; cat "$work/err"; }
USLAB_OPTIONS=slab_debug=FZPU,kmalloc-64,kmalloc-1k,stats pre "$prog" clean 2>"$work/err" ||
	{ bad "clean under slab_debug=FZPU,kmalloc-64,kmalloc-1k"; cat "$work/err"; }
grep -qE '^kmalloc-64 .*: tunables +0 +0 +0 ' "$work/err" || bad "kmalloc-64 keeps magazines"
grep -qE '^kmalloc-1k .*: tunables +0 +0 +0 ' "$work/err" || bad "kmalloc-1k keeps magazines"
grep -qE '^kmalloc-128 .*: tunables +[1-9]' "$work/err" || bad "kmalloc-128 lost its magazines"
grep -q 'ignoring option' "$work/err" && { bad "good slab_debug warned:"; grep 'ignoring' "$work/err"; }
python3 -c 'import sys' 2>/dev/null && {
	USLAB_OPTIONS=slab_debug=FZPU pre /usr/bin/python3 -c 'print(sum(len(str(i)) for i in range(100000)))' \
		>"$work/out" 2>"$work/err" && grep -qx 488890 "$work/out" ||
		{ bad "python3 under slab_debug=FZPU"; cat "$work/err"; }
}
# A bad letter names the option; its default (no debugging) stands.
USLAB_OPTIONS=slab_debug=FQ,kmalloc-64 pre "$prog" overflow >"$work/out" 2>"$work/err"
grep -qF "ignoring option 'slab_debug=FQ,kmalloc-64' (malformed value)" "$work/err" ||
	{ bad "slab_debug=FQ not named"; cat "$work/err"; }
grep -qx survived "$work/out" || bad "slab_debug=FQ applied anyway"
[ "$fail" -eq 0 ] && echo "slab_debug: ok"
exit $fail
