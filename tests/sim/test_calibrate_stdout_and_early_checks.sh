#!/usr/bin/env bash
# uslab calibrate -o -: the model on standard output, the measurements on
# standard error (as every other writer takes -, uslab(1)); a full
# standard output is an error (exit 1). Before, -o - wrote a file named
# "-" in the current folder. -o naming a folder, or a file in a folder
# that does not exist, is refused before anything is measured (the rule for
# output paths; main's open_model() since c3234a6, checked here beside -).
. "$(dirname "$0")/../lib.sh"
set +e
U=$(realpath "$U")
trace=$(realpath tests/trace/data/record-1.1.ustr)
cd "$T" || fail "cd"

run_rc "$U" calibrate -o - > out 2> err
[ "$rc" -eq 0 ] || bad "-o -: exit $rc: $(tail -2 err)"
[ -e ./- ] && bad "-o - wrote a file named '-'"
grep -q '^hit_ns=' out || bad "-o -: no model on stdout: $(head -3 out)"
grep -q 'ns per' out && bad "-o -: measurements on stdout with the model"
grep -q 'ns per' err || bad "-o -: no measurements on stderr"
"$U" sim --calibration out "$trace" > /dev/null 2> simerr ||
	bad "the model from stdout does not load: $(tail -2 simerr)"

run_rc sh -c "\"$U\" calibrate -o - > /dev/full" 2> err
[ "$rc" -eq 1 ] || bad "-o - > /dev/full: exit $rc, not 1"
grep -q 'standard output: No space left on device' err || bad "-o - > /dev/full: $(tail -1 err)"

mkdir d
for o in d "$T/no/such/m"; do
	run_rc "$U" calibrate -o "$o" > out 2> err
	[ "$rc" -eq 1 ] || bad "-o $o: exit $rc, not 1"
	grep -q "$o" err || bad "-o $o: the path not named: $(cat err)"
	grep -q 'ns per\|^uslab calibrate: mode' out && bad "-o $o: measured before refusing"
done
[ "$failed" -eq 0 ] && echo "calibrate -o - writes the model to stdout; a bad -o is refused before measuring"
exit $failed
