#!/usr/bin/env bash
# The command-line conventions of every uslab subcommand (docs/sim.md,
# "Command-line conventions"): help on stdout with exit 0; an unknown option,
# a missing value or a bad number named in one line, then the usage, on
# stderr with exit 2; --version; `uslab help CMD` shows the manual page; "-"
# is standard input for readers and standard output for writers; write
# errors (/dev/full, a closed pipe) give a message and exit 1 before further
# work; output paths are checked before a long run.
. "$(dirname "$0")/lib.sh"
cmds="record script report import replay gen sim tune calibrate"

# expect RC WHAT -- CMD...: run, keep stdout/stderr in $T/out, $T/err
expect() {
	local want=$1 what=$2 rc
	shift 3
	set +e
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	[ "$rc" -eq "$want" ] || { cat "$T/err"; fail "$what: exit $rc, expected $want"; }
}

"$U" gen rpmalloc -t 1 -b 500 -l 20 -o "$T/t.ustr" 2>/dev/null

for c in $cmds; do
	for h in -h --help; do
		expect 0 "$c $h" -- "$U" $c $h
		grep -q "^usage: uslab $c" "$T/out" || fail "$c $h: no usage on stdout"
		[ ! -s "$T/err" ] || fail "$c $h: wrote to stderr: $(cat "$T/err")"
	done
	expect 2 "$c --bogus" -- "$U" $c --bogus "$T/t.ustr"
	[ ! -s "$T/out" ] || fail "$c --bogus: wrote to stdout"
	head -1 "$T/err" | grep -q -- "'--bogus'" || fail "$c --bogus: first line does not name it: $(head -1 "$T/err")"
	grep -q "^usage: uslab $c" "$T/err" || fail "$c --bogus: no usage on stderr"
	[ "$(grep -vc '^ \|^usage' "$T/err")" -eq 1 ] || fail "$c --bogus: more than one message line: $(cat "$T/err")"
done

# Bad values, each named, each exit 2 with the usage.
bad() {
	local name=$1
	shift
	expect 2 "$*" -- "$@"
	head -1 "$T/err" | grep -q -- "$name" || fail "$*: message does not name $name: $(head -1 "$T/err")"
	grep -q "usage: uslab" "$T/err" || fail "$*: no usage"
}
bad "-n" "$U" script -n abc "$T/t.ustr"
bad "-n" "$U" script -n -5 "$T/t.ustr"
bad "'-n' needs a value" "$U" script "$T/t.ustr" -n
bad "--threads" "$U" report --threads x "$T/t.ustr"
bad "'--threads' needs a value" "$U" report "$T/t.ustr" --threads
bad "--pid" "$U" report --pid abc "$T/t.ustr"
bad "-l" "$U" record -l 99 -o "$T/r.ustr" -- true
bad "-l" "$U" record -l 0 -o "$T/r.ustr" -- true
bad "-t" "$U" gen rpmalloc -t 0 -o "$T/g.ustr"
bad "--cpus" "$U" sim --cpus 0 "$T/t.ustr"
bad "-j" "$U" tune -j 0 "$T/t.ustr"
bad "--threads" "$U" replay --threads 0 "$T/t.ustr"
[ ! -e "$T/r.ustr" ] && [ ! -e "$T/g.ustr" ] || fail "a rejected command wrote its output"

# --version, help
expect 0 "--version" -- "$U" --version
grep -q "^uslab .*trace format 1\.1" "$T/out" || fail "--version: $(cat "$T/out")"
for c in "" $cmds; do
	expect 0 "help $c" -- "$U" help $c
	grep -q "uslab${c:+-$c}" "$T/out" && grep -q "NAME" "$T/out" || fail "help $c: no manual page: $(head -3 "$T/out")"
done
expect 2 "help nosuch" -- "$U" help nosuch
grep -q "unknown command 'nosuch'" "$T/err" || fail "help nosuch: message"

# "-": standard input for every reader, standard output for every writer.
for c in "script" "report" "sim" "tune --mag-sizes 8 --depot-limits 2 -j 1 --no-compose" "replay"; do
	expect 0 "$c -" -- sh -c "\"$U\" $c - < \"$T/t.ustr\""
	[ -s "$T/out" ] || fail "$c -: nothing printed"
done
"$U" gen rpmalloc -t 1 -b 100 -l 5 -o - 2>/dev/null > "$T/gen.ustr"
"$U" report "$T/gen.ustr" >/dev/null || fail "gen -o -: not a trace on stdout"
printf '= Start\n@ ./p:[0x1] + 0x55d0a0 0x10\n@ ./p:[0x1] - 0x55d0a0\n= End\n' > "$T/mt.log"
"$U" import mtrace - -o - < "$T/mt.log" 2>/dev/null > "$T/imp.ustr"
"$U" script "$T/imp.ustr" | grep -q "malloc" || fail "import - -o -: not a trace"
"$U" record -q -o - -- true > "$T/rec.ustr"
"$U" report "$T/rec.ustr" >/dev/null || fail "record -o -: not a trace on stdout"

# Write errors: /dev/full and a closed pipe give a message and exit 1.
for c in script report sim "tune --mag-sizes 8 --depot-limits 2 -j 1"; do
	expect 1 "$c > /dev/full" -- sh -c "\"$U\" $c \"$T/t.ustr\" > /dev/full"
	grep -q "standard output: No space left on device" "$T/err" || fail "$c > /dev/full: message: $(cat "$T/err")"
done
expect 1 "gen -o /dev/full" -- "$U" gen rpmalloc -t 1 -b 100 -l 5 -o /dev/full
grep -q "/dev/full: write: No space left on device" "$T/err" || fail "gen -o /dev/full: message: $(cat "$T/err")"
"$U" gen rpmalloc -t 1 -b 5000 -l 200 -o "$T/big.ustr" 2>/dev/null
set +e
( "$U" script "$T/big.ustr"; echo "rc=$?" > "$T/pipe.rc" ) 2>"$T/pipe.err" | head -1 > /dev/null
set -e
grep -q "rc=1" "$T/pipe.rc" || fail "script | head: $(cat "$T/pipe.rc")"
grep -q "standard output: Broken pipe" "$T/pipe.err" || fail "script | head: message: $(cat "$T/pipe.err")"

# Output paths are checked before the long run: nothing is simulated.
expect 1 "sim --timeline bad" -- "$U" sim --timeline /nonexistent/dir/t.csv "$T/t.ustr"
grep -q -- "--timeline: /nonexistent/dir: cannot create files" "$T/err" || fail "sim --timeline: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "sim ran before checking --timeline"
expect 1 "tune --svg dir" -- "$U" tune --svg "$T" "$T/t.ustr"
grep -q -- "--svg: .*: Is a directory" "$T/err" || fail "tune --svg: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "tune ran before checking --svg"
expect 1 "record -o dir" -- "$U" record -o "$T" -- touch "$T/ran"
[ ! -e "$T/ran" ] || fail "record ran the command before checking -o"

echo "cli: help, errors, ranges, --version, help CMD, -, write errors, early path checks"
