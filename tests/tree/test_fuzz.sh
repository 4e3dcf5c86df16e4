#!/usr/bin/env bash
# Runs each libFuzzer target (fuzz/Build.mk) on its seed corpus for
# FUZZ_TIME seconds (make check: 4; make fuzz: 300), under ASan and UBSan
# with a 2 GiB RSS limit. The forged-trace targets (trace_struct, report,
# loaders, sim) read a trace description, not a file (fuzz/forge.h). New inputs go to a
# scratch directory; a crash leaves its input in $O/fuzz/crashes/.
set -u
O=${O:-build}
FUZZ_TIME=${FUZZ_TIME:-4}
status=0
for t in trace mtrace perf trace_struct report loaders sim; do
	bin=$O/fuzz/fuzz_$t
	if [ ! -x "$bin" ]; then
		echo "FAIL: $bin not built (make O=$O fuzz-build; needs clang)"
		status=1
		continue
	fi
	scratch=$(mktemp -d)
	mkdir -p "$O/fuzz/crashes"
	"$bin" -max_total_time="$FUZZ_TIME" -rss_limit_mb=2048 -timeout=10 \
		-max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$O/fuzz/crashes/$t-" \
		"$scratch" "fuzz/corpus/$t" > "$O/fuzz/$t.log" 2>&1
	rc=$?
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$O/fuzz/$t.log" | grep -o '[0-9]*$')
	if [ $rc -ne 0 ]; then
		echo "FAIL: fuzz_$t exit $rc"
		tail -30 "$O/fuzz/$t.log"
		status=1
	else
		echo "fuzz_$t: ${runs:-?} inputs in ${FUZZ_TIME}s, no crash"
	fi
	rm -rf "$scratch"
done
exit $status
