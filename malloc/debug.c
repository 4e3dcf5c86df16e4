// SPDX-License-Identifier: MIT
/*
 * USLAB_OPTIONS=debug: malloc from caches of its own, one per kmalloc class,
 * created with SLAB_POISON | SLAB_RED_ZONE | SLAB_CONSISTENCY_CHECKS, so the
 * slab layer's checks (use after free, overflow into the red zone, double
 * free, bad pointer) cover the program's heap. kfree() and ksize() find these
 * caches through struct page like any other, so free() and realloc() need no
 * second path. Sizes above the largest class go to kmalloc() unchanged.
 *
 * Locking: the caches are created once, from the constructor, before the
 * switch is turned on; after that the table is read-only.
 */
#include <errno.h>
#include <string.h>
#include "uslab/slab.h"
#include "lib/log.h"
#include "malloc/internal.h"

bool malloc_debug;

/* The kmalloc classes: 8, 16, 32, 64, 96, 128, 192, 256 ... max. */
#define DEBUG_NR_CLASSES	16
static struct kmem_cache *debug_caches[DEBUG_NR_CLASSES];
static unsigned int debug_sizes[DEBUG_NR_CLASSES];
static unsigned int debug_nr;

/**
 * malloc_debug_enable - create the debug caches and route malloc to them.
 * Context: constructor time, single-threaded in practice; not reentrant.
 * Return: 0, or -ENOMEM when a cache cannot be created (malloc then stays
 * on the ordinary caches).
 */
int malloc_debug_enable(void)
{
	static const slab_flags_t flags = SLAB_POISON | SLAB_RED_ZONE |
					  SLAB_CONSISTENCY_CHECKS;
	char name[32];
	unsigned int size;

	if (malloc_debug)
		return 0;
	for (size = 8; size <= KMALLOC_MAX_CACHE_SIZE; size *= 2) {
		unsigned int sizes[2] = { size, 0 };

		/* The kernel's two odd classes sit between 64/128 and 128/256. */
		if (size == 128 || size == 256)
			sizes[0] = size * 3 / 4, sizes[1] = size;
		for (unsigned int i = 0; i < 2 && sizes[i]; i++) {
			size_t pos = 0;

			if (debug_nr == DEBUG_NR_CLASSES)
				break;
			uslab_bufprintf(name, sizeof(name), &pos,
					"malloc-debug-%u", sizes[i]);
			debug_caches[debug_nr] = kmem_cache_create(name, sizes[i],
					sizes[i] >= MALLOC_ALIGN ? MALLOC_ALIGN : 8,
					flags, NULL);
			if (!debug_caches[debug_nr]) {
				pr_err("malloc: debug: cannot create cache %s", name);
				return -ENOMEM;
			}
			debug_sizes[debug_nr++] = sizes[i];
		}
	}
	__atomic_store_n(&malloc_debug, true, __ATOMIC_RELEASE);
	/* malloc()'s one range check now sends every size to malloc_slow. */
	__atomic_store_n(&malloc_fast_max, 0, __ATOMIC_RELEASE);
	return 0;
}

/**
 * malloc_debug_alloc - malloc() while the debug switch is on.
 * @size: bytes wanted (0 becomes 1).
 * @zero: clear the block (calloc).
 * Context: any thread; the caches are thread-safe.
 * Return: the block, or NULL with errno ENOMEM.
 */
void *malloc_debug_alloc(size_t size, bool zero)
{
	gfp_t gfp = GFP_KERNEL | __GFP_NOWARN | (zero ? __GFP_ZERO : 0);
	void *p = NULL;

	if (!size)
		size = 1;
	for (unsigned int i = 0; i < debug_nr; i++) {
		if (size <= debug_sizes[i]) {
			p = kmem_cache_alloc(debug_caches[i], gfp);
			goto out;
		}
	}
	p = kmalloc(size, gfp);
out:
	if (!p)
		errno = ENOMEM;
	return p;
}
