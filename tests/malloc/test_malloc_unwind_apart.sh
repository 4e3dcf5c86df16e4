#!/usr/bin/env bash
# libuslab.so's unwind tables (.eh_frame_hdr, .eh_frame: 26 KiB) stay out
# of memory in a program that allocates, and a backtrace taken inside the
# library still finds them. They shared one read-only segment with
# .rodata (11 KiB), and the kernel maps a file's pages 64 KiB around a
# read fault within the mapping (fault-around), so malloc's first read of
# .rodata made all 36 KiB resident in every process, though only a
# backtrace or an exception walking through the library reads them. The
# link now ends .rodata's segment at a zero-fill gap (malloc/unwind-gap.S,
# malloc/libuslab-unwind.lds): the tables are a mapping of their own
# (docs/page_alloc.md, "Fixed cost of a small program").
#
# tests/malloc/unwind (preloaded) allocates blocks of many sizes, prints
# the resident KiB of the mapping holding the tables, then takes a
# backtrace in a kmem_cache constructor (called from inside the library)
# and says whether it walked through libuslab.so's frames out to main().
. "$(dirname "$0")/../lib.sh"
[ -f "$LIBUSLAB" ] || fail "$LIBUSLAB not built"
prog=$O/tests/malloc/unwind
[ -x "$prog" ] || fail "$prog not built"
if config DEBUG_SANITIZE; then
	skip "a sanitizer build's library is laid out by the sanitizer's runtime too"
fi

for i in 1 2; do
	out=$(env LD_PRELOAD="$LIBUSLAB" "$prog") || fail "unwind failed under libuslab.so: $out"
	unwind_rss=$(echo "$out" | sed -n 's/.*unwind_rss=\(-\?[0-9]*\).*/\1/p')
	in_uslab=$(echo "$out" | sed -n 's/.*frames_in_uslab=\([0-9]*\).*/\1/p')
	reached=$(echo "$out" | sed -n 's/.*reached_main=\([0-9]*\).*/\1/p')
	[ -n "$unwind_rss" ] && [ -n "$in_uslab" ] && [ -n "$reached" ] ||
		fail "unwind said: $out"
	[ "$unwind_rss" -eq 0 ] ||
		fail "run $i: the mapping of libuslab.so's unwind tables has $unwind_rss KiB resident after malloc's paths ran (they share a mapping with .rodata again? malloc/libuslab-unwind.lds)"
	[ "$in_uslab" -ge 2 ] && [ "$reached" = 1 ] ||
		fail "run $i: a backtrace from a constructor went through $in_uslab frames of libuslab.so and reached_main=$reached: the unwind tables are not found"
	echo "run $i: unwind tables' mapping $unwind_rss KiB resident; a backtrace walked $in_uslab frames of libuslab.so out to main"
done
