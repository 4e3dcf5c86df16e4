#!/usr/bin/env bash
# bench/: the benchmark programs do the work they claim and the report
# computes what it says, with tiny counts and invented samples. Nothing
# here times anything (make bench measures; docs/benchmarks.md).
. "$(dirname "$0")/../lib.sh"
set +e
B=$O/bench/alloc_bench
P=$O/bench/hitprobe
[ -x "$B" ] && [ -x "$P" ] || fail "$B or $P not built (make)"

# field KEY: KEY's value in the result line $line
field() { local v=" $line"; v=${v#* "$1"=}; [ "$v" != " $line" ] && echo "${v%% *}"; }

for a in uslab glibc; do
	pre=()
	[ $a = uslab ] && pre=(env LD_PRELOAD="$LIBUSLAB")
	# sh6bench: 2 threads x 3 passes of 19300 blocks (sizes below 1000)
	line=$("${pre[@]}" "$B" sh6bench 2 1000 3 1000) || bad "$a: sh6bench failed"
	[ "$(field mallocs)" = $((2 * 3 * 19300)) ] || bad "$a: sh6bench made $(field mallocs) mallocs, not 115800"
	# sh8bench: every foreign block freed once, by another thread, intact
	line=$("${pre[@]}" "$B" sh8bench 2 240 20000 4000) || bad "$a: sh8bench failed: $line"
	[ "$(field foreign_frees)" = 4000 ] || bad "$a: sh8bench freed $(field foreign_frees) of 4000 foreign blocks"
	[ "$(field bad)" = 0 ] || bad "$a: sh8bench found $(field bad) foreign blocks overwritten"
	# 240 iterations of the 12-entry histogram, 120 per thread: 10 passes of 7321
	[ "$(field mallocs)" = $((2 * 10 * 7321 + 4000)) ] || bad "$a: sh8bench made $(field mallocs) mallocs"
	line=$("${pre[@]}" "$B" mleak 1) || bad "$a: mleak failed"
	[ "$(field threads_run)" = 1000 ] || bad "$a: mleak ran $(field threads_run) threads, not 1000"
	# 100 rounds of 10 swaps into 1000 slots keep at most 1000, at least one
	h=$(field held)
	[ "${h:-0}" -ge 1 ] && [ "$h" -le 1000 ] || bad "$a: mleak held $h blocks"
	line=$("${pre[@]}" "$B" gmfill 2 8) || bad "$a: gmfill failed"
	# 8 MiB of 16..512-byte blocks (264 on average): about 31,800
	n=$(field blocks)
	[ "${n:-0}" -gt 25000 ] && [ "$n" -lt 40000 ] || bad "$a: gmfill made $n blocks of 8 MiB"
	# scratch: 2 threads x 10 rounds x (1000 / 2 writes) x 3 bytes
	line=$("${pre[@]}" "$B" scratch 2 10 3 1000) || bad "$a: scratch failed"
	[ "$(field written)" = 30000 ] || bad "$a: scratch wrote $(field written) bytes, not 30000"
	line=$("${pre[@]}" "$B" rss_tax 1024) || bad "$a: rss_tax failed"
	[ "$(field requested_kb)" = 1024 ] || bad "$a: rss_tax held $(field requested_kb) KiB"
	[ "$(field rss_kb)" -gt 1024 ] || bad "$a: rss_tax: RSS $(field rss_kb) KiB while holding 1 MiB"
	# the peak is the program's own, not its launcher's: a parent holding
	# 64 MiB forks and execs it (as perf stat does make bench's runs), and
	# a 1 MiB program's peak stays far below that
	line=$(python3 -c 'import subprocess, sys
held = b"\1" * (64 << 20)
sys.exit(subprocess.run(sys.argv[1:]).returncode)' "${pre[@]}" "$B" small_rss 1048576 64) ||
		bad "$a: small_rss under a 64 MiB parent failed"
	[ "$(field peak_rss_kb)" -lt $((32 * 1024)) ] ||
		bad "$a: small_rss's peak RSS $(field peak_rss_kb) KiB: its launcher's (64 MiB), not its own"
done
"$B" gmfill 1 8 16 70000 >/dev/null 2>"$T/err" && bad "gmfill took a size it cannot record"
grep -q "MIN <= MAX <= 65535" "$T/err" || bad "gmfill's size error: $(cat "$T/err")"

# larson_sized frees through the preloaded allocator's own sized free
line=$(env LD_PRELOAD="$LIBUSLAB" "$B" larson_sized 2 1 8 1000 500 2) || bad "larson_sized failed"
[ "$(field sized_free)" = free_sized ] || bad "larson_sized on uslab used $(field sized_free)"
line=$("$B" larson_sized 2 1 8 1000 500 2) || bad "larson_sized on glibc failed"
[ "$(field sized_free)" = free ] || bad "larson_sized on glibc used $(field sized_free)"

# the study's overhead is against the bytes live when the RSS was read
line=$(env LD_PRELOAD="$LIBUSLAB" "$B" study 2 2 2000 1000) || bad "study failed"
live=$(field live_kb) rss=$(field rss_at_live_kb) base=$(field base_rss_kb)
[ "${live:-0}" -gt 0 ] && [ "${rss:-0}" -gt "$live" ] || bad "study: live $live KiB, RSS $rss KiB"
want=$(awk -v r="$rss" -v b="$base" -v l="$live" 'BEGIN { printf "%.0f", 100 * ((r - b) - l) / l }')
got=$(field overhead_pct)
[ "$(awk -v g="$got" -v w="$want" 'BEGIN { print (g - w < 1.5 && w - g < 1.5) }')" = 1 ] ||
	bad "study: overhead $got%, from its own figures $want%"

# hitpath: a count equal to its listing, checked by the probe when ptrace
# is allowed. A build without magazines (CONFIG_PERCPU_CACHE=n, or
# debug-on-boot caches: debug_defconfig) has no hit path: every malloc takes
# the slow path, so the probe, run on the real code, must find the walk
# leave the library and hitpath print no count.
if ! config PERCPU_CACHE || config SLAB_DEBUG_ON; then
	python3 bench/hitpath.py "$LIBUSLAB" --probe "$P" >"$T/out" 2>"$T/err" &&
		bad "hitpath verified a hit path in a build without magazines: $(cat "$T/out")"
	if grep -q "hitprobe failed" "$T/err"; then
		echo "(no ptrace here: the missing hit path not checked against the running code)"
	else
		grep -q "leaves the library at" "$T/err" || bad "hitpath's error without magazines: $(cat "$T/err")"
		[ -s "$T/out" ] && bad "hitpath printed a count for a build without magazines"
	fi
else
	python3 bench/hitpath.py "$LIBUSLAB" --list --probe "$P" >"$T/hp" 2>"$T/hperr"
	rc=$?
	if [ $rc -ne 0 ] && grep -q "hitprobe failed" "$T/hperr"; then
		echo "(no ptrace here: hit path not checked against the running code)"
		python3 bench/hitpath.py "$LIBUSLAB" --list >"$T/hp" 2>"$T/hperr" || bad "hitpath: $(cat "$T/hperr")"
	else
		[ $rc -eq 0 ] || bad "hitpath: $(cat "$T/hperr")"
		grep -q "verified=yes" "$T/hp" || bad "hitpath: the probe found the walk off the path: $(head -1 "$T/hp")"
	fi
	line=$(head -1 "$T/hp")
	listed=$(grep -c '^  ' "$T/hp")
	[ "$(field hitpath_insns)" = "$listed" ] || bad "hitpath: count $(field hitpath_insns), listing $listed"
	[ "$listed" -gt 4 ] || bad "hitpath: $listed instructions"
fi
# a library without malloc: a clear error, no number
python3 bench/hitpath.py "$O/uslab" >"$T/out" 2>"$T/err" && bad "hitpath counted a program without malloc"
grep -q "exports no malloc" "$T/err" || bad "hitpath's error: $(cat "$T/err")"
[ -s "$T/out" ] && bad "hitpath printed a count for a program without malloc"
"$P" "$LIBUSLAB" zz >/dev/null 2>"$T/err" && bad "hitprobe took a bad address"
grep -q "not a hex address" "$T/err" || bad "hitprobe's error: $(cat "$T/err")"

# report.py on invented samples: per-round ratios, their range, RSS, QUICK
mkdir -p "$T/r"
{
	printf 'quick\t1\nruns\t2\n'
} >"$T/r/machine.tsv"
{
	for r in 1 2; do
		# uslab takes 100 ms, tcmalloc 50 then 80: ratios 0.50 and 0.80
		printf 'sh6bench_t2\tuslab\ttask-clock\t100\t%s\n' $r
		# the adaptive preset takes twice the fixed build's 100 ms
		printf 'sh6bench_t2\tuslab-adaptive\ttask-clock\t200\t%s\n' $r
		printf 'sh6bench_t2\ttcmalloc\ttask-clock\t%s\t%s\n' $((r == 1 ? 50 : 80)) $r
		for p in glibc jemalloc mimalloc; do
			printf 'sh6bench_t2\t%s\ttask-clock\t200\t%s\n' $p $r
		done
		for p in uslab glibc jemalloc tcmalloc mimalloc; do
			printf 'sh6bench_t2\t%s\tsh6_s\t1\t%s\n' $p $r
			printf 'sh6bench_t2\t%s\tpeak_rss_kb\t%s\t%s\n' $p $([ $p = uslab ] && echo 3000 || echo 2000) $r
		done
		printf 'rss_tax\tuslab\trss_kb\t3000\t%s\nrss_tax\tglibc\trss_kb\t2500\t%s\n' $r $r
	done
	printf 'hitpath\tuslab\thitpath_insns\t28\t0\nhitpath\tuslab\tmalloc\t12\t0\n'
	printf 'hitpath\tuslab\tfree\t16\t0\nhitpath\tuslab\tverified\t1\t0\n'
} >"$T/r/samples.tsv"
python3 bench/report.py "$T/r" 2>"$T/err" || bad "report.py failed: $(cat "$T/err")"
grep -q '| sh6bench_t2 | CPU time | \*\*0.65 (0.50..0.80, 2)\*\* | tcmalloc | 2.00 | 2.00 | 0.65 | 2.00 | 1.00 | 1.50 |' "$T/r/results.md" ||
	bad "report: the sh6bench row: $(grep '| sh6bench_t2 | CPU' "$T/r/results.md")"
grep -q '| sh6bench_t2 | 0.50 (0.50..0.50, 2) | 1.00 | \*\*slower beyond the spread\*\* |' "$T/r/results.md" ||
	bad "report: the adaptive row: $(grep -A4 'adaptive preset against' "$T/r/results.md")"
grep -q 'uslab RSS - glibc RSS = \*\*500 KiB\*\*' "$T/r/results.md" || bad "report: the RSS tax row"
grep -q '\*\*28 instructions\*\*.*(malloc 12 + free 16.*hitprobe: yes' "$T/r/results.md" ||
	bad "report: the hit path row"
# every heading of a quick run says so
nq=$(grep '^#' "$T/r/results.md" | grep -vc 'QUICK RUN')
[ "$nq" = 0 ] || bad "report: $nq headings of a quick run do not say so"
exit $failed
