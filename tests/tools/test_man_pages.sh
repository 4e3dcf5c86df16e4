#!/usr/bin/env bash
# The manual pages (docs/man/*.scd) against the tools they describe, so the
# two cannot drift: every command `uslab --help` lists has its page and is
# named in uslab(1); every option its --help lists (its option table,
# tools/lib/parse-options.c) is in the page; and every range the page
# states for a numeric option is the table's range, which the tool itself
# tells: given a number past any range, it answers "expected an integer
# LO..HI" (the page must then say "LO to HI" in that option's paragraph).
# A numeric option whose page states no range is a failure too.
. "$(dirname "$0")/../lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
"$U" gen rpmalloc -t 1 -b 50 -l 3 -o "$T/t.ustr" 2>/dev/null

python3 - "$U" "$src/docs/man" "$T/t.ustr" <<'PY'
import os, re, subprocess, sys

U, mandir, trace = sys.argv[1:4]
# Run every probe in the scratch folder: an option that names an output
# file (--svg=99999...) writes it there, not into the source tree.
U = os.path.abspath(U)
scratch = os.path.dirname(os.path.abspath(trace))
# operands that get each command past its own checks to the option's
operands = {"script": [trace], "report": [trace], "replay": [trace], "sim": [trace],
            "tune": [trace], "gen": ["rpmalloc", "-o", "/nonexistent/x"],
            "import": ["mtrace", "/dev/null", "-o", "/nonexistent/x"],
            "record": ["-o", "/nonexistent/x", "--", "true"],
            "slabinfo": ["-p", "1"], "top": ["-p", "1"], "calibrate": []}
bad = []
helptext = subprocess.run([U, "--help"], capture_output=True, text=True).stdout
cmds = re.findall(r"^  ([a-z]+) ", helptext.split("commands:", 1)[1], re.M)
top = open(f"{mandir}/uslab.1.scd").read()
nranges = 0
for c in cmds:
    try:
        page = open(f"{mandir}/uslab-{c}.1.scd").read()
    except OSError:
        bad.append(f"{c}: no docs/man/uslab-{c}.1.scd")
        continue
    if f"*uslab-{c}*(1)" not in top or not re.search(rf"^\*{c}\*$", top, re.M):
        bad.append(f"uslab(1) does not list {c} with *uslab-{c}*(1)")
    if c not in operands:
        bad.append(f"{c}: a new command: give it operands in {sys.argv[0]}")
        continue
    h = subprocess.run([U, c, "--help"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL).stdout
    body = page.split("# OPTIONS", 1)[1].split("\n# ", 1)[0] if "# OPTIONS" in page else ""
    paras = re.split(r"\n(?=\*-)", body)
    for m in re.finditer(r"^  (?:(-[a-zA-Z])(?:, (--[a-z-]+))?|    (--[a-z-]+))(\[?[ =]+[A-Z]+)?",
                         h, re.M):
        short, lng, lng2, arg = m.groups()
        names = [x for x in (short, lng, lng2) if x]
        for n in names:
            if f"*{n}*" not in page:
                bad.append(f"{c} {n}: in --help, not in uslab-{c}(1)")
        if not arg or names[-1] in ("-h", "--help"):
            continue
        opt = names[-1]
        argv = [U, c, f"{opt}=99999999999999999999999" if opt.startswith("--")
                else opt, *([] if opt.startswith("--") else ["99999999999999999999999"])]
        r = subprocess.run(argv + operands[c], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=60, cwd=scratch)
        mm = re.search(r": expected (?:an integer|a number|a process id) (-?[0-9.]+)\.\.(-?[0-9.]+),",
                       r.stderr.split("\n")[0])
        if not mm:
            continue	# not a plain number (a list, a name, a callback's own form)
        nranges += 1
        lo, hi = mm.groups()
        para = [p for p in paras
                if any(re.search(r"\*" + re.escape(n) + r"\*", p.split("\n")[0]) for n in names)]
        if not para:
            bad.append(f"{c} {opt}: no paragraph in uslab-{c}(1)")
            continue
        doc = re.findall(r"(-?[0-9]+(?:\.[0-9]+)?)\s+to\s+(-?[0-9]+(?:\.[0-9]+)?)", para[0])
        if not doc:
            bad.append(f"{c} {opt}: the tool takes {lo}..{hi}, uslab-{c}(1) states no range")
        elif doc[0] != (lo, hi):
            bad.append(f"{c} {opt}: uslab-{c}(1) says {doc[0][0]} to {doc[0][1]}, the tool takes {lo}..{hi}")
for b in bad:
    print("FAIL:", b)
if nranges < 25:
    print(f"FAIL: only {nranges} numeric options found: the probe no longer works")
    sys.exit(1)
print(f"{len(cmds)} commands, {nranges} ranges checked")
sys.exit(1 if bad else 0)
PY
echo "man pages: every command, option and range as the tools have them"
