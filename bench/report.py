"""bench/report.py OUTDIR: turns bench/run.sh's samples (case, allocator,
key, value, round per line of OUTDIR/samples.tsv) into OUTDIR/results.json,
OUTDIR/results.md and PNG plots.

Ratios compare uslab with each peer so that above 1 uslab wins (peer/uslab
for times, uslab/peer for rates). The figure a case is judged by is its CPU
time (perf stat's task-clock for a fixed amount of work; operations per
CPU-second for the cases that run a fixed time), which a loaded machine
moves less than wall time. Allocators run interleaved, so every round gives
one ratio per peer: the table shows the median of those and their range
(min..max over the rounds). RSS is uslab's median peak over the lowest
peer's median peak.
"""
import json
import os
import statistics
import sys
from collections import defaultdict

PEERS = ["glibc", "jemalloc", "tcmalloc", "mimalloc"]
PRESETS = ["uslab-performance", "uslab-adaptive", "uslab-unlimited", "uslab-size", "uslab-nocache"]
ORDER = ["uslab"] + PRESETS + PEERS

# The figure each case is judged by, and whether higher is better.
PRIMARY = [
    ("pair", "pair_ns", False, "64-byte malloc/free pair, ns"),
    ("sh6bench", "sh6_s", False, "sh6bench-shaped (mimalloc-bench), s"),
    ("sh8bench", "sh8_s", False, "sh8bench-shaped (mimalloc-bench), s"),
    ("mleak", "mleak_s", False, "mleak-shaped (mimalloc-bench), s"),
    ("scratch", "scratch_s", False, "cache-scratch (Hoard's, as mimalloc-bench runs it), s"),
    ("gmalloc_t", "gmfill_s", False, "gmalloc shape (seed 003: 16..512 B, touched, freed), s"),
    ("larson_sized", "larson_mops", True, "larson-sized (mimalloc-bench), Mops/s"),
    ("study_t", "study_mops_cpu", True, "thread-cache study (seed 000), Mops per CPU-second"),
    ("mt_", "mt_ns", False, "mtmalloc table (seed 002), ns per iteration"),
    ("gmalloc_seq", "gm_seq_s", False, "gmalloc sequential (seed 003, 16..4096 B), s"),
    ("gmalloc_mt", "gm_mt_s", False, "gmalloc multi-threaded (seed 003), s"),
    ("gmalloc_mix", "gm_mix_s", False, "gmalloc mixed (seed 003), s"),
    ("larson", "larson_mops", True, "larson (mimalloc-bench), Mops/s"),
    ("rptest", "rptest_mops", True, "rptest (mimalloc-bench), Mops/s"),
    ("xmalloc", "xmalloc_mops", True, "xmalloc-test (mimalloc-bench), M frees/s"),
    ("alloc_test", "alloc_test_mops", True, "alloc-test (mimalloc-bench), Mops/s"),
    ("glibc_thread", "glibc_thread_mops", True, "glibc bench-malloc-thread, M iterations/s"),
    ("cfrac", "cfrac_s", False, "cfrac-shaped (mimalloc-bench), s"),
    ("espresso", "espresso_s", False, "espresso-shaped (mimalloc-bench), s"),
    ("malloc_large", "malloc_large_s", False, "malloc-large (mimalloc-bench), s"),
    ("many_t", "many_s", False, "many threads on 2 CPUs, 16..512 B, s"),
    ("prodcons", "prodcons_ns", False, "producer/consumer, ns per block"),
    ("threads_rss", "threads_rss_kb", False, "RSS with 64 threads alive, KiB"),
    ("small_rss", "small_rss_kb", False, "a program holding 1 MiB of 64 B blocks, peak RSS KiB"),
]


# Cases that run for a fixed time: their task-clock says nothing; they
# report operations per CPU-second (KEY_cpu) instead.
TIMED = ("larson", "xmalloc", "glibc_thread", "rss_decay")
# Cases whose figure is not time at all.
NOT_TIME = ("threads_rss", "study_t", "small_rss")
# The bar (issue 18): at least this of the best Debian peer.
BAR = 0.95


def primary(case):
    for prefix, key, higher, label in PRIMARY:
        if case.startswith(prefix):
            return key, higher, label
    return None


def load(outdir):
    data = defaultdict(list)
    rounds = defaultdict(dict)
    cases = []
    with open(os.path.join(outdir, "samples.tsv")) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) not in (4, 5):
                continue
            case, alloc, key, value = parts[:4]
            try:
                v = float(value.replace(",", ""))
            except ValueError:
                continue
            if case not in cases:
                cases.append(case)
            data[(case, alloc, key)].append(v)
            if len(parts) == 5:
                rounds[(case, alloc, key)][parts[4]] = v
    machine = {}
    path = os.path.join(outdir, "machine.tsv")
    if os.path.exists(path):
        for line in open(path):
            k, _, v = line.rstrip("\n").partition("\t")
            machine[k] = v
    return data, rounds, cases, machine


def med(data, case, alloc, key):
    vals = data.get((case, alloc, key))
    return statistics.median(vals) if vals else None


def uslab_name(data, case):
    """The study runs the presets; elsewhere "uslab" is the default build."""
    return "uslab" if any(k[0] == case and k[1] == "uslab" for k in data) \
        else "uslab-performance"


def judged_by(case, key, higher):
    """The CPU figure of a case: (key, higher is better)."""
    if case.startswith(TIMED):
        return key + "_cpu", True
    if case.startswith(NOT_TIME):
        return key, higher
    return "task-clock", False


def paired(rounds, case, u, a, key, higher):
    """Per-round ratios uslab against peer a (above 1: uslab wins)."""
    ru, ra = rounds.get((case, u, key), {}), rounds.get((case, a, key), {})
    out = []
    for r in sorted(set(ru) & set(ra)):
        x, y = ru[r], ra[r]
        if x > 0 and y > 0:
            out.append(x / y if higher else y / x)
    return out


def ratio_of(data, rounds, case, u, a, key, higher):
    """(median, min, max, n) of the per-round ratios, or of the medians
    when the samples carry no rounds."""
    rs = paired(rounds, case, u, a, key, higher)
    if rs:
        return statistics.median(rs), min(rs), max(rs), len(rs)
    x, y = med(data, case, u, key), med(data, case, a, key)
    if not x or not y:
        return None
    r = x / y if higher else y / x
    return r, r, r, 1


def summary_rows(data, rounds, cases):
    rows = []
    for case in cases:
        p = primary(case)
        if not p:
            continue
        key, higher, label = p
        u = uslab_name(data, case)
        ckey, chigher = judged_by(case, key, higher)
        if med(data, case, u, ckey) is None:	# no perf stat: the case's own figure
            ckey, chigher = key, higher
        per_peer = {}
        for a in PEERS:
            r = ratio_of(data, rounds, case, u, a, ckey, chigher)
            if r:
                per_peer[a] = r
        if not per_peer:
            continue
        best = min(per_peer, key=lambda a: per_peer[a][0])
        wall = {}
        for a in PEERS:
            r = ratio_of(data, rounds, case, u, a, key, higher)
            if r:
                wall[a] = r
        wall_best = min(wall, key=lambda a: wall[a][0]) if wall else None
        rss_u = med(data, case, u, "peak_rss_kb")
        rss_peers = {a: med(data, case, a, "peak_rss_kb") for a in PEERS}
        rss_peers = {a: r for a, r in rss_peers.items() if r}
        low = min(rss_peers, key=rss_peers.get) if rss_peers else None
        rows.append({
            "case": case, "metric": key, "judged_by": ckey, "label": label,
            "uslab_build": u, "uslab": med(data, case, u, key),
            "uslab_cpu": med(data, case, u, ckey),
            "best_peer": best, "ratio": per_peer[best][0],
            "ratio_min": per_peer[best][1], "ratio_max": per_peer[best][2],
            "rounds": per_peer[best][3],
            "per_peer": {a: per_peer[a][0] for a in per_peer},
            "per_peer_range": {a: [per_peer[a][1], per_peer[a][2]] for a in per_peer},
            "wall_best_peer": wall_best,
            "wall_ratio": wall[wall_best][0] if wall_best else None,
            "rss_ratio": rss_u / rss_peers[low] if rss_u and low else None,
            "rss_lowest_peer": low,
            "all": {a: med(data, case, a, key) for a in ORDER
                    if med(data, case, a, key) is not None},
        })
    return rows


def md_adaptive(data, rounds, rows):
    """Issue 23's rows: uslab-adaptive against the fixed defaults of the same
    run on each case's judged figure (paired by round), beside the fixed
    build's own run-to-run spread (its slowest run over its fastest): a
    median beyond 1/spread or spread is more than the noise explains."""
    out = ["| case | adaptive / fixed (median, range over rounds) | fixed spread | verdict |",
           "|---|---|---|---|"]
    slower = 0
    for r in rows:
        case, u, ckey = r["case"], r["uslab_build"], r["judged_by"]
        higher = ckey != "task-clock" and not ckey.endswith("_kb")
        rr = ratio_of(data, rounds, case, "uslab-adaptive", u, ckey, higher)
        vals = data.get((case, u, ckey))
        if not rr or not vals or min(vals) <= 0:
            continue
        spread = max(vals) / min(vals)
        bad = rr[0] < 1 / spread
        slower += bad
        out.append("| %s | %.2f (%.2f..%.2f, %d) | %.2f | %s |" % (
            case, rr[0], rr[1], rr[2], rr[3], spread,
            "**slower beyond the spread**" if bad else
            "faster beyond the spread" if rr[0] > spread else "within the spread"))
    if len(out) == 2:
        return []
    return ["Above 1: the adaptive preset is faster. %d of %d rows slower than the fixed "
            "build's spread." % (slower, len(out) - 2), ""] + out


def special_rows(data):
    """The rows that are not a ratio of times: the hit path and the tax."""
    out = {}
    n = med(data, "hitpath", "uslab", "hitpath_insns")
    if n is not None:
        out["hitpath"] = {"insns": n, "malloc": med(data, "hitpath", "uslab", "malloc"),
                          "free": med(data, "hitpath", "uslab", "free"),
                          "verified": {None: "not checked", 0: "no, the walk may be off the path",
                                       1: "yes"}[med(data, "hitpath", "uslab", "verified")],
                          "peers": {a: med(data, "hitpath", a, "hitpath_insns") for a in PEERS
                                    if med(data, "hitpath", a, "hitpath_insns") is not None}}
    tax = {a: med(data, "rss_tax", a, "rss_kb") for a in ["uslab"] + PEERS}
    if tax.get("uslab") and tax.get("glibc"):
        out["rss_tax"] = {"uslab_minus_glibc_kb": tax["uslab"] - tax["glibc"],
                          "rss_kb": {a: v for a, v in tax.items() if v}}
    return out


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.3g" % v


def fr(v):
    return "-" if v is None else "%.2f" % v


def md_summary(rows):
    out = ["| case | figure | ratio vs best peer (median, range over rounds) | best peer | "
           "vs glibc | vs jemalloc | vs tcmalloc | vs mimalloc | wall-time ratio | "
           "uslab RSS / lowest peer |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = "%.2f (%.2f..%.2f, %d)" % (r["ratio"], r["ratio_min"], r["ratio_max"], r["rounds"])
        if r["ratio"] < BAR:
            ratio = "**%s**" % ratio
        fig = {"task-clock": "CPU time"}.get(r["judged_by"], r["judged_by"])
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["case"], fig, ratio, r["best_peer"],
            " | ".join(fr(r["per_peer"].get(a)) for a in PEERS),
            fr(r["wall_ratio"]), fr(r["rss_ratio"])))
    return out


def md_special(sp):
    out = []
    h = sp.get("hitpath")
    if h:
        out.append("* hit path: **%d instructions** per malloc+free pair on a hit "
                   "(malloc %d + free %d, entry to ret of malloc(64) and free; "
                   "bench/hitpath.py, listing in hitpath.txt; checked against the running "
                   "code by bench/hitprobe: %s; issue 18's bar: 30)%s" % (
                       h["insns"], h["malloc"], h["free"], h["verified"],
                       "; the peers' by the same walk, checked: " + ", ".join(
                           "%s %d" % (a, n) for a, n in h["peers"].items()) if h["peers"] else ""))
    t = sp.get("rss_tax")
    if t:
        out.append("* small-program RSS tax (rss_tax: a process holding 1 MiB): uslab RSS - "
                   "glibc RSS = **%d KiB** (bar: 1024); RSS KiB: %s" % (
                       t["uslab_minus_glibc_kb"],
                       ", ".join("%s %d" % (a, v) for a, v in t["rss_kb"].items())))
    return out


def md_all_allocs(rows):
    present = [a for a in ORDER if any(a in r["all"] for r in rows)]
    out = ["| case | " + " | ".join(present) + " |",
           "|---|" + "---|" * len(present)]
    for r in rows:
        out.append("| %s | " % r["case"] + " | ".join(fmt(r["all"].get(a)) for a in present) + " |")
    return out


def spread(data, case, alloc, key, scale=1.0):
    vals = data.get((case, alloc, key))
    if not vals:
        return "-"
    if len(vals) == 1:
        return fmt(vals[0] / scale)
    return "%s (%s..%s)" % (fmt(statistics.median(vals) / scale), fmt(min(vals) / scale),
                            fmt(max(vals) / scale))


OVERHEAD = ("memory overhead, %: (RSS - RSS at start - live bytes) / live bytes, "
            "at the sampled moment of highest RSS (all threads stopped, live bytes "
            "counted at that moment)")


def md_study(data, cases, quick):
    allocs = PRESETS + PEERS
    ts = sorted(int(c[len("study_t"):]) for c in cases if c.startswith("study_t"))
    out = []
    for key, title in (("study_mops_cpu", "Mops per CPU-second"),
                       ("study_mops", "Mops per second (wall)"),
                       ("overhead_pct", OVERHEAD),
                       ("peak_rss_kb", "peak RSS, MiB")):
        out.append("")
        out.append("%s%s, median (min..max):" % (quick, title))
        out.append("")
        out.append("| threads | " + " | ".join(allocs) + " |")
        out.append("|---|" + "---|" * len(allocs))
        for t in ts:
            vals = [spread(data, "study_t%d" % t, a, key,
                           1024.0 if key == "peak_rss_kb" else 1.0) for a in allocs]
            out.append("| %d | " % t + " | ".join(vals) + " |")
    return out


def md_mt(data, cases):
    allocs = ["uslab", "uslab-adaptive"] + PEERS
    out = ["| size | threads | " + " | ".join(allocs) + " |",
           "|:---:|:---:|" + "---:|" * len(allocs)]
    for c in cases:
        if not c.startswith("mt_"):
            continue
        _, kb, t = c.split("_")
        vals = [med(data, c, a, "mt_ns") for a in allocs]
        out.append("| 0 ~ %s | %s | " % (kb.upper(), t[1:]) +
                   " | ".join("-" if v is None else "%.0fns" % v for v in vals) + " |")
    return out


def md_gmalloc(data, cases):
    allocs = ["uslab", "uslab-adaptive"] + PEERS
    out = []
    for c in cases:
        if not c.startswith("gmalloc_"):
            continue
        key = "gmfill_s" if c.startswith("gmalloc_t") else "gm_%s_s" % c.split("_")[1]
        out.append("")
        out.append("%s:" % c)
        out.append("")
        out.append("| allocator | time s | max RSS MiB | task-clock ms | page-faults | context-switches | cpu-migrations |")
        out.append("|---|---|---|---|---|---|---|")
        for a in allocs:
            rss = med(data, c, a, "peak_rss_kb")
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                a, fmt(med(data, c, a, key)), fmt(rss / 1024 if rss else None),
                fmt(med(data, c, a, "task-clock")), fmt(med(data, c, a, "page-faults")),
                fmt(med(data, c, a, "context-switches")), fmt(med(data, c, a, "cpu-migrations"))))
    return out


def md_cost(data, cases):
    costs = []
    for c in cases:
        t = sum(sum(v) for (cc, a, k), v in data.items() if cc == c and k == "run_s")
        if t:
            costs.append((t, c))
    if not costs:
        return []
    total = sum(t for t, _ in costs)
    costs.sort(reverse=True)
    return ["| case | s | share |", "|---|---|---|"] + \
        ["| %s | %.0f | %.0f%% |" % (c, t, 100 * t / total) for t, c in costs] + \
        ["| all | %.0f | |" % total]


def decay_series(data, alloc):
    pts = []
    for (case, a, key), vals in data.items():
        if case == "rss_decay" and a == alloc and key.startswith("rss_t") and key.endswith("_kb"):
            pts.append((int(key[5:-3]), statistics.median(vals)))
    return sorted(pts)


def md_decay(data):
    allocs = [a for a in PRESETS + PEERS if decay_series(data, a)]
    if not allocs:
        return []
    times = [t for t, _ in decay_series(data, allocs[0])]
    pick = [t for t in times if t in (0, 250, 500, 1000, 2000, 3000, 5000)]
    out = ["| allocator | peak RSS MiB | " + " | ".join("%.2g s" % (t / 1000) for t in pick) + " |",
           "|---|---|" + "---|" * len(pick)]
    for a in allocs:
        s = dict(decay_series(data, a))
        peak = med(data, "rss_decay", a, "peak_rss_kb")
        out.append("| %s | %s | " % (a, fmt(peak / 1024 if peak else None)) +
                   " | ".join(fmt(s.get(t, 0) / 1024) for t in pick) + " |")
    return out


def md_redis(data):
    allocs = ["uslab", "uslab-adaptive"] + PEERS
    keys = sorted({k for (c, a, k) in data if c == "redis"})
    if not keys:
        return []
    out = ["| key | " + " | ".join(allocs) + " |", "|---|" + "---|" * len(allocs)]
    for k in keys:
        out.append("| %s | " % k + " | ".join(fmt(med(data, "redis", a, k)) for a in allocs) + " |")
    return out


def plots(data, cases, outdir, quick):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: no matplotlib (python3-matplotlib): plots skipped", file=sys.stderr)
        return []
    made = []
    # a plot's title has less room: the mark on a line of its own
    quick = "QUICK RUN (smaller counts, not comparable with full runs)\n" if quick else ""
    ts = sorted(int(c[len("study_t"):]) for c in cases if c.startswith("study_t"))
    if ts:
        for key, ylabel, name in (("study_mops_cpu", "Mops per CPU-second", "study_ops.png"),
                                  ("overhead_pct", "memory overhead, % of the live bytes at peak RSS",
                                   "study_overhead.png")):
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for a in PRESETS + PEERS:
                ys, lo, hi = [], [], []
                for t in ts:
                    v = data.get(("study_t%d" % t, a, key)) or [float("nan")]
                    m = statistics.median(v)
                    ys.append(m)
                    lo.append(m - min(v))
                    hi.append(max(v) - m)
                if any(y == y for y in ys):
                    # the bars: min..max of the runs
                    ax.errorbar(ts, ys, yerr=[lo, hi], marker="o", capsize=3, label=a,
                                linestyle="-" if a.startswith("uslab") else "--")
            ax.set_xlabel("threads")
            ax.set_ylabel(ylabel)
            ax.set_xticks(ts)
            ax.set_title("%sthread-cache study (seed 000), median and min..max of the runs" % quick,
                         fontsize=10)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
            fig.tight_layout()
            fig.savefig(os.path.join(outdir, name), dpi=100)
            plt.close(fig)
            made.append(name)
    series = {a: decay_series(data, a) for a in PRESETS + PEERS}
    if any(series.values()):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for a, pts in series.items():
            if pts:
                ax.plot([t / 1000 for t, _ in pts], [v / 1024 for _, v in pts], label=a,
                        linestyle="-" if a.startswith("uslab") else "--")
        ax.set_xlabel("seconds after freeing 150000 blocks (idle)")
        ax.set_ylabel("RSS, MiB")
        ax.set_title("%sRSS over time after a burst of frees (one run each)" % quick)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "rss_decay.png"), dpi=100)
        plt.close(fig)
        made.append("rss_decay.png")
    return made


def main():
    outdir = sys.argv[1]
    data, rounds, cases, machine = load(outdir)
    quick = "QUICK RUN (smaller counts, not comparable with full runs): " \
        if machine.get("quick") == "1" else ""
    rows = summary_rows(data, rounds, cases)
    sp = special_rows(data)
    pngs = plots(data, cases, outdir, quick)
    md = ["# %suslab benchmark results" % quick, ""]
    md.append("Machine: %s, %s, %s; %s runs per case (allocators interleaved, order "
              "rotated each round), started at load %s, ended at %s; %s s; commit %s; %s." % (
                  machine.get("machine", "?"), machine.get("cpu", "?"), machine.get("memory", "?"),
                  machine.get("runs", "?"), machine.get("loadavg_start", "?"),
                  machine.get("loadavg_end", "?"), machine.get("seconds", "?"),
                  machine.get("commit", "?"), machine.get("date", "?")))
    loads = [machine[k] for k in sorted(machine) if k.startswith("loadavg_round")]
    if loads:
        md.append("Load average after each round: %s." % "; ".join(loads))
    md.append("Peers (Debian packages, preloaded): " + ", ".join(
        machine[k] for k in ("peer_glibc", "peer_jemalloc", "peer_tcmalloc", "peer_mimalloc")
        if k in machine) + ".")
    if quick:
        md.append("")
        md.append("**QUICK RUN**: smaller counts, %s run(s); every table below is of this "
                  "quick run and not for comparison with full runs." % machine.get("runs", "?"))
    md += ["", "## %sSummary" % quick, "",
           "Ratio above 1: uslab wins. The ratio is the case's CPU time (task-clock "
           "of the same work; operations per CPU-second for the cases that run a fixed "
           "time; the study's Mops per CPU-second), uslab against each peer in the same "
           "round, median over the rounds and its range; bold: below %.2f of the best "
           "Debian peer (issue 18's bar). Wall-time ratio: the case's own figure against "
           "the best peer by that figure. RSS: uslab's median peak over the lowest "
           "peer's." % BAR, ""] + md_summary(rows)
    spec = md_special(sp)
    if spec:
        md += [""] + spec
    ad = md_adaptive(data, rounds, rows)
    if ad:
        md += ["", "## %sThe adaptive preset against the fixed defaults" % quick, ""] + ad
    md += ["", "## %sEvery allocator (medians of the case's own figure)" % quick, ""] + \
        md_all_allocs(rows)
    md += ["", "## %sThread-cache study (seed 000), presets and peers" % quick] + \
        md_study(data, cases, quick)
    mt = md_mt(data, cases)
    if len(mt) > 2:
        md += ["", "## %smtmalloc's table (seed 002), ns per iteration" % quick, ""] + mt
    gm = md_gmalloc(data, cases)
    if gm:
        md += ["", "## %sgmalloc's runs (seed 003), perf stat software counters" % quick] + gm
    dec = md_decay(data)
    if dec:
        md += ["", "## %sRSS (MiB) over time after a burst of frees (rss_decay)" % quick, ""] + dec
    cost = md_cost(data, cases)
    if cost:
        md += ["", "## %sWhat each case cost in wall time (s, all allocators and rounds)" % quick,
               ""] + cost
    red = md_redis(data)
    if red:
        md += ["", "## %sredis-server slot" % quick, ""] + red
    if pngs:
        md += ["", "Plots: " + ", ".join(pngs)]
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({
            "machine": machine,
            "quick": bool(quick),
            "summary": rows,
            "special": sp,
            "medians": [{"case": c, "alloc": a, "key": k, "median": statistics.median(v), "n": len(v),
                         "samples": v} for (c, a, k), v in sorted(data.items())],
            "plots": pngs,
        }, f, indent=1)


if __name__ == "__main__":
    main()
