#!/usr/bin/env bash
# uslab record: one file holds every process of the run (format 1.1 process
# table), for the cases that used to scatter or lose them: a pyenv-style
# wrapper chain (bash -> env -> interpreter), gcc -c (vfork), a program that
# uses posix_spawn and vfork, a static binary, a cleared LD_PRELOAD, and a
# process that outlives the command. The default process is the program
# the command ran as (tests/tools/test_record_default.sh tests that rule), and
# report/script/sim take --pid/--comm.
. "$(dirname "$0")/../lib.sh"

# only_file NAME: the run wrote exactly one trace (no FILE.<pid> siblings)
only_file() {
	[ "$(ls "$T" | grep -c "^$1")" -eq 1 ] || fail "$1: more than one file: $(ls "$T" | grep "^$1" | tr '\n' ' ')"
}
# procs TRACE: "pid ppid comm flags" per process, from the table
procs() { "$U" report "$1" 2>/dev/null | awk '/^# processes:/ { on = 1; getline; next } on && /^#/ { sub(/^# [* ] /, ""); print } /^$/ { on = 0 }'; }
# table_names TRACE WHAT COMM...: the table (printed, and kept in
# TRACE.procs) names every COMM
table_names() {
	local t=$1 what=$2 c
	shift 2
	procs "$t" > "$t.procs"
	cat "$t.procs"
	for c; do
		grep -q " $c " "$t.procs" || fail "$what: no process '$c' in the table"
	done
}
# default_comm TRACE: comm of the process the tools pick by default
default_comm() { "$U" report "$1" 2>/dev/null | awk '/^# \* / { print $9; exit }'; }

# 1. pyenv-style wrapper chain: a shim (bash) execs a second bash script,
#    which execs env, which execs the interpreter.
cat > "$T/shim" <<SH
#!/bin/bash
exec "$T/libexec-exec" "\$@"
SH
cat > "$T/libexec-exec" <<'SH'
#!/bin/bash
v=$(echo 3 | cut -c1)
exec env PYENV_VERSION=$v /usr/bin/python3 "$@"
SH
chmod +x "$T/shim" "$T/libexec-exec"
"$U" record -o "$T/py.ustr" -- "$T/shim" -c 'x = [bytes(2000) for i in range(20000)]' 2>"$T/py.err" ||
	{ cat "$T/py.err"; fail "record of the wrapper chain"; }
only_file py.ustr
table_names "$T/py.ustr" "wrapper chain" shim libexec-exec env python3 cut
[ "$(default_comm "$T/py.ustr")" = python3 ] || fail "wrapper chain: default process is $(default_comm "$T/py.ustr"), not python3"
"$U" report "$T/py.ustr" 2>&1 >/dev/null | grep -q "process .* (python3): the program the command ran as" ||
	fail "report does not say which process it chose"
# env's own events are reachable by name, and are few
n=$("$U" script --comm env "$T/py.ustr" 2>/dev/null | wc -l)
[ "$n" -gt 0 ] && [ "$n" -lt 5000 ] || fail "script --comm env: $n events"
"$U" sim --comm python3 "$T/py.ustr" >/dev/null 2>&1 || fail "sim --comm python3"

# 2. gcc -c: the driver vforks cc1 and as.
echo 'int f(int x) { return x * 2; }' > "$T/a.c"
"$U" record -q -o "$T/gcc.ustr" -- gcc -c "$T/a.c" -o "$T/a.o" || fail "record gcc -c"
only_file gcc.ustr
table_names "$T/gcc.ustr" "gcc -c" gcc cc1 as
# every recorded process has events (none is an empty "pid 0" file)
awk '$3 == 0 { bad = 1 } END { exit bad }' "$T/gcc.ustr.procs" || fail "gcc -c: a process without events"
# the command is the driver: it is the default, cc1 is one --comm away
[ "$(default_comm "$T/gcc.ustr")" = gcc ] || fail "gcc -c: default is $(default_comm "$T/gcc.ustr"), not gcc"
"$U" report --comm cc1 "$T/gcc.ustr" 2>/dev/null | awk '/^# \* / { print $9; exit }' | grep -qx cc1 ||
	fail "gcc -c: --comm cc1 does not select cc1"

# 3. posix_spawn and vfork: the program allocates most, its children exec.
#    (tests/tools/parent.c: 3000 blocks of 64 + i bytes held meanwhile)
gcc -O1 -o "$T/spawn" "$(dirname "$0")/parent.c"
"$U" record -q -o "$T/sp.ustr" -- "$T/spawn" 3000 64 1 spawn:/bin/true vfork:/bin/echo >/dev/null ||
	fail "record spawn"
only_file sp.ustr
table_names "$T/sp.ustr" spawn spawn true echo
[ "$(default_comm "$T/sp.ustr")" = spawn ] || fail "spawn: default is $(default_comm "$T/sp.ustr")"
n=$("$U" script "$T/sp.ustr" 2>/dev/null | awk '$4 == "malloc"' | wc -l)
[ "$n" -eq 3000 ] || fail "spawn: $n mallocs in the default process, expected 3000"

# 4. A static binary: a warning, and the table still names it.
cat > "$T/st.c" <<'C'
#include <stdlib.h>
int main(void) { free(malloc(100)); return 3; }
C
gcc -static -O1 -o "$T/st" "$T/st.c"
run_rc "$U" record -o "$T/st.ustr" -- "$T/st" 2>"$T/st.err"
cat "$T/st.err"
[ $rc -eq 3 ] || fail "static: exit $rc, expected the program's 3"
[ "$(grep -c 'warning: .*st is statically linked' "$T/st.err")" -eq 1 ] || fail "static: no one-line warning"
only_file st.ustr
procs "$T/st.ustr" | grep -q " st .*not recorded" || fail "static: table does not name it as not recorded"
[ "$(default_comm "$T/st.ustr")" = st ] || fail "static: default is not the program"

# 5. A command that clears LD_PRELOAD before exec: a warning naming it.
"$U" record -q -o "$T/env.ustr" -- env -u LD_PRELOAD /bin/true 2>"$T/env.err" || fail "record env -u"
grep -q "warning: /bin/true (pid [0-9]*) was started without LD_PRELOAD" "$T/env.err" ||
	{ cat "$T/env.err"; fail "cleared LD_PRELOAD: no warning"; }
procs "$T/env.ustr" | grep -q " true .*not recorded" || fail "cleared LD_PRELOAD: not in the table"

# 6. A process still running when the command exits: a warning, and it is
#    in the table, flagged, with what it did so far.
"$U" record -o "$T/bg.ustr" -- bash -c 'sleep 3 & sleep 0.5; exit 0' 2>"$T/bg.err" || fail "record bg"
cat "$T/bg.err"
grep -q "warning: 1 process still running when bash exited" "$T/bg.err" || fail "no still-running warning"
procs "$T/bg.ustr" | grep -q "still running" || fail "still-running process not flagged in the table"

# 6b. A process still running that the recorder never entered (forked by a
#     static program): the table has it all the same, flagged, from /proc.
cat > "$T/sfork.c" <<'C'
#include <unistd.h>
int main(void)
{
	if (fork() == 0) {
		sleep(3);
		_exit(0);
	}
	return 0;
}
C
gcc -static -O1 -o "$T/sfork" "$T/sfork.c"
"$U" record -o "$T/sf.ustr" -- "$T/sfork" 2>"$T/sf.err" || { cat "$T/sf.err"; fail "record sfork"; }
child=$(sed -n 's/.*still running when .* exited (pid \([0-9]*\)).*/\1/p' "$T/sf.err")
[ -n "$child" ] || { cat "$T/sf.err"; fail "sfork: no still-running warning"; }
procs "$T/sf.ustr" > "$T/sf.procs"
cat "$T/sf.procs"
if [ "$(wc -l < "$T/sf.procs")" -ne 2 ]; then
	# seen once in a make check under load (no table at all): say what
	# the recorder and the report said, to find why
	cat "$T/sf.err"
	"$U" report "$T/sf.ustr" 2>&1 | head -20
	fail "sfork: expected 2 processes in the table"
fi
grep -Eq "^ *$child .* sfork .*still running at the end" "$T/sf.procs" ||
	fail "sfork: the still-running child $child is not in the table, flagged"

# 7. Selection errors: a pid that is not there, a bad value.
set +e
"$U" report --pid 999999999 "$T/gcc.ustr" >/dev/null 2>"$T/e1"; r1=$?
"$U" script --pid abc "$T/gcc.ustr" >/dev/null 2>"$T/e2"; r2=$?
set -e
[ $r1 -eq 1 ] && grep -q "no process with pid 999999999" "$T/e1" || fail "--pid absent: exit $r1: $(cat "$T/e1")"
[ $r2 -eq 2 ] && grep -q -- "--pid: expected a process id" "$T/e2" || fail "--pid abc: exit $r2"

# 8. Format 1.0 traces (no process table) are still read.
"$U" report traces/gcc-O2-cc1.ustr 2>/dev/null | grep -q "format 1.0" || fail "1.0 trace not read"
echo "record: one file per run, every process in its table"
