#!/usr/bin/env bash
# Kernel code that calls the kernel's other allocation helpers compiles
# unchanged against the shims, with no implicit declaration, in C and in
# C++, and gets what the kernel gives: kstrdup/kstrndup/kmemdup/kmemdup_nul
# and kstrdup_const/kfree_const (<linux/slab.h> here: see its comment),
# krealloc_array (NULL on overflow), kvmalloc/kvzalloc/kvcalloc/
# kvmalloc_array/kvrealloc/kvfree, the _node forms, and <linux/vmalloc.h>'s
# vmalloc/vzalloc/vcalloc/vfree. None of them existed before: such code
# did not compile.
. "$(dirname "$0")/../lib.sh"

cat > "$T/k.c" <<'C'
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct item { long a, b; };

static int zero(const void *p, size_t n)
{
	const unsigned char *c = (const unsigned char *)p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return 0;
	return 1;
}

int main(void)
{
	char *s = kstrdup("slab", GFP_KERNEL), *n = kstrndup("abcdef", 3, GFP_KERNEL);
	char *m = kmemdup_nul("xyz123", 3, GFP_KERNEL);
	const char *c = kstrdup_const("const", GFP_KERNEL);
	int *d, *v, *z, *kz, *ka;
	struct item *arr;
	struct kmem_cache *cache = kmem_cache_create("item", sizeof(struct item), 0, 0, NULL);
	struct item *it;
	static const int src[4] = { 1, 2, 3, 4 };

	if (!s || strcmp(s, "slab") || !n || strcmp(n, "abc") || !m || strcmp(m, "xyz") ||
	    !c || strcmp(c, "const") || kstrdup(NULL, GFP_KERNEL))
		return 2;
	d = (int *)kmemdup(src, sizeof(src), GFP_KERNEL);
	if (!d || memcmp(d, src, sizeof(src)))
		return 3;
	arr = (struct item *)kmalloc_array(2, sizeof(*arr), GFP_KERNEL);
	arr = (struct item *)krealloc_array(arr, 1000, sizeof(*arr), GFP_KERNEL);
	if (!arr || krealloc_array(arr, SIZE_MAX / 2, 4, GFP_KERNEL))
		return 4;
	arr[999].a = 7;
	v = (int *)kvmalloc(1 << 22, GFP_KERNEL);		/* 4 MiB */
	z = (int *)kvzalloc(100000, GFP_KERNEL);
	kz = (int *)kvcalloc(1000, sizeof(int), GFP_KERNEL);
	ka = (int *)kvmalloc_array(10, sizeof(int), GFP_KERNEL);
	if (!v || !z || !zero(z, 100000) || !kz || !zero(kz, 4000) || !ka ||
	    kvmalloc_array(SIZE_MAX / 2, 4, GFP_KERNEL))
		return 5;
	v[(1 << 20) - 1] = 9;
	v = (int *)kvrealloc(v, 8 << 20, GFP_KERNEL);
	if (!v || v[(1 << 20) - 1] != 9)
		return 6;
	it = (struct item *)kmem_cache_alloc_node(cache, GFP_KERNEL, NUMA_NO_NODE);
	if (!it || !kmalloc_node(8, GFP_KERNEL, 0) || !zero(kzalloc_node(64, GFP_KERNEL, 0), 64))
		return 7;
	{
		char *vm = (char *)vmalloc(1 << 20), *vz = (char *)vzalloc(70000);
		int *vc = (int *)vcalloc(100, sizeof(int));

		if (!vm || !vz || !zero(vz, 70000) || !vc || !zero(vc, 400))
			return 8;
		vm[(1 << 20) - 1] = 1;
		vfree(vm);
		vfree(vz);
		vfree(vc);
	}
	kmem_cache_free(cache, it);
	kmem_cache_destroy(cache);
	kfree(s);
	kfree(n);
	kfree(m);
	kfree_const(c);
	kfree(d);
	kfree(arr);
	kvfree(v);
	kvfree(z);
	kvfree(kz);
	kvfree_sensitive(ka, 10 * sizeof(int));
	printf("helpers ok\n");
	return 0;
}
C
kernel_c_and_cxx "$T/k.c" "helpers ok"
echo "test_slab_linux_kernel_helpers: ok"
