#!/usr/bin/env bash
# The command-line conventions of every uslab subcommand (docs/sim.md,
# "Command-line conventions"): help on stdout with exit 0; an unknown option,
# a missing value or a bad number named in one line, then the usage, on
# stderr with exit 2; --version; `uslab help CMD` shows the manual page; "-"
# is standard input for readers and standard output for writers; write
# errors (/dev/full, a closed pipe) give a message and exit 1 before further
# work; output paths are checked before a long run.
. "$(dirname "$0")/../lib.sh"
cmds="record script report import replay gen sim tune calibrate"

# expect RC WHAT -- CMD...: run, keep stdout/stderr in $T/out, $T/err
expect() {
	local want=$1 what=$2 rc
	shift 3
	run_rc "$@" >"$T/out" 2>"$T/err"
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

# gen: each numeric option's range, named with the option and the range;
# a cross-option range; an option the kind has no use for.
gen_bad() {
	local want=$1
	shift
	expect 2 "gen $*" -- "$U" gen "$@" -o "$T/g.ustr"
	[ "$(head -1 "$T/err")" = "$want" ] || fail "gen $*: '$(head -1 "$T/err")', expected '$want'"
	grep -q "^usage: uslab gen" "$T/err" || fail "gen $*: no usage"
	[ ! -e "$T/g.ustr" ] || fail "gen $*: wrote its output"
}
gen_bad "uslab gen: --threads: 0 is out of range 1..4096" rpmalloc -t 0
gen_bad "uslab gen: --threads: 4097 is out of range 1..4096" rpmalloc --threads 4097
gen_bad "uslab gen: --cpus: 0 is out of range 1..8192" rpmalloc -c 0
gen_bad "uslab gen: --blocks: 0 is out of range 1..16777216" rpmalloc -b 0
gen_bad "uslab gen: --blocks: 16777217 is out of range 1..16777216" rpmalloc --blocks 16777217
gen_bad "uslab gen: --loops: 0 is out of range 1..4294967296" rpmalloc -l 0
gen_bad "uslab gen: --loops: 0 is out of range 1..4294967296" mtmalloc-32k --loops 0
gen_bad "uslab gen: --percent: 101 is out of range 0..100" rpmalloc -p 101
gen_bad "uslab gen: --window: 0 is out of range 1..16777216" prodcons -w 0
gen_bad "uslab gen: --min: 0 is out of range 1..1073741824" resize --min 0
gen_bad "uslab gen: --max: 1073741825 is out of range 1..1073741824" resize --max 1073741825
gen_bad "uslab gen: --step-ns: 0 is out of range 1..1000000000" rpmalloc --step-ns 0
gen_bad "uslab gen: --loops: expected an integer 1..4294967296, found 'abc'" rpmalloc -l abc
gen_bad "uslab gen: --seed: expected an integer 0..18446744073709551615, found '-1'" rpmalloc --seed -1
gen_bad "uslab gen: --seed: expected an integer 0..18446744073709551615, found '18446744073709551616'" rpmalloc --seed 18446744073709551616
gen_bad "uslab gen: --min: 20000 is above the largest size 16000 (--max, the kind's default)" rpmalloc --min 20000
gen_bad "uslab gen: --min: 600 is above the largest size 500 (--max)" prodcons --min 600 --max 500
gen_bad "uslab gen: --threads: prodcons needs 2 or more, found 1" prodcons -t 1
gen_bad "uslab gen: --min: mtmalloc-32k has no such parameter" mtmalloc-32k --min 40
gen_bad "uslab gen: --window: rpmalloc has no such parameter" rpmalloc -w 8
gen_bad "uslab gen: --blocks: resize has no such parameter" resize -b 8
# the ends of each range are accepted
"$U" gen rpmalloc -t 1 -c 1 -b 1 -l 1 -p 0 --min 1 --max 1 --step-ns 1 --seed 18446744073709551615 \
	-o "$T/g1.ustr" 2>/dev/null || fail "gen at the low ends of its ranges"
"$U" gen prodcons -t 2 -c 8192 -l 10 -w 16777216 --min 1073741824 --max 1073741824 --step-ns 1000000000 \
	-o "$T/g2.ustr" 2>/dev/null || fail "gen at the high ends of its ranges"
"$U" report "$T/g2.ustr" 2>/dev/null | grep -q "1073741824" || fail "gen --max 1073741824: size not in the trace"

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
