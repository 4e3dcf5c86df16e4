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

/* One debug cache per kmalloc class (kmalloc_info[]), same index. */
static struct kmem_cache *debug_caches[NR_KMALLOC_CLASSES];

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
	unsigned int i;

	if (malloc_debug)
		return 0;
	for_each_kmalloc_class(i) {
		unsigned int size = kmalloc_info[i].size;
		size_t pos = 0;

		if (debug_caches[i])
			continue;	/* a failed earlier call made it */
		uslab_bufprintf(name, sizeof(name), &pos, "malloc-debug-%u", size);
		debug_caches[i] = kmem_cache_create(name, size,
				size >= MALLOC_ALIGN ? MALLOC_ALIGN : 8, flags, NULL);
		if (!debug_caches[i]) {
			pr_err("malloc: debug: cannot create cache %s", name);
			return -ENOMEM;
		}
	}
	__atomic_store_n(&malloc_debug, true, __ATOMIC_RELEASE);
	/* malloc()'s one range check now sends every size to malloc_slow. */
	__atomic_store_n(&malloc_small_max, 0, __ATOMIC_RELEASE);
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
	if (size <= KMALLOC_MAX_CACHE_SIZE)
		p = kmem_cache_alloc(debug_caches[kmalloc_index(size)], gfp);
	else
		p = kmalloc(size, gfp);
	if (!p)
		errno = ENOMEM;
	return p;
}
