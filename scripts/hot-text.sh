#!/usr/bin/env bash
# scripts/hot-text.sh: rewrite malloc/libuslab-hot.lds, the list of the
# library's functions that programs run, from gcov's counters of their runs.
#
# libuslab.so's code is file-backed: the kernel maps it 64 KiB at a time
# around each first touch (fault-around), so a function that runs makes
# its whole 64 KiB window resident. The link puts the functions named in
# the list first in .text (and the library's segments on 64 KiB
# boundaries), so the code programs run shares its windows, and the rest
# (reports, statistics, options, debug checks, error paths) stays out of
# memory (docs/page_alloc.md, "Fixed cost of a small program").
#
# Run after a change that adds a function to the paths programs take
# (tests/malloc/test_malloc_text_resident.sh fails then). Builds the library
# with gcov's counters (--coverage) in a scratch folder, runs programs
# preloaded with it natively (callgrind misses paths that depend on the
# machine: which pages are resident, the reaper's timing), and lists every
# function whose counter is not zero. Takes a few minutes.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=$src/malloc/libuslab-hot.lds
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$src" O="$tmp/b" EXTRA_CFLAGS=--coverage EXTRA_LDFLAGS=--coverage \
	"$tmp/b/libuslab.so" "$tmp/b/bench/alloc_bench" >/dev/null
# the seccomp launcher of fallback mode, without --coverage (so built, its
# filter let glibc's rseq registration fail fatally)
cc -O2 -o "$tmp/noseq" "$src/tests/percpu/percpu_no_rseq.c"
lib=$tmp/b/libuslab.so
bench=$tmp/b/bench/alloc_bench

# The programs: the shapes of make bench (small counts), the own rseq
# area and the fallback mode (no rseq), and real programs (python3 with threads and a fork, sh).
runs=(
	"cfrac 10000" "espresso 150" "xmalloc 2 1" "sh6bench 2 10000 300"
	"sh8bench 2 5000" "manythreads 8 50000" "prodcons 2000000"
	"scratch 2 1000 1 2000000" "mleak 5" "small_rss 1048576 64" "larson 2 1"
	"glibc_thread 2 1" "mt 2 100000 32768" "gmalloc mix 64" "gmfill 2 64"
	"study 2 1 30000 15000" "alloc_test 2 300000" "rptest 2 500"
	"malloc_large 20" "rss_tax 1024" "pair 1000000" "threads 64"
)
for r in "${runs[@]}"; do
	# shellcheck disable=SC2086
	timeout 300 env LD_PRELOAD="$lib" "$bench" $r >/dev/null 2>&1 || true
done
timeout 300 env GLIBC_TUNABLES=glibc.pthread.rseq=0 LD_PRELOAD="$lib" \
	"$bench" xmalloc 2 1 >/dev/null 2>&1 || true
# fallback mode (rseq refused by a seccomp filter, as in a sandbox; the
# thread caches of percpu/tcache.c): its own paths, threads coming and going
for r in "xmalloc 2 1" "sh6bench 2 10000 300" "larson 2 1" "threads 16" "manythreads 8 20000"; do
	# shellcheck disable=SC2086
	timeout 300 env LD_PRELOAD="$lib" "$tmp/noseq" "$bench" $r >/dev/null 2>&1 || true
done
timeout 300 env LD_PRELOAD="$lib" python3 -c '
import json, os, subprocess, threading
def work():
    d = {}
    for i in range(200000):
        d[str(i)] = [i] * (i % 40) + [bytearray((i * 37) % 49152)]
        if i % 3 == 0:
            d.pop(str(i // 2), None)
    json.dumps({k: len(v) for k, v in d.items()})
t = [threading.Thread(target=work) for _ in range(2)]
[x.start() for x in t]; [x.join() for x in t]
subprocess.run(["true"])
' >/dev/null 2>&1 || true
timeout 300 env LD_PRELOAD="$lib" sh -c 'for i in 1 2 3; do ls / | sort >/dev/null; done' || true
# Every entry point of the malloc API once, the way programs call it
# (aligned allocations: C++'s aligned new, glib; sized frees: C23),
# built without builtins so that the compiler keeps every call.
cat >"$tmp/api.c" <<'END'
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
void free_sized(void *, size_t) __attribute__((weak));
void free_aligned_sized(void *, size_t, size_t) __attribute__((weak));
int main(void)
{
	for (size_t n = 8; n <= (1 << 20); n *= 2) {
		void *p, *q = aligned_alloc(64, n), *r = memalign(4096, n);
		void *s = valloc(n), *t = pvalloc(n), *u = calloc(4, n / 4);
		char *v = reallocarray(NULL, 2, n), *w = malloc(n);
		if (posix_memalign(&p, 256, n))
			return 1;
		memset(p, 1, malloc_usable_size(p));
		w = realloc(w, n * 3);
		free(p);
		free(q);
		if (free_aligned_sized)	/* C23: in the preloaded library */
			free_aligned_sized(r, 4096, n);
		else
			free(r);
		free(s);
		free(t);
		if (free_sized)
			free_sized(u, n);
		else
			free(u);
		free(v);
		free(w);
	}
	return 0;
}
END
if cc -O0 -fno-builtin -o "$tmp/api" "$tmp/api.c" 2>/dev/null; then
	timeout 300 env LD_PRELOAD="$lib" "$tmp/api" || true
fi

# Every function of the library whose counter is not zero (gcov's JSON;
# the library's own objects, not the benchmark's).
names=$(cd "$tmp/b" && find lib page_alloc slab percpu malloc -name '*.gcda' -print0 |
	xargs -0 gcov --stdout --json-format 2>/dev/null |
	python3 -c '
import json, sys
dec = json.JSONDecoder()
text = sys.stdin.read()
i, seen = 0, set()
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    doc, i = dec.raw_decode(text, i)
    for f in doc.get("files", []):
        for fn in f.get("functions", []):
            if fn.get("execution_count", 0) > 0:
                seen.add(fn["name"])
print("\n".join(sorted(seen)))
')
[ -n "$names" ] || { echo "hot-text: no function ran in $lib" >&2; exit 1; }

{
	echo "/* Generated by scripts/hot-text.sh: the functions programs run, first"
	echo " * in .text (docs/page_alloc.md, \"Fixed cost of a small program\")."
	echo " * A function's sections under -ffunction-sections: its own, its"
	echo " * hot/startup/exit/unlikely forms, its clones (.part, .constprop);"
	echo " * then the rseq abort handlers and .fini (crti's and crtn's halves of"
	echo " * _fini, kept in their order), which would fault in the last window. */"
	echo "SECTIONS"
	echo "{"
	echo "	.text.uslab_hot : {"
	echo "		*crtbeginS.o(.text .text.*)"
	for n in $names; do
		echo "		*(.text.$n .text.$n.* .text.hot.$n .text.startup.$n .text.exit.$n .text.unlikely.$n)"
	done
	echo "		*libgcc.a:*(.text .text.*)"
	echo "		*libc_nonshared.a:*(.text .text.*)"
	echo "		*(__rseq_failure)"
	echo "		KEEP(*(SORT_NONE(.fini)))"
	echo "	}"
	echo "}"
	echo "INSERT BEFORE .text;"
} >"$out"
echo "hot-text: $(echo "$names" | wc -l) functions in $out"
