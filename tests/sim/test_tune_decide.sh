#!/usr/bin/env bash
# uslab tune's verdict comes from real replays (issue 19): on a trace made so
# that a setting is clearly better it recommends it, on one made so that the
# defaults are best it says "keep the defaults"; --model-only says so on
# every line. The made traces' effects are large (3x CPU time, 4x resident
# memory; +100% CPU time), so a busy 2-core machine does not flip them.
# Both sweep fixed sizes only (--no-adapt): what is asserted is the verdict
# on those settings; the adaptive default would be a fourth candidate.
. "$(dirname "$0")/../lib.sh"
set +e	# every check runs; bad notes a failure
need_magazines tune
F=$O/tests/trace/trace_forge
[ -x "$F" ] || fail "$F not built"

# Clearly better: 3 MiB of each class from 1 KiB to 64 KiB allocated, then
# freed, class after class. The defaults' magazines and depot (up to 4 MiB a
# class) keep each class's blocks: 80 MiB resident, every page faulted
# fresh. Small magazines without a depot give the slabs back and the next
# class reuses their pages: 20 MiB, a third of the CPU time.
awk 'BEGIN { id = 1; n = split("1024 1280 1536 1792 2048 2560 3072 3584 4096 5120 6144 7168 8192 10240 12288 14336 16384 20480 24576 28672 32768 40960 49152 57344 65536", s, " ")
	for (k = 1; k <= n; k++) { c = int(3 * 1048576 / s[k])
		for (i = 0; i < c; i++) printf "malloc 0 0 %d 0 %d 0\n", id + i, s[k]
		for (i = 0; i < c; i++) printf "free 0 0 %d 0 0 0\n", id + i
		id += c } }' | "$F" "$T/better.ustr" || fail "forge better.ustr"
# Defaults best: bursts of 100 blocks of 64 B, allocated then freed, 2000
# times; the default magazine (120 blocks) serves every burst, the swept
# magazines of 4 and 8 refill and flush all the time (2-4x the CPU time),
# and the memory is the same few pages.
awk 'BEGIN { for (r = 0; r < 2000; r++) { for (i = 1; i <= 100; i++) printf "malloc 0 0 %d 0 64 0\n", i
	for (i = 1; i <= 100; i++) printf "free 0 0 %d 0 0 0\n", i } }' | "$F" "$T/defaults.ustr" ||
	fail "forge defaults.ustr"

for goal in balanced memory; do
	out=$T/better-$goal.txt
	"$U" tune "$T/better.ustr" --cpus 1 -j 2 --goal $goal --runs 5 --no-adapt --mag-sizes 4,16,64 \
		--depot-limits 0,-1 > "$out" 2> "$T/err" || bad "tune better.ustr --goal $goal: $(tail -3 "$T/err")"
	grep -q "^uslab tune: .*goal $goal$" "$out" || bad "$goal: the goal is not in the header"
	grep -q '^round 1, selection: real replays on libuslab.so (one thread pinned to CPU [0-9]*), 5 runs each, interleaved, each of the 36830 events simulated' "$out" ||
		bad "$goal: no selection round: $(grep -m1 round "$out")"
	grep -q '^round 2, confirmation: ' "$out" || bad "$goal: no confirmation round"
	grep -q '^recommended: ' "$out" || bad "$goal: no recommendation: $(grep -m1 'keep the defaults' "$out")"
	grep -q '^  USLAB_OPTIONS=.*depot_limit=0' "$out" || bad "$goal: the recommendation keeps a depot"
	# the figures it decided on: CPU time and peak RSS both well below
	awk -v g=$goal '/^measured \(confirmation round/ {
		if (!match($0, /CPU time [-+][0-9.]+% \[[-+][0-9.]+, [-+][0-9.]+\]/)) exit 1
		split(substr($0, RSTART, RLENGTH), c, /[][ ,%]+/)
		if (!match($0, /peak RSS [-+][0-9.]+% \[[-+][0-9.]+, [-+][0-9.]+\]/)) exit 1
		split(substr($0, RSTART, RLENGTH), m, /[][ ,%]+/)
		ok = c[5] + 0 <= 3 && m[5] + 0 < -20; found = 1 }
		END { exit !(found && ok) }' "$out" ||
		bad "$goal: the measured line: $(grep '^measured' "$out")"
done

out=$T/defaults.txt
"$U" tune "$T/defaults.ustr" --cpus 1 -j 2 --runs 5 --no-adapt --mag-sizes 4,8 --depot-limits 0 \
	> "$out" 2> "$T/err" || bad "tune defaults.ustr: $(tail -3 "$T/err")"
grep -q '^keep the defaults: no candidate passed' "$out" ||
	bad "defaults.ustr: not kept: $(grep -m1 -E '^(recommended|keep)' "$out")"
grep -q '^  USLAB_OPTIONS=$' "$out" || bad "defaults.ustr: an option string"
grep -Eq '^keep the defaults: .*CPU time \+[0-9.]+% \[\+[0-9.]+, \+[0-9.]+\]' "$out" ||
	bad "defaults.ustr: the figures do not show the candidates slower"

# --model-only: no replay, every line says so
"$U" tune "$T/better.ustr" --cpus 1 -j 2 --model-only --mag-sizes 4,64 --depot-limits 0 \
	> "$T/model.txt" 2> "$T/err" || bad "--model-only: $(tail -3 "$T/err")"
[ -s "$T/model.txt" ] || bad "--model-only printed nothing"
grep -v '^\[model only\] ' "$T/model.txt" | grep -q . && bad "--model-only: a line without the mark"
grep -q 'round 1' "$T/model.txt" && bad "--model-only replayed"
grep -q '^\[model only\] recommended by the model alone: ' "$T/model.txt" ||
	bad "--model-only: no model recommendation"

# bad goal: a usage error naming the option
run_rc "$U" tune "$T/better.ustr" --goal speed 2>/dev/null
[ "$rc" -eq 2 ] || bad "--goal speed: exit $rc, expected 2"
"$U" tune "$T/better.ustr" --goal speed 2>&1 | grep -q -- '--goal: expected time, memory or balanced' ||
	bad "--goal speed: the message does not name the option"

[ "$failed" -eq 0 ] && echo "tune: recommends the clearly better setting, keeps the defaults where they are best, --model-only marked"
exit $failed
