# Sourced by the benchmark scripts: the allocators of a run, named once,
# and how a script runs one (on, field, bench_samples, each_run below).
# lib[NAME] is the library to preload for NAME (empty for glibc: nothing
# preloaded); peers are the four peers (Debian's packages, scripts/deps.sh
# bench). bench_allocators DIR [NAME=LIB...] adds uslab builds: the NAME=LIB
# pairs, or uslab=DIR/libuslab.so without any; it sets ours (their names)
# and allocs (ours, then the peers).
libdir=/usr/lib/x86_64-linux-gnu
declare -A lib=(
	[glibc]=
	[jemalloc]=$libdir/libjemalloc.so.2
	[tcmalloc]=$libdir/libtcmalloc_minimal.so.4
	[mimalloc]=$libdir/libmimalloc.so.2
)
peers=(glibc jemalloc tcmalloc mimalloc)

bench_allocators() {
	local dir=$1 kv
	shift
	[ $# -gt 0 ] || set -- "uslab=$dir/libuslab.so"
	ours=()
	for kv in "$@"; do
		lib[${kv%%=*}]=$(realpath "${kv#*=}")
		ours+=("${kv%%=*}")
	done
	allocs=("${ours[@]}" "${peers[@]}")
}

# on ALLOC CMD...: CMD with ALLOC's library preloaded (nothing for glibc).
# A shell function: where the PID must be CMD's own (a server in the
# background) or another program execs it (perf stat), spell out the env.
on() {
	local a=$1
	shift
	env ${lib[$a]:+LD_PRELOAD=${lib[$a]}} "$@"
}

# field LINE KEY: the value of KEY=VALUE in alloc_bench's result line.
field() {
	local v=${1#*"$2"=}
	echo "${v%% *}"
}

# bench_samples NAME: $samples is $O/bench/NAME-samples.tsv, emptied; runs
# start from the library's defaults (no USLAB_OPTIONS).
bench_samples() {
	mkdir -p "$O/bench"
	samples=$O/bench/$1-samples.tsv
	: >"$samples"
	unset USLAB_OPTIONS
}

# each_run THREADS FN: RUNS rounds; in each, FN T A for every thread count
# T of THREADS and, interleaved, every allocator A (so that a slow spell of
# the machine falls on all of them alike).
each_run() {
	local threads=$1 fn=$2 r t a
	for r in $(seq 1 "$RUNS"); do
		for t in $threads; do
			for a in "${allocs[@]}"; do
				"$fn" "$t" "$a"
			done
		done
	done
}
