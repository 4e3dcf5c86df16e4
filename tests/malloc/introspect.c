// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_introspect.sh's program: holds known blocks and
 * asks the C library's introspection calls (and uslab_stats_print, when the
 * malloc in force has it) what they see. Output on stdout, in sections:
 *   mallinfo2 PHASE arena uordblks fordblks hblkhd
 *     (PHASE: start, holding, json, freed, trimmed: after one block of each
 *     of 1000 sizes up to 250,000 bytes was allocated and freed)
 *   <malloc ...>...</malloc>   (malloc_info, once, while holding)
 *   json {...}                 (uslab_stats_print "J", right after a mallinfo2)
 * malloc_stats() writes to stderr, as glibc's does.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char json[1 << 20];
static size_t json_len;

static void to_json(void *opaque, const char *text)
{
	size_t n = strlen(text);

	(void)opaque;
	if (json_len + n < sizeof(json)) {
		memcpy(json + json_len, text, n + 1);
		json_len += n;
	}
}

static void info(const char *phase)
{
	struct mallinfo2 m = mallinfo2();

	printf("mallinfo2 %s %zu %zu %zu %zu\n", phase, m.arena, m.uordblks, m.fordblks, m.hblkhd);
}

int main(void)
{
	void (*stats_print)(void (*)(void *, const char *), void *, const char *) =
		(void (*)(void (*)(void *, const char *), void *, const char *))
		dlsym(RTLD_DEFAULT, "uslab_stats_print");
	static void *small[4000];
	void *big;

	setvbuf(stdout, NULL, _IONBF, 0);
	info("start");
	for (int i = 0; i < 4000; i++)
		small[i] = malloc(100);
	big = malloc(8 << 20);
	memset(big, 1, 8 << 20);
	info("holding");
	if (malloc_info(0, stdout))
		return 1;
	if (malloc_info(1, stdout) != EINVAL)	/* as glibc */
		return 2;
	malloc_stats();
	if (stats_print) {
		info("json");
		stats_print(to_json, NULL, "J");
		printf("json %s", json);
		stats_print(NULL, NULL, "c");	/* text to stderr */
	}
	free(big);
	for (int i = 0; i < 4000; i++)
		free(small[i]);
	info("freed");
	/* one block of each of 1000 sizes up to 250,000 bytes, all freed */
	for (int i = 0; i < 1000; i++) {
		void *p = malloc((size_t)i * 250 + 1);

		if (!p)
			return 3;
		memset(p, 1, (size_t)i * 250 + 1);
		free(p);
	}
	malloc_trim(0);
	info("trimmed");
	return 0;
}
