"""bench/report.py OUTDIR: turns bench/run.sh's samples (case, allocator,
key, value per line of OUTDIR/samples.tsv) into OUTDIR/results.json,
OUTDIR/results.md and PNG plots. Medians per allocator; the ratio compares
uslab with the best peer so that above 1 uslab wins (peer/uslab for
times, uslab/peer for rates); RSS is uslab's peak over the lowest peer's.
"""
import json
import os
import statistics
import sys
from collections import defaultdict

PEERS = ["glibc", "jemalloc", "tcmalloc", "mimalloc"]
PRESETS = ["uslab-performance", "uslab-unlimited", "uslab-size", "uslab-nocache"]
ORDER = ["uslab"] + PRESETS + PEERS

# The figure each case is judged by, and whether higher is better.
PRIMARY = [
    ("pair", "pair_ns", False, "64-byte malloc/free pair, ns"),
    ("study_t", "study_mops_cpu", True, "thread-cache study (seed 000), Mops per CPU-second"),
    ("mt_", "mt_ns", False, "mtmalloc table (seed 001), ns per iteration"),
    ("gmalloc_seq", "gm_seq_s", False, "gmalloc sequential (seed 002), s"),
    ("gmalloc_mt", "gm_mt_s", False, "gmalloc multi-threaded (seed 002), s"),
    ("gmalloc_mix", "gm_mix_s", False, "gmalloc mixed (seed 002), s"),
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


# Cases that run for a fixed time: their task-clock says nothing.
TIMED = ("larson", "xmalloc", "glibc_thread", "rss_decay")


def primary(case):
    for prefix, key, higher, label in PRIMARY:
        if case.startswith(prefix):
            return key, higher, label
    return None


def load(outdir):
    data = defaultdict(list)
    cases = []
    with open(os.path.join(outdir, "samples.tsv")) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4:
                continue
            case, alloc, key, value = parts
            try:
                v = float(value.replace(",", ""))
            except ValueError:
                continue
            if case not in cases:
                cases.append(case)
            data[(case, alloc, key)].append(v)
    machine = {}
    path = os.path.join(outdir, "machine.tsv")
    if os.path.exists(path):
        for line in open(path):
            k, _, v = line.rstrip("\n").partition("\t")
            machine[k] = v
    return data, cases, machine


def med(data, case, alloc, key):
    vals = data.get((case, alloc, key))
    return statistics.median(vals) if vals else None


def uslab_name(data, case):
    """The study runs the presets; elsewhere "uslab" is the default build."""
    return "uslab" if any(k[0] == case and k[1] == "uslab" for k in data) \
        else "uslab-performance"


def summary_rows(data, cases):
    rows = []
    for case in cases:
        p = primary(case)
        if not p:
            continue
        key, higher, label = p
        u = uslab_name(data, case)
        uv = med(data, case, u, key)
        peer_vals = {a: med(data, case, a, key) for a in PEERS}
        peer_vals = {a: v for a, v in peer_vals.items() if v is not None}
        if uv is None or not peer_vals:
            continue
        best = (max if higher else min)(peer_vals, key=peer_vals.get)
        bv = peer_vals[best]
        ratio = (uv / bv if higher else bv / uv) if uv and bv else None
        # CPU time of the same work: robust to a loaded machine (not for
        # the cases that run for a fixed time)
        cpu_ratio = None
        if not case.startswith(TIMED):
            cu = med(data, case, u, "task-clock")
            cp = [med(data, case, a, "task-clock") for a in PEERS]
            cp = [c for c in cp if c]
            if cu and cp:
                cpu_ratio = min(cp) / cu
        rss_u = med(data, case, u, "peak_rss_kb")
        rss_peers = [med(data, case, a, "peak_rss_kb") for a in PEERS]
        rss_peers = [r for r in rss_peers if r]
        rss_ratio = rss_u / min(rss_peers) if rss_u and rss_peers else None
        rows.append({
            "case": case, "metric": key, "label": label, "higher_is_better": higher,
            "uslab": uv, "uslab_build": u, "best_peer": best, "best_peer_value": bv,
            "ratio": ratio, "rss_ratio": rss_ratio, "cpu_ratio": cpu_ratio,
            "n": len(data.get((case, u, key), [])),
            "all": {a: med(data, case, a, key) for a in ORDER
                    if med(data, case, a, key) is not None},
        })
    return rows


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.3g" % v


def md_summary(rows):
    out = ["| case | metric | best peer | uslab | ratio | CPU-time ratio | uslab RSS / lowest peer |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = "-" if r["ratio"] is None else "%.2f" % r["ratio"]
        if r["ratio"] is not None and r["ratio"] < 0.9:
            ratio = "**%s**" % ratio
        rss = "-" if r["rss_ratio"] is None else "%.2f" % r["rss_ratio"]
        cpu = "-" if r["cpu_ratio"] is None else "%.2f" % r["cpu_ratio"]
        out.append("| %s | %s | %s %s | %s | %s | %s | %s |" % (
            r["case"], r["label"], r["best_peer"], fmt(r["best_peer_value"]),
            fmt(r["uslab"]), ratio, cpu, rss))
    return out


def md_all_allocs(rows):
    present = [a for a in ORDER if any(a in r["all"] for r in rows)]
    out = ["| case | " + " | ".join(present) + " |",
           "|---|" + "---|" * len(present)]
    for r in rows:
        out.append("| %s | " % r["case"] + " | ".join(fmt(r["all"].get(a)) for a in present) + " |")
    return out


def md_study(data, cases):
    allocs = PRESETS + PEERS
    ts = sorted(int(c[len("study_t"):]) for c in cases if c.startswith("study_t"))
    out = []
    for key, title in (("study_mops_cpu", "Mops per CPU-second"),
                       ("study_mops", "Mops per second (wall)"),
                       ("overhead_pct", "memory overhead, % of the peak requested bytes"),
                       ("peak_rss_kb", "peak RSS, MiB")):
        out.append("")
        out.append("%s:" % title)
        out.append("")
        out.append("| threads | " + " | ".join(allocs) + " |")
        out.append("|---|" + "---|" * len(allocs))
        for t in ts:
            vals = []
            for a in allocs:
                v = med(data, "study_t%d" % t, a, key)
                if v is not None and key == "peak_rss_kb":
                    v /= 1024
                vals.append(fmt(v))
            out.append("| %d | " % t + " | ".join(vals) + " |")
    return out


def md_mt(data, cases):
    allocs = ["uslab"] + PEERS
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
    allocs = ["uslab"] + PEERS
    out = []
    for c in cases:
        if not c.startswith("gmalloc_"):
            continue
        key = "gm_%s_s" % c.split("_")[1]
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
    allocs = ["uslab"] + PEERS
    keys = sorted({k for (c, a, k) in data if c == "redis"})
    if not keys:
        return []
    out = ["| key | " + " | ".join(allocs) + " |", "|---|" + "---|" * len(allocs)]
    for k in keys:
        out.append("| %s | " % k + " | ".join(fmt(med(data, "redis", a, k)) for a in allocs) + " |")
    return out


def plots(data, cases, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: no matplotlib (python3-matplotlib): plots skipped", file=sys.stderr)
        return []
    made = []
    ts = sorted(int(c[len("study_t"):]) for c in cases if c.startswith("study_t"))
    if ts:
        for key, ylabel, name in (("study_mops_cpu", "Mops per CPU-second", "study_ops.png"),
                                  ("overhead_pct", "memory overhead, % of requested", "study_overhead.png")):
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for a in PRESETS + PEERS:
                ys = [med(data, "study_t%d" % t, a, key) for t in ts]
                if any(y is not None for y in ys):
                    ax.plot(ts, [y if y is not None else float("nan") for y in ys],
                            marker="o", label=a, linestyle="-" if a.startswith("uslab") else "--")
            ax.set_xlabel("threads")
            ax.set_ylabel(ylabel)
            ax.set_xticks(ts)
            ax.set_title("thread-cache study: 150000 blocks of 16..16000 B per thread")
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
        ax.set_title("RSS over time after a burst of frees")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "rss_decay.png"), dpi=100)
        plt.close(fig)
        made.append("rss_decay.png")
    return made


def main():
    outdir = sys.argv[1]
    data, cases, machine = load(outdir)
    rows = summary_rows(data, cases)
    pngs = plots(data, cases, outdir)
    md = ["# uslab benchmark results", ""]
    md.append("Machine: %s, %s, %s; %s runs per case (medians), started at load %s, ended at %s; "
              "%s s; commit %s; %s." % (
                  machine.get("machine", "?"), machine.get("cpu", "?"), machine.get("memory", "?"),
                  machine.get("runs", "?"), machine.get("loadavg_start", "?"),
                  machine.get("loadavg_end", "?"), machine.get("seconds", "?"),
                  machine.get("commit", "?"), machine.get("date", "?")))
    md.append("Peers (Debian packages, preloaded): " + ", ".join(
        machine[k] for k in ("peer_glibc", "peer_jemalloc", "peer_tcmalloc", "peer_mimalloc")
        if k in machine) + ".")
    if machine.get("quick") == "1":
        md.append("QUICK MODE: smaller counts, one run; not for comparison with full runs.")
    md += ["", "## Summary (ratio above 1: uslab wins; bold: below 0.9)", "",
           "ratio: the case's metric, uslab against the best peer. CPU-time ratio: the "
           "lowest peer task-clock over uslab's for the same work (perf stat), which a "
           "loaded machine disturbs less than wall time; '-' for cases that run a fixed "
           "time.", ""] + md_summary(rows)
    md += ["", "## Every allocator (medians of the case's metric)", ""] + md_all_allocs(rows)
    md += ["", "## Thread-cache study (seed 000), presets and peers"] + md_study(data, cases)
    md += ["", "## mtmalloc's table (seed 001), ns per iteration", ""] + md_mt(data, cases)
    md += ["", "## gmalloc's three runs (seed 002), perf stat software counters"] + md_gmalloc(data, cases)
    dec = md_decay(data)
    if dec:
        md += ["", "## RSS (MiB) over time after a burst of frees (rss_decay)", ""] + dec
    red = md_redis(data)
    if red:
        md += ["", "## redis-server slot", ""] + red
    if pngs:
        md += ["", "Plots: " + ", ".join(pngs)]
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({
            "machine": machine,
            "summary": rows,
            "medians": [{"case": c, "alloc": a, "key": k, "median": statistics.median(v), "n": len(v),
                         "samples": v} for (c, a, k), v in sorted(data.items())],
            "plots": pngs,
        }, f, indent=1)


if __name__ == "__main__":
    main()
