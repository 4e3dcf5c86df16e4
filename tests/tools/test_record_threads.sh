#!/usr/bin/env bash
# uslab record -g with many short threads: each thread's table of call
# stacks is unmapped when the thread exits, so a program that runs 10000
# threads one after another keeps the recorder's memory flat (it used to
# keep a 48 KiB table per thread ever run: +468 MB of address space and
# +108 MB RSS over 9000 threads). What a thread allocates after the
# recorder's key destructor (in a later key's destructor) still carries its
# right call stack.
. "$(dirname "$0")/../lib.sh"

cat > "$T/threads.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_key_t late_key;

__attribute__((noinline)) static void *work(void *arg)
{
	char *volatile p = malloc(64 + (size_t)arg % 64);	/* SITE_WORK */

	p[0] = 1;
	free(p);
	pthread_setspecific(late_key, (void *)1);
	return NULL;
}

/* runs after the recorder's destructor (keys are destroyed in order) */
__attribute__((noinline)) static void late_dtor(void *v)
{
	char *volatile p = malloc(200);				/* SITE_LATE */

	(void)v;
	p[0] = 1;
	free(p);
}

static long status_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = atol(line + strlen(key) + 1);
	if (f)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	long vsz = 0, rss = 0;

	if (pthread_key_create(&late_key, late_dtor))
		return 1;
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, work, (void *)(long)i) || pthread_join(t, NULL))
			return 1;
		if (i == 999) {
			vsz = status_kb("VmSize");
			rss = status_kb("VmRSS");
		}
	}
	printf("%ld %ld %ld %ld\n", vsz, rss, status_kb("VmSize"), status_kb("VmRSS"));
	return 0;
}
C
gcc -O1 -g -pthread -o "$T/threads" "$T/threads.c"
work_line=$(grep -n SITE_WORK "$T/threads.c" | cut -d: -f1)
late_line=$(grep -n SITE_LATE "$T/threads.c" | cut -d: -f1)

"$U" record -q -g -o "$T/th.ustr" -- "$T/threads" 10000 > "$T/mem" || fail "record -g of 10000 threads"
read -r vsz1 rss1 vsz2 rss2 < "$T/mem"
echo "recorded process after 1000 threads: VmSize $vsz1 kB, VmRSS $rss1 kB; after 10000: VmSize $vsz2 kB, VmRSS $rss2 kB"
[ "$vsz1" -gt 0 ] && [ "$rss1" -gt 0 ] || fail "no memory figures: $(cat "$T/mem")"
[ $((vsz2 - vsz1)) -lt 16384 ] || fail "address space grew by $((vsz2 - vsz1)) kB over 9000 threads"
[ $((rss2 - rss1)) -lt 8192 ] || fail "RSS grew by $((rss2 - rss1)) kB over 9000 threads"

"$U" report --sort callsite "$T/th.ustr" > "$T/sites" 2>/dev/null || fail "report --sort callsite"
awk '/^# \* / { print $8 }' "$T/sites" | grep -qx 10001 || { head -4 "$T/sites"; fail "not 10001 threads in the table"; }
grep -Eq "^ +10000 .* work \(.*threads\.c:$work_line\)$" "$T/sites" ||
	{ cat "$T/sites"; fail "work's 10000 allocations not at threads.c:$work_line"; }
grep -Eq "^ +10000 +2000000 .* late_dtor \(.*threads\.c:$late_line\)$" "$T/sites" ||
	{ cat "$T/sites"; fail "the late destructor's 10000 allocations not at threads.c:$late_line"; }
echo "record -g: 10000 short threads, flat memory, every stack right"
