#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Draw `uslab report|sim --timeline FILE.png`: memory over time (matplotlib).

usage: plot-timeline.py SERIES.csv OUT.png TITLE [XLABEL YLABEL XUNIT]

SERIES.csv is what report_timeline.c's timeline_draw writes: a header
"x,"NAME"...", a line "#peak,X,BYTES", then one line per point: x (seconds,
or events) and each series' bytes. The first series is drawn thickest.
"""
import csv
import sys


def main():
    if len(sys.argv) not in (4, 7):
        sys.exit("usage: plot-timeline.py SERIES.csv OUT.png TITLE [XLABEL YLABEL XUNIT]")
    path, out, title = sys.argv[1:4]
    xlabel, ylabel, xunit = sys.argv[4:7] if len(sys.argv) == 7 else ("time (s)", "live", "s")
    with open(path) as f:
        rows = list(csv.reader(f))
    names, peak = rows[0][1:], rows[1]
    if peak[0] != "#peak":
        sys.exit(f"plot-timeline: {path}: no #peak line")
    peak_t, peak_b = float(peak[1]), int(peak[2])
    data = [[float(x) for x in r] for r in rows[2:]]
    if not data:
        sys.exit(f"plot-timeline: {path}: no samples")
    unit, uname = (1 << 20, "MiB") if peak_b >= 10 << 20 else \
        (1 << 10, "KiB") if peak_b >= 10 << 10 else (1, "bytes")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(10, 5.6), dpi=100)
    t = [r[0] for r in data]
    lines = []
    for i, name in enumerate(names):
        lines += ax.plot(t, [r[i + 1] / unit for r in data],
                         linewidth=2 if i == 0 else 1.2)
    ax.axvline(peak_t, color="#d62728", linestyle="--", linewidth=1)
    ax.plot([peak_t], [peak_b / unit], "o", color="#d62728")
    right = peak_t > 0.7 * t[-1]
    ax.annotate(f"peak {peak_b / unit:.1f} {uname} at {peak_t:.3f} {xunit}",
                (peak_t, peak_b / unit), color="#d62728",
                xytext=(-8 if right else 8, -14), textcoords="offset points",
                ha="right" if right else "left")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{ylabel} {uname}")
    ax.set_title(title, fontsize=11)
    ax.grid(True, color="#eee")
    # matplotlib leaves out of a legend every label that starts with "_",
    # and C call sites often do (_PyObject_Malloc, _int_malloc): the legend
    # is made with placeholders, then each entry gets its series' name.
    legend = ax.legend(lines, [f"s{i}" for i in range(len(names))],
                       loc="upper left", fontsize=8)
    for text, name in zip(legend.get_texts(), names):
        text.set_text(name)
    fig.tight_layout()
    fig.savefig(out)


if __name__ == "__main__":
    main()
