#!/usr/bin/env bash
# Fidelity: a one-CPU simulation counts what a real one-thread replay does.
# With the reaper off in both, `uslab sim --cpus 1 --no-reaper TRACE` and
# `taskset -c 0 uslab replay TRACE --allocator uslab --threads 1` under
# USLAB_OPTIONS=stats,reaper_ms=0 (the replayed events only: counters taken
# before and after the timed run) must give, for every kmalloc cache, the
# same magazine size, allocs, frees, hit%, refills, flushes, depot gets and
# puts, on every bundled trace and on `uslab gen resize` workloads (realloc,
# calloc and the memalign family; sizes to 4 KiB and to 20000 B) and a
# `gen rpmalloc` one; each with fixed magazines (adapt=0) and with
# magazines that size themselves (adapt=1: the sizes in force, lo-hi over
# the CPUs, and the grow and shrink counts must agree too). The replayer's
# own objects out when the run starts (its worker thread's glibc DTV, one
# kmalloc-384 object), which the replay prints as `--held CACHE=N`, are
# given to the simulation, which holds them too: a refill takes at most
# what the class has out (slab_pcp_refill), so they change the slow paths
# (adapt=1's 10-object kmalloc-384 magazines showed it). reaper_ms=0 also keeps page_alloc's decay thread from
# starting (its pthread_create allocates glibc's DTV, one kmalloc-384
# object, inside the run). The page allocator's per-CPU page lists must
# agree too (blocks from and to the lists, refills, drains, KiB on the lists
# at the end: the simulation's lists are its virtual CPUs'): both runs make
# every kmalloc class and empty the lists before they start. The page
# allocator's peak is printed side by side, not asserted (the buddy lists
# hold what the replayer did before its run: docs/sim.md, "Fidelity").
set -u
O=${O:-build}
U=$O/uslab
T=$(mktemp -d "${TMPDIR:-/tmp}/uslab-fidelity.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

if ! grep -q '^CONFIG_PERCPU_STATS=y' "$O/auto.conf"; then
	echo "(no per-CPU statistics in this build: nothing to compare)"
	exit 0
fi
if ! taskset -c 0 true 2>/dev/null; then
	echo "(cannot pin to CPU 0 here)"
	exit 0
fi

"$U" gen resize -l 40000 -o "$T/resize.ustr" 2>/dev/null || bad "gen resize"
"$U" gen resize -l 40000 --seed 7 --max 20000 -w 2000 -o "$T/resize-big.ustr" 2>/dev/null ||
	bad "gen resize (big)"
"$U" gen rpmalloc -b 3000 -l 20 -o "$T/rp.ustr" 2>/dev/null || bad "gen rpmalloc"
# small blocks (16..256 B) in many classes at once: with adapt=1 some
# classes grow, paid by others that shrink on their own slow paths
# (docs/percpu.md, "Adaptive sizing"); on the bundled traces nothing does
"$U" gen rpmalloc -b 20000 -l 40 --max 256 -o "$T/rp-small.ustr" 2>/dev/null ||
	bad "gen rpmalloc (small)"

# The operation columns of the kmalloc rows, sorted by size:
# cache object mag allocs frees hit% refills flushes depot_get depot_put
# [grow shrink] (the last two with adapt=1 only)
ops() { grep -E '^  kmalloc-' "$1" | awk '{ print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $12, $13 }' | sort -k2n; }
# the slow-path columns only: cache objsize mag refills flushes depot_get depot_put [grow shrink]
slowops() { grep -E '^  kmalloc-' "$1" | awk '{ print $1, $2, $3, $7, $8, $9, $10, $12, $13 }' | sort -k2n; }

# rseq-mode hits are counted only with CONFIG_PERCPU_HIT_STATS (the hit
# path carries no counter by default, docs/percpu.md "Statistics"). Without
# it, the real run compared on every column is the same library in fallback
# mode (tests/percpu/percpu_no_rseq: rseq fails with ENOSYS), whose locked
# path runs the same policy and counts every operation; the rseq-mode run is
# compared on the columns its slow path counts. Fallback mode's cache per
# thread (percpu/tcache.c) stands in front of that policy and the
# simulator has none, so the fallback replay runs without it (tcache=0).
if grep -q '^CONFIG_PERCPU_HIT_STATS=y' "$O/auto.conf"; then
	full=""
else
	full=$O/tests/percpu/percpu_no_rseq
	[ -x "$full" ] || { echo "FAIL: $full not built"; exit 1; }
fi
replay() {	# replay WRAPPER TRACE OUT
	USLAB_OPTIONS=stats,reaper_ms=0,adapt=$adapt,tcache=0 timeout -k 5 120 taskset -c 0 \
		$1 "$U" replay "$2" --allocator uslab --threads 1 2>"$T/real.err" |
		sed -n '/^replayed events only/,/^page lists/p' > "$3"
}
peak() { sed -n 's/.*peak held \([0-9.]*\) KiB$/\1/p' "$1"; }
# the per-CPU page lists' line: allocations frees refills drains KiB
lists() { sed -n 's/^page lists: \([0-9]*\) allocations, \([0-9]*\) frees, \([0-9]*\) refills, \([0-9]*\) drains, \([0-9.]*\) KiB on the lists$/\1 \2 \3 \4 \5/p' "$1"; }

n=0
for adapt in 0 1; do
for trace in traces/*.ustr "$T/resize.ustr" "$T/resize-big.ustr" "$T/rp.ustr" "$T/rp-small.ustr"; do
	name="$(basename "$trace") adapt=$adapt"
	replay "$full" "$trace" "$T/real.txt"
	# the replayer's own objects out at the start (its worker's glibc
	# DTV): the simulation starts with them too (a refill takes at most
	# what the class has out, so they change the slow paths)
	held=$(sed -n 's/^held by the replayer at the start://p' "$T/real.txt")
	grep -q '^held by the replayer at the start:' "$T/real.txt" ||
		bad "$name: the replay did not say what it held at the start"
	# --held also makes the simulation start as the replay did (every
	# class made, magazines drained, page lists empty): even holding nothing
	[ -n "$held" ] || held="--held kmalloc-8=0"
	# shellcheck disable=SC2086 # --held options, one word each
	"$U" sim "$trace" --cpus 1 --no-reaper --rows 0 --adapt $adapt $held 2>"$T/sim.err" |
		sed -n '/^per cache/,/^page lists/p' > "$T/sim.txt"
	ops "$T/sim.txt" > "$T/sim.ops"
	ops "$T/real.txt" > "$T/real.ops"
	if [ -n "$full" ]; then
		replay "" "$trace" "$T/rseq.txt"
		rheld=$(sed -n 's/^held by the replayer at the start://p' "$T/rseq.txt")
		[ "$rheld" = "$held" ] ||
			bad "$name: the rseq-mode replay held other objects at the start ($rheld vs $held)"
		slowops "$T/sim.txt" > "$T/sim.slow"
		slowops "$T/rseq.txt" > "$T/rseq.slow"
		if [ ! -s "$T/rseq.slow" ] || ! cmp -s "$T/sim.slow" "$T/rseq.slow"; then
			bad "$name: simulated and rseq-mode slow-path counts differ (< sim, > real):"
			diff "$T/sim.slow" "$T/rseq.slow" | head -20
			continue
		fi
	fi
	if [ ! -s "$T/sim.ops" ] || [ ! -s "$T/real.ops" ]; then
		bad "$name: no per-cache table (sim: $(head -c 300 "$T/sim.err"); replay: $(head -c 300 "$T/real.err"))"
		continue
	fi
	if ! cmp -s "$T/sim.ops" "$T/real.ops"; then
		bad "$name: simulated and real per-cache counts differ (< sim, > real):"
		diff "$T/sim.ops" "$T/real.ops" | head -20
		continue
	fi
	sl=$(lists "$T/sim.txt"); rl=$(lists "$T/real.txt")
	if [ -z "$sl" ] || [ "$sl" != "$rl" ]; then
		bad "$name: the page lists differ (allocations frees refills drains KiB): sim '$sl', real '$rl'"
		continue
	fi
	if [ -n "$full" ]; then
		ql=$(lists "$T/rseq.txt")
		[ "$sl" = "$ql" ] ||
			{ bad "$name: the page lists differ from the rseq-mode replay's: sim '$sl', real '$ql'"; continue; }
	fi
	n=$((n + 1))
	echo "$name: $(wc -l < "$T/sim.ops") caches, identical counts${full:+ (all: fallback mode; slow paths: rseq mode)};" \
	     "page lists identical ($sl);" \
	     "page_alloc peak above the start: sim $(peak "$T/sim.txt") KiB, real $(peak "$T/real.txt") KiB"
	# some trace must make magazines grow (field 11 of ops: grow)
	if [ "$adapt" = 1 ] && awk '$11 > 0 { g = 1 } END { exit !g }' "$T/sim.ops"; then
		grew=1
	fi
	# and some cache must shrink to pay for it (field 12: shrink)
	if [ "$adapt" = 1 ] && awk '$12 > 0 { s = 1 } END { exit !s }' "$T/sim.ops"; then
		shrank=1
	fi
done
done
# A build without magazines (debug-on-boot caches: debug_defconfig, or
# PERCPU_CACHE=n) has none to grow: adapt=1 must change nothing.
if grep -q '^CONFIG_SLAB_DEBUG_ON=y' "$O/auto.conf" || ! grep -q '^CONFIG_PERCPU_CACHE=y' "$O/auto.conf"; then
	[ "${grew:-0}" = 0 ] || bad "adapt=1: a magazine grew in a build without magazines"
else
	[ "${grew:-0}" = 1 ] || bad "adapt=1: no magazine grew on any trace (the policy did nothing)"
	[ "${shrank:-0}" = 1 ] || bad "adapt=1: no magazine shrank on any trace (no growth was paid for)"
fi
[ "$fail" -eq 0 ] && echo "fidelity: $n runs (traces x adapt=0,1), every per-cache count and the page lists identical"
exit $fail
