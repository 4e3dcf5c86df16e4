#!/usr/bin/env bash
# uslab record: the process report, script, replay and sim read by default
# is the program the recorded command finally ran as (the last exec of the
# command's own pid), not the process with the most allocations: a wrapper
# script that does shell work (subshells, seq, printf) before it execs the
# real program allocates more than python3 does (pymalloc keeps its small
# objects away from malloc), and more than a small C program. The busiest
# process is the default only when that last image allocated nothing or
# was not recorded (a static program). The rule: docs/trace-format.md,
# "Which process".
. "$(dirname "$0")/../lib.sh"

# rows TRACE: "mark pid ppid events allocs comm command" per process image,
# mark "*" for the one the tools read, "-" for the others
rows() {
	"$U" report "$1" 2>/dev/null | awk '
		/^# processes:/ { on = 1; getline; next }
		on && /^#/ {
			mark = substr($0, 3, 1) == "*" ? "*" : "-"
			sub(/^# [* ] +/, "")
			n = split($0, f, / +/)
			cmd = $0
			for (k = 1; k <= 7; k++)
				sub(/^[^ ]+ +/, "", cmd)
			print mark, f[1], f[2], f[3], f[4], f[7], cmd
		}
		/^$/ { on = 0 }'
}
chosen() { awk '$1 == "*"' "$1"; }
# the image with the most allocations (the first on a tie)
busiest() { awk '$5 > max { max = $5; row = $0 } END { print row }' "$1"; }

# The wrapper's shell work: a subshell per item, builtins, an external
# command; it allocates far more through malloc than the programs below.
shell_work='words=()
for i in $(seq 1 300); do
	w=$(printf "item-%04d" "$i")
	words+=("$w")
	declare -A seen
	seen[$w]=$i
done
[ ${#words[@]} -eq 300 ] || exit 9'

# 1. bash wrapper -> exec python3 (whatever python3 is on PATH: on a
#    machine with pyenv its shims add three more bash images to the chain).
json='import json
rows = [{"id": i, "name": "n%d" % i, "tags": ["a", "b", str(i % 7)], "score": i / 3} for i in range(3000)]
text = json.dumps(rows)
back = json.loads(text)
assert back == rows
print(len(text))'
cat > "$T/pywrap" <<SH
#!/bin/bash
$shell_work
exec python3 -c '$json'
SH
chmod +x "$T/pywrap"
"$U" record -o "$T/py.ustr" -- "$T/pywrap" >"$T/py.out" 2>"$T/py.err" ||
	{ cat "$T/py.err"; fail "record of the python3 wrapper"; }
[ "$(cat "$T/py.out")" -gt 100000 ] || fail "python3 workload did not run: $(cat "$T/py.out")"
rows "$T/py.ustr" > "$T/py.rows"
root=$(awk 'NR == 1 { print $2 }' "$T/py.rows")
# the situation: another image (the wrapper) allocated more than python3
read -r _ bpid _ _ ballocs bcomm _ < <(busiest "$T/py.rows")
[ "$(busiest "$T/py.rows")" != "$(chosen "$T/py.rows")" ] ||
	{ cat "$T/py.rows"; fail "python3 is the busiest process: the test shows nothing"; }
read -r mark pid ppid events allocs comm cmd < <(chosen "$T/py.rows") || fail "report marks no process"
echo "python3 wrapper: busiest $bcomm (pid $bpid, $ballocs allocations); chosen $comm (pid $pid, $allocs allocations): $cmd"
[ "$ballocs" -gt "$allocs" ] || fail "the wrapper allocated less than python3 ($ballocs <= $allocs)"
[ "$pid" = "$root" ] || fail "default process pid $pid, not the command's $root"
[ "$comm" = python3 ] || fail "default process is $comm, not python3"
arg0=${cmd%% *}
case ${arg0##*/} in python3*) ;; *) fail "default process runs $arg0, not python3: $cmd" ;; esac
case $cmd in *json.dumps*) ;; *) fail "default process's argv is not the workload: $cmd" ;; esac
# the argument's newlines are escaped: one row per process, no stray lines
case $cmd in *' -c import json\nrows = [{'*) ;; *) fail "argv newlines not shown as \\n: $cmd" ;; esac
! "$U" report "$T/py.ustr" 2>/dev/null | grep -q "^text = json.dumps" || fail "report prints argv's newlines raw"
"$U" script --header -n 0 "$T/py.ustr" > "$T/hdr" 2>/dev/null || fail "script --header"
grep -q '^# process: \* pid [0-9]* .* cmdline .*python3[^ ]* -c import json\\nrows = ' "$T/hdr" ||
	{ cat "$T/hdr"; fail "script --header: no escaped argv on the chosen process's line"; }
! grep -q "^text = json.dumps" "$T/hdr" || fail "script --header prints argv's newlines raw"
# it is the last image of the command's pid
last=$(awk -v p="$root" '$2 == p { row = $0 } END { print row }' "$T/py.rows")
[ "$(chosen "$T/py.rows")" = "$last" ] || fail "default is not the last image of pid $root: $last"
grep -q "the tools will read process $pid (python3): the program the command ran as" "$T/py.err" ||
	{ cat "$T/py.err"; fail "record does not say which process the tools read"; }
"$U" report "$T/py.ustr" 2>&1 >/dev/null | grep -q "^uslab report: process $pid (python3): the program the command ran as (its last exec), $allocs of " ||
	fail "report does not say it chose python3"
# replay and sim read the same process: its event count, its command line
"$U" replay "$T/py.ustr" >"$T/rp.out" 2>"$T/rp.err" || { cat "$T/rp.err"; fail "replay"; }
grep -q "^uslab replay: process $pid (python3): the program the command ran as" "$T/rp.err" ||
	{ cat "$T/rp.err"; fail "replay does not say it chose python3"; }
grep -q "^events: $events " "$T/rp.out" || { cat "$T/rp.out"; fail "replay did not replay python3's $events events"; }
"$U" sim "$T/py.ustr" >"$T/sim.out" 2>"$T/sim.err" || { cat "$T/sim.err"; fail "sim"; }
grep -q "^uslab sim: process $pid (python3): the program the command ran as" "$T/sim.err" ||
	{ cat "$T/sim.err"; fail "sim does not say it chose python3"; }
grep -q "^recorded: .*python3[^ ]* -c import json" "$T/sim.out" || { head -5 "$T/sim.out"; fail "sim did not simulate python3"; }
grep -q "^events: $events " "$T/sim.out" || { head -6 "$T/sim.out"; fail "sim did not read python3's $events events"; }
# --comm still reaches the wrapper
"$U" script --comm pywrap "$T/py.ustr" 2>"$T/sc.err" | head -1 >/dev/null
grep -q "(pywrap)" "$T/sc.err" || { cat "$T/sc.err"; fail "script --comm pywrap"; }

# 2. A small C program behind bash -> env; it forks a child that allocates
#    far more than it (the child is not the program: the command did not
#    exec into it).
#    (tests/tools/parent.c: 100 blocks of 24 + 8 i bytes, a child that
#    makes 20000 allocations)
gcc -O1 -o "$T/small" "$(dirname "$0")/parent.c"
cat > "$T/cwrap" <<SH
#!/bin/bash
$shell_work
exec env SMALL_LABEL=1 "$T/small" 100 24 8 fork:20000
SH
chmod +x "$T/cwrap"
"$U" record -q -o "$T/c.ustr" -- "$T/cwrap" >/dev/null 2>"$T/c.err" || { cat "$T/c.err"; fail "record cwrap"; }
rows "$T/c.ustr" > "$T/c.rows"
root=$(awk 'NR == 1 { print $2 }' "$T/c.rows")
read -r _ _ _ _ ballocs bcomm _ < <(busiest "$T/c.rows")
read -r mark pid ppid events allocs comm cmd < <(chosen "$T/c.rows") || fail "C: report marks no process"
echo "C wrapper: busiest $bcomm ($ballocs allocations); chosen $comm (pid $pid, $allocs allocations)"
[ "$pid" = "$root" ] && [ "$comm" = small ] || { cat "$T/c.rows"; fail "C: default is $comm pid $pid, not small pid $root"; }
[ "$ballocs" -gt 20000 ] || fail "C: the busiest image made $ballocs allocations"
[ "$allocs" -lt 1000 ] || fail "C: the program made $allocs allocations"
n=$("$U" script "$T/c.ustr" 2>/dev/null | awk '$4 == "malloc"' | wc -l)
[ "$n" -eq 100 ] || fail "C: $n mallocs in the default process, expected the program's 100"
"$U" replay "$T/c.ustr" 2>/dev/null | grep -q "^events: $events (malloc 100, free 100," ||
	fail "C: replay did not replay the program's events"
"$U" sim "$T/c.ustr" 2>/dev/null | grep -q "^recorded: $T/small" || fail "C: sim did not simulate the program"

# 3. Fallback: the command ends in an image that recorded nothing.
#    a. exec of a static program (not recorded): the busiest, and why
cat > "$T/st.c" <<'C'
#include <stdlib.h>
int main(void) { free(malloc(100)); return 0; }
C
gcc -static -O1 -o "$T/st" "$T/st.c"
"$U" record -q -o "$T/st.ustr" -- bash -c "$shell_work
exec $T/st" 2>"$T/st.err" || { cat "$T/st.err"; fail "record bash -> static"; }
rows "$T/st.ustr" > "$T/st.rows"
[ "$(chosen "$T/st.rows")" = "$(busiest "$T/st.rows")" ] || { cat "$T/st.rows"; fail "static leaf: default is not the busiest"; }
"$U" report "$T/st.ustr" 2>&1 >/dev/null |
	grep -q "(bash): the one with the most allocations, .* (the command ran as st, which was not recorded)" ||
	fail "static leaf: report does not say why it fell back"
#    b. exec of a program that allocates nothing (/bin/true)
"$U" record -q -o "$T/tr.ustr" -- bash -c "$shell_work
exec /bin/true" 2>"$T/tr.err" || { cat "$T/tr.err"; fail "record bash -> true"; }
rows "$T/tr.ustr" > "$T/tr.rows"
read -r _ _ _ _ tallocs _ < <(awk '$6 == "true"' "$T/tr.rows")
if [ "${tallocs:-x}" = 0 ]; then
	[ "$(chosen "$T/tr.rows")" = "$(busiest "$T/tr.rows")" ] || { cat "$T/tr.rows"; fail "empty leaf: default is not the busiest"; }
	"$U" report "$T/tr.ustr" 2>&1 >/dev/null | grep -q "(the command ran as true, which made no allocation)" ||
		fail "empty leaf: report does not say why it fell back"
else
	fail "/bin/true: expected an image with 0 allocations, table: $(cat "$T/tr.rows")"
fi
echo "record: the default process is the program the command ran as"
