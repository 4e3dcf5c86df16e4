#!/usr/bin/env bash
# Every command whose output goes to a full standard output (/dev/full)
# says "standard output: ..." and exits 1: replay's report (one run and
# --runs), tune --model-only's verdict (printed through a prefixing stream)
# and slabinfo --gc's line. Before, these exited 0 with the output lost
# (slabinfo --gc exited 1 without a word). test_cli.sh covers script,
# report, sim and tune.
. "$(dirname "$0")/../lib.sh"
set +e

"$U" gen rpmalloc -t 1 -b 200 -l 5 -o "$T/t.ustr" 2>/dev/null || fail "gen"
while IFS= read -r c; do
	run_rc sh -c "\"$U\" $c > /dev/full" 2> "$T/err"
	[ "$rc" -eq 1 ] || bad "$c > /dev/full: exit $rc, not 1"
	grep -q "standard output: No space left on device" "$T/err" ||
		bad "$c > /dev/full: not said: $(tail -2 "$T/err")"
done <<EOC
replay $T/t.ustr
replay --runs 3 $T/t.ustr
replay -a uslab $T/t.ustr
tune --model-only --mag-sizes 8 --depot-limits 2 -j 1 --no-compose $T/t.ustr
slabinfo --gc
EOC
[ "$failed" -eq 0 ] && echo "replay, tune --model-only and slabinfo --gc say a write error on standard output"
exit $failed
