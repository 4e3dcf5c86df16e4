// SPDX-License-Identifier: MIT
/*
 * Heap misuse for the debug option's test (tests/malloc/test_malloc_options.sh):
 *   misuse overflow	write one byte past the usable size, then free
 *   misuse uaf		write into a freed block, then allocate again
 *   misuse double	free the same block twice
 * Under USLAB_OPTIONS=debug the slab layer must report each on stderr.
 *
 * Hardened frees (tests/malloc/test_malloc_hardened.sh), default build, no option;
 * each prints "object 0x..." on stdout first:
 *   misuse double-next	free twice, then two mallocs: must stop before
 *			the second malloc returns (exit 3 if both return one
 *			block; a free only stores the mark)
 *   misuse double-late	free, 2000 other frees of the class (the block
 *			reaches the slab freelist), free again, mallocs:
 *			must stop before the block is handed out twice
 *   misuse interior	free(p + 16)
 *   misuse write-freed	free, a write into the block's first word,
 *			malloc: stops there, naming both causes (a write
 *			after free and a double free read alike)
 *   misuse double-large	a 1 MiB block (the page allocator's) freed twice
 *   misuse interior-large	free(p + 4096) of a 1 MiB block
 *   misuse foreign	free pointers that are not uslab's: ignored, exit 0
 * realloc and malloc_usable_size make free's checks (issue 20, finding 1):
 *   misuse realloc-freed	free, then realloc (exit 3 if the next malloc
 *				hands out the block realloc kept)
 *   misuse realloc-interior	realloc(p + 16, 100)
 *   misuse realloc-freed-large	a 1 MiB block freed, then realloc'ed
 *   misuse realloc-interior-large	realloc(p + 4 MiB, 16 MiB) of an 8 MiB block
 *   misuse usable-interior-large	malloc_usable_size(p + 4096) of a 1 MiB block
 *   misuse usable-freed	free, then malloc_usable_size
 *   misuse realloc-good	correct reallocs, small and large: exit 0
 *
 * Under USLAB_OPTIONS=debug (the red zone starts at the size asked, issue
 * 20 finding 4):
 *   misuse overflow-asked	malloc(24), write byte 24 (inside its 32-byte class)
 *
 * MISUSE_SIZE=N in the environment: the blocks are N bytes instead of 24
 * (a class whose free mark lies outside the block, above 1 KiB).
 */
#include <sys/mman.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	void *keep[64];
	/*
	 * A neighbour keeps the slab alive after p is freed: without per-CPU
	 * caches (nocache) an empty slab goes back to the page allocator at
	 * once, and a write to it or a second free is no longer a slab's.
	 */
	const char *env = getenv("MISUSE_SIZE");
	size_t sz = env ? strtoul(env, NULL, 0) : 24;
	void *neighbour = malloc(sz);
	char *p = malloc(sz);

	if (!p)
		return 2;
	memset(p, 'a', sz);
	if (!strcmp(mode, "overflow")) {
		p[malloc_usable_size(p)] = 'X';
		free(p);
	} else if (!strcmp(mode, "uaf")) {
		free(p);
		p[8] = 'X';
		/* Reuse the class until the poisoned block comes back. */
		for (int i = 0; i < 64; i++)
			keep[i] = malloc(sz);
		for (int i = 0; i < 64; i++)
			free(keep[i]);
	} else if (!strcmp(mode, "double")) {
		free(p);
		free(p);
	} else if (!strcmp(mode, "double-next")) {
		void *a, *b;

		printf("object %p\n", (void *)p);
		fflush(stdout);
		free(p);
		free(p);
		a = malloc(sz);
		b = malloc(sz);
		if (a == b)
			return 3;	/* handed out twice */
	} else if (!strcmp(mode, "write-freed")) {
		printf("object %p\n", (void *)p);
		fflush(stdout);
		free(p);
		memcpy(p, "overwrit", 8);	/* the free mark's word */
		if (malloc(sz) == p)
			return 3;	/* handed out with the write in it */
	} else if (!strcmp(mode, "double-late")) {
		static void *many[2000];

		for (int i = 0; i < 2000; i++)
			many[i] = malloc(sz);
		printf("object %p\n", (void *)p);
		fflush(stdout);
		free(p);
		for (int i = 0; i < 2000; i++)
			free(many[i]);
		free(p);
		/* p is in a magazine and on its slab's freelist: the second
		 * hand-out must stop (exit 3 if p comes back twice) */
		for (int i = 0, seen = 0; i < 4000; i++)
			if (malloc(sz) == p && ++seen == 2)
				return 3;
	} else if (!strcmp(mode, "interior")) {
		printf("object %p\n", (void *)(p + 16));
		fflush(stdout);
		free(p + 16);
		free(malloc(sz));
	} else if (!strcmp(mode, "double-large") || !strcmp(mode, "interior-large")) {
		char *big = malloc(1 << 20);
		char *at = mode[0] == 'd' ? big : big + 4096;

		if (!big)
			return 2;
		memset(big, 'b', 1 << 20);
		printf("object %p\n", (void *)at);
		fflush(stdout);
		if (mode[0] == 'd')
			free(big);
		free(at);
		free(malloc(1 << 20));
	} else if (!strcmp(mode, "overflow-asked")) {
		p[24] = 'X';
		free(p);
	} else if (!strcmp(mode, "realloc-freed") || !strcmp(mode, "usable-freed")) {
		char *q, *r;

		printf("object %p\n", (void *)p);
		fflush(stdout);
		free(p);
		if (mode[0] == 'u') {
			printf("usable %zu\n", malloc_usable_size(p));
			return 0;
		}
		q = realloc(p, 20);
		r = malloc(sz);
		if (q && q == r)
			return 3;	/* two owners */
	} else if (!strcmp(mode, "realloc-interior")) {
		printf("object %p\n", (void *)(p + 16));
		fflush(stdout);
		p = realloc(p + 16, 100);
	} else if (!strcmp(mode, "realloc-freed-large")) {
		char *big = malloc(1 << 20);

		if (!big)
			return 2;
		printf("object %p\n", (void *)big);
		fflush(stdout);
		free(big);
		big = realloc(big, 2 << 20);
	} else if (!strcmp(mode, "realloc-interior-large")) {
		char *big = malloc(8 << 20), *at;

		if (!big)
			return 2;
		memset(big, 'b', 8 << 20);
		at = big + (4 << 20);
		printf("object %p\n", (void *)at);
		fflush(stdout);
		at = realloc(at, 16 << 20);
	} else if (!strcmp(mode, "usable-interior-large")) {
		char *big = malloc(1 << 20);

		if (!big)
			return 2;
		printf("object %p\n", (void *)(big + 4096));
		fflush(stdout);
		printf("usable %zu\n", malloc_usable_size(big + 4096));
	} else if (!strcmp(mode, "realloc-good")) {
		char *q = realloc(p, 200), *big = malloc(3 << 20);

		if (!q || !big || malloc_usable_size(big) < (3 << 20) ||
		    malloc_usable_size(q) < 200)
			return 2;
		big = realloc(big, 9 << 20);
		q = realloc(q, 10);
		if (!q || !big || malloc_usable_size(big) < (9 << 20))
			return 2;
		free(big);
		p = q;
		free(p);
	} else if (!strcmp(mode, "foreign")) {
		static char data[64];
		char stack[64];
		void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		free(data + 16);
		free(stack);
		free(m);
		munmap(m, 4096);
		free(p);
	} else {
		free(p);
	}
	printf("done %s\n", mode);
	free(neighbour);
	return 0;
}
