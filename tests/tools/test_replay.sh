#!/usr/bin/env bash
# record -> report -> replay -> sim on a program recorded here: three threads,
# objects handed from producer threads to a consumer (cross-thread frees),
# reallocs, callocs and aligned allocations. The counts of report, replay (on
# glibc and on the preloaded libuslab.so, and on the Debian peers that are
# installed) and sim must agree with what the program does.
. "$(dirname "$0")/../lib.sh"
# A replay that hangs is a failure, not a stuck `make check`.
replay() { timeout -s KILL 120 "$U" replay "$@"; }

cat > "$T/prog.c" <<'C'
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define N 4000
static void *box[2][N];
static atomic_int ready[2];

static void *producer(void *arg)
{
	int k = (int)(long)arg, i;

	for (i = 0; i < N; i++)			/* 4000 malloc each */
		box[k][i] = malloc(8 + (size_t)(i % 300) * 8);
	for (i = 0; i < N; i += 4)		/* 1000 realloc each */
		box[k][i] = realloc(box[k][i], 100 + (size_t)i);
	atomic_store(&ready[k], 1);
	return NULL;
}

int main(void)
{
	pthread_t th[2];
	void *a[100];
	int k, i;

	for (k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, producer, (void *)(long)k);
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	for (k = 0; k < 2; k++)			/* 8000 cross-thread frees */
		for (i = 0; i < N; i++)
			free(box[k][i]);
	for (i = 0; i < 100; i++)		/* 100 calloc + 100 free */
		a[i] = calloc(3, 40);
	for (i = 0; i < 100; i++)
		free(a[i]);
	for (i = 0; i < 100; i++)		/* 100 posix_memalign + 100 free */
		if (posix_memalign(&a[i], 256, 200))
			return 1;
	for (i = 0; i < 100; i++)
		free(a[i]);
	return 0;
}
C
gcc -O1 -pthread -o "$T/prog" "$T/prog.c"

"$U" record -q -o "$T/prog.ustr" -- "$T/prog" || fail "record"
"$U" report "$T/prog.ustr" > "$T/report.txt" || fail "report"

# What the program does, beyond what the runtime allocates by itself
# (pthread stacks' TLS, stdio): at least these many of each.
count() { awk -v op="$1" '$1 == op { print $2; exit }' "$T/report.txt"; }
mallocs=$(count malloc); frees=$(count free); reallocs=$(count realloc)
callocs=$(count calloc); memaligns=$(count posix_memalign)
[ "${mallocs:-0}" -ge 8000 ] || fail "report: malloc ${mallocs:-none} < 8000"
[ "${frees:-0}" -ge 8200 ] || fail "report: free ${frees:-none} < 8200"
[ "${reallocs:-0}" -ge 2000 ] || fail "report: realloc ${reallocs:-none} < 2000"
[ "${callocs:-0}" -ge 100 ] || fail "report: calloc ${callocs:-none} < 100"
[ "${memaligns:-0}" -ge 100 ] || fail "report: posix_memalign ${memaligns:-none} < 100"
events=$(awk '/ events over /{ print $2; exit }' "$T/report.txt")
[ -n "$events" ] || fail "report: no event count"
threads=$(awk '/^threads:/{ print $2; exit }' "$T/report.txt")
[ "$threads" -ge 3 ] || fail "report: $threads threads, expected 3"

check_replay() {	# $1 = allocator, $2 = output
	grep -q "^events: $events (malloc $mallocs, free $frees, calloc $callocs, realloc $reallocs, aligned $memaligns)" "$2" ||
		fail "replay on $1: counts differ from report:
$(head -4 "$2")
report: events $events malloc $mallocs free $frees calloc $callocs realloc $reallocs posix_memalign $memaligns"
	grep -q "^threads: $threads," "$2" || fail "replay on $1: not one thread per recorded thread"
	grep -Eq '^latency .* p50 [0-9]+ ns, p99 [0-9]+ ns, p99.9 [0-9]+ ns' "$2" ||
		fail "replay on $1: no latency percentiles"
	grep -Eq '^peak RSS: [0-9]+ KiB' "$2" || fail "replay on $1: no peak RSS"
	grep -Eq '^page faults: [0-9]+ minor' "$2" || fail "replay on $1: no page faults"
}

replay "$T/prog.ustr" > "$T/glibc.txt" || fail "replay on glibc"
check_replay glibc "$T/glibc.txt"
grep -q '^malloc from: .*libc\.so' "$T/glibc.txt" || fail "glibc replay does not use glibc's malloc"

replay "$T/prog.ustr" --allocator uslab > "$T/uslab.txt" || fail "replay on uslab"
check_replay uslab "$T/uslab.txt"
grep -q '^malloc from: .*libuslab\.so' "$T/uslab.txt" || fail "uslab replay does not use libuslab.so"

for a in jemalloc tcmalloc mimalloc; do
	replay "$T/prog.ustr" -a $a > "$T/$a.txt" 2>&1 || {
		grep -q "No such file" "$T/$a.txt" && continue	# peer not installed
		fail "replay on $a: $(cat "$T/$a.txt")"
	}
	check_replay $a "$T/$a.txt"
done

# sim: every event, and allocations/frees as the report counts them (a
# realloc is a free and an allocation in the per-cache columns).
# free(NULL) is an event but frees nothing.
nullfrees=$(sed -n 's/.*frees [0-9]* (of NULL \([0-9]*\),.*/\1/p' "$T/report.txt")
[ -n "$nullfrees" ] || fail "report: no count of free(NULL)"
"$U" sim "$T/prog.ustr" > "$T/sim.txt" 2>/dev/null || fail "sim"
grep -q "^events: $events (allocations $((mallocs + callocs + memaligns)), frees $((frees - nullfrees)), reallocs $reallocs," "$T/sim.txt" ||
	fail "sim counts differ from report: $(grep '^events' "$T/sim.txt")"

# Unknown allocator: usage error, not a crash.
set +e
"$U" replay "$T/prog.ustr" -a nosuch > /dev/null 2>&1
[ $? -eq 2 ] || fail "unknown allocator: expected exit status 2"
"$U" replay "$T/missing.ustr" > /dev/null 2>&1
[ $? -eq 1 ] || fail "missing trace: expected exit status 1"
set -e

# Cross-thread replay at scale: a generated producer-consumer trace, every
# free on another thread than its allocation, on glibc and on uslab.
"$U" gen prodcons -t 4 -l 20000 -o "$T/pc.ustr" 2>/dev/null
for a in glibc uslab; do
	replay "$T/pc.ustr" -a $a > "$T/pc-$a.txt" || fail "prodcons replay on $a"
	grep -q '^events: 80000 (malloc 40000, free 40000' "$T/pc-$a.txt" || fail "prodcons on $a: $(head -3 "$T/pc-$a.txt")"
	grep -q '^threads: 4,' "$T/pc-$a.txt" || fail "prodcons on $a: threads"
done
echo "replay: counts agree (report, replay on glibc/uslab/peers, sim); prodcons replayed"
