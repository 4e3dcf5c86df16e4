#!/usr/bin/env bash
# Signals around `uslab record` and the trace writers (docs/man/uslab-record.1.scd):
#  - TERM or HUP to the recorder is forwarded to the command, and the trace
#    of what was recorded is written (the raw folder removed), exit 128+sig;
#  - a recorded program that dies of a signal keeps its last events (the
#    preload library flushes its buffers from a fatal-signal handler); one
#    killed by SIGKILL cannot, and record says so;
#  - `record -o -` keeps the command's stdout out of the trace;
#  - INT, TERM, HUP to a writer (gen) leave no NAME.tmp.XXXXXX.
# No sleep decides a result: each step polls for a condition, with a
# generous limit for a loaded 2-core machine.
. "$(dirname "$0")/../lib.sh"
set +e
ulimit -c 0	# SEGV and ABRT below: no core files in the tree

# wait_for FILE: until FILE exists (120 s at most).
wait_for() {
	local i
	for i in $(seq 1 1200); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# count_size TRACE SIZE: the allocations of SIZE bytes the trace holds.
count_size() {
	"$U" script "$1" | awk -v s="size=$2" '$4 == "malloc" && $0 ~ (s "( |$)")' | wc -l
}

# prog READY N SIG [THREAD_N]: THREAD_N mallocs of 333 bytes on a second
# thread (which then blocks), N of 777 bytes on the main thread, then
# READY is created and the program either waits for a signal (SIG 0) or
# sends itself SIG; -SIG: from a handler of its own that cleans up, sets
# SIG_DFL back and re-raises (as programs do). Fewer events than one 32 KiB buffer: without a flush
# at the signal, none of them reaches the raw file.
cat > "$T/prog.c" <<'C'
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static int nthr, pipefd[2];
static pthread_barrier_t bar;

static void reraise(int sig)
{
	struct sigaction old;

	signal(sig, SIG_DFL);
	/* the program must read back what it set */
	if (sigaction(sig, NULL, &old) || old.sa_handler != SIG_DFL)
		_exit(3);
	raise(sig);
}

static void *worker(void *arg)
{
	char c;

	(void)arg;
	for (int i = 0; i < nthr; i++)
		if (!malloc(333))
			abort();
	pthread_barrier_wait(&bar);
	(void)!read(pipefd[0], &c, 1);	/* never written: blocks */
	return NULL;
}

int main(int argc, char **argv)
{
	int n = atoi(argv[2]), sig = atoi(argv[3]);
	pthread_t t;

	struct sigaction old;

	nthr = argc > 4 ? atoi(argv[4]) : 0;
	/* a fatal signal left at SIG_DFL reads back as SIG_DFL */
	if (sigaction(SIGTERM, NULL, &old) || old.sa_handler != SIG_DFL)
		return 4;
	if (sig < 0) {
		sig = -sig;
		signal(sig, reraise);
	}
	if (pipe(pipefd))
		return 2;
	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < n; i++)
		if (!malloc(777))
			abort();
	pthread_barrier_wait(&bar);
	close(open(argv[1], O_WRONLY | O_CREAT, 0600));
	if (sig)
		kill(getpid(), sig);
	for (;;)
		pause();
}
C
gcc -O1 -pthread -o "$T/prog" "$T/prog.c" || fail "cannot build the test program"

# ---- 1. TERM / HUP to the recorder -----------------------------------------
for sig in TERM HUP; do
	d=$T/$sig; mkdir "$d"
	"$U" record -o "$d/t.ustr" -- "$T/prog" "$d/ready" 1500 0 400 2>"$d/err" &
	rec=$!
	wait_for "$d/ready" || { kill -KILL $rec; fail "$sig: the program never got ready"; }
	kill -$sig $rec
	wait $rec; rc=$?
	# the program ended with the recorder (when not: stop it, it is ours)
	left=$(pgrep -f "^$T/prog $d/ready")
	[ -z "$left" ] || { bad "$sig: the recorded program still runs"; kill -KILL $left; }
	cat "$d/err"
	want=$((128 + $(kill -l $sig)))
	[ $rc -eq $want ] || bad "$sig: record exited $rc, not $want (the command's status)"
	grep -q "SIG$sig received: forwarded to" "$d/err" || bad "$sig: record did not say it forwarded"
	[ -f "$d/t.ustr" ] || { bad "$sig: no trace written"; continue; }
	ls -d "$d"/t.ustr.rec.* 2>/dev/null && bad "$sig: raw folder left behind"
	ls "$d" | grep -q '\.tmp\.' && bad "$sig: temporary trace left behind"
	got=$(count_size "$d/t.ustr" 777)
	[ "$got" -eq 1500 ] || bad "$sig: $got mallocs of 777 in the trace, expected 1500"
	got=$(count_size "$d/t.ustr" 333)
	[ "$got" -eq 400 ] || bad "$sig: $got mallocs of 333 (second thread), expected 400"
done

# ---- 2. a program that dies of a signal keeps its last events ---------------
for sig in TERM SEGV ABRT INT handler-TERM; do
	d=$T/self-$sig; mkdir "$d"
	n=$(kill -l ${sig#handler-})
	[ "$sig" = "${sig#handler-}" ] || n=-$n
	# INT is ignored by a background job of a script: set back to default
	run_rc env --default-signal=INT "$U" record -o "$d/t.ustr" -- \
		"$T/prog" "$d/ready" 1000 "$n" 300 2>"$d/err"
	cat "$d/err"
	want=$((128 + $(kill -l ${sig#handler-})))
	[ $rc -eq $want ] || bad "self-$sig: record exited $rc, not $want"
	[ -f "$d/t.ustr" ] || { bad "self-$sig: no trace"; continue; }
	got=$(count_size "$d/t.ustr" 777)
	[ "$got" -eq 1000 ] || bad "self-$sig: $got of the 1000 mallocs before the signal in the trace"
	got=$(count_size "$d/t.ustr" 333)
	[ "$got" -eq 300 ] || bad "self-$sig: $got of the second thread's 300 mallocs in the trace"
done
# SIGKILL cannot be caught: what was buffered is lost, and record says so.
d=$T/self-KILL; mkdir "$d"
run_rc "$U" record -o "$d/t.ustr" -- "$T/prog" "$d/ready" 1000 9 2>"$d/err"
cat "$d/err"
[ $rc -eq 137 ] || bad "self-KILL: record exited $rc, not 137"
grep -q "killed by SIGKILL: its last events (up to 32 KiB per thread) were not written" "$d/err" ||
	bad "self-KILL: no warning about the lost events"

# python installs its KeyboardInterrupt handler only over SIG_DFL: the
# recorder's handler must not show through.
if command -v python3 >/dev/null; then
	"$U" record -q -o "$T/py.ustr" -- python3 -c 'import signal
print(signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, signal.getsignal(signal.SIGINT) == signal.default_int_handler)' >"$T/py.out"
	[ "$(cat "$T/py.out")" = "True True" ] || bad "python under record sees other signal handlers: $(cat "$T/py.out")"
fi

# ---- 3. record -o -: the command's stdout is not the trace's ---------------
# (the output, hello-42, is not in the command line the trace keeps)
"$U" record -q -o - -- sh -c 'echo hello-$((6 * 7)); ls /' >"$T/stdout.ustr" 2>"$T/stdout.err"
"$U" report "$T/stdout.ustr" >/dev/null || bad "record -o -: what reached stdout is not a trace"
grep -q hello-42 "$T/stdout.err" || bad "record -o -: the command's stdout did not go to stderr"
grep -aq hello-42 "$T/stdout.ustr" && bad "record -o -: the command's output is in the trace"

# ---- 4. no temporary left by a writer stopped by a signal ------------------
for sig in INT TERM HUP; do
	d=$T/gen-$sig; mkdir "$d"
	env --default-signal=INT "$U" gen rpmalloc -l 1000000000 -o "$d/g.ustr" 2>/dev/null &
	gen=$!
	for i in $(seq 1 1200); do
		ls "$d" | grep -q '^g\.ustr\.tmp\.' && break
		sleep 0.1
	done
	ls "$d" | grep -q '^g\.ustr\.tmp\.' || { kill -KILL $gen; bad "gen-$sig: no temporary ever appeared"; continue; }
	kill -$sig $gen
	wait $gen; rc=$?
	want=$((128 + $(kill -l $sig)))
	[ $rc -eq $want ] || bad "gen-$sig: gen exited $rc, not $want (killed by the signal)"
	left=$(ls "$d")
	[ -z "$left" ] || bad "gen-$sig: left behind: $left"
done

exit $failed
