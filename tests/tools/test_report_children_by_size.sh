#!/usr/bin/env bash
# `uslab report --sort callsite,size --children` (the synopsis of
# `uslab report -h` and uslab-report(1)): every function charged once per
# allocation below it, one row per function and size. Before, the option
# check took --children with --sort callsite only and refused it here
# ("--children goes with --sort callsite, ...") though the table supports it.
. "$(dirname "$0")/../lib.sh"

cat > "$T/cs.c" <<'C'
#include <stdlib.h>
static void *keep[64];
static int nkeep;
__attribute__((noinline)) void *leaf(size_t n) { return malloc(n); }
__attribute__((noinline)) void outer(void) { for (int i = 0; i < 6; i++) keep[nkeep++] = leaf(i & 1 ? 100 : 3000); }
int main(void)
{
	outer();
	return 0;
}
C
gcc -g -O1 -fno-builtin -fno-optimize-sibling-calls -o "$T/cs" "$T/cs.c"
"$U" record -g -q -o "$T/cs.ustr" -- "$T/cs" || fail "record -g"

run_rc "$U" report --sort callsite,size --children "$T/cs.ustr" >"$T/out" 2>"$T/err"
[ "$rc" -eq 0 ] || fail "--sort callsite,size --children: exit $rc: $(head -2 "$T/err")"
grep -q -- '--children' "$T/out" || fail "not the --children table: $(head -5 "$T/out")"
# outer is charged what leaf allocates, by size: 3 of 100 bytes, 3 of 3000
for sz in 100 3000; do
	grep -E "^ *3 .* $sz +outer( |$)" "$T/out" >/dev/null ||
		fail "no row 'outer' of 3 allocations of $sz bytes: $(cat "$T/out")"
done
echo "report --sort callsite,size --children charges callers by size"
