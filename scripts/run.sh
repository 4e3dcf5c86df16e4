#!/usr/bin/env bash
# `make run`: the main job on the bundled default trace (traces/default.ustr,
# a python3 workload on four threads; TRACE=... picks another): what the
# program allocates (uslab report), how uslab's own code serves it on virtual
# CPUs (uslab sim), and which magazine sizes and depot limit to set for it
# (uslab tune, with the frontier drawn in $O/run/). Ends with a summary.
# It opens with the slab demo's slabinfo table: the caches themselves at work.
set -eu
O=${O:-build}
U=$O/uslab
TRACE=${TRACE:-traces/default.ustr}
out=$O/run
mkdir -p "$out"

if [ ! -x "$U" ]; then
	echo "make run: $U is missing (make O=$O first)" >&2
	exit 1
fi
if [ ! -f "$TRACE" ]; then
	echo "make run: no trace $TRACE" >&2
	exit 1
fi

rule() { printf '\n==== %s\n\n' "$*"; }

rule "0/3 the slab caches on a demo workload (slabinfo, as /proc/slabinfo)"
"$O/uslab-demo"

rule "1/3 uslab report $TRACE"
"$U" report "$TRACE" | tee "$out/report.txt" | sed -n '1,/^lifetimes/p' | sed '$d'
sed -n '/^memory:/,/^$/p; /^threads:/,/^$/p' "$out/report.txt"

rule "2/3 uslab sim $TRACE (library defaults)"
"$U" sim "$TRACE" --rows 8 > "$out/sim.txt" 2> "$out/sim.err"
cat "$out/sim.txt"
cat "$out/sim.err"

rule "3/3 uslab tune $TRACE"
png=()
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	png=(--png "$out/frontier.png")
fi
"$U" tune "$TRACE" --svg "$out/frontier.svg" "${png[@]}" | tee "$out/tune.txt"

# The summary: the default configuration against the recommended one.
kib() { awk -v k="$1" 'BEGIN { printf "%.0f KiB", k }'; }
events=$(sed -n 's/^events: \([0-9]*\) .*/\1/p' "$out/sim.txt")
hit_def=$(awk '/^  all caches/ { print $NF }' "$out/sim.txt")
ovh_def=$(awk '/mean overhead/ { print $3 }' "$out/sim.txt")
peak_def=$(awk '/peak overhead/ { print $4 }' "$out/sim.txt")
time_def=$(sed -n 's/^modelled allocator time: \([0-9.]*\) ms.*/\1/p' "$out/sim.txt")
rec=$(sed -n 's/^recommended: //p' "$out/tune.txt")
rec_line=$(grep -A1 '^recommended: ' "$out/tune.txt" | tail -1)
opts=$(sed -n 's/^  USLAB_OPTIONS=/USLAB_OPTIONS=/p' "$out/tune.txt")
speed=$(sed -n 's/.*: \([0-9.]*\) million events.*/\1/p' "$out/sim.err")
model=$(sed -n 's/.*; from //p' "$out/tune.txt" | head -1)

rule "summary"
cat <<EOF
trace:        $TRACE ($events events; $(sed -n 's/^# command: //p' "$out/report.txt"))
defaults:     hit rate $hit_def%, mean overhead $(kib "$ovh_def"), peak overhead $(kib "$peak_def"),
              modelled time $time_def ms
recommended:  $rec
             $rec_line
settings:     $opts
              (Kconfig fragment in $out/tune.txt)
frontier:     $out/frontier.svg${png:+ and $out/frontier.png}
cost model:   $model
simulation:   $speed million events/s on one core
EOF

# The recommendation, applied: real replays of the trace on libuslab.so,
# defaults and recommended settings interleaved, RUNS of each (default 5),
# medians of wall time and peak RSS above the replayer's own.
runs=${RUNS:-5}
rule "applied: real replays, library defaults against the recommendation ($runs each, interleaved)"
if [ -z "$opts" ]; then
	echo "no USLAB_OPTIONS string to apply"
	exit 0
fi
rec_opts=${opts#USLAB_OPTIONS=}
: > "$out/applied.txt"
for i in $(seq 1 "$runs"); do
	for which in defaults recommended; do
		o=""
		[ "$which" = recommended ] && o=$rec_opts
		USLAB_OPTIONS=$o "$U" replay "$TRACE" --allocator uslab > "$out/replay.txt" 2> "$out/replay.err" ||
			{ echo "replay failed:"; cat "$out/replay.err"; exit 1; }
		if grep -q "ignoring option" "$out/replay.err"; then
			echo "the library refused part of the recommendation:"; cat "$out/replay.err"; exit 1
		fi
		wall=$(sed -n 's/^wall time: \([0-9.]*\) s$/\1/p' "$out/replay.txt")
		rss=$(sed -n 's/^peak RSS: [0-9]* KiB (\([0-9]*\) KiB above.*/\1/p' "$out/replay.txt")
		cpu=$(sed -n 's/^CPU time: \([0-9.]*\) s user, \([0-9.]*\) s system.*/\1 \2/p' "$out/replay.txt" |
			awk '{ print $1 + $2 }')
		echo "$which $wall $rss $cpu" >> "$out/applied.txt"
	done
done
awk '
function median(a, n,   i, j, t) {
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ n[$1]++; w[$1, n[$1]] = $2; r[$1, n[$1]] = $3; c[$1, n[$1]] = $4 }
END {
	for (k in n) {
		for (i = 1; i <= n[k]; i++) { ww[i] = w[k, i]; rr[i] = r[k, i]; cc[i] = c[k, i] }
		mw[k] = median(ww, n[k]); mr[k] = median(rr, n[k]); mc[k] = median(cc, n[k])
	}
	printf "defaults:     median wall %.2f ms, CPU %.2f ms, peak RSS above the replayer %d KiB\n",
		mw["defaults"] * 1000, mc["defaults"] * 1000, mr["defaults"]
	printf "recommended:  median wall %.2f ms, CPU %.2f ms, peak RSS above the replayer %d KiB\n",
		mw["recommended"] * 1000, mc["recommended"] * 1000, mr["recommended"]
	printf "measured:     wall time %+.1f%%, CPU time %+.1f%%, peak RSS %+.1f%% (recommended against defaults; runs in %s)\n",
		100 * (mw["recommended"] - mw["defaults"]) / mw["defaults"],
		mc["defaults"] ? 100 * (mc["recommended"] - mc["defaults"]) / mc["defaults"] : 0,
		mr["defaults"] ? 100 * (mr["recommended"] - mr["defaults"]) / mr["defaults"] : 0, FILENAME
}' "$out/applied.txt"
