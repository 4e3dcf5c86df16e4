#!/usr/bin/env bash
# A file at /dev/shm/uslab.PID of the right owner whose mode is not the 0600
# the library makes its segments with is refused by uslab slabinfo -p and
# top -p (nothing of it read), and the message says what is wrong with the
# mode: it once said "others may write it" of a 0644 file, which others may
# only read. The words "may write" stay for a mode that lets them write.
. "$(dirname "$0")/../lib.sh"

sleep 60 & target=$!
f=/dev/shm/uslab.$target
trap 'kill $target 2>/dev/null; rm -f "$f"; rm -rf "$T"' EXIT
[ -e "$f" ] && fail "$f exists already"
head -c 4096 /dev/zero > "$f"
for mode in 0644 0640 0604 0660 0666 0602; do
	chmod "$mode" "$f"
	for cmd in "slabinfo -p $target" "top -p $target -o"; do
		run_rc "$U" $cmd > "$T/out" 2> "$T/err"
		[ "$rc" -eq 1 ] || fail "$cmd with mode $mode: exit status $rc, not 1"
		[ -s "$T/out" ] && fail "$cmd with mode $mode: printed '$(head -c 200 "$T/out")'"
		grep -q "mode $mode, not the 0600 a segment is made with" "$T/err" ||
			fail "$cmd with mode $mode: said '$(cat "$T/err")'"
		if [ $((mode & 022)) -ne 0 ]; then
			grep -q "others may write it" "$T/err" ||
				fail "$cmd with mode $mode: does not say others may write it: $(cat "$T/err")"
		else
			grep -q "may write" "$T/err" &&
				fail "$cmd with mode $mode: says a writer may write it: $(cat "$T/err")"
		fi
	done
done
echo "test_statseg_mode_says_what_is_wrong: ok"
