#!/usr/bin/env bash
# Fault injection (issue 11): failslab and fail_page_alloc from
# USLAB_OPTIONS make allocations fail as a real shortage would. A seeded
# randomized workload (tests/malloc/faults.c) checks that every failure is
# a clean NULL + ENOMEM (realloc keeps the old block), that the bytes held
# balance afterwards, and that once injection has run out (times) nothing
# fails. Pinned to one CPU, reaper idle: the balance compares like with like.
set -u
O=${O:-build}
prog=$O/tests/malloc/faults
lib=$(realpath -m "$O/libuslab.so")	# absolute: O may be out of tree
fail=0
total=0
run() {		# run SEED OPTIONS
	local out
	if out=$(USLAB_OPTIONS="reaper_ms=600000,$2" taskset -c 0 \
		 env LD_PRELOAD="$lib" "$prog" "$1" 30000 2>&1); then
		n=$(echo "$out" | sed -n 's/^failures //p')
		echo "ok   seed $1 $2: $n allocations failed cleanly"
		total=$((total + n))
	else
		echo "FAIL seed $1 $2: $out"
		fail=1
	fi
}
for seed in 1 2 3; do
	# times small enough to run out within phases 0 and 1
	run $seed "fail_page=30:1:100"
	run $seed "fail_slab=100:1:30"
	run $seed "fail_slab=30:1:20,fail_page=20:2:60"
	run $seed "fail_page=50:3:60:1000000"
done
# A bad specification is named and ignored.
err=$(USLAB_OPTIONS='fail_slab=150' env LD_PRELOAD="$lib" /bin/true 2>&1)
echo "$err" | grep -qF "'fail_slab=150'" || { echo "FAIL fail_slab=150 not refused: $err"; fail=1; }
# Injection that never fires is no injection at all.
[ "$total" -gt 0 ] || { echo "FAIL no allocation failed in any run"; fail=1; }
echo "faults: $total clean failures in total"
exit $fail
