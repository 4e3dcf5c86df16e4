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

rule "3/3 uslab tune $TRACE (the model narrows, real replays decide)"
png=()
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	png=(--png "$out/frontier.png")
fi
"$U" tune "$TRACE" --runs "${RUNS:-7}" --svg "$out/frontier.svg" "${png[@]}" | tee "$out/tune.txt"

# The summary: the simulated defaults, then tune's verdict, which real
# replays decided (recommended, or keep the defaults, with the figures).
kib() { awk -v k="$1" 'BEGIN { printf "%.0f KiB", k }'; }
events=$(sed -n 's/^events: \([0-9]*\) .*/\1/p' "$out/sim.txt")
hit_def=$(awk '/^  all caches/ { print $NF }' "$out/sim.txt")
res_def=$(awk '/peak resident \(heap\)/ { print $4 }' "$out/sim.txt")
time_def=$(sed -n 's/^modelled allocator time: \([0-9.]*\) ms.*/\1/p' "$out/sim.txt")
speed=$(sed -n 's/.*: \([0-9.]*\) million events.*/\1/p' "$out/sim.err")
model=$(sed -n 's/^cost model: //p' "$out/tune.txt" | tail -1)
verdict=$(grep -E '^(recommended: |keep the defaults: |keep the defaults \()' "$out/tune.txt" | head -1)
measured=$(grep '^measured (confirmation round' "$out/tune.txt" || true)
opts=$(sed -n 's/^  USLAB_OPTIONS=/USLAB_OPTIONS=/p' "$out/tune.txt")

rule "summary"
cat <<EOF
trace:        $TRACE ($events events; $(sed -n 's/^# command: //p' "$out/report.txt"))
defaults:     hit rate $hit_def%, simulated peak resident $(kib "$res_def"), modelled time $time_def ms
frontier:     $out/frontier.svg${png:+ and $out/frontier.png}
cost model:   $model
simulation:   $speed million events/s on one core
EOF
if [ -n "$measured" ]; then
	echo "$measured"
	echo "$verdict"
	echo "settings:     $opts (Kconfig fragment in $out/tune.txt)"
else
	echo "$verdict"
	echo "verdict:      keep the defaults"
fi
