#!/usr/bin/env bash
# uslab report prints lifetimes with their units (812 ns, 12.5 us, 3.4 ms,
# 3.47 s) rather than raw nanoseconds ("p99 3466824004"): a program whose
# blocks live about 30 ms and about 1 us shows both, each in its unit.
. "$(dirname "$0")/../lib.sh"
cat > "$T/l.c" <<'C'
#include <stdlib.h>
#include <time.h>
int main(void)
{
	struct timespec ts = { 0, 30 * 1000 * 1000 };
	void *keep[20];
	for (int i = 0; i < 20; i++)
		keep[i] = malloc(64);
	nanosleep(&ts, NULL);
	for (int i = 0; i < 20; i++)
		free(keep[i]);
	for (int i = 0; i < 200; i++)
		free(malloc(32));
	return 0;
}
C
gcc -O0 -fno-builtin -o "$T/l" "$T/l.c"
"$U" record -q -o "$T/l.ustr" -- "$T/l" || fail "record"
"$U" report "$T/l.ustr" > "$T/r" || fail "report"
line=$(grep '^  time ' "$T/r") || { cat "$T/r"; fail "no lifetime line"; }
echo "$line"
echo "$line" | grep -Eq 'max ([3-9][0-9]|[1-9][0-9]{2})\.[0-9] ms$' || fail "max lifetime not about 30 ms in ms: $line"
echo "$line" | grep -Eq 'p50 +[0-9.]+ (ns|us) ' || fail "p50 not in ns or us: $line"
! echo "$line" | grep -Eq '[0-9]{7,}' || fail "raw nanoseconds printed: $line"
echo ok
