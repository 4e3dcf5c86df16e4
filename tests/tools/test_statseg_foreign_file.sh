#!/usr/bin/env bash
# Issue 20 finding 7: the readers (uslab slabinfo -p, uslab top -p) take
# /dev/shm/uslab.PID only from the target process's user (or root): a file
# another user forged for a pid that has no segment is refused, nothing of
# it printed, a -w never reported applied. What a trusted segment says is
# printed escaped (no terminal escape sequence passes). A file truncated
# under the reader is an error, not SIGBUS; a readers' lock held forever
# ends in a bounded wait, and SIGTERM still ends it. A service whose pid is
# taken by a forged file still creates (and serves) its own segment.
# Needs root: the forged files belong to other users (setuid children).
. "$(dirname "$0")/../lib.sh"
set +e
[ "$(id -u)" = 0 ] || skip "not root: the forged files must belong to another user"
forge=$O/tests/tools/statseg_forge
[ -x "$forge" ] || fail "$forge not built"
pids=()
files=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	for f in "${files[@]}"; do rm -f "$f"; done
	rm -rf "$T"
}
trap cleanup EXIT
esc=$'\033'
# forge FILE PID [options]: a forged segment served in the background ($fpid)
forge_bg() {
	local f=$1
	# emptied here, not by the background job's redirection: that one may
	# run after the wait below has read the last forge's "ready" (a race
	# seen once on a busy machine: the reader met no segment yet)
	: >"$T/forge.out"
	"$forge" "$@" >>"$T/forge.out" 2>&1 &
	fpid=$!; pids+=($fpid); files+=("$f")
	for _ in $(seq 100); do grep -q ready "$T/forge.out" && return 0; sleep 0.05; done
	fail "statseg_forge did not start: $(cat "$T/forge.out")"
}
stop_forge() { kill -9 "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null; rm -f "$1"; }

# --- another user's file for root's process that has no segment --------------
sleep 60 & target=$!; pids+=($target)
seg=/dev/shm/uslab.$target
forge_bg "$seg" $target --uid 65534 --text "slabinfo - version: 2.1${esc}[2J${esc}]0;pwned${esc}\\
FORGED 1 1 1" --name "x${esc}[31m"
"$U" slabinfo -p $target >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 1 ] || bad "slabinfo -p on a file forged by uid 65534: exit $rc, not 1"
[ -s "$T/out" ] && bad "slabinfo -p printed a forged segment: $(cat -v "$T/out" | head -3)"
grep -q "owned by uid 65534" "$T/err" && [ "$(wc -l <"$T/err")" = 1 ] ||
	bad "slabinfo -p, forged file: not one line naming its owner: $(cat -v "$T/err")"
"$U" slabinfo -p $target -w 'kmalloc-64 64 32 8' >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 1 ] || bad "slabinfo -w through a forged file: exit $rc (reported applied)"
"$U" top -p $target -o -d 0.1 >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 1 ] && [ ! -s "$T/out" ] || bad "top -p on a forged file: exit $rc, printed $(cat -v "$T/out" | head -2)"
[ -e "$seg" ] || bad "the reader removed another user's live file"
stop_forge "$seg"

# A group- or world-writable file is refused even from the right owner.
forge_bg "$seg" $target --mode 0666
"$U" slabinfo -p $target >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "mode 0666" "$T/err" || bad "a mode 0666 segment was taken: exit $rc, $(cat "$T/err")"
stop_forge "$seg"
# A symbolic link is not followed.
ln -s /etc/passwd "$seg"; files+=("$seg")
"$U" slabinfo -p $target >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "symbolic link" "$T/err" || bad "a symlinked segment: exit $rc, $(cat "$T/err")"
rm -f "$seg"

# --- a segment root may trust says hostile things: printed escaped -------------
forge_bg "$seg" $target --text "slabinfo - version: 2.1
evil${esc}[2J${esc}]0;title$(printf '\a')x $(printf '\x9b')31m 1 1
" --name "na${esc}[1mme"
"$U" slabinfo -p $target >"$T/out" 2>"$T/err" || bad "slabinfo -p on a trusted segment: $(cat "$T/err")"
LC_ALL=C grep -q "[$(printf '\001-\011\013-\037\177\200-\377')]" "$T/out" &&
	bad "slabinfo -p passed control bytes through: $(cat -v "$T/out")"
grep -qF 'evil\x1b[2J\x1b]0;title\x07x \x9b31m' "$T/out" ||
	bad "slabinfo -p: the hostile line is not shown escaped: $(cat -v "$T/out")"
"$U" top -p $target -n 1 -d 0.1 >"$T/out" 2>"$T/err" || bad "top -p on a trusted segment: $(cat "$T/err")"
LC_ALL=C grep -q "[$(printf '\001-\011\013-\037\177\200-\377')]" "$T/out" &&
	bad "top -p passed control bytes through: $(cat -v "$T/out")"
grep -qF 'na\x1b[1mme' "$T/out" || bad "top -p: the cache name is not shown escaped: $(cat -v "$T/out")"
stop_forge "$seg"

# --- truncated under the reader: an error, not SIGBUS -----------------------------
forge_bg "$seg" $target --truncate
"$U" slabinfo -p $target >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 1 ] || bad "slabinfo -p on a segment truncated under it: exit $rc (135: SIGBUS)"
grep -q "cut short\|does not answer" "$T/err" || bad "truncated segment: $(cat "$T/err")"
stop_forge "$seg"

# --- the readers' lock held forever: a bounded wait; SIGTERM ends it ----------
forge_bg "$seg" $target --hold-readers
s0=$(date +%s)
timeout -s KILL 20 "$U" slabinfo -p $target >"$T/out" 2>"$T/err"; rc=$?
s1=$(date +%s)
[ $rc = 1 ] || bad "slabinfo -p with the readers' lock held: exit $rc (137: still waiting after 20 s)"
grep -q "locked by another reader" "$T/err" || bad "held lock: not said: $(cat "$T/err")"
[ $((s1 - s0)) -le 10 ] || bad "held lock: gave up after $((s1 - s0)) s"
"$U" top -p $target -d 0.1 >"$T/out" 2>"$T/err" & r=$!
# once it has the segment open (it then waits for the lock): SIGTERM
for _ in $(seq 300); do
	ls -l /proc/$r/fd 2>/dev/null | grep -q "$seg" && break
	sleep 0.1
done
kill -TERM $r
for _ in $(seq 50); do kill -0 $r 2>/dev/null || break; sleep 0.1; done
if kill -0 $r 2>/dev/null; then
	bad "top -p waiting on a held lock ignored SIGTERM for 5 s"
	kill -9 $r
fi
wait $r 2>/dev/null; rc=$?
[ $rc = 0 ] || bad "top -p ended by SIGTERM while it waited: exit $rc, not 0 (uslab-top(1))"
[ -s "$T/err" ] && bad "top -p ended by SIGTERM while it waited said: $(cat "$T/err")"
stop_forge "$seg"

# --- a service whose pid another user's file holds still gets its segment ---
# In a PID namespace of its own the service is pid 2 (sh is 1); the forged
# /dev/shm/uslab.2 (made from outside: /dev/shm is shared) belongs to uid
# 65534, the service runs as 65533: neither may remove the other's file in
# the sticky /dev/shm.
unshare --pid --fork --mount-proc true 2>/dev/null ||
	{ echo "(unshare not permitted here: the pid-taken case is not tested)"; exit $failed; }
forge_bg /dev/shm/uslab.2 2 --uid 65534
unshare --pid --fork --mount-proc sh -c '
	setpriv --reuid=65533 --regid=65533 --clear-groups env USLAB_OPTIONS=stats_shm \
		LD_PRELOAD="$2" sleep 30 2>"$3/ns-svc" &
	svc=$!
	echo "service pid $svc" >"$3/ns-pid"
	for i in $(seq 300); do	# its segment, under the other name (30 s at most)
		ls /dev/shm/uslab.2.* >/dev/null 2>&1 && break
		sleep 0.1
	done
	"$1" slabinfo -p $svc >"$3/ns-out" 2>"$3/ns-err"
	echo $? >"$3/ns-rc"
	kill $svc; wait $svc 2>/dev/null
' ns "$U" "$LIBUSLAB" "$T"
grep -q "service pid 2" "$T/ns-pid" || bad "the service is not pid 2 in its namespace: $(cat "$T/ns-pid")"
[ "$(cat "$T/ns-rc")" = 0 ] || bad "a service whose pid a forged file held: slabinfo -p: $(cat "$T/ns-err") (service: $(cat "$T/ns-svc"))"
head -1 "$T/ns-out" | grep -q '^slabinfo - version: 2.1$' && ! grep -q FORGED "$T/ns-out" ||
	bad "a service whose pid a forged file held: not its own slabinfo: $(head -2 "$T/ns-out")"
stop_forge /dev/shm/uslab.2
exit $failed
