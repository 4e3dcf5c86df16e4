#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Adaptive magazines against a fixed sweep, measured by real replays.

For each trace: the fixed defaults, the adaptive default (adapt=1) and a
grid of fixed settings (mag_size x depot_limit, 16 points by default) are
replayed for real (`uslab replay -a uslab --threads 1 --runs 1`, a fresh
process each), interleaved: every round runs each setting once, in an
order shuffled per round (fixed seed). Per setting: median CPU time (user +
system) and median peak RSS above the start, each with a bootstrap 95%
confidence interval; then the adaptive default against the fixed setting
of lowest median CPU time and against the fixed defaults, as ratios of
medians with bootstrap CIs (each side resampled apart).

  python3 bench/adapt_sweep.py [-u build/uslab] [--rounds 11]
      [--mags 16,32,64,128] [--depots 0,4,16,64] [--adapt-opts adapt=1]
      [--control] TRACE[:COMM] ...

--control adds a second copy of the fixed defaults ("defaults'", the same
USLAB_OPTIONS) and prints it against the first as adaptive is: what two
settings doing the same work differ by in this run (an A/A control). Peak
RSS of one replay moves by tens of KiB from run to run whatever the
setting (the bundled default trace: 13364..13492 KiB above the start in 6
runs of adapt=0, pinned or not), so a CI of a ratio of medians can miss 0
on noise alone.

TRACE:COMM replays process COMM of the trace (`--comm`). Prints one table
per trace and a summary line per trace; exit 0 (a measurement, not a test).
"""
import argparse
import random
import re
import statistics
import subprocess
import sys


def replay(u, trace, comm, opts):
    cmd = [u, "replay", trace, "-a", "uslab", "--threads", "1", "--runs", "1"]
    if comm:
        cmd += ["--comm", comm]
    env = {"PATH": "/usr/bin:/bin", "USLAB_OPTIONS": opts}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    text = out.stdout + out.stderr
    c = re.search(r"CPU time: ([0-9.]+) s user, ([0-9.]+) s system", text)
    m = re.search(r"peak RSS: \d+ KiB \((-?\d+) KiB above", text)
    if out.returncode or not c or not m or "ignoring option" in text:
        sys.exit("replay failed (%s, USLAB_OPTIONS=%s):\n%s" % (trace, opts, text[-800:]))
    return float(c.group(1)) + float(c.group(2)), int(m.group(1))


def ci(xs, rng, stat=statistics.median, n=2000):
    bs = sorted(stat([rng.choice(xs) for _ in xs]) for _ in range(n))
    return bs[int(0.025 * n)], bs[int(0.975 * n) - 1]


def ratio_ci(a, b, rng, n=2000):
    """median(a)/median(b) - 1 with a bootstrap 95% CI."""
    bs = sorted(statistics.median([rng.choice(a) for _ in a]) /
                statistics.median([rng.choice(b) for _ in b]) - 1 for _ in range(n))
    return (statistics.median(a) / statistics.median(b) - 1,
            bs[int(0.025 * n)], bs[int(0.975 * n) - 1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-u", default="build/uslab")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--mags", default="16,32,64,128")
    ap.add_argument("--depots", default="0,4,16,64")
    ap.add_argument("--adapt-opts", default="adapt=1")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--control", action="store_true")
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()

    settings = [("defaults", "adapt=0"), ("adaptive", a.adapt_opts)]
    if a.control:
        settings.append(("defaults'", "adapt=0"))
    for m in a.mags.split(","):
        for d in a.depots.split(","):
            settings.append(("mag=%s,depot=%s" % (m, d),
                             "adapt=0,mag_size=%s,depot_limit=%s" % (m, d)))
    rng = random.Random(a.seed)
    for spec in a.traces:
        trace, _, comm = spec.partition(":")
        cpu = {s: [] for s, _ in settings}
        rss = {s: [] for s, _ in settings}
        for _ in range(a.rounds):
            order = list(settings)
            rng.shuffle(order)
            for name, opts in order:
                c, r = replay(a.u, trace, comm, opts)
                cpu[name].append(c)
                rss[name].append(r)
        print("trace %s%s: %d rounds, %d settings interleaved" %
              (trace, " --comm " + comm if comm else "", a.rounds, len(settings)))
        print("  %-22s %10s %21s %10s %19s" % ("setting", "CPU ms", "95% CI", "peak KiB", "95% CI"))
        for name, _ in settings:
            lo, hi = ci(cpu[name], rng)
            rlo, rhi = ci(rss[name], rng)
            print("  %-22s %10.3f [%8.3f, %8.3f] %10.0f [%7.0f, %7.0f]" %
                  (name, 1e3 * statistics.median(cpu[name]), 1e3 * lo, 1e3 * hi,
                   statistics.median(rss[name]), rlo, rhi))
        fixed = [s for s, _ in settings if s not in ("adaptive", "defaults'")]
        best = min(fixed, key=lambda s: statistics.median(cpu[s]))
        r, lo, hi = ratio_ci(cpu["adaptive"], cpu[best], rng)
        d, dlo, dhi = ratio_ci(cpu["adaptive"], cpu["defaults"], rng)
        m, mlo, mhi = ratio_ci(rss["adaptive"], rss["defaults"], rng)
        print("  adaptive vs best fixed (%s): CPU %+.1f%% [%+.1f, %+.1f]" %
              (best, 100 * r, 100 * lo, 100 * hi))
        print("  adaptive vs defaults: CPU %+.1f%% [%+.1f, %+.1f], peak RSS %+.1f%% [%+.1f, %+.1f]" %
              (100 * d, 100 * dlo, 100 * dhi, 100 * m, 100 * mlo, 100 * mhi))
        if a.control:
            d, dlo, dhi = ratio_ci(cpu["defaults'"], cpu["defaults"], rng)
            m, mlo, mhi = ratio_ci(rss["defaults'"], rss["defaults"], rng)
            print("  control, defaults' vs defaults: CPU %+.1f%% [%+.1f, %+.1f], "
                  "peak RSS %+.1f%% [%+.1f, %+.1f]" %
                  (100 * d, 100 * dlo, 100 * dhi, 100 * m, 100 * mlo, 100 * mhi))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
