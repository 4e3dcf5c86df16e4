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
echo "-- pair: $total instructions"
echo
# malloc + free as exported by libuslab.so: from the entry, the fall-through
# (branches not taken), following unconditional jumps (tail calls), to ret
echo "== malloc + free hit path (objdump -d $O/libuslab.so, jumps followed)"
objdump -d --no-show-raw-insn "$O/libuslab.so" > "${TMPDIR:-/tmp}/pcp-pair.$$.dis"
pair=0
for f in malloc free; do
	n=$(python3 - "$f" "${TMPDIR:-/tmp}/pcp-pair.$$.dis" <<'PY'
import re, sys
want, path = sys.argv[1], sys.argv[2]
ins, order, sym = {}, [], {}
for l in open(path):
    m = re.match(r'([0-9a-f]+) <(.+)>:', l)
    if m:
        sym[m.group(2)] = int(m.group(1), 16)
    m = re.match(r'\s+([0-9a-f]+):\s+(.*)', l)
    if m:
        a = int(m.group(1), 16)
        ins[a] = m.group(2).strip()
        order.append(a)
nxt = {a: b for a, b in zip(order, order[1:])}
a = sym.get('__libc_' + want, sym.get(want))	# the exported alias
n = 0
while True:
    n += 1
    print('  %x: %s' % (a, ins[a]), file=sys.stderr)
    if ins[a].startswith('ret'):
        break
    m = re.match(r'jmp\s+([0-9a-f]+) ', ins[a])
    a = int(m.group(1), 16) if m else nxt[a]
print(n)
PY
)
	echo "-- $f: $n instructions"
	pair=$((pair + n))
done
rm -f "${TMPDIR:-/tmp}/pcp-pair.$$.dis"
echo "-- malloc + free: $pair instructions (aim: at most 30)"
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
