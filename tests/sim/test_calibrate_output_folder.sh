#!/usr/bin/env bash
# `uslab calibrate -o FILE` writes FILE where it is named, as every other
# -o does: a FILE whose folder does not exist is refused (exit 1, the path
# named), no folder made and nothing written. Only the default path
# ($USLAB_CALIBRATION, else ~/.cache/uslab/calibration) gets its folders
# made. Before, -o /no/such/dir/model made /no/such/dir and wrote there,
# and the model went through FILE.tmp by a fixed name (a symlink followed).
. "$(dirname "$0")/../lib.sh"
run_rc "$U" calibrate -o "$T/no/such/model" >"$T/out" 2>"$T/err"
[ "$rc" -eq 1 ] || fail "-o in a missing folder: exit $rc, not 1: $(cat "$T/err")"
[ ! -e "$T/no" ] || fail "-o in a missing folder made it: $(find "$T/no")"
grep -q "$T/no/such/model" "$T/err" || fail "the path is not named: $(cat "$T/err")"
grep -q '^wrote' "$T/out" && fail "says it wrote: $(grep '^wrote' "$T/out")"

# -o naming a folder is refused before anything is timed (it used to time
# every path, then fail at the rename), and nothing is left beside it
mkdir "$T/dir"
run_rc "$U" calibrate -o "$T/dir" >"$T/out" 2>"$T/err"
[ "$rc" -eq 1 ] || fail "-o a folder: exit $rc, not 1: $(cat "$T/err")"
grep -q "$T/dir: Is a directory" "$T/err" || fail "-o a folder: not said: $(cat "$T/err")"
grep -q 'ns per' "$T/out" && fail "-o a folder: measured first: $(head -3 "$T/out")"
ls "$T"/dir.?????? 2>/dev/null && fail "-o a folder left a temporary: $(ls "$T"/dir.??????)"

# the default path still gets its folders
HOME=$T/home USLAB_CALIBRATION= XDG_CACHE_HOME= "$U" calibrate >"$T/out" 2>"$T/err" ||
	fail "calibrate to the default path: $(cat "$T/err")"
[ -s "$T/home/.cache/uslab/calibration" ] ||
	fail "no model at the default path: $(ls -R "$T/home" 2>&1)"
# the temporary is a fresh name: a symlink planted at FILE.tmp (the fixed
# name used before) is not followed, its target not written
echo victim >"$T/victim"
ln -s "$T/victim" "$T/m.tmp"
"$U" calibrate -o "$T/m" >/dev/null 2>"$T/err" || fail "-o in an existing folder: $(cat "$T/err")"
grep -q '^hit_ns=' "$T/m" || fail "-o wrote no model"
[ "$(cat "$T/victim")" = victim ] || fail "calibrate wrote through the symlink $T/m.tmp"
[ "$(stat -c %a "$T/m")" = "$(printf '%o' $((0666 & ~$(umask))))" ] ||
	fail "the model's mode $(stat -c %a "$T/m") is not 0666 less the umask $(umask)"
ls "$T"/m.?????? 2>/dev/null && fail "a temporary is left: $(ls "$T"/m.??????)"
echo "calibrate -o makes no folder, refuses a folder before timing; the default path does; no fixed temporary name"
