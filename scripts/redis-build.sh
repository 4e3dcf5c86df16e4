#!/usr/bin/env bash
# Builds redis-server from Debian's source package with MALLOC=libc (so a
# preloaded malloc serves all of it; Debian's own binary calls jemalloc's
# API), without systemd or TLS, into $1/redis/ (default build/redis/). The
# binary is cached there: later calls return at once.
#
#   scripts/redis-build.sh [OUTDIR]     prints the path of redis-server
#
# Needs a deb-src entry for bookworm: added (as root) when missing. Fails
# loudly, never silently, when the source cannot be fetched.
set -euo pipefail
out=$(realpath -m "${1:-build}")/redis
bin=$out/redis-server
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
	echo "$bin"
	exit 0
fi
mkdir -p "$out"
log=$out/build.log
: >"$log"
die() {
	echo "redis-build: $*" >&2
	[ -s "$log" ] && tail -20 "$log" >&2
	exit 1
}

if ! command -v dpkg-source >/dev/null; then
	[ "$(id -u)" -eq 0 ] || die "dpkg-dev missing; run as root: apt-get install -y dpkg-dev"
	apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends dpkg-dev >>"$log" 2>&1 ||
		die "apt-get install dpkg-dev failed"
fi

# A deb-src line for bookworm, in the deb822 form of the image's sources.
src_list=/etc/apt/sources.list.d/uslab-deb-src.sources
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	[ "$(id -u)" -eq 0 ] || die "no deb-src entry; as root add one for bookworm (see $0)"
	cat >"$src_list" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	apt-get -o DPkg::Lock::Timeout=300 update -q >>"$log" 2>&1 || die "apt-get update failed (network?)"
fi

dl=$out/download
rm -rf "$dl" "$out/src" "$out"/redis_*
mkdir -p "$dl"
(cd "$dl" && apt-get source --download-only redis) >>"$log" 2>&1 ||
	{ [ "$(id -u)" -eq 0 ] && apt-get -o DPkg::Lock::Timeout=300 update -q >>"$log" 2>&1 &&
	  (cd "$dl" && apt-get source --download-only redis) >>"$log" 2>&1; } ||
	die "apt-get source redis failed: cannot fetch Debian's redis source"
dsc=$(ls "$dl"/redis_*.dsc | head -1)
dpkg-source -x "$dsc" "$out/src" >>"$log" 2>&1 || die "dpkg-source -x failed"
# Called from our make (tests/malloc/Build.mk), the environment carries our
# MAKEFLAGS (--no-builtin-variables: no CC, no AR) into redis's make.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES \
	make -C "$out/src" -j"$(nproc)" MALLOC=libc USE_SYSTEMD=no BUILD_TLS=no \
	>>"$log" 2>&1 || die "building redis failed"
install -m 755 "$out/src/src/redis-server" "$bin"
rm -rf "$dl" "$out/src" "$out"/redis_*
"$bin" --version >/dev/null || die "built redis-server does not run"
echo "$bin"
