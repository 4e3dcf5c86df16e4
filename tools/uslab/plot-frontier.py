#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Draw uslab tune's frontier as a PNG (python3-matplotlib).

usage: plot-frontier.py POINTS.csv OUT.png TITLE XLABEL

POINTS.csv is what `uslab tune --png` writes. Its first line is the view
the SVG is drawn in, "view,x0,x1,y0,y1,outside" (zoomed to the frontier,
the defaults, the recommendation and the measured points; `outside` swept
points lie beyond it), so both pictures have the same axes. Then one line
per point, "x,y,kind,xlo,xhi,ylo,yhi": x the simulated resident memory
(KiB), y the modelled allocator time (ms), kind 0 swept, 1 on the frontier,
2 recommended, 3 the library's defaults, 4 a candidate replayed for real,
placed by its measured change with its 95% interval (xlo..xhi, ylo..yhi),
5 the adaptive magazines with their default bounds (adapt=1)
(enum plot_kind in tools/uslab/builtin.h).
"""
import sys

SWEPT, FRONTIER, RECOMMENDED, DEFAULTS, MEASURED, ADAPTIVE = range(6)


def read_points(path):
    pts, view = [], None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                v = line.strip().split(",")
                if v[0] == "view":
                    view = tuple(float(x) for x in v[1:5]) + (int(v[5]),)
                    continue
                x, y, kind, xlo, xhi, ylo, yhi = v
                pts.append((float(x), float(y), int(kind), float(xlo), float(xhi),
                            float(ylo), float(yhi)))
            except (ValueError, IndexError):
                sys.exit(f"plot-frontier: {path}:{n}: want view,x0,x1,y0,y1,outside "
                         "or x,y,kind,xlo,xhi,ylo,yhi")
    if view is None:
        sys.exit(f"plot-frontier: {path}: no view line")
    return pts, view


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().splitlines()[2])
    csv, png, title, xlabel = sys.argv[1:]
    pts, (x0, x1, y0, y1, outside) = read_points(csv)
    try:
        import matplotlib
    except ImportError:
        sys.exit("plot-frontier: python3-matplotlib is not installed "
                 "(scripts/deps.sh plot)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def inside(p):
        return x0 <= p[0] <= x1 and y0 <= p[1] <= y1

    def of(*kinds):
        sel = sorted(p for p in pts if p[2] in kinds and inside(p))
        return [p[0] for p in sel], [p[1] for p in sel]

    fig, ax = plt.subplots(figsize=(8, 5.6))
    ax.scatter(*of(SWEPT), c="#aaa", s=16, label="configuration swept")
    ax.plot(*of(FRONTIER), "-o", c="#1f77b4", ms=4,
            label="frontier (no other point is better on both axes)")
    if of(RECOMMENDED)[0]:
        ax.scatter(*of(RECOMMENDED), s=160, facecolors="none", edgecolors="#d62728",
                   linewidths=3, label="recommended (the verdict)", zorder=4)
    ax.scatter(*of(DEFAULTS), s=120, marker="D", c="#2ca02c",
               label="library defaults", zorder=3)
    if of(ADAPTIVE)[0]:
        ax.scatter(*of(ADAPTIVE), s=120, marker="^", c="#9467bd",
                   label="adaptive magazines, default bounds (adapt=1)", zorder=3)
    meas = [p for p in pts if p[2] == MEASURED and inside(p)]
    if meas:
        ax.errorbar([p[0] for p in meas], [p[1] for p in meas],
                    xerr=[[p[0] - p[3] for p in meas], [p[4] - p[0] for p in meas]],
                    yerr=[[p[1] - p[5] for p in meas], [p[6] - p[1] for p in meas]],
                    fmt="s", c="#ff7f0e", ms=6, capsize=3, zorder=3,
                    label="replayed: measured change, 95% CI")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("modelled allocator time (ms)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)  # where it hides the fewest points
    if outside:
        ax.annotate(f"zoomed to the frontier: {outside} swept configurations lie outside",
                    xy=(1, 0), xycoords="figure fraction", ha="right", va="bottom",
                    fontsize=8, color="#666")
    fig.savefig(png, dpi=100)


if __name__ == "__main__":
    main()
