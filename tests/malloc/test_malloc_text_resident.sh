#!/usr/bin/env bash
# The library's code resident in a program is what the program runs, not
# all of .text. The kernel maps file-backed code 64 KiB at a time around a
# touch (fault-around), so when the few functions of malloc's paths lay
# spread among reports, statistics, options and debug checks, every window
# of .text became resident: 96 KiB of libuslab.so's code in any program
# that allocates (cfrac, espresso, python: the whole .text). The link puts
# the functions programs run first (malloc/libuslab-hot.lds, written by
# scripts/hot-text.sh) and loads the library 64 KiB-aligned: they fill
# one window, and what they never call stays out of memory
# (docs/page_alloc.md, "Fixed cost of a small program").
#
# Checked in the programs' own terms: each one reads, at its end, the
# resident size of libuslab.so's executable mapping from /proc/self/smaps.
. "$(dirname "$0")/../lib.sh"
[ -f "$LIBUSLAB" ] || fail "$LIBUSLAB not built"
if config DEBUG_SANITIZE || config SLAB_DEBUG_ON; then
	skip "the list of functions programs run is the default build's"
fi
window=64

# A python program that allocates in two threads (dicts, lists, strings,
# bytearrays from a few bytes to 48 KiB, realloc by growth) and then reads
# its own smaps: "SIZE RSS" of the library's r-xp mapping, in KiB.
cat >"$T/prog.py" <<'EOF'
import re, threading
def work(seed):
    d = {}
    for i in range(30000):
        d[str(i * seed)] = [i] * (i % 40) + [bytearray((i * 37) % 49152)]
        if i % 3 == 0:
            d.pop(str((i // 2) * seed), None)
    return len(d)
ts = [threading.Thread(target=work, args=(s,)) for s in (1, 7)]
[t.start() for t in ts]; [t.join() for t in ts]
text = open("/proc/self/smaps").read()
m = re.search(r"^[0-9a-f]+-[0-9a-f]+ r-xp \S+ \S+ \S+\s+\S*libuslab\.so\n"
              r"Size:\s+(\d+) kB\n(?:.*\n)*?Rss:\s+(\d+) kB", text, re.M)
print(m.group(1), m.group(2)) if m else print("none")
EOF

check() {
	local what=$1 out size rss
	shift
	out=$(env LD_PRELOAD="$LIBUSLAB" "$@") || fail "$what failed under libuslab.so"
	out=$(echo "$out" | tail -1)
	[ "$out" != none ] || fail "$what: no r-xp mapping of libuslab.so in its smaps"
	read -r size rss <<<"$out"
	# The check says something only when .text is larger than a window.
	[ "$size" -gt "$window" ] ||
		fail "$what: libuslab.so's code is $size KiB, not above one $window KiB window: update this test"
	[ "$rss" -le "$window" ] ||
		fail "$what: $rss of libuslab.so's $size KiB of code resident, over one $window KiB window (a function that runs outside malloc/libuslab-hot.lds? scripts/hot-text.sh)"
	echo "$what: $rss of $size KiB of libuslab.so's code resident"
}

for i in 1 2 3; do
	check "python3 (run $i)" python3 "$T/prog.py"
done
# The fallback mode (no rseq) takes other paths.
check "python3 without rseq" env GLIBC_TUNABLES=glibc.pthread.rseq=0 python3 "$T/prog.py"
# Fallback mode (rseq refused, as in a sandbox): the thread caches'
# paths (percpu/tcache.c) and the slabs' returns there are in the list too.
noseq=$O/tests/percpu/percpu_no_rseq
[ -x "$noseq" ] || fail "$noseq not built"
check "python3 in fallback mode" "$noseq" python3 "$T/prog.py"
