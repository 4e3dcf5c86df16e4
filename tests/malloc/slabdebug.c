// SPDX-License-Identifier: MIT
/*
 * Heap bugs for USLAB_OPTIONS=slab_debug=FZPU,kmalloc-64
 * (tests/slab/test_slab_debug.sh). Blocks of 50 bytes (kmalloc-64) are taken
 * by site_alloc() and given back by site_free(), exported (linked with
 * --export-dynamic) so that the report's call sites have names:
 *
 *   slabdebug overflow	write block[50], then free: red zone
 *   slabdebug uaf	free, write block[10], malloc again: poison
 *   slabdebug double	free twice
 *   slabdebug interior	free(block + 16)
 *   slabdebug realloc-freed	free, then realloc (site_realloc)
 *   slabdebug realloc-interior	realloc(block + 16, 60)
 *   slabdebug clean	correct use of 10000 blocks of many sizes: exit 0
 *
 * Prints "object 0x..." (and flushes) before the bug, "survived" if the
 * bug went unnoticed.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *site_alloc(size_t n);
void site_free(void *p);
void *site_realloc(void *p, size_t n);

__attribute__((__noinline__, __visibility__("default"))) void *site_alloc(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" ::: "memory");	/* no tail call */
	return p;
}

__attribute__((__noinline__, __visibility__("default"))) void site_free(void *p)
{
	free(p);
	__asm__ volatile("" ::: "memory");
}

__attribute__((__noinline__, __visibility__("default"))) void *site_realloc(void *p, size_t n)
{
	p = realloc(p, n);
	__asm__ volatile("" ::: "memory");
	return p;
}

static void show(const void *p)
{
	printf("object %p\n", p);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char *volatile p = site_alloc(50);

	if (!strcmp(mode, "overflow")) {
		show(p);
		p[50] = 'x';
		site_free(p);
	} else if (!strcmp(mode, "uaf")) {
		char *volatile keep = site_alloc(50);	/* keeps the slab */

		show(p);
		site_free(p);
		p[10] = 1;
		site_alloc(50);
		(void)keep;
	} else if (!strcmp(mode, "double")) {
		site_alloc(50);
		show(p);
		site_free(p);
		site_free(p);
	} else if (!strcmp(mode, "interior")) {
		show(p);
		site_free(p + 16);
	} else if (!strcmp(mode, "realloc-freed")) {
		site_alloc(50);
		show(p);
		site_free(p);
		site_realloc(p, 60);
	} else if (!strcmp(mode, "realloc-interior")) {
		show(p);
		site_realloc(p + 16, 60);
	} else if (!strcmp(mode, "clean")) {
		static char *blk[10000];
		size_t i;

		for (i = 0; i < 10000; i++) {
			size_t n = 1 + (i * 7919) % 3000;

			blk[i] = malloc(n);
			memset(blk[i], (int)i, n);
			if (malloc_usable_size(blk[i]) < n)
				return 3;
		}
		for (i = 0; i < 10000; i++)
			blk[i] = realloc(blk[i], 1 + (i * 104729) % 5000);
		for (i = 0; i < 10000; i++)
			free(blk[i]);
		site_free(p);
		return 0;
	} else {
		fprintf(stderr, "usage: slabdebug overflow|uaf|double|interior|"
			"realloc-freed|realloc-interior|clean\n");
		return 2;
	}
	puts("survived");
	return 0;
}
