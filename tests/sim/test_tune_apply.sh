#!/usr/bin/env bash
# The tuner's recommendation lands: every item of the USLAB_OPTIONS string
# that `uslab tune` (and so `make run`) prints is accepted by the library
# preloaded into a real replay of the same trace, nothing is reported as
# naming no cache, and slabinfo of that run shows each recommended magazine
# size as the cache's limit (a per-cache size on its cache, a uniform one on
# every kmalloc cache: which one the model's knee is depends on what the
# simulated magazines hold resident).
. "$(dirname "$0")/../lib.sh"
set +e	# every check runs; bad notes a failure
TRACE=${TRACE:-traces/default.ustr}
need_magazines tune

# The model's own recommendation (--model-only: the real replays may keep
# the defaults, which print an empty string); the goal memory has one.
"$U" tune "$TRACE" --model-only --goal memory > "$T/tune.txt" 2> "$T/tune.err" ||
	{ cat "$T/tune.err"; exit 1; }
opts=$(sed -n 's/^\[model only\]   USLAB_OPTIONS=//p' "$T/tune.txt")
[ -n "$opts" ] || { bad "tune printed no USLAB_OPTIONS string"; cat "$T/tune.txt"; exit 1; }
echo "recommended: USLAB_OPTIONS=$opts"

USLAB_OPTIONS="$opts,stats" timeout -k 5 120 "$U" replay "$TRACE" --allocator uslab \
	> "$T/replay.out" 2> "$T/replay.err" || { bad "replay failed"; cat "$T/replay.err"; }
if grep -E "ignoring option|named no cache" "$T/replay.err"; then
	bad "the library did not take every item"
fi
grep -q '^slabinfo - version: 2.1' "$T/replay.err" || bad "no slabinfo at exit"

# Each mag_size.<cache>=N: slabinfo's <limit> column of that cache is N.
limit_of() {
	awk -v c="$1" '$1 == c { for (i = 1; i <= NF; i++) if ($i == "tunables") print $(i+1) }' \
		"$T/replay.err"
}
n=0
IFS=, read -ra items <<< "$opts"
for item in "${items[@]}"; do
	case $item in
	mag_size.*=*)
		cache=${item#mag_size.}; cache=${cache%%=*}; want=${item##*=}
		[[ $cache =~ ^[0-9]+$ ]] && { bad "tune named a cache by size: $item"; continue; }
		got=$(limit_of "$cache")
		[ "$got" = "$want" ] || bad "$cache: slabinfo limit '${got:-none}', recommended $want"
		n=$((n + 1))
		;;
	mag_size=*)
		# one size for every cache (the model's knee may be uniform):
		# each kmalloc cache's <limit> is that size
		want=${item#mag_size=}
		caches=$(awk '/tunables/ && $1 ~ /^kmalloc-/ { print $1 }' "$T/replay.err" | sort -u)
		[ -n "$caches" ] || bad "no kmalloc cache in slabinfo"
		for cache in $caches; do
			got=$(limit_of "$cache")
			[ "$got" = "$want" ] || bad "$cache: slabinfo limit '${got:-none}', recommended $want for every cache"
			n=$((n + 1))
		done
		;;
	depot_limit=*|batch=*) ;;
	*) bad "unexpected item '$item'" ;;
	esac
done
[ "$n" -gt 0 ] || bad "no magazine size in the recommendation"
[ "$failed" -eq 0 ] && echo "tune apply: $n recommended magazine sizes in force in a real replay"
exit $failed
