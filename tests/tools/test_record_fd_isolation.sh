#!/usr/bin/env bash
# Issue 20 finding 10: the recorder's descriptors stay out of the recorded
# program's way. A program that closes every descriptor (a close loop,
# close_range, closefrom, syscall(SYS_close_range), or its own syscall
# instruction the wrappers cannot see) and then opens a file, one that puts
# its file on every number with dup2 or on the recorder's own with dup2 or
# dup3, and a shell script doing
# `exec 3>file`: each file holds only what the program wrote, and the trace
# holds every event (3000 mallocs of 555 bytes after the descriptors were
# closed: more than one 32 KiB buffer, so blocks are written meanwhile).
. "$(dirname "$0")/../lib.sh"
set +e

count_size() {
	"$U" script "$1" 2>/dev/null | awk -v s="size=$2" '$4 == "malloc" && $0 ~ (s "( |$)")' | wc -l
}

cat > "$T/prog.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long raw_close_range(unsigned int lo, unsigned int hi)
{
#ifdef __x86_64__
	long ret;

	__asm__ volatile ("syscall" : "=a"(ret)
			  : "0"((long)SYS_close_range), "D"((long)lo), "S"((long)hi), "d"(0L)
			  : "rcx", "r11", "memory");
	return ret;
#else
	return syscall(SYS_close_range, lo, hi, 0);
#endif
}

int main(int argc, char **argv)
{
	const char *how = argv[1], *path = argv[2];
	char line[64];
	int fd;

	for (int i = 0; i < 500; i++)	/* some events before */
		if (!malloc(333))
			abort();
	if (!strcmp(how, "loop"))
		for (int i = 3; i < 4096; i++)
			close(i);
	else if (!strcmp(how, "close_range"))
		close_range(3, ~0u, 0);
	else if (!strcmp(how, "closefrom"))
		closefrom(3);
	else if (!strcmp(how, "syscall"))
		syscall(SYS_close_range, 3, ~0u, 0);
	else if (!strcmp(how, "asm"))
		raw_close_range(3, ~0u);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 2;
	if (!strcmp(how, "dup2"))	/* its file on the numbers 3-4095 */
		for (int i = 3; i < 4096; i++)
			if (i != fd)
				dup2(fd, i);
	if (!strcmp(how, "dup2-raw") || !strcmp(how, "dup3-raw")) {
		/* its file on the very number the recorder's raw file has */
		char link[64], target[512];

		for (int i = 3; i < 65536; i++) {
			ssize_t n;

			snprintf(link, sizeof(link), "/proc/self/fd/%d", i);
			n = readlink(link, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = 0;
			if (strstr(target, "/raw.")) {
				if (how[3] == '2' ? dup2(fd, i) < 0 : dup3(fd, i, 0) < 0)
					return 4;
				break;
			}
		}
	}
	for (int i = 0; i < 3000; i++) {
		if (!malloc(555))
			abort();
		if (i % 100 == 0) {
			int n = snprintf(line, sizeof(line), "line %d\n", i);

			if (write(fd, line, (size_t)n) != n)
				return 3;
		}
	}
	return 0;
}
C
gcc -O1 -o "$T/prog" "$T/prog.c" || fail "cannot build the test program"
for i in $(seq 0 100 2999); do echo "line $i"; done >"$T/expect"

for how in loop close_range closefrom syscall asm dup2 dup2-raw dup3-raw; do
	d=$T/$how; mkdir "$d"
	run_rc "$U" record -q -o "$d/t.ustr" -- "$T/prog" $how "$d/file" 2>"$d/err"
	[ $rc -eq 0 ] || { bad "$how: record exited $rc: $(cat "$d/err")"; continue; }
	cmp -s "$d/file" "$T/expect" ||
		bad "$how: the program's file holds more than it wrote ($(wc -c <"$d/file") bytes, $(wc -c <"$T/expect") written)"
	got=$(count_size "$d/t.ustr" 555)
	[ "$got" -eq 3000 ] || bad "$how: $got of the 3000 mallocs after the close in the trace"
	got=$(count_size "$d/t.ustr" 333)
	[ "$got" -eq 500 ] || bad "$how: $got of the 500 mallocs before the close in the trace"
done

# A shell script's `exec 3>file` (bash allocates as it runs the loop).
run_rc "$U" record -q -o "$T/sh.ustr" -- bash -c '
	exec 3>"$1"
	for i in $(seq 0 100 2999); do echo "line $i" >&3; x=$(printf "%0500d" $i); done
	exec 3>&-' sh "$T/sh.file" 2>"$T/sh.err"
[ $rc -eq 0 ] || bad "bash exec 3>file: record exited $rc: $(cat "$T/sh.err")"
cmp -s "$T/sh.file" "$T/expect" ||
	bad "bash exec 3>file: the file holds more than the script wrote ($(wc -c <"$T/sh.file") bytes)"
"$U" report "$T/sh.ustr" >/dev/null 2>&1 || bad "bash exec 3>file: the trace does not read"
exit $failed
