# Sourced by the benchmark scripts: the allocators of a run, named once.
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
