#!/usr/bin/env bash
# uslab import: a glibc mtrace log recorded here (libc_malloc_debug.so), and
# the perf script kmem sample in tests/trace/data; counts must match the inputs.
. "$(dirname "$0")/../lib.sh"
DEBUGLIB=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0

cat > "$T/mt.c" <<'C'
#include <mcheck.h>
#include <malloc.h>
#include <stdlib.h>
int main(void)
{
	void *p[100];
	int i;

	mtrace();
	for (i = 0; i < 100; i++)		/* 100 + */
		p[i] = malloc(8 + (size_t)i);
	for (i = 0; i < 40; i++)		/* 40 < > */
		p[i] = realloc(p[i], 300 + (size_t)i);
	for (i = 40; i < 60; i++)		/* 20 - (glibc logs realloc(p, 0) as a free) */
		p[i] = realloc(p[i], 0);
	for (i = 60; i < 100; i++)		/* 40 - */
		free(p[i]);
	for (i = 0; i < 10; i++)		/* 10 + */
		p[40 + i] = memalign(64, 100);
	for (i = 0; i < 50; i++)		/* 50 - */
		free(p[i]);
	muntrace();
	return 0;
}
C
gcc -O0 -o "$T/mt" "$T/mt.c"
if [ -e "$DEBUGLIB" ]; then
	MALLOC_TRACE="$T/mt.log" LD_PRELOAD=$DEBUGLIB "$T/mt"
	"$U" import mtrace "$T/mt.log" -o "$T/mt.ustr"
	"$U" script "$T/mt.ustr" > "$T/mt.txt"
	for want in malloc:110 realloc:40 free:110; do
		op=${want%%:*}; n=${want##*:}
		got=$(awk -v o=$op '$4 == o' "$T/mt.txt" | wc -l)
		[ "$got" -eq "$n" ] || fail "mtrace: $op $got, expected $n"
	done
	# Each realloc moved a live object to a new id with its new size.
	got=$(awk '$4 == "realloc" && $5 != "id=NULL" && $6 != "old=NULL" && $7 ~ /^size=3[0-9][0-9]$/' "$T/mt.txt" | wc -l)
	[ "$got" -eq 40 ] || fail "mtrace: $got reallocs of live objects, expected 40"
	grep -q "malloc .*size=100$" "$T/mt.txt" || fail "mtrace: memalign size"
	"$U" report "$T/mt.ustr" | grep -q "at exit    0 objects" || fail "mtrace: objects left live"
else
	echo "SKIP mtrace part: $DEBUGLIB missing"
fi

"$U" import perf tests/trace/data/perf-kmem.txt -o "$T/pk.ustr" 2> "$T/pk.err"
cat "$T/pk.err"
grep -q "2 lines skipped" "$T/pk.err" || fail "perf: the sched event and unknown kfree are skipped"
# ... and it says which and why
grep -q "^uslab import:   1 frees of objects allocated before the input began" "$T/pk.err" ||
	fail "perf: the unknown kfree's reason is not said"
grep -q "^uslab import:   1 sched:sched_switch events (not an allocator event)" "$T/pk.err" ||
	fail "perf: the skipped event's name is not said"
"$U" script --header "$T/pk.ustr" > "$T/pk.txt"
for want in kmalloc:6 kfree:6 kmem_cache_alloc:4 kmem_cache_free:3; do
	op=${want%%:*}; n=${want##*:}
	got=$(awk -v o=$op '$4 == o' "$T/pk.txt" | wc -l)
	[ "$got" -eq "$n" ] || fail "perf: $op $got, expected $n"
done
grep -q "^# cpus: 2" "$T/pk.txt" || fail "perf: CPU count"
grep -q "^# threads: 4" "$T/pk.txt" || fail "perf: four tasks"
# First event at time 0, the DOM Worker's kmalloc 188 us later on CPU 0.
grep -q "^     0.000000000     0 \[001\] kmalloc        id=1 size=320" "$T/pk.txt" || fail "perf: first event"
grep -q "^     0.000188000     1 \[000\] kmalloc .* size=704" "$T/pk.txt" || fail "perf: comm with a space"
"$U" report "$T/pk.ustr" | grep -q "at exit    2 objects, 4288 B" || fail "perf: live at exit"

# report's size classes are uslab's (slab's kmalloc_info[]): 48 and 80 are
# classes of their own (the kernel's 64 and 96 would waste 25% and 17%), a
# 65-byte block rounds up to 80, and a block above the largest kmalloc
# cache is counted as larger.
printf '= Start\n+ 0x1000 0x30\n+ 0x2000 0x50\n+ 0x3000 0x41\n+ 0x4000 0x40001\n= End\n' > "$T/cls.txt"
"$U" import mtrace "$T/cls.txt" -o "$T/cls.ustr" -q || fail "classes: import"
"$U" report "$T/cls.ustr" | sed -n '/^sizes by kmalloc class/,/^$/p' > "$T/cls.rep"
cat "$T/cls.rep"
grep -Eq '^  48 +1 +25\.0% +48 +0\.0%$' "$T/cls.rep" || fail "classes: 48 B is class 48, no waste"
grep -Eq '^  80 +2 +50\.0% +145 +9\.4%$' "$T/cls.rep" || fail "classes: 80 and 65 B share class 80 (15 of 160 B wasted)"
grep -Eq '^  >[0-9]+ +1 ' "$T/cls.rep" || fail "classes: 256 KiB + 1 is larger than every kmalloc cache"
[ "$(grep -c '^  [0-9>]' "$T/cls.rep")" -eq 3 ] || fail "classes: three rows"
echo "import: mtrace and perf counts agree; report's classes are uslab's"
