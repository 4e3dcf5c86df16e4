#!/usr/bin/env bash
# The per-CPU layer in each situation it must handle (issue 3), with the
# mode each one must give:
#   plain run                         rseq on glibc's registration
#   GLIBC_TUNABLES=glibc.pthread.rseq=0   rseq on uslab's own area
#   seccomp: rseq fails with ENOSYS   fallback; the whole slab suite passes,
#                                     and the thread caches' suite
#   (both of the above)               fallback
#   own area, then membarrier refused (seccomp EPERM or ENOSYS)
#                                     fallback, the area given back: the
#                                     stress finds no object handed out
#                                     twice (issue 11, finding 1)
#   taskset to one CPU                rseq, stress still conserves objects
#   sysfs `possible` says "0" (bind mount, as LXCFS or gVisor show fewer
#   CPUs than the process may use), taskset -c 1
#                                     rseq, no crash: arrays follow the
#                                     kernel's bound (issue 11, finding 2)
# With CONFIG_PERCPU_RSEQ=n the rseq cases expect fallback; with
# CONFIG_PERCPU_CACHE=n there is nothing to test here.
set -u
O=${O:-build}
conf=$O/auto.conf
if ! grep -q '^CONFIG_PERCPU_CACHE=y' "$conf"; then
	echo "CONFIG_PERCPU_CACHE is off: no per-CPU layer to test"
	exit 0
fi
rseq=rseq
grep -q '^CONFIG_PERCPU_RSEQ=y' "$conf" || rseq=fallback
[ "$(uname -m)" = x86_64 ] || rseq=fallback

noseq=$O/tests/percpu/percpu_no_rseq
fail=0
run() {		# run EXPECTED-MODE DESCRIPTION CMD...
	local want=$1 what=$2
	shift 2
	if USLAB_EXPECT_PCP_MODE=$want USLAB_STRESS_SECONDS=${USLAB_STRESS_SECONDS:-1} \
	   CK_FORK=yes "$@" >"$O/test-logs/pcp-modes.out" 2>&1; then
		echo "ok   $what ($want): $(grep -E '^[0-9]+%: Checks' "$O/test-logs/pcp-modes.out")"
	else
		echo "FAIL $what ($want)"
		tail -20 "$O/test-logs/pcp-modes.out"
		fail=1
	fi
	grep -E '^(migrate|resize)' "$O/test-logs/pcp-modes.out" | sed 's/^/       /'
}
mkdir -p "$O/test-logs"

run $rseq "glibc's rseq area" "$O/tests/percpu/check_percpu"
run $rseq "own rseq area (glibc told not to register)" \
	env GLIBC_TUNABLES=glibc.pthread.rseq=0 "$O/tests/percpu/check_percpu"
run $rseq "own rseq area, stress" \
	env GLIBC_TUNABLES=glibc.pthread.rseq=0 "$O/tests/percpu/check_percpu_stress"
run fallback "seccomp: rseq returns ENOSYS" "$noseq" "$O/tests/percpu/check_percpu"
run fallback "seccomp + glibc tunable" \
	env GLIBC_TUNABLES=glibc.pthread.rseq=0 "$noseq" "$O/tests/percpu/check_percpu"
run fallback "slab suite under seccomp" "$noseq" "$O/tests/slab/check_slab"
run fallback "slab suite under seccomp + glibc tunable" \
	env GLIBC_TUNABLES=glibc.pthread.rseq=0 "$noseq" "$O/tests/slab/check_slab"
run fallback "stress under seccomp" "$noseq" "$O/tests/percpu/check_percpu_stress"
run fallback "own rseq area, membarrier EPERM, stress" \
	env GLIBC_TUNABLES=glibc.pthread.rseq=0 USLAB_STRESS_SECONDS=3 \
	"$noseq" --membarrier "$O/tests/percpu/check_percpu_stress"
# the thread caches (check_percpu_tcache runs itself under the launcher
# when it starts in rseq mode): here with fallback reached the other ways
run fallback "thread caches, seccomp + glibc tunable" \
	env GLIBC_TUNABLES=glibc.pthread.rseq=0 "$noseq" "$O/tests/percpu/check_percpu_tcache"
run fallback "thread caches, own rseq area, membarrier EPERM" \
	env GLIBC_TUNABLES=glibc.pthread.rseq=0 \
	"$noseq" --membarrier "$O/tests/percpu/check_percpu_tcache"
run fallback "own rseq area, membarrier ENOSYS" \
	env GLIBC_TUNABLES=glibc.pthread.rseq=0 \
	"$noseq" --membarrier=ENOSYS "$O/tests/percpu/check_percpu"
if [ "$(nproc)" -gt 1 ]; then
	run $rseq "restricted cpuset (taskset -c 1)" taskset -c 1 "$O/tests/percpu/check_percpu_stress"
	# A mount namespace where sysfs names CPU 0 only, run on CPU 1.
	possible=$O/test-logs/possible-0
	echo 0 > "$possible"
	if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
		for prog in percpu/check_percpu_stress percpu/check_percpu slab/check_slab; do
			run $rseq "sysfs possible = 0, taskset -c 1: $prog" \
				unshare -m sh -c 'mount --bind "$1" /sys/devices/system/cpu/possible &&
					[ "$(cat /sys/devices/system/cpu/possible)" = 0 ] &&
					exec taskset -c 1 "$2"' sh "$possible" "$O/tests/$prog"
		done
	else
		echo "SKIP sysfs possible = 0 case: needs root and unshare -m (CI runs as root)"
	fi
fi

exit $fail
