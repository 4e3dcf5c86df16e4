#!/usr/bin/env bash
# uslab record -> report -> script on a program built here with known
# allocation counts on two threads, plus a forked child (its own trace) and
# the recorded command's exit status.
. "$(dirname "$0")/../lib.sh"

cat > "$T/prog.c" <<'C'
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 1000
static void *work(void *arg)
{
	static __thread void *p[N];
	int i;

	(void)arg;
	for (i = 0; i < N; i++)			/* 1000 malloc */
		p[i] = malloc(16 + (size_t)(i % 50) * 24);
	for (i = 0; i < N; i += 2)		/* 500 realloc */
		p[i] = realloc(p[i], 2000 + (size_t)i);
	for (i = 0; i < N; i++)			/* 1000 free */
		free(p[i]);
	for (i = 0; i < 300; i++)		/* 300 calloc */
		p[i] = calloc(4, 10 + (size_t)i);
	for (i = 300; i < 500; i++)		/* 200 posix_memalign */
		if (posix_memalign(&p[i], 64, 100))
			abort();
	for (i = 500; i < 600; i++)		/* 100 aligned_alloc */
		p[i] = aligned_alloc(256, 512);
	for (i = 600; i < 650; i++)		/* 50 memalign */
		p[i] = memalign(4096, 64);
	for (i = 0; i < 650; i++)		/* 650 free */
		free(p[i]);
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	int st, i;
	pid_t pid;

	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pid = fork();
	if (pid == 0) {
		void *q[7];

		for (i = 0; i < 7; i++)
			q[i] = malloc(1000);
		for (i = 0; i < 7; i++)
			free(q[i]);
		exit(0);
	}
	waitpid(pid, &st, 0);
	return 5;
}
C
gcc -O1 -pthread -o "$T/prog" "$T/prog.c"

run_rc "$U" record -o "$T/t.ustr" -- "$T/prog" 2>"$T/rec.err"
cat "$T/rec.err"
[ $rc -eq 5 ] || fail "record should exit with the program's status 5, got $rc"
[ -f "$T/t.ustr" ] || fail "no trace written"
ls "$T" | grep -q '\.tmp' && fail "temporary file left behind"
ls -d "$T"/t.ustr.rec.* 2>/dev/null && fail "raw directory left behind"

"$U" script "$T/t.ustr" > "$T/script.txt"
"$U" report "$T/t.ustr" > "$T/report.txt"
cat "$T/report.txt"

# Per worker thread (tids 1 and 2), exact counts from the script.
for tid in 1 2; do
	for want in malloc:1000 realloc:500 calloc:300 posix_memalign:200 \
		    aligned_alloc:100 memalign:50; do
		op=${want%%:*}; n=${want##*:}
		got=$(awk -v t=$tid -v o=$op '$2 == t && $4 == o' "$T/script.txt" | wc -l)
		[ "$got" -eq "$n" ] || fail "tid $tid: $op $got, expected $n"
	done
	got=$(awk -v t=$tid '$2 == t && $4 == "free" && $5 != "id=NULL"' "$T/script.txt" | wc -l)
	[ "$got" -eq 1650 ] || fail "tid $tid: free of objects $got, expected 1650"
	got=$(awk -v t=$tid '$2 == t && $4 == "realloc" && $5 == "id=NULL"' "$T/script.txt" | wc -l)
	[ "$got" -eq 0 ] || fail "tid $tid: $got realloc returned NULL"
done
grep -q "memalign .*align=4096" "$T/script.txt" || fail "memalign alignment lost"
grep -q "aligned_alloc .*align=256 size=512\|aligned_alloc .*size=512 align=256" "$T/script.txt" ||
	fail "aligned_alloc size/alignment lost"

# The report counts what the script shows, op by op.
for op in malloc free calloc realloc posix_memalign aligned_alloc memalign; do
	s=$(awk -v o=$op '$4 == o' "$T/script.txt" | wc -l)
	r=$(awk -v o=$op '$1 == o { print $2 }' "$T/report.txt")
	[ "$s" -eq "${r:-0}" ] || fail "report says $op ${r:-0}, script has $s"
done
lines=$(wc -l < "$T/script.txt")
grep -q "^# $lines events" "$T/report.txt" || fail "report event total differs from script ($lines)"
grep -q "^threads: 3" "$T/report.txt" || fail "expected 3 threads in the report"

# Every free names a live object; realloc's old id is live (trace promise).
awk '
$4 ~ /^(malloc|calloc|posix_memalign|aligned_alloc|memalign|valloc|pvalloc)$/ {
	split($5, a, "="); if (a[2] != "NULL") { if (live[a[2]]) bad = bad "\nrealloc of live " a[2]; live[a[2]] = 1 } }
$4 == "free" { split($5, a, "="); if (a[2] != "NULL") { if (!live[a[2]]) bad = bad "\nfree of dead " a[2] " at " NR; delete live[a[2]] } }
$4 == "realloc" { split($5, a, "="); split($6, b, "=");
	if (b[2] != "NULL") { if (!live[b[2]]) bad = bad "\nrealloc of dead " b[2]; delete live[b[2]] }
	if (a[2] != "NULL") live[a[2]] = 1 }
END { if (bad != "") { print bad; exit 1 } }' "$T/script.txt" || fail "trace breaks alloc/free order"

# The forked child is in the same trace, as a process of its own, with its
# 7 mallocs of 1000 bytes; the default process is the parent (most calls).
"$U" script --header -n 0 "$T/t.ustr" > "$T/hdr.txt"
root=$(awk '$2 == "pid:" { print $3 }' "$T/hdr.txt")
child=$(awk -v r="$root" '$2 == "process:" && $7 == r { print $5 }' "$T/hdr.txt" | head -1)
[ -n "$child" ] || fail "no process for the forked child in the table"
grep -q "^# process: \* pid $root " "$T/hdr.txt" || fail "default process is not the parent $root"
[ "$(ls "$T" | grep -c '^t\.ustr')" -eq 1 ] || fail "more than one file written: $(ls "$T")"
got=$("$U" script --pid "$child" "$T/t.ustr" | awk '$4 == "malloc" && $6 == "size=1000"' | wc -l)
[ "$got" -eq 7 ] || fail "child process: $got mallocs of 1000, expected 7"

# Cross-thread frees: a producer allocates, a consumer frees, through a
# queue; addresses are reused across threads all the time. The merged trace
# must keep every id's alloc before its free before its reuse.
cat > "$T/pc.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
#define N 20000
#define Q 64
static void *q[Q];
static unsigned head, tail;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static void *producer(void *a)
{
	for (int i = 0; i < N; i++) {
		void *p = malloc(32 + (size_t)(i % 7) * 16);
		pthread_mutex_lock(&mu);
		while (head - tail == Q)
			pthread_cond_wait(&cv, &mu);
		q[head++ % Q] = p;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
	return a;
}
static void *consumer(void *a)
{
	for (int i = 0; i < N; i++) {
		void *p;
		pthread_mutex_lock(&mu);
		while (head == tail)
			pthread_cond_wait(&cv, &mu);
		p = q[tail++ % Q];
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		free(p);
	}
	return a;
}
int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, producer, NULL);
	pthread_create(&b, NULL, consumer, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
C
gcc -O1 -pthread -o "$T/pc" "$T/pc.c"
"$U" record -q -o "$T/pc.ustr" -- "$T/pc" || fail "record of producer/consumer"
"$U" script "$T/pc.ustr" > "$T/pc.txt"
prod=$(awk '$4 == "malloc" && $6 ~ /^size=(32|48|64|80|96|112|128)$/ { n[$2]++ } END { for (t in n) if (n[t] == 20000) print t }' "$T/pc.txt")
[ -n "$prod" ] || fail "producer: expected one thread with 20000 mallocs"
"$U" report "$T/pc.ustr" > "$T/pc-report.txt"
remote=$(awk '/^  [0-9]+ / && $6 >= 20000 { print $1 }' "$T/pc-report.txt")
[ -n "$remote" ] || fail "consumer: expected 20000 remote frees in the report"
awk '
$4 == "malloc" || $4 == "calloc" { split($5, a, "="); if (a[2] != "NULL") { if (live[a[2]]) { print "alloc of live " a[2] " line " NR; bad = 1 } live[a[2]] = 1 } }
$4 == "free" { split($5, a, "="); if (a[2] != "NULL") { if (!live[a[2]]) { print "free of dead " a[2] " line " NR; bad = 1 } delete live[a[2]] } }
END { exit bad }' "$T/pc.txt" || fail "producer/consumer trace breaks alloc/free order"
grep -q "0 unmatched frees dropped, 0 lost frees added" "$T/rec.err" || fail "recorder lost events"

# A command that allocates nothing still gives a (valid, empty) trace,
# and a missing command fails with 127 and writes nothing.
"$U" record -q -o "$T/e.ustr" -- true
"$U" report "$T/e.ustr" > /dev/null || fail "empty trace unreadable"
run_rc "$U" record -q -o "$T/none.ustr" -- /nonexistent/cmd 2>/dev/null
[ $rc -eq 127 ] || fail "missing command: exit $rc, expected 127"
[ ! -e "$T/none.ustr" ] || fail "trace written for a command that never ran"
echo "record/report/script: all counts agree"
