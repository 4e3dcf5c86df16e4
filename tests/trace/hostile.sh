# Sourced by the hostile-trace tests (test_trace_hostile*.sh): their
# prologue and their three checks. $O, $U, $F (trace_forge), a scratch $T,
# fail (counted in $nfail, the test goes on), $MEM (KiB of address space the
# tools get: they need ~60 MiB).
#   run NAME LIMIT_KIB CMD...            under an address-space limit and
#       60 s (a bound on a run that takes well under a second, not a timing:
#       the runs it stops took hours or blocked forever); status in $rc,
#       output in $T/out, $T/err
#   expect_ok NAME LIMIT_KIB CMD...      exit 0
#   expect_refused NAME PATTERN LIMIT_KIB CMD...  exit 1, stderr matches
set -u
O=${O:-build}
U=${U:-$O/uslab}
F=$O/tests/trace/trace_forge
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
[ -x "$F" ] || { echo "FAIL: $F not built"; exit 1; }

run() {
	local name=$1 kib=$2
	shift 2
	( ulimit -v "$kib"; exec timeout -s KILL 60 "$@" ) > "$T/out" 2> "$T/err"
	rc=$?
	[ $rc -ge 124 ] && fail "$name: killed, blocked or crashed (exit $rc): $(tail -c 300 "$T/err")"
}
expect_ok() {
	local name=$1
	run "$@"
	[ $rc -eq 0 ] || [ $rc -ge 124 ] || fail "$name: exit $rc, expected 0: $(tail -c 300 "$T/err")"
}
expect_refused() {
	local name=$1 pat=$2
	shift 2
	run "$name" "$@"
	if [ $rc -ne 1 ]; then
		[ $rc -lt 124 ] && fail "$name: exit $rc, expected 1: $(tail -c 300 "$T/err")"
	elif ! grep -q -- "$pat" "$T/err"; then
		fail "$name: said '$(cat "$T/err")', expected '$pat'"
	fi
}
MEM=400000
