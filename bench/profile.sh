#!/usr/bin/env bash
# bench/profile.sh [CASE...]: where the time goes in the cases where uslab
# is below 1.0 of the best peer (from the last make bench's results.json),
# or in the CASEs named. Each case runs once with uslab and once with its
# best peer under `perf record -e cpu-clock` (a software event: this
# machine has no hardware counters), with make bench's arguments of that
# run ($O/bench/cases.tsv). Writes $O/bench/profile.md: per case the share
# of samples in the allocator, the program, libc and the kernel, uslab's
# top symbols, and the hottest instructions of its top allocator symbol
# (perf annotate); the raw reports are $O/bench/profile/CASE-ALLOC.txt.
#   O=build bash bench/profile.sh            the rows below 1.0
#   O=build bash bench/profile.sh sh8bench_t2 larson_t2
set -u
O=${O:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
out=$O/bench
dir=$out/profile
bench=$(realpath "$O/bench/alloc_bench")
. "$src/bench/lib.sh"
bench_allocators "$O"
[ -s "$out/cases.tsv" ] || { echo "profile: no $out/cases.tsv: run make bench first" >&2; exit 1; }
mkdir -p "$dir"

# best peer of each case below 1.0 (or of the named ones)
pick=$(/usr/bin/python3 - "$out/results.json" "$@" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["summary"] if len(sys.argv) > 1 else []
want = sys.argv[2:]
for r in rows:
    if (r["case"] in want) if want else r["ratio"] < 1.0:
        print(r["case"], r["best_peer"], "%.2f" % r["ratio"])
PY
) || exit 1
[ -n "$pick" ] || { echo "profile: no case to profile"; exit 0; }

# shares CASE ALLOC: the share of samples per kind of object
shares() {
	perf report -i "$dir/$1-$2.data" --stdio --sort dso 2>/dev/null |
		awk -v lib="$(basename "$(realpath "${lib[$2]:-none}" 2>/dev/null || echo none)")" '
		/^ *[0-9.]+%/ {
			p = $1; sub("%", "", p); d = $2
			if (d ~ /kernel/) k += p
			else if (d == "alloc_bench") g += p
			else if (lib != "none" && d == lib) a += p
			else if (d ~ /^libc\.so/) c += p
			else o += p
		}
		END { printf "allocator %.0f%%, program %.0f%%, libc %.0f%%, kernel %.0f%%, other %.0f%%",
			a, g, c, k, o }'
}

{
	echo "# Where the time goes (perf record -e cpu-clock), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "Commit $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo "(not a git checkout)"). One run each with make bench's arguments; shares of cpu-clock samples. For glibc the allocator is inside libc."
} >"$out/profile.md"
while read -r c peer ratio; do
	args=$(awk -F'|' -v c="$c" '$1 == c { print $3 }' "$out/cases.tsv")
	[ -n "$args" ] || { echo "profile: $c is not in $out/cases.tsv" >&2; continue; }
	for a in uslab "$peer"; do
		# shellcheck disable=SC2086
		perf record -q -e cpu-clock -o "$dir/$c-$a.data" \
			env ${lib[$a]:+LD_PRELOAD=${lib[$a]}} "$bench" $args >/dev/null 2>&1 ||
			echo "profile: $c on $a failed" >&2
		perf report -i "$dir/$c-$a.data" --stdio --sort dso,sym --percent-limit 0.5 \
			>"$dir/$c-$a.txt" 2>/dev/null
	done
	top=$(grep -v '^#' "$dir/$c-uslab.txt" | awk '$2 == "libuslab.so" { print $4; exit }')
	{
		echo
		echo "## $c ($ratio of $peer; alloc_bench $args)"
		echo
		echo "* uslab: $(shares "$c" uslab); samples: $(perf report -i "$dir/$c-uslab.data" --stdio 2>/dev/null | sed -n 's/^# Samples: \([^ ]*\).*/\1/p' | head -1)"
		echo "* $peer: $(shares "$c" "$peer"); samples: $(perf report -i "$dir/$c-$peer.data" --stdio 2>/dev/null | sed -n 's/^# Samples: \([^ ]*\).*/\1/p' | head -1)"
		echo "* uslab's top symbols: $(grep -v '^#' "$dir/$c-uslab.txt" | awk 'NF >= 4 && $1 ~ /%$/ { printf "%s%s %s (%s)", n++ ? ", " : "", $4, $2, $1 } n == 8 { exit }')"
		if [ -n "$top" ]; then
			echo "* hottest instructions of $top (share of its samples; a sample"
			echo "  lands on the instruction after the one that waited, shown first):"
			echo
			echo '```'
			perf annotate -i "$dir/$c-uslab.data" --stdio -s "$top" 2>/dev/null |
				awk -F: '$1 ~ /^ *[0-9]+\.[0-9]+ *$/ || $1 ~ /^ *$/ {
					if ($2 ~ /^ *[0-9a-f]+$/) {
						ins = $0; sub(/^[^:]*:[^:]*: */, "", ins); sub(/ *#.*/, "", ins); gsub(/  +/, " ", ins)
						if ($1 + 0 >= 3)
							printf "%6.2f  %s   (after: %s)\n", $1, ins, prev
						prev = ins
					}
				}' | sort -rn | head -5
			echo '```'
		fi
	} >>"$out/profile.md"
	echo "  profiled $c"
done <<<"$pick"
echo "profile: $out/profile.md"
