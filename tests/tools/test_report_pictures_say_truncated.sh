#!/usr/bin/env bash
# `uslab report --timeline FILE` and `--flamegraph FILE` of a truncated
# trace draw what its complete chunks hold (exit status 3, as the report
# does), and the picture says so in its heading: it once read as the whole
# run, with nothing but the warning on stderr to tell (and --timeline, which
# reads the file twice, gave that warning twice). The picture of the whole
# trace does not say it.
. "$(dirname "$0")/../lib.sh"

cat > "$T/p.c" <<'C'
#include <stdlib.h>
#include <string.h>
static void *keep[4096];
__attribute__((noinline)) static void *grab(size_t n)
{
	void *p = malloc(n);

	if (p)
		memset(p, 1, n);
	return p;
}
int main(void)
{
	for (int i = 0; i < 400000; i++) {
		int k = i % 4096;

		free(keep[k]);
		keep[k] = grab(16 + (size_t)i * 7919 % 2000);
	}
	return 0;
}
C
cc -O1 -g -o "$T/p" "$T/p.c" || fail "cc"
"$U" record -g -q -o "$T/whole.ustr" -- "$T/p" || fail "record -g"
# cut inside the last chunk: the trace keeps at least one complete chunk
size=$(stat -c %s "$T/whole.ustr")
last=$(grep -obUa UCHK "$T/whole.ustr" | tail -1 | cut -d: -f1)
[ -n "$last" ] && [ "$last" -gt 200 ] || fail "no second chunk in the recording (last UCHK at '$last')"
head -c $((last + (size - last) / 2)) "$T/whole.ustr" > "$T/cut.ustr"

for pic in timeline flamegraph; do
	run_rc "$U" report --$pic "$T/whole.svg" "$T/whole.ustr" 2> "$T/err"
	[ "$rc" -eq 0 ] || fail "--$pic of the whole trace: exit status $rc: $(cat "$T/err")"
	grep -q truncated "$T/whole.svg" && fail "--$pic of the whole trace says truncated"
	run_rc "$U" report --$pic "$T/cut.svg" "$T/cut.ustr" 2> "$T/err"
	[ "$rc" -eq 3 ] || fail "--$pic of the cut trace: exit status $rc, not 3: $(cat "$T/err")"
	[ -s "$T/cut.svg" ] || fail "--$pic of the cut trace: no picture"
	grep -q 'truncated: its complete chunks only' "$T/cut.svg" ||
		fail "--$pic of the cut trace: the picture does not say it is truncated"
	n=$(grep -c 'warning: .*byte offset [0-9]*:.*truncated' "$T/err" || true)
	[ "$n" -eq 1 ] || fail "--$pic of the cut trace: $n truncation warnings, not 1: $(cat "$T/err")"
done
echo "test_report_pictures_say_truncated: ok"
