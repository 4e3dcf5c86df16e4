#!/usr/bin/env bash
# `uslab record` of a dynamically linked program that defines malloc
# itself (as one linked with libuslab.a by README's static line does, or
# one with a static jemalloc): the program's malloc is found before the
# preloaded recorder's, so neither its calls nor the C library's reach the
# recorder. Before (journey8's finding) the trace was empty and the summary
# said "0 events" without a word of why; now a warning names the process
# and the object whose malloc it runs on. A program on the C library's
# malloc, and one run by a shell, get no such warning. `record -p` (GOT
# slots) says the program's own calls are not recorded, and says nothing
# of a program on the C library's malloc.
. "$(dirname "$0")/../lib.sh"

cat >"$T/own.c" <<'C'
/* A bump allocator of its own: malloc and friends defined in the program. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char *arena, *top;
static size_t used;

static void *bump(size_t align, size_t n)
{
	uintptr_t p;

	if (!arena) {
		arena = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (arena == MAP_FAILED)
			return arena = NULL;
		top = arena;
	}
	if (align < 16)
		align = 16;
	p = ((uintptr_t)top + align - 1) & ~(uintptr_t)(align - 1);
	if (n > (64u << 20) || p + n > (uintptr_t)arena + (64u << 20)) {
		errno = ENOMEM;
		return NULL;
	}
	top = (char *)(p + n);
	used += n;
	return (void *)p;
}
void *malloc(size_t n) { return bump(16, n); }
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b) { return a && b > SIZE_MAX / a ? NULL : bump(16, a * b); }
void *realloc(void *p, size_t n) { void *q = bump(16, n); if (q && p) memmove(q, p, n); return q; }
void *memalign(size_t a, size_t n) { return bump(a, n); }
void *aligned_alloc(size_t a, size_t n) { return bump(a, n); }
int posix_memalign(void **r, size_t a, size_t n) { *r = bump(a, n); return *r ? 0 : ENOMEM; }
void *valloc(size_t n) { return bump(4096, n); }
void *pvalloc(size_t n) { return bump(4096, (n + 4095) & ~(size_t)4095); }
size_t malloc_usable_size(void *p) { (void)p; return 0; }

int main(int argc, char **argv)
{
	if (argc > 1) {		/* -p: wait to be attached to, then end */
		puts("ready");
		fflush(stdout);
		for (int i = 0; i < 3000; i++) {	/* killed once recorded */
			char *volatile p = malloc(10);
			(void)p;
			usleep(10000);
		}
	}
	for (int i = 0; i < 1000; i++) {
		char *p = malloc(100);

		if (!p)
			return 1;
		strcpy(p, "x");
		free(p);
	}
	char *s = strdup("the C library's calls come here too");
	printf("own malloc: %zu bytes\n", used + (s ? 0 : 1) * 0);
	return 0;
}
C
cc -O1 -o "$T/own" "$T/own.c" || fail "could not build the own-malloc program"
# the program itself must run on its own malloc (else this test proves nothing)
out=$("$T/own") || fail "the own-malloc program failed"
case "$out" in "own malloc: "[1-9]*) ;; *) fail "the program's malloc is not its own: '$out'" ;; esac

run_rc "$U" record -o "$T/own.ustr" -- "$T/own" >"$T/out" 2>"$T/err"
[ "$rc" = 0 ] || { cat "$T/err"; fail "record of the own-malloc program: exit $rc"; }
grep -q '^own malloc: ' "$T/out" || fail "record: the program's output is missing"
pid=$("$U" report "$T/own.ustr" 2>/dev/null | awk '$1 == "#" && $2 == "*" { print $3 }')
[ -n "$pid" ] || fail "no process in the trace's table"
grep -qF "uslab record: warning: pid $pid runs on the malloc of $T/own, found before the recorder's: the calls it serves are not recorded" "$T/err" ||
	{ cat "$T/err"; fail "record said nothing of the program's own malloc (pid $pid)"; }
[ "$(grep -c 'found before the recorder' "$T/err")" = 1 ] ||
	{ cat "$T/err"; fail "the warning is not given exactly once"; }

# One image of several: sh runs on the C library's malloc (recorded, no
# warning), then execs the own-malloc program (warned).
run_rc "$U" record -q -o "$T/sh.ustr" -- sh -c "ls / >/dev/null; exec $T/own" >"$T/out" 2>"$T/err"
[ "$rc" = 0 ] || { cat "$T/err"; fail "record of sh then the program: exit $rc"; }
[ "$(grep -c 'found before the recorder' "$T/err")" = 1 ] ||
	{ cat "$T/err"; fail "sh + the own-malloc program: expected one warning"; }
"$U" report --comm sh "$T/sh.ustr" 2>/dev/null | grep -qE '^  allocations [1-9]' ||
	fail "sh's own allocations (C library's malloc) were not recorded"

# A program on the C library's malloc: no warning.
cat >"$T/plain.c" <<'C'
#include <stdlib.h>
int main(void) { for (int i = 0; i < 100; i++) { char *volatile p = malloc(i + 1); free(p); } return 0; }
C
cc -O1 -o "$T/plain" "$T/plain.c" || fail "could not build the plain program"
run_rc "$U" record -q -o "$T/plain.ustr" -- "$T/plain" 2>"$T/err"
[ "$rc" = 0 ] || { cat "$T/err"; fail "record of a plain program: exit $rc"; }
grep -q 'found before the recorder' "$T/err" && { cat "$T/err"; fail "a plain program was said to run on its own malloc"; }
"$U" report "$T/plain.ustr" 2>/dev/null | grep -qE '^  allocations [1-9]' ||
	fail "the plain program's allocations were not recorded"
# record -p: the GOT slots catch other objects' calls, not the program's
# own calls of the malloc it defines: said once; a plain program: nothing.
command -v gdb >/dev/null || fail "gdb not installed (scripts/deps.sh tools)"
attach() {	# attach PROG: record -p PROG wait for 1 s, stderr in $T/err
	"$1" wait >"$T/p.out" &
	pid=$!
	for _ in $(seq 100); do grep -q ready "$T/p.out" 2>/dev/null && break; sleep 0.05; done
	grep -q ready "$T/p.out" || { kill $pid; fail "$1 did not start"; }
	probe=$(gdb -nx -batch -p "$pid" -ex detach 2>&1 || true)
	case $probe in
	*"Operation not permitted"*) kill $pid; skip "ptrace is not permitted here (the preload half passed)" ;;
	esac
	run_rc "$U" record -q -p "$pid" --duration 1 -o "$T/p.ustr" 2>"$T/err"
	kill $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	[ "$rc" = 0 ] || { cat "$T/err"; fail "record -p $1: exit $rc"; }
}
cat >"$T/plainwait.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
	puts("ready");
	fflush(stdout);
	for (int i = 0; i < 3000; i++) { char *volatile p = malloc(10); free(p); usleep(10000); }
	return 0;
}
C
cc -O1 -o "$T/plainwait" "$T/plainwait.c" || fail "could not build plainwait"
attach "$T/own"
grep -qF "uslab record: warning: pid $pid defines malloc itself ($T/own): its own calls of it pass no GOT slot and are not recorded" "$T/err" ||
	{ cat "$T/err"; fail "record -p said nothing of the program's own malloc"; }
attach "$T/plainwait"
grep -q 'malloc itself\|found before the recorder' "$T/err" && { cat "$T/err"; fail "record -p of a plain program warned of its own malloc"; }
"$U" report "$T/p.ustr" 2>/dev/null | grep -qE '^  allocations [1-9]' ||
	fail "record -p of the plain program recorded no allocation"
echo "PASS: record names a program's own malloc, once, preloaded and with -p; plain programs unchanged"
