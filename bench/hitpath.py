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

Prints `hitpath_insns=N malloc=M free=F` and, with --list, every
instruction counted, grouped by the function it lies in.
"""
import re
import subprocess
import sys

INSN = re.compile(r"^\s*([0-9a-f]+):\s*(.*)$")
FUNC = re.compile(r"^([0-9a-f]+) <(.+)>:$")
TARGET = re.compile(r"^([0-9a-f]+)(?: <([^>]+)>)?")
PREFIXES = {"bnd", "notrack", "rep", "repz", "repe", "lock", "data16", "cs", "ds"}
LIMIT = 400


class NotAHitPath(Exception):
    pass


def exported(lib, names):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                         text=True, check=True).stdout
    addr = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWi" and parts[2] in names:
            addr[parts[2]] = int(parts[0], 16)
    missing = [n for n in names if n not in addr]
    if missing:
        raise NotAHitPath("%s exports no %s" % (lib, ", ".join(missing)))
    return addr


def disassemble(lib):
    out = subprocess.run(["objdump", "-d", "-w", "--no-show-raw-insn", lib],
                         capture_output=True, text=True, check=True).stdout
    insns = {}		# addr -> (text, function name)
    order = []
    func = "?"
    for line in out.splitlines():
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
    nxt = {a: b for a, b in zip(order, order[1:])}
    return insns, nxt


def split(text):
    """mnemonic and operands, prefixes dropped"""
    words = text.split(None, 1)
    while words and words[0] in PREFIXES and len(words) > 1:
        words = words[1].split(None, 1)
    if not words:
        return "", ""
    return words[0], words[1] if len(words) > 1 else ""


def walk(insns, nxt, entry, name):
    path = []
    seen = set()
    stack = []
    a = entry
    while True:
        if a not in insns:
            raise NotAHitPath("%s: the walk reached %#x, not an instruction" % (name, a))
        if (a, len(stack)) in seen:
            raise NotAHitPath("%s: a loop at %#x (%s)" % (name, a, insns[a][1]))
        seen.add((a, len(stack)))
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
            if t.group(2) and "@plt" in t.group(2):
                raise NotAHitPath("%s: leaves the library at %#x (%s): %s" % (name, a, func, text))
            if mn.startswith("call"):
                stack.append(nxt[a])
            a = int(t.group(1), 16)
            continue
        # a conditional branch falls through (the likely side); anything else goes on
        a = nxt.get(a)


def main():
    args = [x for x in sys.argv[1:] if not x.startswith("--")]
    if len(args) != 1:
        print("usage: hitpath.py LIB [--list]", file=sys.stderr)
        return 2
    lib = args[0]
    try:
        addr = exported(lib, ["malloc", "free"])
        insns, nxt = disassemble(lib)
        paths = {n: walk(insns, nxt, addr[n], n) for n in ("malloc", "free")}
    except (NotAHitPath, subprocess.CalledProcessError, OSError) as e:
        print("hitpath: %s" % e, file=sys.stderr)
        return 1
    m, f = len(paths["malloc"]), len(paths["free"])
    print("hitpath_insns=%d malloc=%d free=%d" % (m + f, m, f))
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
