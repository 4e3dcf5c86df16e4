#!/usr/bin/env bash
# Layers only look down (shared/DESIGN.md). Fails on an upward include.
# Order, bottom to top: lib trace page_alloc percpu slab malloc sim tools.
set -u
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
	uslab/slab.h|uslab/kernel/*) echo slab ;;
	uslab/malloc.h) echo malloc ;;
	uslab/trace.h) echo trace ;;
	uslab/sim.h) echo sim ;;
	*) echo "" ;;
	esac
}
bad=0
for dir in lib trace page_alloc percpu slab malloc sim tools examples; do
	[ -d "$dir" ] || continue
	me=$(rank "$dir")
	while IFS=: read -r file inc; do
		target=$(echo "$inc" | sed -E 's/.*#include *[<"]([^">]+)[">].*/\1/')
		case "$target" in
		uslab/*) layer=$(hdr_layer "$target") ;;
		*/*) layer=${target%%/*} ;;
		*) continue ;;
		esac
		[ -n "$layer" ] || continue
		r=$(rank "$layer")
		[ "$r" -ge 0 ] || continue
		if [ "$r" -gt "$me" ]; then
			echo "layer violation: $file includes $target ($layer is above $dir)"
			bad=1
		fi
	done < <(find "$dir" -name '*.[chS]' -exec grep -H '^#include' {} + 2>/dev/null)
done
[ $bad -eq 0 ] && echo "check-layers: every include looks down"
exit $bad
