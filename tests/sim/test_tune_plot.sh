#!/usr/bin/env bash
# uslab tune's drawings: --png goes through tools/uslab/plot-frontier.py (a
# real script reading the CSV uslab writes, no code generated in C), from the
# build tree and from an install prefix; a file name with quotes is a name,
# not shell text; a PNG that cannot be written is an error with no file left.
. "$(dirname "$0")/../lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
case "$O" in /*) ;; *) O=$src/$O ;; esac
U=$O/uslab
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
sweep=(-j 2 --mag-sizes 4,32 --depot-limits 0,-1 --no-compose --model-only)

"$U" gen prodcons -t 2 -l 2000 -o "$T/pc.ustr" 2>/dev/null || fail "gen prodcons"

# From the build tree, into a name a shell would have taken apart.
png="$T/it's \"a\" \$(frontier).png"
"$U" tune "$T/pc.ustr" "${sweep[@]}" --png "$png" --svg "$T/f.svg" > "$T/out" 2> "$T/err" ||
	fail "tune --png: $(cat "$T/err")"
is_png "$png" || fail "not a PNG: $png"
grep -qF "frontier drawn in $png" "$T/out" || fail "the PNG is not named in the output"
grep -q '<circle' "$T/f.svg" || fail "SVG without points"
[ ! -e "$T/\$(frontier).png" ] && [ ! -e "$T/it" ] || fail "the name was split by a shell"

# A PNG that cannot be written: exit 1, said (the directory that cannot take
# it), checked before the sweep runs.
run_rc "$U" tune "$T/pc.ustr" "${sweep[@]}" --png "$T/no/such/dir/f.png" > "$T/out" 2> "$T/err"
[ $rc -eq 1 ] || fail "unwritable PNG: exit $rc"
grep -q -- '--png: .*no/such/dir' "$T/err" || fail "unwritable PNG not named: $(cat "$T/err")"
grep -q swept "$T/out" && fail "unwritable PNG: the sweep ran before the check"

# The script itself: a damaged CSV is named with its line.
printf 'view,0,2,0,3,0\n1.0,2.0,1,0,0,0,0\nnot,a,point,here\n' > "$T/bad.csv"
run_rc /usr/bin/python3 "$src/tools/uslab/plot-frontier.py" "$T/bad.csv" "$T/bad.png" t x 2> "$T/err"
[ $rc -ne 0 ] && grep -q 'bad.csv:3' "$T/err" || fail "bad CSV: exit $rc, $(cat "$T/err")"
[ ! -e "$T/bad.png" ] || fail "a PNG from a bad CSV"

# Installed: bin/uslab finds share/uslab/plot-frontier.py.
make -s -C "$src" O="$O" install PREFIX="$T/prefix" > "$T/make.log" 2>&1 ||
	{ tail -20 "$T/make.log"; fail "make install"; }
[ -r "$T/prefix/share/uslab/plot-frontier.py" ] || fail "plot-frontier.py not installed"
"$T/prefix/bin/uslab" tune "$T/pc.ustr" "${sweep[@]}" --png "$T/inst.png" > /dev/null 2> "$T/err" ||
	fail "installed tune --png: $(cat "$T/err")"
is_png "$T/inst.png" || fail "installed: not a PNG"
echo "tune --png: build tree and install prefix, quoted names, errors named"
