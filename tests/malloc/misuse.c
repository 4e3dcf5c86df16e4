// SPDX-License-Identifier: MIT
/*
 * Heap misuse for the debug option's test (tests/test_malloc_options.sh):
 *   misuse overflow	write one byte past the usable size, then free
 *   misuse uaf		write into a freed block, then allocate again
 *   misuse double	free the same block twice
 * Under USLAB_OPTIONS=debug the slab layer must report each on stderr.
 */
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
	void *neighbour = malloc(24);
	char *p = malloc(24);

	if (!p)
		return 2;
	memset(p, 'a', 24);
	if (!strcmp(mode, "overflow")) {
		p[malloc_usable_size(p)] = 'X';
		free(p);
	} else if (!strcmp(mode, "uaf")) {
		free(p);
		p[8] = 'X';
		/* Reuse the class until the poisoned block comes back. */
		for (int i = 0; i < 64; i++)
			keep[i] = malloc(24);
		for (int i = 0; i < 64; i++)
			free(keep[i]);
	} else if (!strcmp(mode, "double")) {
		free(p);
		free(p);
	} else {
		free(p);
	}
	printf("done %s\n", mode);
	free(neighbour);
	return 0;
}
