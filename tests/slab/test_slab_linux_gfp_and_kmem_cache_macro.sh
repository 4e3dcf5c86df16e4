#!/usr/bin/env bash
# Kernel code that allocates pages after `#include <linux/gfp.h>` (where the
# kernel declares alloc_pages, __get_free_pages, free_pages and their
# one-page forms) and makes its caches with KMEM_CACHE() from
# <linux/slab.h> compiles unchanged, with no implicit declaration, in C
# and in C++, and runs: the README says kernel code's own includes of those
# headers build against uslab. The shim <linux/gfp.h> once held the GFP
# flags alone, and <linux/slab.h> had no KMEM_CACHE.
. "$(dirname "$0")/../lib.sh"

cat > "$T/k.c" <<'C'
#include <linux/slab.h>
#include <linux/gfp.h>
#include <stdio.h>
#include <string.h>

struct conn {
	long id;
	char name[40];
} __attribute__((aligned(64)));

int main(void)
{
	struct kmem_cache *c = KMEM_CACHE(conn, SLAB_HWCACHE_ALIGN);
	struct conn *o;
	struct page *pg = alloc_pages(GFP_KERNEL, 2), *one = alloc_page(GFP_KERNEL);
	unsigned long a = __get_free_pages(GFP_KERNEL, 1), b = __get_free_page(GFP_KERNEL);
	unsigned long z = get_zeroed_page(GFP_KERNEL);
	char *zp = (char *)z;
	int zeroed = 1;

	if (!c || !pg || !one || !a || !b || !z)
		return 2;
	if (strcmp(kmem_cache_name(c), "conn") || kmem_cache_size(c) != sizeof(struct conn))
		return 3;
	o = (struct conn *)kmem_cache_alloc(c, GFP_KERNEL);
	if (!o || (unsigned long)o % 64)
		return 4;
	for (int i = 0; i < 4096; i++)
		zeroed &= !zp[i];
	memset(page_address(pg), 1, 4 * 4096);
	memset((void *)a, 2, 2 * 4096);
	memset((void *)b, 3, 4096);
	kmem_cache_free(c, o);
	kmem_cache_destroy(c);
	__free_pages(pg, 2);
	__free_page(one);
	free_pages(a, 1);
	free_page(b);
	free_page(z);
	printf("pages ok %d\n", zeroed);
	return 0;
}
C
kernel_c_and_cxx "$T/k.c" "pages ok 1"
echo "test_slab_linux_gfp_and_kmem_cache_macro: ok"
