#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Draw uslab tune's frontier as a PNG (python3-matplotlib).

usage: plot-frontier.py POINTS.csv OUT.png TITLE XLABEL

POINTS.csv is what `uslab tune --png` writes: one line per simulated
configuration, "x,y,kind" with x the memory overhead (KiB), y the modelled
allocator time (ms) and kind 0 swept, 1 on the frontier, 2 recommended,
3 the library's defaults (enum plot_kind in tools/uslab/builtin.h).
"""
import sys

SWEPT, FRONTIER, RECOMMENDED, DEFAULTS = range(4)


def read_points(path):
    pts = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                x, y, kind = line.strip().split(",")
                pts.append((float(x), float(y), int(kind)))
            except ValueError:
                sys.exit(f"plot-frontier: {path}:{n}: want x,y,kind")
    return pts


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().splitlines()[2])
    csv, png, title, xlabel = sys.argv[1:]
    pts = read_points(csv)
    try:
        import matplotlib
    except ImportError:
        sys.exit("plot-frontier: python3-matplotlib is not installed "
                 "(scripts/deps.sh plot)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def of(*kinds):
        sel = sorted(p for p in pts if p[2] in kinds)
        return [p[0] for p in sel], [p[1] for p in sel]

    fig, ax = plt.subplots(figsize=(8, 5.6))
    ax.scatter(*of(SWEPT), c="#aaa", label="configuration swept")
    ax.plot(*of(FRONTIER, RECOMMENDED), "-o", c="#1f77b4", label="frontier")
    ax.scatter(*of(RECOMMENDED), s=120, c="#d62728", label="recommended", zorder=3)
    ax.scatter(*of(DEFAULTS), s=120, marker="D", c="#2ca02c",
               label="library defaults", zorder=3)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("modelled allocator time (ms)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.savefig(png, dpi=100)


if __name__ == "__main__":
    main()
