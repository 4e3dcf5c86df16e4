#!/usr/bin/env bash
# Debian packages by purpose: each make target installs what it needs and no
# more (the library builds with the compiler and liburcu).
#
#   scripts/deps.sh PURPOSE...     core tools test fuzz bench plot menuconfig all
#
#   core        the library: compiler, liburcu, Kconfig (python3-kconfiglib),
#               <sys/sdt.h> for the USDT probes             (every target)
#   tools       the uslab CLI, trace library and recorder: zstd, libdw
#               (call-site symbols), libunwind (record -g), gdb (record -p),
#               scdoc and man
#               (the manual pages `uslab help CMD` shows)          (make)
#   test        what `make check` runs: Check, valgrind, the peers the
#               replay test compares, the programs the malloc tests run,
#               matplotlib for the tune --png test, GNU parallel for
#               the tune --jobs sweep test
#   fuzz        clang and its libFuzzer runtime                  (make check)
#   bench       the peers `make bench` measures against, heaptrack (the
#               recorder's overhead comparison in docs/sim.md)
#   plot        matplotlib, for `uslab tune --png` and `make run`
#   menuconfig  ncurses, for `make menuconfig`
#
# Missing ones are installed with apt-get when running as root (waiting up to
# 5 minutes for a dpkg lock another apt holds; the output in a log of this
# run's own, printed when it fails); otherwise this prints the exact command
# and fails, so nothing half-builds.
set -euo pipefail

declare -A need=(
	[core]="gcc make pkg-config binutils liburcu-dev python3 python3-kconfiglib systemtap-sdt-dev"
	[tools]="libzstd-dev zstd libdw-dev libunwind-dev scdoc man-db gdb"
	[test]="check libsubunit-dev g++ valgrind libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 git sqlite3 perl redis-tools python3-matplotlib parallel"
	[fuzz]="clang libclang-rt-14-dev"
	[bench]="libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 heaptrack"
	[plot]="python3-matplotlib"
	[menuconfig]="libncurses-dev"
)

[ $# -gt 0 ] || set -- core
pkgs=()
for purpose in "$@"; do
	if [ "$purpose" = all ]; then
		for p in "${!need[@]}"; do pkgs+=(${need[$p]}); done
		continue
	fi
	[ -n "${need[$purpose]+x}" ] || {
		echo "deps: unknown purpose '$purpose' (core tools test fuzz bench plot menuconfig all)" >&2
		exit 2
	}
	pkgs+=(${need[$purpose]})
done

missing=()
for p in $(printf '%s\n' "${pkgs[@]}" | sort -u); do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	echo "deps ($*): installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# Another apt or dpkg (a second make check, unattended upgrades) may
	# hold the lock: wait for it up to 5 minutes rather than fail at once.
	# The log is this run's own, removed when all went well.
	apt=(apt-get -o DPkg::Lock::Timeout=300 -q)
	log=$(mktemp "${TMPDIR:-/tmp}/uslab-deps.XXXXXX")
	if ! "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
		"${apt[@]}" update >>"$log" 2>&1 || true	# install says what failed
		"${apt[@]}" install -y --no-install-recommends "${missing[@]}" >>"$log" 2>&1 || {
			echo "deps: apt-get install failed, see $log" >&2
			tail -20 "$log" >&2
			exit 1
		}
	fi
	rm -f "$log"
else
	echo "deps ($*): missing Debian packages; run as root:" >&2
	echo "  apt-get install -y ${missing[*]}" >&2
	exit 1
fi
