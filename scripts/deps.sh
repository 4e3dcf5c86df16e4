#!/usr/bin/env bash
# Every Debian package the build, the tests and the benchmarks need.
# Missing ones are installed with apt-get when running as root; otherwise this
# prints the exact command and fails, so nothing half-builds.
set -euo pipefail

pkgs=(
	gcc make pkg-config binutils
	liburcu-dev check libsubunit-dev
	python3 python3-kconfiglib libncurses-dev
	libzstd-dev zstd systemtap-sdt-dev
	valgrind clang libclang-rt-14-dev
	libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0
	python3-matplotlib
	git sqlite3 perl
	redis-tools
	scdoc man-db libunwind-dev libdw-dev heaptrack
)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/uslab-apt.log 2>&1; then
		apt-get update -q >>/tmp/uslab-apt.log 2>&1
		apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/uslab-apt.log 2>&1 || {
			echo "deps: apt-get install failed, see /tmp/uslab-apt.log" >&2
			tail -20 /tmp/uslab-apt.log >&2
			exit 1
		}
	fi
else
	echo "deps: missing Debian packages; run as root:" >&2
	echo "  apt-get install -y ${missing[*]}" >&2
	exit 1
fi
