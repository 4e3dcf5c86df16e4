#!/usr/bin/env bash
# uslab report --timeline FILE.png: the legend names every series drawn,
# also a call site whose function starts with "_" (_PyObject_Malloc,
# _int_malloc), which matplotlib leaves out of an automatic legend. Runs
# plot-timeline.py on a series file of report_timeline.c's shape and reads
# the legend back from the figure it drew.
. "$(dirname "$0")/../lib.sh"

/usr/bin/python3 -c 'import matplotlib' 2>/dev/null ||
	skip "python3-matplotlib not installed: no PNG timeline to check"
script=$(dirname "$0")/../../tools/uslab/plot-timeline.py
cat > "$T/series.csv" <<'CSV'
time_s,total,"_PyObject_Malloc (obmalloc.c:2003)","PyList_Append (listobject.c:81)","_int_malloc (malloc.c:10)"
#peak,0.2,30000
0.0,0,0,0,0
0.1,20000,10000,6000,4000
0.2,30000,15000,9000,6000
0.3,1000,500,300,200
CSV
/usr/bin/python3 - "$script" "$T/series.csv" "$T/tl.png" <<'PY' || fail "the PNG legend"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("plot_timeline", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
sys.argv = ["plot-timeline.py", sys.argv[2], sys.argv[3], "title"]
mod.main()
import matplotlib.pyplot as plt
legend = plt.gcf().axes[0].get_legend()
got = [t.get_text() for t in legend.get_texts()]
want = ["total", "_PyObject_Malloc (obmalloc.c:2003)",
        "PyList_Append (listobject.c:81)", "_int_malloc (malloc.c:10)"]
assert got == want, got
PY
[ "$(head -c 8 "$T/tl.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] || fail "tl.png is not a PNG"
echo ok
