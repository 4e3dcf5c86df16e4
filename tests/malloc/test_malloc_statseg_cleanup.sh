#!/usr/bin/env bash
# Issue 20 finding 9: the statistics segment (USLAB_OPTIONS=stats_shm) does
# not outlive its process, however it leaves: exec into a program not on
# uslab (the pid lives on), a fatal signal, os._exit, SIGTERM, SIGKILL (the
# watcher removes it once the alive lock is free); and what is left when
# the watcher itself was killed is swept by the next process that starts
# the option and by `uslab slabinfo --gc`, while live segments stay.
. "$(dirname "$0")/../lib.sh"
set +e
pids=()
trap 'for p in "${pids[@]}"; do kill -9 $p 2>/dev/null; done; rm -f /dev/shm/uslab.41000[0-9][0-9]; rm -rf "$T"' EXIT
# backgrounded, the subshell execs: $! is the python3
py() { exec env USLAB_OPTIONS=stats_shm PYTHONMALLOC=malloc LD_PRELOAD="$LIBUSLAB" python3 -c "$@"; }

# seg_of PID: wait (30 s at most) for its segment to appear
seg_of() {
	for _ in $(seq 600); do [ -e /dev/shm/uslab.$1 ] && return 0; sleep 0.05; done
	return 1
}
# gone_within WHAT PID: the segment of PID must go within 30 s (the watcher
# wakes at once; the margin is for a loaded machine)
gone_within() {
	for _ in $(seq 600); do [ -e /dev/shm/uslab.$2 ] || return 0; sleep 0.05; done
	bad "$1: /dev/shm/uslab.$2 outlived its process by 30 s"
	rm -f /dev/shm/uslab.$2
}

# exec into a program that is not on uslab: same pid, still running
py 'import os, time
time.sleep(0.5)
os.execve("/bin/sleep", ["sleep", "30"], {})' & p=$!; pids+=($p)
seg_of $p || fail "no segment for a python3 started with stats_shm"
for _ in $(seq 600); do [ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ] && break; sleep 0.05; done
[ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ] || bad "exec: the process did not become sleep"
gone_within "exec into sleep" $p
kill -0 $p 2>/dev/null || bad "exec: the process did not live on as sleep"
kill $p; wait $p 2>/dev/null

# a fatal signal the program raises (SIGSEGV), os._exit, SIGTERM, SIGKILL
for how in segv _exit term kill; do
	case $how in
	segv)  py 'import os, signal, time; time.sleep(0.3); os.kill(os.getpid(), signal.SIGSEGV)' & ;;
	_exit) py 'import os, time; time.sleep(0.3); os._exit(3)' & ;;
	*)     py 'import time; time.sleep(30)' & ;;
	esac
	p=$!; pids+=($p)
	seg_of $p || { bad "$how: no segment"; continue; }
	case $how in
	term) sleep 0.3; kill -TERM $p ;;
	kill) sleep 0.3; kill -KILL $p ;;
	esac
	wait $p 2>/dev/null
	gone_within "$how" $p
done

# --- the sweep: what no watcher removed --------------------------------------
# Copies of a live segment are segments nobody holds the alive lock of: what
# a process killed together with its watcher leaves. Pids past pid_max, so
# no live process has them.
# (python3 may be a chain of scripts that exec it, each on uslab: the
# segment is python's once it says so)
py 'import time; print("ready", flush=True); time.sleep(30)' >"$T/live" & live=$!; pids+=($live)
for _ in $(seq 600); do grep -q ready "$T/live" && break; sleep 0.05; done
seg_of $live || fail "no segment for the live python3"
for n in 4100001 4100002; do cp /dev/shm/uslab.$live /dev/shm/uslab.$n; done
echo "not a segment" >/dev/shm/uslab.4100009
# a process starting the option sweeps
env USLAB_OPTIONS=stats_shm LD_PRELOAD="$LIBUSLAB" true
for n in 4100001 4100002; do
	[ -e /dev/shm/uslab.$n ] && bad "a process starting stats_shm left the stale /dev/shm/uslab.$n"
done
[ -e /dev/shm/uslab.$live ] || bad "a process starting stats_shm removed the live segment of $live"
[ -e /dev/shm/uslab.4100009 ] || bad "the sweep removed a file that is not a segment"
# uslab slabinfo --gc
# /dev/shm is the machine's: another make check beside this one leaves
# stale segments of its own killed programs (so at least ours is removed),
# and its own sweeps may remove ours first (then plant it again: at most
# five tries, each one's output kept).
for try in 1 2 3 4 5; do
	cp /dev/shm/uslab.$live /dev/shm/uslab.4100003
	"$U" slabinfo --gc >"$T/out" 2>"$T/err" || bad "slabinfo --gc: $(cat "$T/err")"
	grep -Eq "^removed ([1-9][0-9]*) stale segments? from /dev/shm$" "$T/out" && break
	grep -q "^removed 0 stale segments from /dev/shm$" "$T/out" ||
		{ bad "slabinfo --gc: $(cat "$T/out")"; break; }
	[ "$try" -eq 5 ] && bad "slabinfo --gc removed nothing in 5 tries: $(cat "$T/out")"
done
[ -e /dev/shm/uslab.4100003 ] && bad "slabinfo --gc left the stale /dev/shm/uslab.4100003"
[ -e /dev/shm/uslab.$live ] || bad "slabinfo --gc removed the live segment of $live"
"$U" slabinfo -p $live >"$T/out" 2>"$T/err" || bad "the live process after the sweeps: $(cat "$T/err")"
rm -f /dev/shm/uslab.4100009
exit $failed
