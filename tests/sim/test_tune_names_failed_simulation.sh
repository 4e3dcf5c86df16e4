#!/usr/bin/env bash
# The tuner's engine prints nothing (sim/tune.c): a simulation that fails in
# a child sends its reason home (tune_out.err) and `uslab tune` says it:
# "a simulation failed (event N: object state does not match ...)". Before,
# the child printed nothing of it and tune said "(see above)" with nothing
# above. The trace is test_sim_realloc_zero_ends_id.sh's: its later realloc
# of an ended id is the trace's error in every configuration.
. "$(dirname "$0")/../lib.sh"
tr=$(dirname "$0")/data/realloc-size0-then-reuse.ustr
run_rc "$U" tune --model-only -j 1 --mag-sizes 4 --cpus 9 "$tr" >"$T/out" 2>"$T/err"
[ "$rc" -ne 0 ] || fail "tune: exit 0 though every simulation fails"
grep -q '^uslab tune: a simulation failed (event [0-9]*: object state does not match the operation (realloc of id 9223372036854775639))$' "$T/err" ||
	fail "tune did not say why the simulation failed: $(cat "$T/err")"
grep -q 'see above' "$T/err" && fail "tune points above at nothing: $(cat "$T/err")"
[ "$(grep -c 'a simulation failed' "$T/err")" -eq 1 ] || fail "the failure said more than once: $(cat "$T/err")"
echo "tune says why a simulation failed, once"
