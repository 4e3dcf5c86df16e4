#!/usr/bin/env bash
# slab/settings.c is a leaf of slab/ (issue 21, item 5): it parses, keeps
# and resolves settings and calls no function of another slab/ file (it
# reads kmalloc's name table, data). Before, it called kmalloc.c to re-make
# caches, which called it back (a circle). nm over the built objects.
. "$(dirname "$0")/../lib.sh"
set +e
[ -f "$O/slab/settings.o" ] || skip "slab/settings.o not built"
nm -u "$O/slab/settings.o" | awk '{ print $2 }' | sort -u > "$T/undef"
for o in "$O"/slab/*.o; do
	[ "$o" = "$O/slab/settings.o" ] && continue
	nm --defined-only "$o" | awk '$2 ~ /^[Tt]$/ { print $3 }' | sort -u |
		comm -12 - "$T/undef" | sed "s|^|$(basename "$o"): |"
done > "$T/calls"
[ -s "$T/calls" ] && fail "slab/settings.o calls other slab/ files: $(tr '\n' ' ' < "$T/calls")"
echo "slab/settings.o calls no other slab/ file"
exit 0
