#!/usr/bin/env bash
# `uslab tune --merge` takes only result lines whose every figure is one
# uslab sim --result can print: a count field that is negative or past
# 2^64 (sscanf's %llu read "res_peak=-1" as 16 EiB), a time or a mean that
# is not finite, a hit rate outside 0..1 are refused, exit 1, naming the
# line and the field. The results come from uslab sim --result itself
# (the lines --jobs prints, run here by the shell: no GNU parallel needed).
. "$(dirname "$0")/../lib.sh"
set +e
need_magazines tune
sweep=(--mag-sizes 4,64 --depot-limits 0,-1 --no-compose)

"$U" gen prodcons -t 2 -l 2000 -o "$T/pc.ustr" 2>/dev/null || fail "gen prodcons"
"$U" tune "$T/pc.ustr" --jobs "${sweep[@]}" > "$T/jobs.txt" 2> "$T/err" || fail "--jobs: $(cat "$T/err")"
bash "$T/jobs.txt" > "$T/results.txt" 2> "$T/sim.err" || fail "the jobs: $(tail -3 "$T/sim.err")"
[ "$(grep -c '^uslab-sim-result v1 ' "$T/results.txt")" -eq 5 ] || fail "not 5 results"
"$U" tune "$T/pc.ustr" --merge "$T/results.txt" "${sweep[@]}" --model-only > /dev/null 2> "$T/err" ||
	fail "--merge of undamaged results: $(cat "$T/err")"

# FIELD=VALUE put in line 2; the message that names it
while read -r field value what; do
	awk -v f="$field" -v v="$value" 'NR == 2 { sub(" " f "=[^ ]*", " " f "=" v) } 1' \
		"$T/results.txt" > "$T/bad.txt"
	grep -q " $field=$value " "$T/bad.txt" || fail "no $field field to damage"
	run_rc "$U" tune "$T/pc.ustr" --merge "$T/bad.txt" "${sweep[@]}" --model-only \
		> "$T/out" 2> "$T/err"
	[ "$rc" -eq 1 ] && grep -qF -- "--merge $T/bad.txt:2: $field=$value is not $what" "$T/err" ||
		fail "$field=$value: exit $rc, $(cat "$T/err")"
	[ -s "$T/out" ] && grep -q 'candidate\|frontier' "$T/out" && fail "$field=$value: a verdict printed"
done <<'CASES'
res_peak -1 a count
res_peak 99999999999999999999999 a count
faults -3 a count
page_ops -1 a count
cost_ns inf a finite time
res_mean -5 a mean of bytes
res_mean nan a mean of bytes
hit 7 a hit rate
hit -0.5 a hit rate
ovh_mean inf a finite mean
CASES
echo "tune --merge: 10 damaged figures refused, each named with its line"
