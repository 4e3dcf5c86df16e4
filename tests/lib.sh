# Sourced by the shell tests: strict mode, $O (the build output), $U (the
# uslab binary), $LIBUSLAB (the preloadable library, absolute), a scratch
# folder $T removed on exit, and
#   fail MESSAGE        stop here: the test failed
#   bad MESSAGE         note a failure and go on ($failed becomes 1); tests
#                       that use it run with `set +e` and end in `exit $failed`
#   config SYMBOL       true if CONFIG_SYMBOL=y in this build
#   skip REASON         nothing to test in this build: say why, exit 0
#   need_magazines WHAT skip unless per-CPU magazines are in force
#   run_rc CMD...       run CMD whatever its exit status; the status in $rc
#   preload_abort PROG MODE [OPTIONS]  see below
#   kernel_c_and_cxx SRC OUT [CFLAGS...]  build kernel-style SRC (a .c
#                       file) against the <linux/...> shims and
#                       libuslab-core.a as C (with CFLAGS) and as C++, run
#                       both: each must print exactly OUT
set -eu
O=${O:-build}
U=$O/uslab
LIBUSLAB=$(realpath -m "$O/libuslab.so")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
failed=0
bad() { echo "FAIL: $*"; failed=1; }
config() { grep -q "^CONFIG_$1=y" "$O/auto.conf"; }
skip() { echo "($*)"; exit 0; }
# Debug-on-boot caches keep no magazines: CONFIG_SLAB_DEBUG_ON counts as none.
need_magazines() {
	if ! config PERCPU_CACHE || config SLAB_DEBUG_ON; then
		skip "no per-CPU magazines in this build: nothing to $1"
	fi
}
run_rc() { rc=0; "$@" || rc=$?; }
# preload_abort PROG MODE [OPTIONS]: PROG MODE with libuslab.so preloaded
# (and USLAB_OPTIONS=OPTIONS when given), stdout in $T/out, stderr in
# $T/err. PROG prints "object 0x<hex>" and then misuses that object: the
# library must stop it with SIGABRT (bad otherwise). Sets $obj to the hex
# digits; returns 1 when none were printed.
preload_abort() {
	local prog=$1 mode=$2 st=0
	env ${3+USLAB_OPTIONS="$3"} LD_PRELOAD="$LIBUSLAB" "$prog" "$mode" >"$T/out" 2>"$T/err" || st=$?
	obj=$(sed -n 's/^object 0x\([0-9a-f]*\)$/\1/p' "$T/out")
	[ -n "$obj" ] || { bad "$mode: no object printed"; return 1; }
	[ "$st" -eq 134 ] || bad "$mode: exit status $st, not SIGABRT"
}
kernel_c_and_cxx() {
	local src=$1 want=$2 out
	local flags="-Iinclude -Iinclude/uslab/kernel -I$O/include -include $O/include/generated/autoconf.h"
	local libs="$O/libuslab-core.a -lurcu-memb -lurcu-common -lpthread -lrt -lm"

	shift 2
	cp "$src" "${src%.c}.cc"
	gcc -std=gnu11 -Wall -Werror -Werror=implicit-function-declaration "$@" $flags \
		-o "${src%.c}" "$src" $libs 2> "$T/err" ||
		fail "C, $src: $(grep -m1 -e error -e warning "$T/err")"
	out=$("${src%.c}") || fail "C, $src: exit status $?, output '$out'"
	[ "$out" = "$want" ] || fail "C, $src: printed '$out'"
	g++ -std=c++11 -Wall -Werror $flags -o "${src%.c}-cxx" "${src%.c}.cc" $libs 2> "$T/err" ||
		fail "C++, $src: $(grep -m1 error "$T/err")"
	out=$("${src%.c}-cxx") || fail "C++, $src: exit status $?, output '$out'"
	[ "$out" = "$want" ] || fail "C++, $src: printed '$out'"
}
