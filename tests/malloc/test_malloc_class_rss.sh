#!/usr/bin/env bash
# The first object of a size class costs few written heap pages. Each
# kmalloc cache's per-CPU block (percpu/magazine.c, pcp_cache_create)
# holds the cache, its hdr[] array (64 bytes per CPU id: 16 KiB for 256
# ids), its depot and slow[]; the depot and slow[] lay after hdr[], so
# creating a cache wrote a second page of it (the depot's mutex, then the
# CPU's slow[] entry): 4 KiB of RSS per class a program uses (espresso's
# heap at its peak 420 -> 364 KiB, sh6bench's 1496 -> 1412). Now they lie
# before the cache, on its first page (docs/page_alloc.md, "Fixed cost of
# a small program").
#
# tests/malloc/classrss allocates and writes one object in each of 12
# classes (8 .. 1024 bytes) after a first one, and counts the pages its
# heap mapping has written before and after (/proc/self/pagemap). Pinned
# to CPU 0, whose header lies on the cache's first page: at most 3 pages
# per class (the class's slab page, its magazine's, its block's; on main
# 41 pages for the 12, now 32).
. "$(dirname "$0")/../lib.sh"
prog=$O/tests/malloc/classrss
[ -x "$prog" ] || fail "$prog not built"
[ -f "$LIBUSLAB" ] || fail "$LIBUSLAB not built"
need_magazines "count the per-CPU blocks of caches"
# Past about 360 CPU ids the depot and slow[] no longer fit before the
# cache in its first page and lie after hdr[] as before (percpu/magazine.c,
# pcp_cache_head_first()).
[ "$(getconf _NPROCESSORS_CONF)" -le 300 ] ||
	skip "$(getconf _NPROCESSORS_CONF) CPUs: the blocks keep their depot after hdr[]"
unset USLAB_OPTIONS
out=$(taskset -c 0 env LD_PRELOAD="$LIBUSLAB" "$prog") || fail "classrss failed under libuslab.so: $out"
classes=$(echo "$out" | sed -n 's/.*classes=\([0-9]*\).*/\1/p')
more=$(echo "$out" | sed -n 's/.*more=\([0-9]*\).*/\1/p')
[ -n "$classes" ] && [ -n "$more" ] || fail "classrss said: $out"
# Without the library the same program writes (nearly) nothing new: the
# count is of the allocator's pages, not the program's.
glibc=$(taskset -c 0 "$prog" | sed -n 's/.*more=\([0-9]*\).*/\1/p')
[ "${glibc:-99}" -le 2 ] || fail "classrss on glibc wrote $glibc pages for $classes objects: the count is not the allocator's"
[ "$more" -le $((3 * classes)) ] ||
	fail "$more heap pages written for the first objects of $classes classes, over 3 per class ($out)"
echo "first objects of $classes classes: $more heap pages written (glibc: $glibc)"
