#!/usr/bin/env bash
# slab_debug at run time (issue 11): USLAB_OPTIONS=slab_debug=FZPU,kmalloc-64
# on a preloaded program whose 50-byte blocks live in kmalloc-64. Each bug
# stops the program with the exact report: the cache, the object the
# program printed, what was overwritten, and (U) the allocating and
# freeing call sites by name (tests/malloc/slabdebug.c). Also: the kernel's
# list syntax, '-', correct programs running clean under full debugging,
# debug caches without magazines, and a bad letter named in a warning.
. "$(dirname "$0")/../lib.sh"
set +e	# every case runs; bad notes a failure
config SLAB_DEBUG || skip "CONFIG_SLAB_DEBUG is off: nothing to test"
prog=$O/tests/malloc/slabdebug
pre() { LD_PRELOAD=$LIBUSLAB "$@"; }
A='site_alloc\+0x[0-9a-f]+/0x[0-9a-f]+ \(slabdebug\)'
F='site_free\+0x[0-9a-f]+/0x[0-9a-f]+ \(slabdebug\)'
TR='age=[0-9]+ms cpu=-?[0-9]+ pid=[0-9]+'

# expect MODE OPTIONS LINE...: SIGABRT, and stderr is exactly these lines
# (extended regexes; OBJ and OBJ+N stand for the printed object's address).
# (tests/malloc/test_malloc_hardened.sh's expect is its one-line form.)
expect() {
	local mode=$1 opts=$2 i=0 line want
	shift 2
	preload_abort "$prog" "$mode" "$opts" || return
	[ "$(wc -l < "$T/err")" -eq $# ] ||
		bad "$mode: $(wc -l < "$T/err") lines, want $#"
	while IFS= read -r line; do
		want=${1:-(no more lines)}
		[ $# -gt 0 ] && shift
		for off in 10 16 50; do
			want=${want//OBJ+$off/0x$(printf '%x' $((0x$obj + off)))}
		done
		want=${want//OBJ/0x$obj}
		echo "$line" | grep -qxE "uslab: $want" || bad "$mode line $((++i)): '$line' !~ '$want'"
	done < "$T/err"
	[ "$failed" -eq 0 ] && echo "ok   $mode"
}

# The reports, each written once: what each bug overwrote or broke, and
# where it came from (U: the call sites by name).
overflow=('Redzone overwritten at OBJ+50 \(cache kmalloc-64, object OBJ\)'
	  'First byte 0x78 instead of 0xcc, at offset 50 of the object')
alloc_site="Allocated in $A $TR"
free_site="Freed in $F $TR"
by_kfree="Found by kfree called from $F"

expect overflow slab_debug=FZPU,kmalloc-64 "${overflow[@]}" "$alloc_site" "$by_kfree"
expect uaf slab_debug=FZPU,kmalloc-64 \
	'Poison overwritten at OBJ+10 \(cache kmalloc-64, object OBJ\)' \
	'First byte 0x01 instead of 0x6b, at offset 10 of the object' \
	"$alloc_site" "$free_site" "Found by an allocation called from $A"
expect double slab_debug=FZPU,kmalloc-64 \
	'kfree\(kmalloc-64\): double free of object OBJ' \
	"$alloc_site" "$free_site" "$by_kfree"
expect interior slab_debug=FZPU,kmalloc-64 \
	'kfree\(kmalloc-64\): invalid pointer OBJ+16 \(not at an object boundary\)' \
	'Pointer is 16 bytes into object OBJ' \
	"$alloc_site" "$by_kfree"
# realloc checks its pointer as free does (issue 20, finding 1), with the
# call sites.
R='site_realloc\+0x[0-9a-f]+/0x[0-9a-f]+ \(slabdebug\)'
expect realloc-freed slab_debug=FZPU,kmalloc-64 \
	'realloc\(kmalloc-64\): invalid pointer OBJ \(object already freed\)' \
	"$alloc_site" "$free_site" "Found by realloc called from $R"
expect realloc-interior slab_debug=FZPU,kmalloc-64 \
	'realloc\(kmalloc-64\): invalid pointer OBJ+16 \(not at an object boundary\)' \
	'Pointer is 16 bytes into object OBJ' \
	"$alloc_site" "Found by realloc called from $R"
# The kernel's block syntax with a prefix; the per-cache form; Z alone
# reports without call sites.
expect overflow 'slab_debug=P;FZU,kmalloc-*' "${overflow[@]}" "$alloc_site" "$by_kfree"
expect overflow slab_debug.kmalloc-64=Z "${overflow[@]}"

# Without the option (or with kmalloc-64 switched off) the overflow goes
# unnoticed: the checks are the option's. A CONFIG_SLAB_DEBUG_ON build
# debugs every cache from the start (as the kernel's SLUB_DEBUG_ON): there
# the option-less run catches it.
debug_on=false
config SLAB_DEBUG_ON && debug_on=true
for opts in "" "slab_debug=FZPU;-,kmalloc-64"; do
	USLAB_OPTIONS=$opts pre "$prog" overflow >"$T/out" 2>"$T/err"
	if $debug_on && [ -z "$opts" ]; then
		grep -qx survived "$T/out" && bad "CONFIG_SLAB_DEBUG_ON: overflow unnoticed without options"
	else
		grep -qx survived "$T/out" || { bad "overflow caught with '$opts'"; cat "$T/err"; }
	fi
done

# Correct programs run clean under full debugging of every cache, and the
# list ends where the next option begins (stats): debug caches show no
# magazines (tunables 0 0 0).
USLAB_OPTIONS=slab_debug pre "$prog" clean 2>"$T/err" || { bad "clean under slab_debug"; cat "$T/err"; }
USLAB_OPTIONS=slab_debug=FZPU,kmalloc-64,kmalloc-1k,stats pre "$prog" clean 2>"$T/err" ||
	{ bad "clean under slab_debug=FZPU,kmalloc-64,kmalloc-1k"; cat "$T/err"; }
grep -qE '^kmalloc-64 .*: tunables +0 +0 +0 ' "$T/err" || bad "kmalloc-64 keeps magazines"
grep -qE '^kmalloc-1k .*: tunables +0 +0 +0 ' "$T/err" || bad "kmalloc-1k keeps magazines"
# (a list names the caches the flags add to; the build's debug-on default
# stays on the others, as the kernel's slub_debug= on SLUB_DEBUG_ON)
$debug_on || grep -qE '^kmalloc-128 .*: tunables +[1-9]' "$T/err" || bad "kmalloc-128 lost its magazines"
grep -q 'ignoring option' "$T/err" && { bad "good slab_debug warned:"; grep 'ignoring' "$T/err"; }
# Red zones without poisoning (issue 20, finding 2): kmalloc-8's free-list
# link used to sit in its red zone ("Redzone overwritten" on a correct
# program).
for f in Z FZ ZU; do
	USLAB_OPTIONS=slab_debug=$f pre "$prog" clean 2>"$T/err" ||
		{ bad "clean under slab_debug=$f"; cat "$T/err"; }
done
python3 -c 'import sys' 2>/dev/null && {
	USLAB_OPTIONS=slab_debug=FZPU pre /usr/bin/python3 -c 'print(sum(len(str(i)) for i in range(100000)))' \
		>"$T/out" 2>"$T/err" && grep -qx 488890 "$T/out" ||
		{ bad "python3 under slab_debug=FZPU"; cat "$T/err"; }
}
# A bad letter names the option; its default (no debugging, or the
# build's debug-on) stands.
USLAB_OPTIONS=slab_debug=FQ,kmalloc-64 pre "$prog" overflow >"$T/out" 2>"$T/err"
grep -qF "ignoring option 'slab_debug=FQ,kmalloc-64' (malformed value)" "$T/err" ||
	{ bad "slab_debug=FQ not named"; cat "$T/err"; }
if $debug_on; then
	grep -qx survived "$T/out" && bad "slab_debug=FQ turned the build's debugging off"
else
	grep -qx survived "$T/out" || bad "slab_debug=FQ applied anyway"
fi
[ "$failed" -eq 0 ] && echo "slab_debug: ok"
exit $failed
