#!/usr/bin/env bash
# uslab record -g + report --sort callsite: a program with known call sites
# (built here with -g) is recorded with its call stacks (libunwind), and the
# report names each allocating function with its file and line (libdw), with
# exact allocations, bytes, peak live, leaked and temporary counts; the
# size-split and --children (callers fold in callees) views agree with it.
. "$(dirname "$0")/../lib.sh"

cat > "$T/sites.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
static void *keep[10000];
__attribute__((noinline)) void *make_node(size_t n)
{
	return malloc(n);			/* SITE_NODE */
}
__attribute__((noinline)) char *make_name(int i)
{
	char *s = calloc(1, 32);		/* SITE_NAME */
	s[0] = (char)i;
	return s;
}
__attribute__((noinline)) void churn(int n)
{
	for (int i = 0; i < n; i++) {
		char *p = malloc(100);		/* SITE_CHURN */
		p[0] = 1;
		free(p);
	}
}
__attribute__((noinline)) void *helper(size_t n)
{
	return malloc(n);			/* SITE_HELPER */
}
__attribute__((noinline)) void from_a(void) { for (int i = 0; i < 200; i++) keep[5000 + i] = helper(16); }
__attribute__((noinline)) void from_b(void) { for (int i = 0; i < 300; i++) keep[6000 + i] = helper(16); }
static void *worker(void *arg)
{
	(void)arg;
	churn(2000);
	return NULL;
}
int main(void)
{
	pthread_t t;

	for (int i = 0; i < 3000; i++)
		keep[i] = make_node(48);
	for (int i = 0; i < 1000; i++)
		keep[3000 + i] = make_name(i);
	churn(3000);
	from_a();
	from_b();
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	for (int i = 0; i < 3000; i += 2)
		free(keep[i]);
	return 0;
}
C
gcc -g -O1 -fno-builtin -pthread -o "$T/sites" "$T/sites.c"
line() { grep -n "$1" "$T/sites.c" | cut -d: -f1; }

"$U" record -g -o "$T/s.ustr" -- "$T/sites" 2>"$T/rec.err" || { cat "$T/rec.err"; fail "record -g"; }
cat "$T/rec.err"
grep -q "distinct call stacks" "$T/rec.err" || fail "record -g: no stack summary"
"$U" report --sort callsite "$T/s.ustr" > "$T/cs.txt" 2>/dev/null
cat "$T/cs.txt"

# row FUNC LINE: the call-site row of FUNC at sites.c:LINE
row() { grep -E " $1 \(.*sites\.c:$2\)$" "$T/cs.txt" || fail "no call site '$1 (sites.c:$2)'"; }
# columns: allocations bytes peak leaked temporary
expect_row() {
	local got
	got=$(row "$1" "$2" | awk '{ print $1, $2, $3, $4, $5 }')
	[ "$got" = "$3" ] || fail "$1: got '$got', expected '$3' (allocations bytes peak leaked temporary)"
}
expect_row make_node "$(line SITE_NODE)" "3000 144000 144000 72000 0"
expect_row make_name "$(line SITE_NAME)" "1000 32000 32000 32000 0"
expect_row churn "$(line SITE_CHURN)" "5000 500000 100 0 5000"
expect_row helper "$(line SITE_HELPER)" "500 8000 8000 8000 0"
# sorted by allocations
awk '/^#  allocations/ { getline; print; exit }' "$T/cs.txt" | grep -q " churn (" || fail "rows not sorted by allocations"

# --sort callsite,size: one row per site and size
"$U" report --sort callsite,size "$T/s.ustr" 2>/dev/null | grep -E "^ +3000 +144000 .* 48 +make_node \(" >/dev/null ||
	fail "callsite,size: no make_node row of size 48"

# --children: each function once per allocation beneath it
"$U" report --sort callsite --children "$T/s.ustr" > "$T/ch.txt" 2>/dev/null
cat "$T/ch.txt"
fn() { awk -v f="$1" '$NF == f { print $1; found = 1 } END { if (!found) print "none" }' "$T/ch.txt" | head -1; }
[ "$(fn from_a)" = 200 ] || fail "--children: from_a has $(fn from_a), expected 200"
[ "$(fn from_b)" = 300 ] || fail "--children: from_b has $(fn from_b), expected 300"
[ "$(fn helper)" = 500 ] || fail "--children: helper has $(fn helper), expected 500"
# main: 7500 of its own (plus what pthread_create allocates for the thread),
# never the worker thread's 2000
m=$(fn main)
[ "$m" -ge 7500 ] && [ "$m" -lt 7510 ] || fail "--children: main has $m, expected 7500 (+ pthread_create's)"
[ "$(fn worker)" = 2000 ] || fail "--children: worker has $(fn worker), expected 2000"

# A trace without stacks says how to get them.
"$U" record -q -o "$T/n.ustr" -- "$T/sites"
set +e
"$U" report --sort callsite "$T/n.ustr" >/dev/null 2>"$T/err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "record it with 'uslab record -g'" "$T/err" || fail "no-stack trace: exit $rc: $(cat "$T/err")"
set +e
"$U" report --sort bogus "$T/s.ustr" >/dev/null 2>"$T/err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- "--sort: expected callsite" "$T/err" || fail "--sort bogus: exit $rc"
echo "call sites: functions, files, lines and counts as the program made them"
