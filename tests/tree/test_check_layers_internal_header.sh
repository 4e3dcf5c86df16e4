#!/usr/bin/env bash
# A folder's internal.h is its own (docs/layout.md, "Internal headers"):
# scripts/check-layers.sh refuses a synthetic tree in which one folder
# includes another's internal.h, even downward (tools/ may use trace/, not
# trace/internal.h), names the file and the header, and lets the owner and
# the white-box tests/ and fuzz/ include it. The real tree passes.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O=$src/$O ;; esac
fail() { echo "FAIL: $*"; exit 1; }
(cd "$src" && O=$O bash scripts/check-layers.sh) > /dev/null ||
	fail "the real tree does not pass check-layers"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mk() {	# mk FILE TEXT: a source file of the synthetic tree
	mkdir -p "$T/$(dirname "$1")" && printf '%s\n' "$2" > "$T/$1"
}
check() {	# run the checker on the synthetic tree (includes only: no build)
	(cd "$T" && O=build bash "$src/scripts/check-layers.sh") > "$T/out" 2>&1
}

mk trace/internal.h '/* private */'
mk trace/trace.h '/* interface */'
mk trace/reader.c '#include "trace/internal.h"'
mk sim/internal.h '#include "trace/trace.h"'
mk sim/engine.c '#include "sim/internal.h"'
mk tools/uslab/cmd.c '#include "trace/trace.h"'
mk tests/trace/check_reader.c '#include "trace/internal.h"'
mk fuzz/fuzz_sim.c '#include "sim/internal.h"'
check || { cat "$T/out"; fail "owners and white-box tests including internal.h are refused"; }

# Downward by rank, but another folder's internal header.
mk tools/uslab/cmd.c '#include "trace/internal.h"'
check && { cat "$T/out"; fail "tools/ including trace/internal.h passed"; }
grep -q 'internal header: tools/uslab/cmd.c includes trace/internal.h' "$T/out" ||
	{ cat "$T/out"; fail "the file and the header are not named"; }
mk tools/uslab/cmd.c '#include "trace/trace.h"'

# A header of one folder carrying another's internal.h up.
mk sim/internal.h '#include "trace/internal.h"'
check && { cat "$T/out"; fail "sim/internal.h including trace/internal.h passed"; }
grep -q 'internal header: sim/internal.h includes trace/internal.h' "$T/out" ||
	{ cat "$T/out"; fail "the header's include is not named"; }
echo "check-layers: refuses another folder's internal.h, lets its owner and tests/, fuzz/ include it"
