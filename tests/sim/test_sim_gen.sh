#!/usr/bin/env bash
# uslab gen: the workloads have the stated shape. rpmalloc: sizes in
# [16, 16000] with a linear falloff (mean (2*16 + 16000)/3, three quarters
# below the midpoint), exactly B live blocks per thread after the fill, no
# cross-thread frees; mtmalloc-N: sizes uniform in [1, N KiB], W live per
# thread; prodcons: every free on a consumer thread, about Q live. Same seed
# gives the same file; another seed another.
. "$(dirname "$0")/../lib.sh"
[ -n "${SIMDEBUG:-}" ] && set -x

# Walks `uslab script` output: $4 op, $5 id=N, $6 size=N, $2 tid.
stats() {
	"$U" script "$1" | awk '
	{ split($5, a, "="); id = a[2] }
	$4 == "malloc" {
		split($6, b, "="); s = b[2]
		n++; sum += s; if (s < mn || n == 1) mn = s; if (s > mx) mx = s
		if (s < mid) low++
		owner[id] = $2; live++; tl[$2]++
		if (live > peak) peak = live
		if (tl[$2] > tpeak) tpeak = tl[$2]
	}
	$4 == "free" {
		live--; tl[owner[id]]--
		if (owner[id] != $2) remote++; else localf++
	}
	END { printf "n=%d min=%d max=%d mean=%.1f low=%.4f peak=%d tpeak=%d remote=%d local=%d live=%d\n",
		n, mn, mx, sum / n, low / n, peak, tpeak, remote + 0, localf + 0, live }' mid="$2"
}
val() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
within() { awk -v v="$1" -v want="$2" -v tol="$3" 'BEGIN { d = v - want; if (d < 0) d = -d; exit !(d <= tol * want) }'; }

# rpmalloc: 2 threads, 3000 blocks, 4 loops of 50%.
"$U" gen rpmalloc -t 2 -b 3000 -l 4 -o "$T/rp.ustr" 2>/dev/null
s=$(stats "$T/rp.ustr" 8008)
[ "$(val "$s" n)" -eq $((2 * (3000 + 4 * 1500))) ] || fail "rpmalloc allocations: $s"
[ "$(val "$s" min)" -ge 16 ] && [ "$(val "$s" max)" -le 16000 ] || fail "rpmalloc sizes out of [16, 16000]: $s"
within "$(val "$s" mean)" 5344 0.03 || fail "rpmalloc mean size not the linear falloff's 5344: $s"
within "$(val "$s" low)" 0.75 0.03 || fail "rpmalloc: share below the midpoint not 3/4: $s"
[ "$(val "$s" tpeak)" -eq 3000 ] || fail "rpmalloc: live blocks per thread not 3000: $s"
[ "$(val "$s" remote)" -eq 0 ] || fail "rpmalloc: cross-thread frees: $s"
[ "$(val "$s" live)" -eq 0 ] || fail "rpmalloc: objects left: $s"
"$U" gen rpmalloc -t 2 -b 3000 -l 4 -p 10 -o "$T/rp10.ustr" 2>/dev/null
s=$(stats "$T/rp10.ustr" 8008)
[ "$(val "$s" n)" -eq $((2 * (3000 + 4 * 300))) ] || fail "rpmalloc -p 10: $s"

# mtmalloc: sizes uniform in [1, N KiB], window W per thread.
for kb in 32 64 128 256; do
	"$U" gen mtmalloc-${kb}k -t 2 -l 4000 -w 50 -o "$T/mt.ustr" 2>/dev/null
	s=$(stats "$T/mt.ustr" $((kb * 512)))
	[ "$(val "$s" n)" -eq 8000 ] || fail "mtmalloc-${kb}k count: $s"
	[ "$(val "$s" min)" -ge 1 ] && [ "$(val "$s" max)" -le $((kb * 1024)) ] || fail "mtmalloc-${kb}k range: $s"
	within "$(val "$s" mean)" $((kb * 512)) 0.05 || fail "mtmalloc-${kb}k mean not N/2: $s"
	within "$(val "$s" low)" 0.5 0.05 || fail "mtmalloc-${kb}k not uniform: $s"
	[ "$(val "$s" tpeak)" -eq 50 ] || fail "mtmalloc-${kb}k window: $s"
done

# prodcons: 2 producers, 2 consumers, queue 64: all frees remote.
"$U" gen prodcons -t 4 -l 3000 -w 64 -o "$T/pc.ustr" 2>/dev/null
s=$(stats "$T/pc.ustr" 520)
[ "$(val "$s" n)" -eq 6000 ] || fail "prodcons count: $s"
[ "$(val "$s" remote)" -eq 6000 ] && [ "$(val "$s" local)" -eq 0 ] || fail "prodcons: frees not cross-thread: $s"
[ "$(val "$s" peak)" -le 66 ] && [ "$(val "$s" peak)" -ge 64 ] || fail "prodcons: live not about the queue depth: $s"

# Deterministic by seed.
"$U" gen rpmalloc -t 2 -b 500 -l 2 -o "$T/a.ustr" 2>/dev/null
"$U" gen rpmalloc -t 2 -b 500 -l 2 -o "$T/b.ustr" 2>/dev/null
"$U" gen rpmalloc -t 2 -b 500 -l 2 --seed 7 -o "$T/c.ustr" 2>/dev/null
cmp -s "$T/a.ustr" "$T/b.ustr" || fail "same seed, different traces"
cmp -s "$T/a.ustr" "$T/c.ustr" && fail "different seeds, same trace"

# Bad arguments.
set +e
"$U" gen nosuch -o "$T/x.ustr" > /dev/null 2>&1; [ $? -eq 2 ] || fail "unknown kind accepted"
"$U" gen prodcons -t 1 -o "$T/x.ustr" > /dev/null 2>&1; [ $? -eq 2 ] || fail "prodcons with 1 thread accepted"
"$U" gen rpmalloc -b x -o "$T/x.ustr" > /dev/null 2>&1; [ $? -eq 2 ] || fail "bad number accepted"
set -e
[ ! -e "$T/x.ustr" ] || fail "a failed gen left a file"
echo "generators: sizes, live counts and thread patterns as stated"
