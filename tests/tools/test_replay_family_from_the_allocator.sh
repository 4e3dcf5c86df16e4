#!/usr/bin/env bash
# `uslab replay -a LIB` replays every call of the malloc family on LIB,
# never on the C library behind it: a library without pvalloc (jemalloc
# 5.3 as Debian ships it has none) or valloc or memalign got those calls
# served by glibc, and its free() then took glibc's blocks: replay -a
# jemalloc of a trace with a pvalloc died of SIGSEGV, without a word. The
# calls LIB lacks are replayed on its own posix_memalign (or memalign, or
# aligned_alloc), and stderr names them. Here LIB is a shim that serves
# malloc, free, realloc, calloc and posix_memalign only, through a header
# it checks at every free: a block that is not its own aborts the run.
. "$(dirname "$0")/../lib.sh"

cat > "$T/shim.c" <<'C'
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define MAGIC 0x5e1f5e1f5e1f5e1fULL
extern void *__libc_malloc(size_t), *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
/* [base .. p): p - 16 the magic, p - 8 the base; p aligned to @align */
static void *own(size_t align, size_t n)
{
	char *base, *p;

	if (align < 16)
		align = 16;
	if (n > ((size_t)1 << 40))
		return NULL;
	base = __libc_memalign(align, n + align);
	if (!base)
		return NULL;
	p = base + align;
	((uint64_t *)p)[-2] = MAGIC;
	((void **)p)[-1] = base;
	return p;
}
void *malloc(size_t n) { return own(16, n); }
void *calloc(size_t k, size_t n)
{
	void *p = k && n > SIZE_MAX / k ? NULL : own(16, k * n);

	if (p)
		memset(p, 0, k * n);
	return p;
}
int posix_memalign(void **r, size_t a, size_t n)
{
	void *p = own(a, n);

	if (!p)
		return 12;
	*r = p;
	return 0;
}
void free(void *p)
{
	if (!p)
		return;
	if (((uint64_t *)p)[-2] != MAGIC) {
		static const char m[] = "shim: free of a block that is not mine\n";
		write(2, m, sizeof(m) - 1);
		abort();
	}
	((uint64_t *)p)[-2] = 0;
	__libc_free(((void **)p)[-1]);
}
size_t malloc_usable_size(void *p) { (void)p; return 0; }
void *realloc(void *p, size_t n)
{
	void *q;

	if (!p)
		return malloc(n);
	if (!n) {
		free(p);
		return NULL;
	}
	q = malloc(n);
	if (q) {
		memcpy(q, p, n < 16 ? n : 16);
		free(p);
	}
	return q;
}
C
cc -O1 -fPIC -shared -o "$T/libshim.so" "$T/shim.c" || fail "cc shim"

cat > "$T/prog.c" <<'C'
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
int main(void)
{
	for (int i = 0; i < 50; i++) {
		void *a = pvalloc(100 + i), *b = valloc(200), *c = memalign(64, 300);
		void *d = aligned_alloc(128, 256), *e = NULL;

		if (posix_memalign(&e, 256, 500))
			return 1;
		free(a);
		free(b);
		free(c);
		free(d);
		free(e);
	}
	return 0;
}
C
cc -O1 -o "$T/prog" "$T/prog.c" || fail "cc prog"
"$U" record -q -o "$T/t.ustr" -- "$T/prog" || fail "record"
n=$("$U" script "$T/t.ustr" | grep -c pvalloc) || true
[ "$n" -eq 50 ] || fail "the recording holds $n pvalloc events, not 50"

run_rc "$U" replay -a "$T/libshim.so" "$T/t.ustr" > "$T/out" 2> "$T/err"
[ "$rc" -eq 0 ] || fail "replay -a libshim.so: exit status $rc: $(tail -3 "$T/err")"
grep -q "^malloc from: .*libshim.so" "$T/out" || fail "malloc not from the shim: $(cat "$T/out")"
for f in pvalloc valloc memalign aligned_alloc; do
	grep -q "$f is not .*libshim.so's own" "$T/err" ||
		fail "stderr does not name $f as replayed on the shim's own calls: $(cat "$T/err")"
done
grep -q "posix_memalign is not" "$T/err" && fail "posix_memalign named, though the shim has it"
# glibc has all of them: nothing said
run_rc "$U" replay -a glibc "$T/t.ustr" > "$T/out" 2> "$T/err"
[ "$rc" -eq 0 ] || fail "replay -a glibc: exit status $rc"
grep -q "is not .* own" "$T/err" && fail "replay -a glibc names a call: $(cat "$T/err")"
echo "test_replay_family_from_the_allocator: ok"
