#!/usr/bin/env bash
# The command-line conventions of every uslab subcommand (docs/sim.md,
# "Command-line conventions"; tools/lib/parse-options.c): help on stdout
# with exit 0, listing each option of the command; an unknown option, a
# missing value or a bad number named in one line, then the usage, on
# stderr with exit 2; --version; `uslab help CMD` shows the manual page; "-"
# is standard input for readers and standard output for writers; write
# errors (/dev/full) give a message and exit 1 before further work, a
# closed pipe ends the command silently (SIGPIPE, as cat); output paths are
# checked before a long run.
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
bad "--workers" "$U" tune -j 0 "$T/t.ustr"
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

# The option parser (tools/lib/parse-options.c): each command's options
# are one table. --help lists exactly the options below, and every option it
# lists is one the parser takes (a table that printed one thing and parsed
# another fails here); live-view commands too.
nlisted=0
while read -r c want; do
	nlisted=$((nlisted + 1))
	expect 0 "$c --help" -- "$U" $c --help </dev/null
	grep -oE '^  (-[a-zA-Z](, --[a-z-]+)?|    --[a-z-]+)' "$T/out" | grep -oE -- '--?[a-zA-Z][a-z-]*' |
		sort > "$T/listed"
	tr ' ' '\n' <<<"$want" | sort > "$T/want"
	diff "$T/want" "$T/listed" > "$T/d" || fail "$c --help: options listed differ from the command's ($(tr '\n' ' ' < "$T/d"))"
	for o in $(cat "$T/listed"); do
		[ "$o" = -h ] || [ "$o" = --help ] && continue
		set +e
		timeout 10 "$U" $c $o </dev/null >/dev/null 2>"$T/err"
		set -e
		! grep -q "unknown option" "$T/err" || fail "$c $o: listed in --help, refused: $(head -1 "$T/err")"
	done
	if [ "$c" = slabinfo ] || [ "$c" = top ]; then	# not in $cmds (they need a process)
		expect 2 "$c --bogus" -- "$U" $c --bogus </dev/null
		[ "$(head -1 "$T/err")" = "uslab $c: unknown option '--bogus'" ] || fail "$c --bogus: $(head -1 "$T/err")"
		grep -q "^usage: uslab $c" "$T/err" || fail "$c --bogus: no usage"
	fi
done <<'EOF'
script -H --header -n --pid --comm -h --help
report -t --threads --pid --comm --sort --children --rows --folded --flamegraph --weight --callsite --timeline --wrappers -h --help
import -o --output -q -h --help
replay -a --allocator --threads-as-recorded -t --threads --touch --no-touch --runs --timeline --pid --comm -h --help
gen -t --threads -o --output -s --seed -c --cpus -b --blocks -l --loops -p --percent -w --window --min --max --step-ns -h --help
sim --cpus --mag-size --batch --depot-limit --adapt --adapt-min --adapt-max --adapt-budget --held --sample --rows --timeline --no-reaper --result --calibration --pid --comm -h --help
tune -j --workers --jobs --merge --svg --png --cpus --mag-sizes --depot-limits --batch --adapt-max --adapt-budgets --no-adapt --goal --model-only --runs --candidates --calibration --peak --mean --no-compose --all --verify --verify-grid --pid --comm -h --help
record -g --max-stack -o --output -l -q -p --pid --duration -h --help
slabinfo -p --pid -w --write --gc -h --help
top -p --pid -d --delay -o --once -n -s --sort -h --help
EOF
[ "$nlisted" = 10 ] || fail "options of $nlisted commands checked, expected 10"

# Each refusal: exit 2, one line naming the option (exactly as below), the
# usage on stderr, nothing on stdout.
opt_bad() {
	local want=$1
	shift
	expect 2 "$*" -- "$U" "$@"
	[ "$(head -1 "$T/err")" = "$want" ] || fail "$*: '$(head -1 "$T/err")', expected '$want'"
	grep -q "^usage: uslab $1" "$T/err" || fail "$*: no usage"
	[ ! -s "$T/out" ] || fail "$*: wrote to stdout"
}
t=$T/t.ustr
opt_bad "uslab report: --rows: expected an integer 1..4294967295, found 'x'" report --rows x "$t"
opt_bad "uslab report: --rows: 0 is out of range 1..4294967295" report --rows 0 "$t"
opt_bad "uslab sim: --cpus: 0 is out of range 1..8192" sim --cpus 0 "$t"
opt_bad "uslab sim: --sample: expected an integer 1..18446744073709551615, found '+5'" sim --sample +5 "$t"
opt_bad "uslab tune: --verify: 65 is out of range 3..64" tune --verify=65 "$t"
opt_bad "uslab tune: --mag-sizes: expected up to 16 numbers 1..4096, comma-separated, found '8,,16'" tune --mag-sizes 8,,16 "$t"
opt_bad "uslab gen: --seed: expected an integer 0..18446744073709551615, found ' 5'" gen rpmalloc --seed ' 5' -o "$T/g.ustr"
opt_bad "uslab top: --delay: 0.01 is out of range 0.05..3600" top -p 1 -d 0.01
opt_bad "uslab top: --delay: expected a number 0.05..3600, found 'soon'" top -p 1 -d soon
opt_bad "uslab top: --sort: expected one of c o a s h r f n, found 'z'" top -p 1 -s z
opt_bad "uslab report: --sort: expected callsite or callsite,size, found 'size'" report --sort size "$t"
opt_bad "uslab script: --pid: expected a process id 1..4294967295, found '0'" script --pid 0 "$t"
opt_bad "uslab script: unknown option '-Z'" script -HZ "$t"
opt_bad "uslab record: unknown option '--bogus'" record --bogus -- true
opt_bad "uslab tune: option '--verif' is ambiguous (--verify, --verify-grid)" tune --verif "$t"
opt_bad "uslab sim: option '--cpus' needs a value" sim "$t" --cpus
opt_bad "uslab record: option '-l' needs a value" record -l
opt_bad "uslab replay: option '--no-touch' takes no value" replay --no-touch=1 "$t"
opt_bad "uslab top: -p PID is required" top -d 1
opt_bad "uslab import: -o TRACE is required" import mtrace "$T/mt.log"
opt_bad "uslab slabinfo: unexpected argument 'extra'" slabinfo -p 1 extra
opt_bad "uslab script: no TRACE given" script -n 3
opt_bad "uslab script: one TRACE only (found also 'u')" script "$t" u
[ ! -e "$T/g.ustr" ] || fail "a refused gen wrote its output"
# A CLASS no kmalloc cache has: refused with the options (exit 2, naming the
# option and the value), never reported as the trace's error.
for v in kmalloc-65=3 kmalloc-64x=3 foo=3; do
	expect 2 "sim --mag-size $v" -- "$U" sim "$t" --mag-size "$v"
	head -1 "$T/err" | grep -q "^uslab sim: --mag-size: expected CLASS=N with CLASS a kmalloc cache (kmalloc-.*, found '$v'\$" ||
		fail "sim --mag-size $v: $(head -1 "$T/err")"
	! grep -q "$t" "$T/err" || fail "sim --mag-size $v: blamed the trace: $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "sim --mag-size $v: simulated"
done
"$U" sim "$t" --mag-size kmalloc-64=3 --mag-size 65=3 --rows 0 >/dev/null 2>&1 ||
	fail "sim --mag-size kmalloc-64=3 --mag-size 65=3: refused"
# Numbers: hexadecimal after 0x is the same number; options and operands mix.
"$U" gen rpmalloc -t 1 -b 50 -l 3 --seed 0x10 -o "$T/h1.ustr" 2>/dev/null
"$U" gen rpmalloc -t 1 -b 50 -l 3 --seed 16 -o "$T/h2.ustr" 2>/dev/null
cmp -s "$T/h1.ustr" "$T/h2.ustr" || fail "--seed 0x10 is not --seed 16"
[ "$("$U" script "$t" -n 0x2 | wc -l)" = 2 ] || fail "script TRACE -n 0x2: not two events"
# record stops at its command: what follows is the command's (echo -n).
"$U" record -q -o "$T/e.ustr" echo -n hi > "$T/echo"
[ "$(cat "$T/echo")" = "hi" ] || fail "record: options after the command were not the command's: '$(cat "$T/echo")'"

# --version, help
expect 0 "--version" -- "$U" --version
grep -q "^uslab .*trace format 1\.2" "$T/out" || fail "--version: $(cat "$T/out")"
# every command uslab --help lists, the live-view ones too, has its page
all=$("$U" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
for c in $cmds slabinfo top; do
	grep -qx "$c" <<<"$all" || fail "uslab --help does not list $c"
done
for c in "" $all; do
	expect 0 "help $c" -- "$U" help $c
	[ ! -s "$T/err" ] || fail "help $c: $(cat "$T/err")"
	grep -q "uslab${c:+-$c} - " "$T/out" && grep -q "^NAME" "$T/out" || fail "help $c: no manual page: $(head -3 "$T/out")"
	grep -q "uslab${c:+-$c}(1)" "$T/out" || fail "help $c: not its page: $(head -3 "$T/out")"
	[ -z "$c" ] || "$U" help | grep -q "uslab-$c(1)" || fail "uslab(1) does not name uslab-$c(1)"
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

# Write errors: /dev/full gives a message and exit 1.
for c in script report sim "tune --mag-sizes 8 --depot-limits 2 -j 1"; do
	expect 1 "$c > /dev/full" -- sh -c "\"$U\" $c \"$T/t.ustr\" > /dev/full"
	grep -q "standard output: No space left on device" "$T/err" || fail "$c > /dev/full: message: $(cat "$T/err")"
done
expect 1 "gen -o /dev/full" -- "$U" gen rpmalloc -t 1 -b 100 -l 5 -o /dev/full
grep -q "/dev/full: write: No space left on device" "$T/err" || fail "gen -o /dev/full: message: $(cat "$T/err")"
# A reader that stops early is normal use: the command ends silently,
# killed by SIGPIPE as cat is (141), with no message; a short output that
# fit before the reader left ends 0. A write error that is not a closed
# pipe (/dev/full, above) still says so and exits 1.
"$U" gen rpmalloc -t 1 -b 5000 -l 200 -o "$T/big.ustr" 2>/dev/null
pipe_rc() {	# pipe_rc WHAT CMD...: run CMD | head -1; its status in $prc
	set +e
	( "$@"; echo "$?" > "$T/pipe.rc" ) 2>"$T/pipe.err" | head -1 > /dev/null
	set -e
	prc=$(cat "$T/pipe.rc")
	[ ! -s "$T/pipe.err" ] || fail "$1 | head: wrote to stderr: $(cat "$T/pipe.err")"
}
pipe_rc "$U" script "$T/big.ustr"
[ "$prc" = 141 ] || fail "script | head: exit $prc, expected 141 (SIGPIPE)"
pipe_rc "$U" report --rows 100000 "$T/big.ustr"
[ "$prc" = 141 ] || [ "$prc" = 0 ] || fail "report | head: exit $prc"
pipe_rc "$U" sim --rows 100000 "$T/big.ustr"
[ "$prc" = 141 ] || [ "$prc" = 0 ] || fail "sim | head: exit $prc"
pipe_rc "$U" tune --mag-sizes 8 --depot-limits 2 -j 1 "$T/t.ustr"
[ "$prc" = 141 ] || [ "$prc" = 0 ] || fail "tune | head: exit $prc"
pipe_rc "$U" gen rpmalloc -t 1 -b 5000 -l 200 -o -
[ "$prc" = 141 ] || fail "gen -o - | head: exit $prc, expected 141 (SIGPIPE)"
pipe_rc "$U" --help
[ "$prc" = 141 ] || [ "$prc" = 0 ] || fail "--help | head: exit $prc"

# Output paths are checked before the long run: nothing is simulated.
expect 1 "sim --timeline bad" -- "$U" sim --timeline /nonexistent/dir/t.csv "$T/t.ustr"
grep -q -- "--timeline: /nonexistent/dir: cannot create files" "$T/err" || fail "sim --timeline: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "sim ran before checking --timeline"
mkdir "$T/d.svg"
expect 1 "tune --svg dir" -- "$U" tune --svg "$T/d.svg" "$T/t.ustr"
grep -q -- "--svg: .*: Is a directory" "$T/err" || fail "tune --svg: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "tune ran before checking --svg"
expect 1 "record -o dir" -- "$U" record -o "$T" -- touch "$T/ran"
[ ! -e "$T/ran" ] || fail "record ran the command before checking -o"

echo "cli: help, errors, ranges, --version, help CMD, -, write errors, early path checks"
