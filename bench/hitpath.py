"""bench/hitpath.py LIB [--list]: instructions on the hit path of the
malloc and free that LIB exports, read from its disassembly (objdump -d).

From each exported entry point the walk follows the path a hit takes:
through unconditional jumps (tail calls included), into direct calls and
back at their ret, and along the fall-through of every conditional branch,
which is where the compiler lays the likely side (the hit path's branches
are marked likely/unlikely in the sources). It ends at the entry point's
own ret. Whatever the functions are called and however the build splits
or inlines them, the count is of the instructions a hit executes, entry to
ret: no name of an inner function is assumed.

A walk that reaches an indirect jump or call, the PLT (a call out of the
library), a trap, or an instruction it already counted (a loop) is not a
hit path: it fails and says where, rather than print a number.

With --probe HITPROBE the walk is checked against the running code:
bench/hitprobe puts a breakpoint where every conditional branch of the
walk would go if it did not fall through, and runs malloc(64)/free pairs
with LIB preloaded. A breakpoint reached in the first pair (in two runs)
means the hit takes that branch: the walk takes it and is checked again
(at most eight times). One reached later is a miss now and then (a
magazine the reaper trimmed), not the hit path.
A branch whose both sides lie on the walk (a short forward skip) is
checked the other way round: a breakpoint alone on the side the walk
takes must be reached in the first pair. verified=yes when every branch passed; unchecked=N
counts the branches left unchecked when it did not.

Prints `hitpath_insns=N malloc=M free=F [verified=... unchecked=N]` and,
with --list, every instruction counted, grouped by the function it lies in.
"""
import re
import subprocess
import sys

INSN = re.compile(r"^\s*([0-9a-f]+):\s*(.*)$")
FUNC = re.compile(r"^([0-9a-f]+) <(.+)>:$")
TARGET = re.compile(r"^([0-9a-f]+)(?: <([^>]+)>)?")
PREFIXES = {"bnd", "notrack", "rep", "repz", "repe", "lock", "data16", "cs", "ds"}
LIMIT = 400
PLT = "plt"		# key of disassemble()'s successor map that holds the PLT's addresses


class NotAHitPath(Exception):
    pass


def exported(lib, names):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                         text=True, check=True).stdout
    addr = {}
    for line in out.splitlines():
        parts = line.split()
        name = parts[2].split("@")[0] if len(parts) == 3 else None	# malloc@@GLIBC_2.2.5
        if name in names and parts[1] in "TtWi" and name not in addr:
            addr[name] = int(parts[0], 16)
    missing = [n for n in names if n not in addr]
    if missing:
        raise NotAHitPath("%s exports no %s" % (lib, ", ".join(missing)))
    return addr


def disassemble(lib):
    out = subprocess.run(["objdump", "-d", "-w", "--no-show-raw-insn", lib],
                         capture_output=True, text=True, check=True).stdout
    insns = {}		# addr -> (text, function name)
    order = []
    plt = set()		# addresses in .plt, .plt.got, .plt.sec
    func = "?"
    in_plt = False
    for line in out.splitlines():
        if line.startswith("Disassembly of section "):
            in_plt = line.split()[-1].rstrip(":").startswith(".plt")
            continue
        m = FUNC.match(line)
        if m:
            func = m.group(2)
            continue
        m = INSN.match(line)
        if m and m.group(2).strip():
            a = int(m.group(1), 16)
            text = m.group(2).split("#")[0].strip()
            if text in ("(bad)",) or text.startswith(".byte"):
                continue
            insns[a] = (text, func)
            order.append(a)
            if in_plt:
                plt.add(a)
    nxt = {a: b for a, b in zip(order, order[1:])}
    nxt[PLT] = plt
    return insns, nxt


def split(text):
    """mnemonic and operands, prefixes dropped"""
    words = text.split(None, 1)
    while words and words[0] in PREFIXES and len(words) > 1:
        words = words[1].split(None, 1)
    if not words:
        return "", ""
    return words[0], words[1] if len(words) > 1 else ""


def is_jcc(mn):
    return mn.startswith("j") and not mn.startswith("jmp")


def walk(insns, nxt, entry, name, flip=frozenset()):
    """The walk from @entry; conditional branches at the addresses in
    @flip are taken, the others fall through."""
    path = []
    seen = set()
    stack = []
    a = entry
    while True:
        if a not in insns:
            raise NotAHitPath("%s: the walk reached %#x, not an instruction" % (name, a))
        # the same place from the same calls again: a loop (a helper called
        # from two places is two visits)
        if (a, tuple(stack)) in seen:
            raise NotAHitPath("%s: a loop at %#x (%s)" % (name, a, insns[a][1]))
        seen.add((a, tuple(stack)))
        text, func = insns[a]
        path.append((a, text, func))
        if len(path) > LIMIT:
            raise NotAHitPath("%s: more than %d instructions" % (name, LIMIT))
        mn, ops = split(text)
        if mn.startswith("ret"):
            if not stack:
                return path
            a = stack.pop()
            continue
        if mn in ("ud2", "int3", "hlt") or mn.startswith("int"):
            raise NotAHitPath("%s: a trap at %#x (%s)" % (name, a, func))
        if mn.startswith("jmp") or mn.startswith("call"):
            t = TARGET.match(ops)
            if ops.startswith("*") or not t:
                raise NotAHitPath("%s: an indirect %s at %#x (%s): %s" % (name, mn, a, func, text))
            if int(t.group(1), 16) in nxt[PLT]:
                raise NotAHitPath("%s: leaves the library at %#x (%s): %s" % (name, a, func, text))
            if mn.startswith("call"):
                stack.append(nxt[a])
            a = int(t.group(1), 16)
            continue
        if is_jcc(mn) and a in flip:
            t = TARGET.match(ops)
            a = int(t.group(1), 16)
            continue
        # a conditional branch falls through (the likely side); anything else goes on
        a = nxt.get(a)


def other_sides(path, nxt, flip):
    """{address the walk does not go to: the branches it belongs to} for
    every conditional branch of @path whose other side is off the path;
    and {branch: the side the walk goes to} for those whose other side
    lies on the path itself (a breakpoint there would be reached anyway)."""
    on = {a for a, _, _ in path}
    out, inner = {}, {}
    for a, text, _ in path:
        mn, ops = split(text)
        if not is_jcc(mn):
            continue
        t = TARGET.match(ops)
        taken, fall = int(t.group(1), 16), nxt.get(a)
        other, mine = (fall, taken) if a in flip else (taken, fall)
        if other in on or other is None:
            inner[a] = mine
        else:
            out.setdefault(other, set()).add(a)
    return out, inner


def probe_run(probe, lib, addrs):
    """[(address, pair)] of the breakpoints reached, in order."""
    out = subprocess.run([probe, lib] + ["%x" % a for a in sorted(addrs)],
                         capture_output=True, text=True)
    m = re.match(r"taken=(\S*)$", out.stdout.strip())
    if out.returncode != 0 or not m:
        raise NotAHitPath("hitprobe failed: %s" % (out.stderr.strip() or out.stdout.strip()))
    return [(int(x.split("@")[0], 16), int(x.split("@")[1]))
            for x in m.group(1).split(",") if x]


def reached_first(probe, lib, addrs):
    """The address reached in the probe's first pair, when two runs agree
    that one is (a miss in pair 0 is rare; twice running, the walk is off)."""
    first = None
    for _ in range(2):
        t = probe_run(probe, lib, addrs)
        if not t or t[0][1] > 0 or (first is not None and t[0][0] != first):
            return None
        first = t[0][0]
    return first


def verify(lib, probe, insns, nxt, addr):
    """Walk, probe, take the branch the hit was seen to take, again. Then
    every branch whose both sides lie on the walk: a breakpoint alone on
    the side the walk takes must be reached in the first pair (else the
    walk takes the other side and starts over). Returns the paths, "yes"
    or "no", and how many branches stayed unchecked."""
    flip = set()
    for _ in range(8):
        paths = {n: walk(insns, nxt, addr[n], n, frozenset(flip)) for n in ("malloc", "free")}
        others, inner = {}, {}
        for n in paths:
            o, i = other_sides(paths[n], nxt, flip)
            inner.update(i)
            for k, v in o.items():
                others.setdefault(k, set()).update(v)
        first = reached_first(probe, lib, others) if others else None
        if first is not None:
            flip.symmetric_difference_update(others[first])
            continue
        missed = [b for b, side in sorted(inner.items())
                  if (side, 0) not in probe_run(probe, lib, [side])[:1]]
        if not missed:
            return paths, "yes", 0
        flip.symmetric_difference_update(missed[:1])
    return paths, "no", len(inner)


def main():
    argv = sys.argv[1:]
    probe = None
    if "--probe" in argv:
        i = argv.index("--probe")
        if i + 1 >= len(argv):
            print("hitpath: --probe needs the hitprobe program", file=sys.stderr)
            return 2
        probe = argv[i + 1]
        del argv[i:i + 2]
    args = [x for x in argv if not x.startswith("--")]
    if len(args) != 1 or any(x not in ("--list",) for x in argv if x.startswith("--")):
        print("usage: hitpath.py LIB [--list] [--probe HITPROBE]", file=sys.stderr)
        return 2
    lib = args[0]
    try:
        addr = exported(lib, ["malloc", "free"])
        insns, nxt = disassemble(lib)
        if probe:
            paths, verified, unchecked = verify(lib, probe, insns, nxt, addr)
        else:
            paths = {n: walk(insns, nxt, addr[n], n) for n in ("malloc", "free")}
    except (NotAHitPath, subprocess.CalledProcessError, OSError) as e:
        print("hitpath: %s" % e, file=sys.stderr)
        return 1
    m, f = len(paths["malloc"]), len(paths["free"])
    extra = " verified=%s unchecked=%d" % (verified, unchecked) if probe else ""
    print("hitpath_insns=%d malloc=%d free=%d%s" % (m + f, m, f, extra))
    if "--list" in sys.argv:
        for n in ("malloc", "free"):
            func = None
            for a, text, fn in paths[n]:
                if fn != func:
                    count = sum(1 for x in paths[n] if x[2] == fn)
                    print("-- %s: %s (%d)" % (n, fn, count))
                    func = fn
                print("  %6x: %s" % (a, text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
