#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Adaptive magazines against the fixed defaults on make bench's rows.

One library, two (or more) settings of USLAB_OPTIONS: adapt=0 (the fixed
defaults) and adapt=1 (the adaptive default), plus any --setting
NAME=OPTIONS. Every round runs each row once on each setting, in an order
shuffled per round (fixed seed), each run a fresh process of
build/bench/alloc_bench with the arguments bench/run.sh gives the row (full
mode). Per row and setting: the figure make bench judges the row by
(bench/report.py: a rate per CPU-second for the timed rows, else the CPU
time, user + system, of the process), median over the rounds; then the
speed of each setting over the fixed defaults (above 1: faster) as the
ratio of medians with a bootstrap 95% CI (each side resampled apart), and
the fixed defaults' own spread (max/min - 1 over the rounds).

  python3 bench/adapt_rows.py [-l build/libuslab.so] [-b build/bench/alloc_bench]
      [--rounds 7] [--setting NAME=OPTS]... [ROW_REGEX]

Exit 0 (a measurement, not a test).
"""
import argparse
import os
import random
import re
import resource
import statistics
import subprocess
import sys

# name: alloc_bench arguments (bench/run.sh, full mode)
ROWS = [
    ("pair", "pair 10000000"),
    ("study_t1", "study 1 2 30000 15000"),
    ("study_t2", "study 2 2 30000 15000"),
    ("study_t4", "study 4 2 30000 15000"),
    # run.sh's MT_ITERS (1,000,000 since 4,000,000 added ten minutes to make
    # bench); the 256 KiB rows, every operation a slow path, show what the
    # adaptive bookkeeping costs where nothing resizes
    ("mt_32k_t2", "mt 2 1000000 32768"),
    ("mt_32k_t8", "mt 8 1000000 32768"),
    ("mt_64k_t2", "mt 2 1000000 65536"),
    ("mt_64k_t16", "mt 16 1000000 65536"),
    ("mt_128k_t4", "mt 4 1000000 131072"),
    ("mt_256k_t16", "mt 16 1000000 262144"),
    ("mt_256k_t32", "mt 32 1000000 262144"),
    ("larson_t2", "larson 2 1"),
    ("rptest_t2", "rptest 2 5000"),
    ("xmalloc_t2", "xmalloc 2 1"),
    ("alloc_test_t1", "alloc_test 1 1000000"),
    ("alloc_test_t2", "alloc_test 2 1000000"),
    ("glibc_thread_t1", "glibc_thread 1 1"),
    ("glibc_thread_t2", "glibc_thread 2 1"),
    ("cfrac", "cfrac 10000"),
    ("espresso", "espresso 150"),
    ("many_t8", "manythreads 8 50000"),
    ("many_t64", "manythreads 64 50000"),
    ("prodcons", "prodcons 2000000"),
    ("sh6bench_t2", "sh6bench 2 10000 1000"),
    ("sh6bench_t4", "sh6bench 4 10000 1000"),
    ("sh8bench_t2", "sh8bench 2 70000"),
    ("sh8bench_t4", "sh8bench 4 70000"),
    ("gmalloc_t1", "gmfill 1 1024"),
]

# timed rows: judged by their rate per CPU-second (report.py's TIMED)
TIMED = ("larson", "xmalloc", "glibc_thread")


def figure(row, out, cpu):
    if row.startswith(TIMED):
        m = re.search(r"(\w+_mops_cpu)=([0-9.]+)", out)
        if m:
            return float(m.group(2)), True
        m = re.search(r"(\w+_mops)=([0-9.]+)", out)
        return float(m.group(2)) / cpu, True
    return cpu, False


def timed_run(bench, lib, args, opts):
    env = dict(os.environ, LD_PRELOAD=lib, USLAB_OPTIONS=opts)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([bench] + args.split(), env=env, capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        sys.exit("failed: USLAB_OPTIONS=%s %s %s\n%s" % (opts, bench, args, p.stderr[-800:]))
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return p.stdout, cpu


def ratio_ci(a, b, higher, rng, n=2000):
    """speed of a over b (above 1: a faster) with a bootstrap 95% CI."""
    def sp(x, y):
        return x / y if higher else y / x
    bs = sorted(sp(statistics.median([rng.choice(a) for _ in a]),
                   statistics.median([rng.choice(b) for _ in b])) for _ in range(n))
    return (sp(statistics.median(a), statistics.median(b)),
            bs[int(0.025 * n)], bs[int(0.975 * n) - 1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-l", default="build/libuslab.so")
    ap.add_argument("-b", default="build/bench/alloc_bench")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--setting", action="append", default=[])
    ap.add_argument("rows", nargs="?", default=".")
    a = ap.parse_args()
    lib, bench = os.path.realpath(a.l), os.path.realpath(a.b)
    settings = [("fixed", "adapt=0"), ("adaptive", "adapt=1")]
    for s in a.setting:
        k, _, v = s.partition("=")
        settings.append((k, v))
    rows = [r for r in ROWS if re.search(a.rows, r[0])]
    rng = random.Random(1)
    data = {}
    with open("/proc/loadavg") as f:
        print("load at start:", " ".join(f.read().split()[:3]))
    for rnd in range(a.rounds):
        jobs = [(r, s) for r in rows for s in settings]
        rng.shuffle(jobs)
        for (row, args), (name, opts) in jobs:
            out, cpu = timed_run(bench, lib, args, opts)
            data.setdefault((row, name), []).append(figure(row, out, cpu))
        print("round %d done" % (rnd + 1), file=sys.stderr)
    with open("/proc/loadavg") as f:
        print("load at end:", " ".join(f.read().split()[:3]))
    hdr = "%-16s %-8s" % ("row", "judged")
    for name, _ in settings:
        hdr += " %12s" % name
    hdr += "   fixed spread" + "".join("   %s/fixed speed [95%% CI]" % n for n, _ in settings[1:])
    print(hdr)
    for row, _ in rows:
        fx = data[(row, "fixed")]
        higher = fx[0][1]
        line = "%-16s %-8s" % (row, "rate/cpu" if higher else "cpu s")
        for name, _ in settings:
            line += " %12.4f" % statistics.median(x for x, _ in data[(row, name)])
        vals = [x for x, _ in fx]
        line += "   %+13.1f%%" % (100 * (max(vals) / min(vals) - 1))
        for name, _ in settings[1:]:
            r, lo, hi = ratio_ci([x for x, _ in data[(row, name)]], vals, higher, rng)
            line += "   %.3f [%.3f, %.3f]" % (r, lo, hi)
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
