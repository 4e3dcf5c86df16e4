#!/usr/bin/env bash
# The process tune works on is the one it replays (issue 19, item 5): a
# shell that runs perl is recorded; by default the tools take the shell
# (the program the command ran as), which holds under 5% of the
# allocations, and sim and tune say which process does and how to pick it.
# With --comm perl every replay tune starts takes perl too: each must run
# the events the simulation ran (before, `tune --comm cc1 --verify`
# simulated cc1 and replayed the gcc driver's 293 allocations).
. "$(dirname "$0")/../lib.sh"
set +e
need_magazines tune
command -v perl > /dev/null || fail "perl is missing (scripts/deps.sh test)"

"$U" record -q -o "$T/sh.ustr" -- sh -c 'perl -e "my @a; for (1..20000) { push @a, q(x) x (\$_ % 300) } print scalar(@a), qq(\n)"; true' \
	> /dev/null 2> "$T/rec.err" || fail "record: $(cat "$T/rec.err")"
perl_events=$("$U" script --header "$T/sh.ustr" 2>/dev/null | sed -n 's/^# process: .* events \([0-9]*\) .* comm perl .*/\1/p')
[ -n "$perl_events" ] && [ "$perl_events" -gt 10000 ] || fail "no perl process in the trace ($perl_events)"

for cmd in sim tune; do
	extra=()
	[ $cmd = tune ] && extra=(--model-only -j 1 --mag-sizes 4 --depot-limits 0 --no-compose)
	"$U" $cmd "$T/sh.ustr" "${extra[@]}" > /dev/null 2> "$T/$cmd.err" || bad "$cmd: $(cat "$T/$cmd.err")"
	grep -Eq "It holds under 5% of the trace's allocations; process [0-9]+ \(perl\) holds [0-9]+ \((99|100)%\): pick it with --pid [0-9]+ or --comm perl" "$T/$cmd.err" ||
		bad "$cmd does not say which process holds the allocations: $(cat "$T/$cmd.err")"
done

# replay --runs N: the notice of which process it took is said once, not
# once per run (each run is a fresh process that says it again)
"$U" replay "$T/sh.ustr" --runs 3 > /dev/null 2> "$T/runs.err" || bad "replay --runs 3: $(cat "$T/runs.err")"
n=$(grep -c 'chooses another' "$T/runs.err")
[ "$n" -eq 1 ] || bad "replay --runs 3 said which process it took $n times, not once: $(cat "$T/runs.err")"

"$U" tune "$T/sh.ustr" --comm perl -j 2 --runs 3 --candidates 1 --mag-sizes 4 --depot-limits 0 \
	--no-compose > "$T/tune.txt" 2> "$T/tune.err" || bad "tune --comm perl: $(tail -3 "$T/tune.err")"
grep -q "^round 1, selection: .*each of the $perl_events events simulated, --comm perl;" "$T/tune.txt" ||
	bad "tune --comm perl: the replays are not perl's $perl_events events: $(grep -m1 '^round' "$T/tune.txt")"
grep -Eq '^(recommended: |keep the defaults)' "$T/tune.txt" || bad "tune --comm perl: no verdict"
[ "$failed" -eq 0 ] && echo "tune: the process simulated is the one replayed ($perl_events events of perl); the default one named when it holds little"
exit $failed
