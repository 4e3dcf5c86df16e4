#!/usr/bin/env bash
# A message names the command that says it (uslab(1) conventions): an
# import whose -o cannot be written and a --calibration file that is not a
# cost model said "uslab: ..." alone; now "uslab import: ...",
# "uslab sim: ...", "uslab tune: ...".
. "$(dirname "$0")/../lib.sh"
set +e
"$U" gen rpmalloc -t 1 -b 100 -l 5 -o "$T/t.ustr" 2>/dev/null || fail "gen"
printf '= Start\n@ ./p:[0x1] + 0x55d0a0 0x10\n@ ./p:[0x1] - 0x55d0a0\n= End\n' > "$T/mt.log"
echo "not a model" > "$T/model"
check() {	# check PREFIX CMD...: exit 1 and the first line begins with PREFIX
	local want=$1
	shift
	run_rc "$@" > /dev/null 2> "$T/err"
	[ "$rc" -eq 1 ] || bad "$*: exit $rc, not 1"
	head -1 "$T/err" | grep -q "^$want: " || bad "$*: $(head -1 "$T/err")"
}
check "uslab import" "$U" import mtrace "$T/mt.log" -o "$T/no/such/dir/y.ustr"
check "uslab sim" "$U" sim --calibration "$T/model" "$T/t.ustr"
check "uslab tune" "$U" tune --model-only --calibration "$T/model" "$T/t.ustr"
[ "$failed" -eq 0 ] && echo "import -o, sim and tune --calibration errors name their command"
exit $failed
