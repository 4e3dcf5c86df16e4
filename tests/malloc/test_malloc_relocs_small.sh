#!/usr/bin/env bash
# The library's dynamic relocations stay small. ld.so reads them at every
# load, and they lie in the first, file-backed segment, resident in every
# process: the kmalloc tables' 2,050 pointers to the bypass cache (slab/
# kmalloc.c) were 2,050 RELA entries of 24 bytes, 49 KiB of the 72 KiB
# segment (rss_tax: libuslab.so's own RSS 224 -> 176 KiB packed as RELR).
. "$(dirname "$0")/../lib.sh"
[ -f "$LIBUSLAB" ] || fail "$LIBUSLAB not built"
limit=$((16 * 1024))
size=0
for sec in .rela.dyn .relr.dyn; do
	hex=$(readelf -S -W "$LIBUSLAB" | awk -v s="$sec" '$0 ~ "\\] " s " " { sub(/.*\] /, ""); print $5 }')
	[ -n "$hex" ] && size=$((size + 16#$hex))
done
[ "$size" -gt 0 ] || fail "no .rela.dyn nor .relr.dyn section in $LIBUSLAB"
if [ "$size" -gt "$limit" ]; then
	n=$(readelf -r -W "$LIBUSLAB" | grep -c R_X86_64_RELATIVE)
	fail "relocations take $size bytes, over $limit ($n R_X86_64_RELATIVE entries)"
fi
echo "relocations of libuslab.so: $size bytes (at most $limit)"
