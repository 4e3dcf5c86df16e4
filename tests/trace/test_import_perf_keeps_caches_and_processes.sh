#!/usr/bin/env bash
# Issue 22: `uslab import perf` keeps what perf says (trace format 1.2).
# - Named kernel caches keep their names through the trace: the
#   kmem_cache_alloc's name=, or, on kernels that print it on the free only,
#   the name= of the kmem_cache_free of that object; script prints them,
#   report counts them, sim runs each in a cache of its own (before: every
#   one folded into its kmalloc class), replay says what it did.
# - Each process keeps its pid and comm (a process table, one heap shared
#   by all: every tool reads every event unless --pid/--comm, and a process
#   read alone does not see the frees of others' objects).
# - The summary says what was skipped, why, and the first line of each.
# - Hostile cache records (UCAC table, UCID ids) are refused by byte
#   offset; 1.0 traces read as before.
set -u
O=${O:-build}
U=${U:-$O/uslab}
F=$O/tests/trace/trace_forge
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }

"$U" import perf tests/trace/data/perf-kmem.txt -o "$T/pk.ustr" 2> "$T/imp.err" ||
	{ cat "$T/imp.err"; fail "import failed"; }
grep -q "4 processes (4 tasks), one heap; 3 named caches" "$T/imp.err" ||
	fail "import: processes and caches not said: $(cat "$T/imp.err")"
grep -q "1 frees of objects allocated before the input began.*the first at line 17" "$T/imp.err" ||
	fail "import: the early free's first line (17) not said"
grep -q "1 sched:sched_switch events .*the first at line 12" "$T/imp.err" ||
	fail "import: the skipped event's first line (12) not said"

# script: every event (one heap), the names
"$U" script -H "$T/pk.ustr" > "$T/all.txt" 2> "$T/all.err" || fail "script failed"
grep -q "^# format: 1.2" "$T/all.txt" || fail "script: not format 1.2"
grep -q "^# one heap" "$T/all.txt" || fail "script: the one-heap flag not shown"
[ "$(grep -vc '^#' "$T/all.txt")" -eq 19 ] || fail "script: expected all 19 events by default"
grep -q "every event: the 4 processes share one heap" "$T/all.err" || fail "script: the default not said"
for want in "pid 2512 .* comm bash " "pid 3907 .* comm DOM Worker " \
	    "pid 77 .* comm kworker/0:2 " "pid 81 .* comm kworker/1:1 "; do
	grep -q "^# process: - $want" "$T/all.txt" || fail "script: no process '$want'"
done
# alloc's name= is missing in this kernel's lines: the free names the cache
grep -q "kmem_cache_alloc id=3 size=232 cache=filp$" "$T/all.txt" || fail "script: filp not named"
grep -q "kmem_cache_alloc id=5 size=232 cache=skbuff_head_cache$" "$T/all.txt" ||
	fail "script: skbuff_head_cache not named"
grep -q "kmem_cache_alloc id=1 size=192 cache=dentry$" "$T/all.txt" || fail "script: dentry not named"
# the second dentry object is never freed: nothing names it
grep -q "kmem_cache_alloc id=2 size=192$" "$T/all.txt" || fail "script: an unnamed object got a name"

# a line with name= on the alloc (newer kernels) names it there
sed 's/\(kmem:kmem_cache_alloc: .*ptr=0xffff8f2bc4f0e180.*\)$/\1 name=dentry/' \
	tests/trace/data/perf-kmem.txt > "$T/named.txt"
"$U" import -q perf "$T/named.txt" -o "$T/named.ustr" || fail "import of name= on the alloc"
"$U" script "$T/named.ustr" 2>/dev/null | grep -q "kmem_cache_alloc id=2 size=192 cache=dentry$" ||
	fail "script: the alloc's own name= not kept"

# one process alone: its events, not the frees of others' objects
"$U" script --comm kworker/0:2 "$T/pk.ustr" > "$T/kw.txt" 2>/dev/null || fail "script --comm"
grep -q "kfree" "$T/kw.txt" && grep -q "id=4" "$T/kw.txt" &&
	fail "script --comm kworker/0:2: a free of DOM Worker's object shown"
"$U" report --comm kworker/0:2 "$T/pk.ustr" 2>/dev/null | grep -q "of unknown ids 0" ||
	fail "report --comm: frees of others' objects counted as unknown"

# report: the named caches
"$U" report "$T/pk.ustr" > "$T/rep.txt" 2>/dev/null || fail "report failed"
grep -q "named caches (kmem_cache_alloc's name=: 3 of the 10 allocations above)" "$T/rep.txt" ||
	fail "report: no named-cache section"
grep -Eq "^  filp +232 +1 .* 232 +232 +0$" "$T/rep.txt" || fail "report: filp row"
grep -q "of unknown ids 0" "$T/rep.txt" || fail "report: unknown frees in the whole heap"
grep -q "^# processes: 4 sharing one heap (this report: all of them" "$T/rep.txt" || fail "report: the process table does not say all are read"

# sim: a cache of its own each (before: folded into kmalloc-256/-192)
"$U" sim "$T/pk.ustr" > "$T/sim.txt" 2>/dev/null || fail "sim failed: $(cat "$T/sim.txt")"
for c in filp skbuff_head_cache dentry; do
	grep -Eq "^  $c +[0-9]+ +[0-9]+ +1 +1 " "$T/sim.txt" || fail "sim: no row for $c with 1 alloc, 1 free"
done
grep -Eq "^  kmalloc-256 " "$T/sim.txt" && fail "sim: a named 232-byte object still went to kmalloc-256"
grep -Eq "^  kmalloc-192 +[0-9]+ +[0-9]+ +1 +0 " "$T/sim.txt" ||
	fail "sim: the unnamed dentry object is not in kmalloc-192"
"$U" replay "$T/pk.ustr" 2>/dev/null | grep -q "named caches: 3 in the trace" ||
	fail "replay: the named caches not said"

# older traces read as before: 1.0 (traces/), and 1.1 (data/record-1.1.ustr:
# `uslab record -g -- sh -c 'echo hi | tr a-z A-Z > /dev/null'` by main at
# f82f435, a process table and call stacks)
"$U" report traces/default.ustr > /dev/null 2>&1 || fail "a 1.0 trace no longer reads"
old=tests/trace/data/record-1.1.ustr
"$U" script -H "$old" > "$T/old.txt" 2> "$T/old.err" || fail "a 1.1 trace no longer reads: $(cat "$T/old.err")"
grep -q "^# format: 1.1" "$T/old.txt" || fail "1.1: the version"
[ "$(grep -c '^# process:' "$T/old.txt")" -eq 4 ] || fail "1.1: not 4 processes"
grep -q "^# one heap" "$T/old.txt" && fail "1.1: a recording read as one heap"
grep -q "process 2536 (sh): the program the command ran as" "$T/old.err" || fail "1.1: the default process"
[ "$(grep -vc '^#' "$T/old.txt")" -eq 53 ] || fail "1.1: expected sh's 53 events"
"$U" report --sort callsite "$old" > /dev/null 2>&1 || fail "1.1: report --sort callsite"
"$U" sim "$old" 2>/dev/null | grep -q "^events: 53 " || fail "1.1: sim"

# hostile cache records: refused by byte offset, nothing else
ev='kmem_cache_alloc 0 0 1 0 100 0'
forge() { echo "$ev" | "$F" "$T/h.ustr" "$@" || fail "trace_forge $*"; }
refused() {
	local name=$1 pat=$2
	"$U" script "$T/h.ustr" > "$T/h.out" 2> "$T/h.err"
	rc=$?
	[ $rc -eq 1 ] || fail "$name: exit $rc, expected 1"
	grep -q "byte offset [0-9]*: .*$pat" "$T/h.err" || fail "$name: expected '$pat' by offset: $(cat "$T/h.err")"
}
forge --record 'UCAC 1 1 v100 sfoo' --record 'UCID 1 1 v1'
"$U" script "$T/h.ustr" 2>/dev/null | grep -q "cache=foo$" || fail "forged: a valid table not read"
forge --record 'UCAC 100000 1 v100 sfoo'
refused "UCAC more entries than bytes" "cache table record of 100000 entries in 5 bytes"
forge --record 'UCAC 1 1 v0 sfoo'
refused "UCAC object size 0" "cache table entry 0, decoded byte .*object size >= 1"
forge --record 'UCAC 1 1 v8 sf\x00o'
refused "UCAC NUL in a name" "cache table entry 0.*without NUL"
forge --record 'UCAC 2 1 v8 sfoo v9'
refused "UCAC fewer entries than said" "cache table entry 1"
forge --record 'UCID 1 1 v1'
refused "UCID past the table" "cache id record entry 0, .*0 to 0"
forge --record 'UCAC 1 1 v100 sfoo' --record 'UCID 2 1 v1 v1'
refused "UCID more ids than kmem_cache_alloc events" "cache id record: 2 entries, its chunk at byte offset [0-9]* has 1"
forge --record 'UCAC 1 1 v100 sfoo' --record 'UCID 1 1 v1' --record 'UCID 1 1 v1'
refused "two UCID records" "expected a chunk after the cache id record"
echo "" | "$F" "$T/h.ustr" --record 'UCAC 1 1 v100 sfoo' --record 'UCID 1 1 v1' 2>/dev/null
refused "UCID before the trailer" "expected the chunk the cache id record at byte offset"

[ $nfail -eq 0 ] || exit 1
echo "import perf: named caches and processes kept through script, report, sim and replay"
