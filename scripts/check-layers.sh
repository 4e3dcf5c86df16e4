#!/usr/bin/env bash
# Layers only look down (shared/DESIGN.md). Two checks:
#  1. includes: no file includes a header of a layer above its own;
#  2. calls: no object of a layer has an undefined symbol that an object of a
#     layer above defines (nm over $O/<folder>/**/*.o, when they are built).
#  3. internal headers: DIR/internal.h is DIR's own: only files under DIR/
#     include it (tests/ and fuzz/ are white-box and may; docs/layout.md).
# Extra rules: trace/ and tools/record/ know nothing of the allocator (no
# call into page_alloc, percpu, slab, malloc or sim; the preloaded recorder,
# tools/record/preload.c, links libc only). Symbols the C library defines (malloc, free, exec* that malloc/ and
# the recorder interpose) are libc's, not the layer's.
# Order, bottom to top: lib trace page_alloc percpu slab malloc sim tools.
set -u
export LC_ALL=C
O=${O:-build}
rank() {
	case "$1" in
	lib) echo 0 ;; trace) echo 1 ;; page_alloc) echo 2 ;; percpu) echo 3 ;;
	slab) echo 4 ;; malloc) echo 5 ;; sim) echo 6 ;; tools|examples) echo 7 ;;
	*) echo -1 ;;
	esac
}
# Public headers belong to a layer too.
hdr_layer() {
	case "$1" in
	uslab/page_alloc.h|uslab/mm_types.h|uslab/gfp.h) echo page_alloc ;;
	uslab/percpu.h) echo percpu ;;
	uslab/slab.h|uslab/tunables.h|uslab/kernel/*) echo slab ;;
	uslab/malloc.h) echo malloc ;;
	uslab/trace.h) echo trace ;;
	uslab/sim.h) echo sim ;;
	*) echo "" ;;
	esac
}
# The layer a path belongs to. The preloaded recorder (preload.c and got.c,
# libuslab-record.so) is its own: it may
# include trace/'s header-only encoders but links libc only.
layer_of() {
	case "$1" in
	tools/record/preload*|tools/record/got*|tools/record/record.h) echo record ;;
	*) echo "${1%%/*}" ;;
	esac
}
# May @1 (a layer) use @2 (a layer)?
allowed() {
	local me=$1 it=$2
	[ "$me" = "$it" ] && return 0
	case "$me" in
	record) [ "$it" = lib ] || [ "$it" = trace ]; return ;;
	trace) [ "$it" = lib ]; return ;;
	esac
	[ "$it" = record ] && it=tools
	[ "$me" = record ] && me=tools
	local a b
	a=$(rank "$me"); b=$(rank "$it")
	[ "$a" -ge 0 ] && [ "$b" -ge 0 ] || return 0
	[ "$b" -le "$a" ]
}
layers="lib trace page_alloc percpu slab malloc sim tools examples"
# An object whose source is gone (a stale build) does not count.
has_source() {
	local base=${1%.o}
	base=${base%.pic}
	[ -e "$base.c" ] || [ -e "$base.S" ]
}
bad=0

# 1. Includes.
for dir in $layers; do
	[ -d "$dir" ] || continue
	while IFS=: read -r file inc; do
		me=$(layer_of "$file")
		target=$(echo "$inc" | sed -E 's/.*#include *[<"]([^">]+)[">].*/\1/')
		case "$target" in
		uslab/*) it=$(hdr_layer "$target") ;;
		*/*) it=$(layer_of "$target") ;;
		*) continue ;;
		esac
		[ -n "$it" ] || continue
		[ "$it" = record ] || [ "$(rank "$it")" -ge 0 ] || continue
		if ! allowed "$me" "$it"; then
			echo "layer violation: $file includes $target ($me may not use $it)"
			bad=1
		fi
	done < <(find "$dir" -name '*.[chS]' -exec grep -H '^#include' {} + 2>/dev/null)
done
# 3. Internal headers: DIR/internal.h is included by files under DIR/ only;
# another folder uses DIR's interface header (trace/trace.h, sim/sim.h).
# tests/ and fuzz/ are white-box: they may include any folder's.
for dir in */; do
	dir=${dir%/}
	case "$dir" in tests|fuzz|"${O##*/}"|build|build-*) continue ;; esac
	while IFS=: read -r file inc; do
		target=$(echo "$inc" | sed -E 's/.*#include *[<"]([^">]+)[">].*/\1/')
		case "$target" in */internal.h) ;; *) continue ;; esac
		owner=${target%/internal.h}
		case "$file" in "$owner"/*) continue ;; esac
		echo "internal header: $file includes $target (only $owner/ and the white-box tests/, fuzz/ may)"
		bad=1
	done < <(find "$dir" -name '*.[chS]' -exec grep -H '^#include' {} + 2>/dev/null)
done
# 2. Calls: who defines each global symbol, then who needs it.
if [ -d "$O" ]; then
	defs=$(mktemp); libc=$(mktemp)
	trap 'rm -f "$defs" "$libc"' EXIT
	libc_so=$(gcc -print-file-name=libc.so.6)
	nm -D --defined-only "$libc_so" 2>/dev/null | awk '{ sub(/@.*/, "", $3); print $3 }' |
		sort -u > "$libc"
	for dir in $layers; do
		[ -d "$O/$dir" ] || continue
		find "$O/$dir" -name '*.o' | while read -r o; do
			src=${o#"$O"/}
			has_source "$src" || continue
			nm -g --defined-only "$o" 2>/dev/null |
				awk -v l="$(layer_of "$src")" -v f="$src" 'NF == 3 { print $3, l, f }'
		done
	done | sort -u -k1,1 | join -v1 - "$libc" > "$defs"
	nobj=0
	for dir in $layers; do
		[ -d "$O/$dir" ] || continue
		while read -r o; do
			src=${o#"$O"/}
			has_source "$src" || continue
			me=$(layer_of "$src")
			nobj=$((nobj + 1))
			while read -r sym it def; do
				if [ "$me" = record ] && [ "$it" != record ] || ! allowed "$me" "$it"; then
					echo "layer violation: $src calls $sym, defined in $def ($me may not use $it)"
					bad=1
				fi
			done < <(nm -u "$o" 2>/dev/null | awk '{ print $NF }' | sort -u |
				 join - "$defs")
		done < <(find "$O/$dir" -name '*.o')
	done
	[ $bad -eq 0 ] && echo "check-layers: $nobj objects call only their own layer or those below"
else
	echo "check-layers: $O/ not built, calls not checked (run make first)"
fi
[ $bad -eq 0 ] && echo "check-layers: every include looks down, no folder includes another's internal.h"
exit $bad
