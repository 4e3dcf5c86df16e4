#!/usr/bin/env bash
# Issue 20 finding 11: the recorder's buffered events survive every way a
# program leaves that the preload library can see: quick_exit, a raw
# exit_group or execve through syscall(), fexecve, execveat, and a handler
# that sets SIG_DFL back with sigset, bsd_signal or sysv_signal and
# re-raises. Each program makes 1000 mallocs of 777 bytes (fewer than one
# 32 KiB buffer: without a flush on the way out, none reaches the raw file).
# Not covered, because nothing in the process can see it: an exit_group or
# execve made by the program's own syscall instruction (documented in
# uslab-record(1)).
. "$(dirname "$0")/../lib.sh"
set +e

count_size() {
	"$U" script "$1" 2>/dev/null | awk -v s="size=$2" '$4 == "malloc" && $0 ~ (s "( |$)")' | wc -l
}

cat > "$T/prog.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;
typedef void (*handler_t)(int);
handler_t bsd_signal(int, handler_t);
handler_t sysv_signal(int, handler_t);
static handler_t (*setter)(int, handler_t);

static void reraise(int sig)
{
	setter(sig, SIG_DFL);
	raise(sig);
}

int main(int argc, char **argv)
{
	const char *how = argv[1];
	char *targv[] = { "true", NULL };
	int fd;

	for (int i = 0; i < 1000; i++)
		if (!malloc(777))
			abort();
	if (!strcmp(how, "quick_exit"))
		quick_exit(3);
	if (!strcmp(how, "exit_group"))
		syscall(SYS_exit_group, 3);
	if (!strcmp(how, "syscall_execve"))
		syscall(SYS_execve, "/bin/true", targv, environ);
	if (!strcmp(how, "fexecve")) {
		fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
		fexecve(fd, targv, environ);
	}
	if (!strcmp(how, "execveat"))
		execveat(AT_FDCWD, "/bin/true", targv, environ, 0);
	if (!strcmp(how, "sigset"))
		setter = sigset;
	if (!strcmp(how, "bsd_signal"))
		setter = bsd_signal;
	if (!strcmp(how, "sysv_signal"))
		setter = sysv_signal;
	if (setter) {
		setter(SIGTERM, reraise);
		raise(SIGTERM);
	}
	return 99;	/* the way out failed */
}
C
gcc -O1 -Wno-deprecated-declarations -o "$T/prog" "$T/prog.c" || fail "cannot build the test program"

for how in quick_exit exit_group syscall_execve fexecve execveat sigset bsd_signal sysv_signal; do
	d=$T/$how; mkdir "$d"
	run_rc "$U" record -q -o "$d/t.ustr" -- "$T/prog" $how 2>"$d/err"
	case $how in
	quick_exit|exit_group) want=3 ;;
	*_execve|fexecve|execveat) want=0 ;;
	*) want=143 ;;
	esac
	[ $rc -eq $want ] || { bad "$how: record exited $rc, not $want: $(cat "$d/err")"; continue; }
	got=$(count_size "$d/t.ustr" 777)
	[ "$got" -eq 1000 ] || bad "$how: $got of the 1000 mallocs in the trace"
done
exit $failed
