#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Adaptive magazines against a fixed sweep, measured by real replays.

For each trace, two stages, each of real replays (`uslab replay -a uslab
--threads 1 --runs 1`, a fresh process each; the CPU time is the replay's
own report: user + system of the timed run only, from the threads'
barrier to their join, not the process start or the trace's loading):

1. The sweep: the fixed defaults, the adaptive default (adapt=1) and a
   grid of fixed settings (mag_size x depot_limit, 16 points by default),
   interleaved: every round runs each setting once, in an order shuffled
   per round (fixed seed). Per setting: median CPU time and median peak
   RSS above the start, each with a bootstrap 95% confidence interval.
   The best fixed setting is the one of lowest median CPU time.

2. The check (--check-rounds, 0 to skip): the fixed defaults twice (the
   second, "defaults'", the same USLAB_OPTIONS: an A/A control), the
   adaptive default and the --check-best fixed settings of lowest median
   CPU time in stage 1 (2 by default), interleaved again for many more
   rounds; the best fixed setting is then the fixed one (the defaults
   among them) of lowest median in the check. Picking the lowest of 16 noisy medians
   and comparing with it in the same data favours the fixed side (the
   winner's curse: with 15 rounds of 10-20 ms replays whose runs move by
   +-4%, the least of 16 medians sits about 2% below its setting's true
   median); fresh rounds do not. Each ratio is paired by round (the
   settings of one round ran back to back, under the same load): the
   median over rounds of adaptive/best in the same round, with a
   bootstrap 95% CI over rounds. The control gives what two settings
   doing the same work differ by in this run: the noise floor. Choosing
   the best of two or three fixed settings on the check's own rounds
   leaves a small bias, against the adaptive side.

  python3 bench/adapt_sweep.py [-u build/uslab] [--rounds 15]
      [--check-rounds 100] [--check-best 2] [--mags 16,32,64,128] [--depots 0,4,16,64]
      [--adapt-opts adapt=1] [--pin CPU] [--md FILE] TRACE[:COMM] ...

TRACE:COMM replays process COMM of the trace (`--comm`). --pin runs every
replay on one CPU (taskset; the same for every setting). --md appends the
summary table (markdown, one row per trace) to FILE. Peak RSS of one
replay moves by tens of KiB from run to run whatever the setting (the
bundled default trace: 13364..13492 KiB above the start in 6 runs of
adapt=0), so its CI can miss 0 on noise alone: see the control's.
Exit 0 (a measurement, not a test).
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import sys


def replay(a, trace, comm, opts):
    cmd = [a.u, "replay", trace, "-a", "uslab", "--threads", "1", "--runs", "1"]
    if comm:
        cmd += ["--comm", comm]
    if a.pin is not None:
        cmd = ["taskset", "-c", str(a.pin)] + cmd
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
    """median(a)/median(b) - 1 with a bootstrap 95% CI (each side apart)."""
    bs = sorted(statistics.median([rng.choice(a) for _ in a]) /
                statistics.median([rng.choice(b) for _ in b]) - 1 for _ in range(n))
    return (statistics.median(a) / statistics.median(b) - 1,
            bs[int(0.025 * n)], bs[int(0.975 * n) - 1])


def paired_ci(a, b, rng, n=4000):
    """Median over rounds of a[i]/b[i] - 1, bootstrap 95% CI over rounds."""
    r = [x / y - 1 for x, y in zip(a, b)]
    lo, hi = ci(r, rng, n=n)
    return statistics.median(r), lo, hi


def rounds(a, trace, comm, settings, nr, rng):
    cpu = {s: [] for s, _ in settings}
    rss = {s: [] for s, _ in settings}
    for _ in range(nr):
        order = list(settings)
        rng.shuffle(order)
        for name, opts in order:
            c, r = replay(a, trace, comm, opts)
            cpu[name].append(c)
            rss[name].append(r)
    return cpu, rss


def pct(t):
    return "%+.1f%% [%+.1f, %+.1f]" % tuple(100 * x for x in t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-u", default="build/uslab")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--check-rounds", type=int, default=100)
    ap.add_argument("--check-best", type=int, default=2)
    ap.add_argument("--mags", default="16,32,64,128")
    ap.add_argument("--depots", default="0,4,16,64")
    ap.add_argument("--adapt-opts", default="adapt=1")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pin", type=int)
    ap.add_argument("--md")
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    for spec in a.traces:
        if not os.path.exists(spec.partition(":")[0]):
            sys.exit("adapt_sweep: %s: no such trace" % spec.partition(":")[0])

    opts = {"defaults": "adapt=0", "adaptive": a.adapt_opts, "defaults'": "adapt=0"}
    settings = [("defaults", opts["defaults"]), ("adaptive", opts["adaptive"])]
    for m in a.mags.split(","):
        for d in a.depots.split(","):
            name = "mag=%s,depot=%s" % (m, d)
            opts[name] = "adapt=0,mag_size=%s,depot_limit=%s" % (m, d)
            settings.append((name, opts[name]))
    rng = random.Random(a.seed)
    rows = []
    for spec in a.traces:
        trace, _, comm = spec.partition(":")
        what = "%s%s" % (trace, " --comm " + comm if comm else "")
        cpu, rss = rounds(a, trace, comm, settings, a.rounds, rng)
        print("trace %s: sweep, %d rounds, %d settings interleaved" %
              (what, a.rounds, len(settings)))
        print("  %-22s %10s %21s %10s %19s" % ("setting", "CPU ms", "95% CI", "peak KiB", "95% CI"))
        for name, _ in settings:
            lo, hi = ci(cpu[name], rng)
            rlo, rhi = ci(rss[name], rng)
            print("  %-22s %10.3f [%8.3f, %8.3f] %10.0f [%7.0f, %7.0f]" %
                  (name, 1e3 * statistics.median(cpu[name]), 1e3 * lo, 1e3 * hi,
                   statistics.median(rss[name]), rlo, rhi))
        fixed = [s for s, _ in settings if s != "adaptive"]
        best = min(fixed, key=lambda s: statistics.median(cpu[s]))
        s_best = ratio_ci(cpu["adaptive"], cpu[best], rng)
        print("  sweep: adaptive vs best fixed (%s): CPU %s (same data: "
              "biased towards the fixed side)" % (best, pct(s_best)))
        print("  sweep: adaptive vs defaults: CPU %s, peak RSS %s" %
              (pct(ratio_ci(cpu["adaptive"], cpu["defaults"], rng)),
               pct(ratio_ci(rss["adaptive"], rss["defaults"], rng))))
        row = {"trace": what, "best": best, "ms": 1e3 * statistics.median(cpu["defaults"]),
               "sweep": s_best}
        if a.check_rounds:
            chk = [("defaults", opts["defaults"]), ("defaults'", opts["defaults'"]),
                   ("adaptive", opts["adaptive"])]
            for s in sorted(fixed, key=lambda s: statistics.median(cpu[s]))[:a.check_best]:
                if s != "defaults":
                    chk.append((s, opts[s]))
            cpu, rss = rounds(a, trace, comm, chk, a.check_rounds, rng)
            print("trace %s: check, %d rounds of %s interleaved, ratios paired by round" %
                  (what, a.check_rounds, ", ".join(s for s, _ in chk)))
            for name, _ in chk:
                lo, hi = ci(cpu[name], rng)
                print("  %-22s CPU %8.3f ms [%8.3f, %8.3f], peak RSS %6.0f KiB" %
                      (name, 1e3 * statistics.median(cpu[name]), 1e3 * lo, 1e3 * hi,
                       statistics.median(rss[name])))
            cand = [s for s, _ in chk if s not in ("adaptive", "defaults'")]
            best = min(cand, key=lambda s: statistics.median(cpu[s]))
            row["best"] = best
            row["best_c"] = paired_ci(cpu["adaptive"], cpu[best], rng)
            row["def_c"] = paired_ci(cpu["adaptive"], cpu["defaults"], rng)
            row["aa"] = paired_ci(cpu["defaults'"], cpu["defaults"], rng)
            row["rss"] = paired_ci(rss["adaptive"], rss["defaults"], rng)
            row["aa_rss"] = paired_ci(rss["defaults'"], rss["defaults"], rng)
            print("  adaptive vs best fixed of the check (%s): CPU %s" % (best, pct(row["best_c"])))
            print("  adaptive vs defaults: CPU %s, peak RSS %s" %
                  (pct(row["def_c"]), pct(row["rss"])))
            print("  control, defaults' vs defaults: CPU %s, peak RSS %s" %
                  (pct(row["aa"]), pct(row["aa_rss"])))
        rows.append(row)
        sys.stdout.flush()

    if a.md and a.check_rounds:
        with open(a.md, "a") as f:
            f.write("| trace | CPU ms (defaults) | best fixed (check) | adaptive vs best fixed, "
                    "check [95% CI] | adaptive vs defaults | control (A/A) | "
                    "peak RSS adaptive vs defaults | RSS control |\n")
            f.write("|---|---|---|---|---|---|---|---|\n")
            for r in rows:
                f.write("| %s | %.2f | %s | %s | %s | %s | %s | %s |\n" %
                        (r["trace"], r["ms"], r["best"], pct(r["best_c"]), pct(r["def_c"]),
                         pct(r["aa"]), pct(r["rss"]), pct(r["aa_rss"])))


if __name__ == "__main__":
    main()
