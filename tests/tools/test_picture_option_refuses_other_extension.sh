#!/usr/bin/env bash
# Every option that writes a picture takes its format from the file name's
# extension or refuses the name: `tune --svg out.png` wrote SVG into a .png
# (issue 22). A name whose extension is not the option's format: exit 2, a
# line naming the option and the formats it writes, nothing written, nothing
# run. The right extension, in any case (.SVG), is taken and the file holds
# that format.
. "$(dirname "$0")/../lib.sh"

"$U" gen rpmalloc -t 1 -b 300 -l 10 -o "$T/t.ustr" 2>/dev/null || fail "gen"

refused() {	# OPTION FILE -- COMMAND...
	local opt=$1 file=$2
	shift 3
	run_rc "$@" > "$T/out" 2> "$T/err"
	[ "$rc" -eq 2 ] || { cat "$T/err"; fail "$opt $file: exit $rc, expected 2"; }
	head -1 "$T/err" | grep -q -- "^uslab [a-z]*: $opt: expected .*FILE\..*found '.*$(basename "$file")'" ||
		fail "$opt $file: not named: $(head -1 "$T/err")"
	[ ! -e "$file" ] || fail "$opt $file: written anyway ($(file -b "$file"))"
	[ ! -s "$T/out" ] || fail "$opt $file: the command ran: $(head -3 "$T/out")"
}
tune=(tune --model-only --mag-sizes 8,16 --depot-limits 4 "$T/t.ustr")
refused --svg "$T/out.png" -- "$U" "${tune[@]}" --svg "$T/out.png"
refused --png "$T/out.svg" -- "$U" "${tune[@]}" --png "$T/out.svg"
refused --svg "$T/frontier" -- "$U" "${tune[@]}" --svg "$T/frontier"
refused --flamegraph "$T/fg.png" -- "$U" report --flamegraph "$T/fg.png" "$T/t.ustr"
refused --timeline "$T/tl.pdf" -- "$U" report --timeline "$T/tl.pdf" "$T/t.ustr"
refused --timeline "$T/tl.pdf" -- "$U" sim --timeline "$T/tl.pdf" "$T/t.ustr"
refused --timeline "$T/tl" -- "$U" sim --timeline "$T/tl" "$T/t.ustr"
# a dot in a directory's name is no extension
mkdir "$T/v.svg"
refused --svg "$T/v.svg/frontier" -- "$U" "${tune[@]}" --svg "$T/v.svg/frontier"

# the right extension, any case: taken, and the file is that format
"$U" "${tune[@]}" --svg "$T/F.SVG" > /dev/null 2> "$T/err" || fail "tune --svg F.SVG: $(cat "$T/err")"
head -c 200 "$T/F.SVG" | grep -q "<svg" || fail "F.SVG is not SVG"
"$U" report --timeline "$T/tl.Svg" "$T/t.ustr" > /dev/null 2> "$T/err" || fail "--timeline tl.Svg: $(cat "$T/err")"
grep -q "<svg" "$T/tl.Svg" || fail "tl.Svg is not SVG"
"$U" sim --timeline "$T/tl.csv" "$T/t.ustr" > /dev/null 2> "$T/err" || fail "sim --timeline tl.csv: $(cat "$T/err")"
head -1 "$T/tl.csv" | grep -q '^[a-z_]*,events,held_bytes,' || fail "tl.csv: $(head -1 "$T/tl.csv")"
"$U" sim --timeline - "$T/t.ustr" > "$T/out" 2> "$T/err" || fail "sim --timeline -: $(cat "$T/err")"
grep -q ',events,held_bytes,' "$T/out" || fail "sim --timeline -: no CSV on standard output"
echo "picture options: a wrong extension refused (exit 2, named, nothing written), the right one taken"
