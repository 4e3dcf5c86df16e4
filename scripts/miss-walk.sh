#!/usr/bin/env bash
# scripts/miss-walk.sh [O]: the walk of a malloc miss that needs a new
# slab, as the running library takes it: a 64-byte malloc loop preloaded
# with $O/libuslab.so under gdb, a breakpoint on alloc_pages once the loop
# runs, and the backtrace printed as file:function hops from malloc down
# (inlined frames marked so; they are not calls). Needs gdb and a build
# with -g (the default). docs/percpu.md "The percpu/slab protocol".
set -eu
O=${1:-build}
lib=$(realpath "$O/libuslab.so")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/loop.c" <<'C'
#include <stdlib.h>
void walk_marker(void);
__attribute__((noinline)) void walk_marker(void) { __asm__ volatile(""); }
int main(void)
{
	static void *keep[200000];
	int i;

	for (i = 0; i < 1000; i++)
		keep[i] = malloc(64);
	walk_marker();
	for (; i < 200000; i++)
		keep[i] = malloc(64);
	return keep[5] == NULL;
}
C
cc -O1 -g -o "$tmp/loop" "$tmp/loop.c"
gdb -q -batch -nx \
	-ex "set environment LD_PRELOAD=$lib" \
	-ex "set environment USLAB_OPTIONS=" \
	-ex 'set pagination off' \
	-ex 'set breakpoint pending on' \
	-ex 'break walk_marker' -ex run \
	-ex 'break alloc_pages' -ex continue \
	-ex "bt" "$tmp/loop" 2>/dev/null | tee "${MISS_WALK_RAW:-/dev/null}" |
awk -v src="$(cd "$(dirname "$0")/.." && pwd)/" '/^#[0-9]+ / {
	# a frame is a real call when the frame above it (its caller) was
	# entered by a call: gdb prints that caller with its return address
	addr[++k] = ($0 ~ /^#[0-9]+ +0x[0-9a-f]+ in /)
	fn = $0; sub(/ \(.*/, "", fn); n = split(fn, w, " "); fn = w[n]
	at = $0; if (!sub(/.* at /, "", at)) at = "?"; sub(/:[0-9]+$/, "", at)
	if (index(at, src) == 1) at = substr(at, length(src) + 1)
	name[k] = at ":" fn
}
END {
	if (!k) { print "miss-walk: no backtrace (gdb, or no alloc_pages hit)" > "/dev/stderr"; exit 1 }
	calls = 0
	for (i = k; i >= 1; i--) {
		if (name[i] ~ /loop\.c|libc|start/) continue
		inl = (i < k && !addr[i + 1]) ? " (inlined)" : ""
		# the frame of malloc is gone: its miss branch is a tail jump,
		# and gdb names the site of the jump by the inlined function
		if (name[i] ~ /^slab\/fastpath\.h:/) {
			print "malloc/malloc.c:malloc"
			inl = " (inlined; its miss is a tail jump)"
		}
		print name[i] inl
		if (inl == "") calls++
	}
	printf "%d calls from malloc (inlined frames not counted)\n", calls
}'
