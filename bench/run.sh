#!/usr/bin/env bash
# `make bench`: the seeds' studies and mimalloc-bench-shaped workloads on
# uslab and on glibc, jemalloc, tcmalloc and mimalloc, every allocator
# preloaded into the same program in the same run. Every case runs $RUNS
# times (5), allocators interleaved within each round; bench/report.py
# writes medians and ratios as JSON, Markdown and PNG plots. perf stat's
# software counters (task-clock, page-faults, context-switches,
# cpu-migrations) are kept for every run.
#
#   BENCH_QUICK=1   one run per case, smaller counts (about two minutes)
#   BENCH_CASES=re  only the cases whose name matches the regex
#   BENCH_REDIS=1   run the redis slot too (bench/redis.sh; the service
#                   study with latency percentiles is make bench-kv)
#
# Results: $O/bench/results.{json,md}, $O/bench/*.png, raw samples in
# $O/bench/samples.tsv. The four presets of the thread-cache study are
# built under $O/bench/presets/<name>/ (make <name>_defconfig).
set -u
O=${O:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
out=$O/bench
mkdir -p "$out"
quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then RUNS=${RUNS:-1}; else RUNS=${RUNS:-5}; fi
filter=${BENCH_CASES:-.}
bench=$(realpath "$O/bench/alloc_bench")
presets=(performance adaptive unlimited size nocache)
. "$src/bench/lib.sh"
bench_allocators "$O"
for a in "${allocs[@]}"; do
	[ -z "${lib[$a]}" ] || [ -e "${lib[$a]}" ] || { echo "bench: missing ${lib[$a]}" >&2; exit 1; }
done

# The study's presets: one library per preset, built out of tree.
# Each preset keeps its own .config (KCONFIG_CONFIG), never the tree's.
for p in "${presets[@]}"; do
	pdir=$out/presets/$p
	mkdir -p "$pdir"
	cfg=$(realpath -m "$pdir/.config")
	if ! { KCONFIG_CONFIG=$cfg make -s -C "$src" O="$pdir" "${p}_defconfig" >/dev/null &&
	       KCONFIG_CONFIG=$cfg nice make -s -C "$src" O="$pdir" -j2 "$pdir/libuslab.so" >/dev/null; }; then
		echo "bench: could not build the $p preset" >&2
		exit 1
	fi
	lib[uslab-$p]=$(realpath "$pdir/libuslab.so")
done
study_allocs=("${presets[@]/#/uslab-}" "${peers[@]}")
# Every row shows the adaptive magazines (issue 23) beside the fixed
# defaults: the adaptive preset right after our default build.
allocs=("${ours[@]}" uslab-adaptive "${peers[@]}")

unset USLAB_OPTIONS
samples=$out/samples.tsv
: >"$samples"
perf_ok=1
perf stat -x, -e task-clock -o /dev/null true 2>/dev/null || perf_ok=0
events=task-clock,page-faults,context-switches,cpu-migrations

{
	echo "machine	$(uname -srm)"
	echo "cpu	$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo) x $(nproc)"
	echo "memory	$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
	echo "loadavg_start	$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "date	$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "runs	$RUNS"
	echo "quick	$quick"
	echo "commit	$(git -C "$src" rev-parse --short HEAD 2>/dev/null)"
	for a in glibc jemalloc tcmalloc mimalloc; do
		case $a in
		glibc) pkg=libc6 ;; jemalloc) pkg=libjemalloc2 ;;
		tcmalloc) pkg=libtcmalloc-minimal4 ;; mimalloc) pkg=libmimalloc2.0 ;;
		esac
		echo "peer_$a	$pkg $(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null)"
	done
} >"$out/machine.tsv"

# sample CASE ALLOC KEY VALUE: one figure of round $round
round=0
sample() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" "$round" >>"$samples"; }

# run_case CASE ALLOC ARGS...: one run of alloc_bench, its key=value
# results and perf stat's software counters into the samples.
run_case() {
	local c=$1 a=$2; shift 2
	local pf=$out/perf.$$ line kv t0=$EPOCHREALTIME
	if [ "$perf_ok" = 1 ]; then
		# (perf execs its command: `on`, a shell function, cannot be it)
		line=$(perf stat -x, -e "$events" -o "$pf" \
			env ${lib[$a]:+LD_PRELOAD=${lib[$a]}} "$bench" "$@") || {
			echo "bench: $c on $a failed: $bench $*" >&2; return 1; }
		awk -F, -v c="$c" -v a="$a" -v r="$round" '$3 ~ /^(task-clock|page-faults|context-switches|cpu-migrations)/ {
			printf "%s\t%s\t%s\t%s\t%s\n", c, a, $3, $1, r }' "$pf" >>"$samples"
		rm -f "$pf"
	else
		line=$(on "$a" "$bench" "$@") || {
			echo "bench: $c on $a failed: $bench $*" >&2; return 1; }
	fi
	for kv in $line; do
		sample "$c" "$a" "${kv%%=*}" "${kv#*=}"
	done
	# what the run cost in time, for bounding make bench (report: run time)
	sample "$c" "$a" run_s "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')"
}

# Counts: the seeds' parameters where a run stays within seconds, scaled
# down otherwise (docs/benchmarks.md says which); quick mode smaller still.
# The study's 150000 blocks per thread (1 GiB live per thread with every
# byte written) and gmalloc's 3 GB take tens of seconds per run; the full
# mode keeps the shapes and scales the counts so that 5 runs of everything
# fit in about 20 minutes on 2 shared cores: study 30000 blocks/thread, 2
# loops; gmalloc 256 MiB. Kept or scaled up instead: mtmalloc the seed's
# 1,000,000 iterations (50,000 ran 3 ms of CPU, most of it the process's
# start; 4,000,000 cut the spread further but added ten minutes to a run) and rptest 5000 loops (the seed's 500; 200 ran
# 14 ms, most of it the first blocks): runs that short were too noisy to
# judge a 5% change by (issue 23: adaptive 0.84 and 0.65 in one make bench,
# 0.98 and 0.97 re-measured).
if [ "$quick" = 1 ]; then
	S_BLOCKS=20000 S_LOOPS=1 PAIR_N=5000000 MT_ITERS=50000 GM_MB=128 SECS=1
	RP_LOOPS=100 AT_ITERS=500000 CFRAC=3000 ESPRESSO=60 LARGE=40
	MANY_N=20000 DECAY_S=3 SH6_REP=250 SH8_ITERS=14000 GMF_MB=256 MLEAK="5"
	SCRATCH_W=200000
else
	S_BLOCKS=30000 S_LOOPS=2 PAIR_N=10000000 MT_ITERS=1000000 GM_MB=256 SECS=1
	RP_LOOPS=5000 AT_ITERS=1000000 CFRAC=10000 ESPRESSO=150 LARGE=100
	MANY_N=50000 DECAY_S=5 SH6_REP=1000 SH8_ITERS=70000 GMF_MB=1024 MLEAK="5 50"
	SCRATCH_W=2000000
fi

# Cases: name, allocators (study: presets + peers), alloc_bench arguments.
cases=()
add() { cases+=("$*"); }
add "pair|all|pair $PAIR_N"
for t in 1 2 4 8; do
	add "study_t$t|study|study $t $S_LOOPS $S_BLOCKS $((S_BLOCKS / 2))"
done
for kb in 32 64 128 256; do
	for t in 2 4 8 16 32; do
		add "mt_${kb}k_t$t|all|mt $t $MT_ITERS $((kb * 1024))"
	done
done
add "gmalloc_seq|all|gmalloc seq $GM_MB"
add "gmalloc_mt|all|gmalloc mt $GM_MB 4"
add "gmalloc_mix|all|gmalloc mix $GM_MB"
add "larson_t2|all|larson 2 $SECS"
add "larson_sized_t2|all|larson_sized 2 $SECS"
add "rptest_t2|all|rptest 2 $RP_LOOPS"
add "xmalloc_t2|all|xmalloc 2 $SECS"
add "alloc_test_t1|all|alloc_test 1 $AT_ITERS"
add "alloc_test_t2|all|alloc_test 2 $AT_ITERS"
add "glibc_thread_t1|all|glibc_thread 1 $SECS"
add "glibc_thread_t2|all|glibc_thread 2 $SECS"
add "cfrac|all|cfrac $CFRAC"
add "espresso|all|espresso $ESPRESSO"
add "malloc_large|all|malloc_large $LARGE"
add "many_t8|all|manythreads 8 $MANY_N"
add "many_t64|all|manythreads 64 $MANY_N"
add "prodcons|all|prodcons 2000000"
add "threads_rss|all|threads 64"
add "small_rss|all|small_rss 1048576 64"
# mimalloc-bench runs sh6bench and sh8bench on 2x the CPUs (4 here)
for t in 2 4; do
	add "sh6bench_t$t|all|sh6bench $t 10000 $SH6_REP"
	add "sh8bench_t$t|all|sh8bench $t $SH8_ITERS"
done
for m in $MLEAK; do
	add "mleak$((m * 2))|all|mleak $m"
done
# Hoard's cache-scratch as mimalloc-bench runs it (1000 rounds of 1-byte
# blocks, 2,000,000 writes shared among the threads): passive false sharing
for t in 1 2; do
	add "scratch_t$t|all|scratch $t 1000 1 $SCRATCH_W"
done
add "gmalloc_t1|all|gmfill 1 $GMF_MB"
add "gmalloc_t2|all|gmfill 2 $GMF_MB"
add "rss_tax|all|rss_tax 1024"

# the arguments of this run's cases, for bench/profile.sh
printf '%s\n' "${cases[@]}" >"$out/cases.tsv"

selected=()
for c in "${cases[@]}"; do
	[[ ${c%%|*} =~ $filter ]] && selected+=("$c")
done
echo "bench: ${#selected[@]} cases x $RUNS runs on ${allocs[*]} (study: ${study_allocs[*]})"
t_start=$(date +%s)
for r in $(seq 1 "$RUNS"); do
	round=$r
	for c in "${selected[@]}"; do
		IFS='|' read -r name which args <<<"$c"
		if [ "$which" = study ]; then set -- "${study_allocs[@]}"; else set -- "${allocs[@]}"; fi
		# rotate the order each round: no allocator always runs first
		k=$(( (r - 1) % $# ))
		set -- "${@:k+1}" "${@:1:k}"
		for a in "$@"; do
			# shellcheck disable=SC2086
			run_case "$name" "$a" $args
		done
	done
	echo "loadavg_round$r	$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.tsv"
	echo "  round $r done ($(( $(date +%s) - t_start )) s, load $(cut -d' ' -f1 /proc/loadavg))"
done

# The hit path's instructions (malloc + free, entry to ret), from the
# disassembly of the library under test, checked against the running code
# by hitprobe where ptrace is allowed: one figure per run, not timed.
if [[ hitpath =~ $filter ]]; then
	round=0
	hp=(--probe "$(realpath "$O/bench/hitprobe")")
	/usr/bin/python3 "$src/bench/hitpath.py" "${lib[uslab]}" --list "${hp[@]}" >"$out/hitpath.txt" ||
		/usr/bin/python3 "$src/bench/hitpath.py" "${lib[uslab]}" --list >"$out/hitpath.txt" ||
		echo "bench: no hit path count (above)" >&2
	for kv in $(head -1 "$out/hitpath.txt"); do
		case $kv in
		verified=yes) sample hitpath uslab verified 1 ;;
		verified=*) sample hitpath uslab verified 0 ;;
		*) sample hitpath uslab "${kv%%=*}" "${kv#*=}" ;;
		esac
	done
	# the peers' own, by the same walk (glibc's malloc is libc's)
	for a in "${peers[@]}"; do
		l=${lib[$a]:-$(ldd "$bench" | awk '$1 ~ /^libc\.so/ { print $3 }')}
		line=$(/usr/bin/python3 "$src/bench/hitpath.py" "$l" "${hp[@]}" 2>/dev/null) || continue
		case $line in *verified=yes*) ;; *) continue ;; esac
		kv=${line%% *}
		sample hitpath "$a" "${kv%%=*}" "${kv#*=}"
	done
fi

# RSS over time after a burst (issue 13 item 5): one run per allocator,
# the presets included, sampled every 250 ms while the program idles.
if [[ rss_decay =~ $filter ]]; then
	for a in "${study_allocs[@]}"; do
		run_case rss_decay "$a" rss_decay 1 "$DECAY_S"
	done
	echo "  rss_decay done ($(( $(date +%s) - t_start )) s)"
fi

# The redis service study is engineer services' (examples/kv and its
# redis-benchmark case, make bench-kv); this slot runs the Debian
# redis-server preloaded with each allocator, RSS included.
if [ "${BENCH_REDIS:-0}" = 1 ] && [[ redis =~ $filter ]]; then
	bash "$src/bench/redis.sh" "$O" "$samples" || echo "bench: redis slot failed" >&2
fi

echo "loadavg_end	$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.tsv"
echo "seconds	$(( $(date +%s) - t_start ))" >>"$out/machine.tsv"
/usr/bin/python3 "$src/bench/report.py" "$out" || exit 1
cat "$out/results.md"
echo "bench: results in $out/results.md, $out/results.json and $out/*.png"
