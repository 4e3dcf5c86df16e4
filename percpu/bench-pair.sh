#!/usr/bin/env bash
# make bench-pcp: the fast-path cost of the per-CPU layer.
#   1. ns per kmem_cache_alloc + kmem_cache_free pair: this build, this
#      build's config without per-CPU caching (the slab layer alone), and
#      the nocache preset (which also returns empty slabs and pages at
#      once, so every pair maps and unmaps a page), interleaved
#   2. instructions on the hit path, from the disassembly (objdump -d):
#      the fall-through from each function's entry to its first ret
#   3. callgrind: instructions per pair in fallback mode (valgrind cannot
#      run rseq), from two runs that differ only in the number of pairs
# Usage: percpu/bench-pair.sh BUILD NOCACHE_BUILD SLABONLY_BUILD
set -eu
O=$1
NC=$2
SO=$3
echo "== ns per pair (pinned to one CPU, best round); interleaved runs"
for i in 1 2 3; do
	printf '  this build (%s) %s   slab only (%s) %s   nocache preset (%s) %s\n' \
		$($O/bench/pcp_pair -q -n 5000000 -r 3) \
		$($SO/bench/pcp_pair -q -n 2000000 -r 3) \
		$($NC/bench/pcp_pair -q -n 20000 -r 1)
done
echo
$O/bench/pcp_pair -n 5000000 -r 3 | sed 's/^/  /'
echo
echo "== hit path instructions (objdump -d $O/slab/slab.o)"
total=0
for f in kmem_cache_alloc kmem_cache_free; do
	listing=$(objdump -d --no-show-raw-insn "$O/slab/slab.o" |
		awk -v f="<$f>:" '$2 == f { on = 1; next }
			on && /^$/ { exit }
			on { print; if ($0 ~ /\tret/) exit }')
	n=$(printf '%s\n' "$listing" | grep -c .)
	echo "-- $f: $n instructions"
	printf '%s\n' "$listing" | sed 's/^/  /'
	total=$((total + n))
done
echo "-- pair: $total instructions (aim: at most 40)"
echo
if command -v valgrind >/dev/null; then
	echo "== callgrind, fallback mode: instructions per pair"
	ir() {
		valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			"$O/bench/pcp_pair" -q -r 1 -n "$1" 2>&1 |
			sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
	}
	a=$(ir 100000)
	b=$(ir 300000)
	echo "  ($b - $a) Ir / 200000 pairs = $(( (b - a) / 200000 )) instructions per pair"
fi
