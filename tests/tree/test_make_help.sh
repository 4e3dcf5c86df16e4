#!/usr/bin/env bash
# make help is complete: every .PHONY target of the tree is listed with a
# description (bench-kv had none), from one read of make's database (it ran
# one make per target: 8.9 s under load; the time itself is not a test).
set -u
cd "$(dirname "$0")/../.."
O=${O:-build}
fail() { echo "FAIL: $*"; exit 1; }
out=$(make -s --no-print-directory O="$O" help 2>&1) || fail "make help: $out"
echo "$out" | head -5
targets=$(echo "$out" | sed -n '/^targets:/,/^  <preset>/p' | sed -n 's/^  \([a-z][a-z0-9_-]*\) .*/\1/p')
[ "$(echo "$targets" | wc -l)" -ge 20 ] || fail "make help lists too few targets: $targets"
for t in all check check-tools check-malloc bench bench-kv install help; do
	echo "$targets" | grep -qx "$t" || fail "make help does not list $t"
done
bad=$(echo "$out" | sed -n '/^targets:/,/^  <preset>/p' | grep -E '^  [a-z][a-z0-9_-]* *$|undescribed' || true)
[ -z "$bad" ] || fail "targets without a description: $bad"
echo ok
