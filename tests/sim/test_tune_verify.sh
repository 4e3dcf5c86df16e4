#!/usr/bin/env bash
# `uslab tune --verify` and `--verify-grid` replay the trace for real and
# report what they measured: a row per configuration with modelled time,
# measured wall and CPU time, spread, modelled overhead and measured RSS;
# for a grid, Spearman's rank correlation of modelled against measured CPU
# time, which the test recomputes from the printed table (ties share their
# mean rank), the measurement's own split-half agreement and the rms error.
# With --cpus 1 the replays are one thread pinned to one CPU. Nothing here
# asserts a time: the figures vary with the machine, their form does not.
. "$(dirname "$0")/../lib.sh"
set +e	# every check runs; bad notes a failure
py=/usr/bin/python3
need_magazines tune

"$U" gen resize -t 2 -l 20000 -o "$T/r.ustr" 2>/dev/null || { echo "FAIL: gen"; exit 1; }

# replay prints the CPU time of its run
"$U" replay "$T/r.ustr" --allocator uslab > "$T/replay.txt" 2>&1 || bad "replay: $(cat "$T/replay.txt")"
grep -Eq '^CPU time: [0-9.]+ s user, [0-9.]+ s system' "$T/replay.txt" || bad "replay printed no CPU time"

# the grid, threads as recorded, then one pinned thread
check_grid() {	# $1 output, $2 expected header words
	local out=$1
	grep -q "^verified (real replays on libuslab.so, $2" "$out" ||
		bad "$out: not the expected header ($2)"
	[ "$(grep -Ec '^  mag=(4|64),depot=(0|-1) +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+% +[0-9.]+ +[0-9]+$' "$out")" -eq 4 ] ||
		bad "$out: not four grid rows"
	grep -Eq '^  noise: the medians of the even runs rank the points against those of the odd runs at -?[01]\.[0-9]{3}' "$out" ||
		bad "$out: no noise line"
	grep -Eq '^  rms error of modelled time \+ the replay.s own cost \(fitted: -?[0-9.]+ ms\) against measured CPU time [0-9.]+%' "$out" ||
		bad "$out: no rms line"
	$py - "$out" <<'EOF' || bad "$out: Spearman does not match the table"
import re, sys
rows, rho = [], None
for l in open(sys.argv[1]):
    m = re.match(r'  mag=\S+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+[\d.]+%', l)
    if m:
        rows.append((float(m[1]), float(m[2])))
    m = re.match(r'grid: (\d+) points; Spearman rank correlation of modelled time with measured CPU time (-?[\d.]+)', l)
    if m:
        n, rho = int(m[1]), float(m[2])
assert rho is not None and n == len(rows) == 4, (rho, rows)
import itertools
def ranks(v):
    return [sum(x < y for x in v) + (sum(x == y for x in v) + 1) / 2 for y in v]
def spearman(rx, ry):
    mx, my = sum(rx) / 4, sum(ry) / 4
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx); syy = sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** .5 if sxx and syy else 0.0
# The table prints figures rounded to 3 decimals: two that tie there may
# differ in the tool's full precision, which ranks them apart (a mismatch
# seen once in a make check, 2026-11-28). Accepted: the tie-sharing rho,
# or the rho of any order of the values tied in the table; with no tie
# that is the one rho, as before.
mx_, my_ = [r[0] for r in rows], [r[1] for r in rows]
wants = {round(spearman(ranks(mx_), ranks(my_)), 6)}
for px in itertools.permutations(range(4)):
    for py in itertools.permutations(range(4)):
        rx = [0] * 4; ry = [0] * 4
        okx = all(mx_[px[i]] <= mx_[px[i + 1]] for i in range(3))
        oky = all(my_[py[i]] <= my_[py[i + 1]] for i in range(3))
        if not (okx and oky):
            continue
        for k, i in enumerate(px): rx[i] = k + 1
        for k, i in enumerate(py): ry[i] = k + 1
        wants.add(round(spearman(rx, ry), 6))
assert -1 <= rho <= 1 and any(abs(w - rho) < 0.0015 for w in wants), (sorted(wants), rho)
EOF
}
"$U" tune "$T/r.ustr" -j 2 --mag-sizes 4,64 --depot-limits 0,-1 --no-compose \
	--verify-grid=2 > "$T/grid.txt" 2> "$T/grid.err" || bad "verify-grid: $(cat "$T/grid.err")"
check_grid "$T/grid.txt" "the recorded threads, 2 runs each"
"$U" tune "$T/r.ustr" -j 2 --cpus 1 --mag-sizes 4,64 --depot-limits 0,-1 --no-compose \
	--verify-grid=2 > "$T/grid1.txt" 2> "$T/grid1.err" || bad "verify-grid --cpus 1: $(cat "$T/grid1.err")"
check_grid "$T/grid1.txt" "one thread pinned to CPU [0-9]*, 2 runs each"

# tune's real rounds (what --verify=N now names): the defaults and each
# candidate, medians with bootstrap 95% intervals, the changes against the
# defaults, and a verdict
"$U" tune "$T/r.ustr" -j 2 --mag-sizes 4,64 --depot-limits 0,-1 --verify=3 \
	> "$T/verify.txt" 2> "$T/verify.err" || bad "verify: $(cat "$T/verify.err")"
ci='[0-9.]+ \[[0-9.]+, [0-9.]+\]'
dci='[-+][0-9.]+% \[[-+][0-9.]+, [-+][0-9.]+\]'
grep -Eq "^  defaults +$ci +$ci +$ci +- +-$" "$T/verify.txt" || bad "--verify: no defaults row"
grep -Eq "^  candidate 1 +$ci +$ci +$ci +$dci +$dci$" "$T/verify.txt" || bad "--verify: no candidate row"
grep -Eq '^(keep the defaults|recommended: )' "$T/verify.txt" || bad "--verify: no verdict"
$py - "$T/verify.txt" <<'EOF'  || bad "--verify: a median outside its interval (one configuration's figures)"
import re, sys
for l in open(sys.argv[1]):
    for m, lo, hi in re.findall(r'(?<![-+\d.])([\d.]+) \[([\d.]+), ([\d.]+)\]', l):
        assert float(lo) <= float(m) <= float(hi), l
EOF

[ "$failed" -eq 0 ] && echo "tune --verify and --verify-grid: tables, intervals, rank correlation, noise and rms as printed"
exit $failed
