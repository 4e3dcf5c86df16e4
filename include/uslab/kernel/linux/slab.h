/* SPDX-License-Identifier: MIT */
/*
 * <linux/slab.h> for kernel code built against uslab, included unchanged:
 * `pkg-config --cflags uslab` gives the two include paths it needs
 * (<prefix>/include and <prefix>/include/uslab/kernel).
 */
#ifndef USLAB_LINUX_SLAB_H
#define USLAB_LINUX_SLAB_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "uslab/gfp.h"
#include "uslab/slab.h"

/* A cache named after its struct, of its size and alignment (the kernel's). */
#define KMEM_CACHE(__struct, __flags)					\
	kmem_cache_create(#__struct, sizeof(struct __struct),		\
			  __alignof__(struct __struct), (__flags), NULL)

/*
 * The kernel's other allocation helpers, as inline calls of the API above
 * (nothing new exported). One heap: kvmalloc()'s "virtually contiguous"
 * fallback is kmalloc() itself (it serves any size), and kvfree() is
 * kfree(). NUMA nodes do not exist here: the _node forms ignore @node.
 * kstrdup() and its family live in the kernel's <linux/string.h>; they
 * come with this header because a shim of that name would hide the
 * system's <linux/string.h> (a UAPI header of its own).
 */
#ifndef NUMA_NO_NODE
#define NUMA_NO_NODE	(-1)
#endif

static inline void *krealloc_array(void *p, size_t n, size_t size, gfp_t flags)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return krealloc(p, n * size, flags);
}

static inline void *kmemdup(const void *src, size_t len, gfp_t flags)
{
	void *p = kmalloc(len, flags);

	if (p)
		memcpy(p, src, len);
	return p;
}

static inline char *kmemdup_nul(const char *s, size_t len, gfp_t flags)
{
	char *p;

	if (!s || len == SIZE_MAX)
		return NULL;
	p = (char *)kmalloc(len + 1, flags);
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

static inline char *kstrdup(const char *s, gfp_t flags)
{
	return s ? (char *)kmemdup(s, strlen(s) + 1, flags) : NULL;
}

static inline char *kstrndup(const char *s, size_t max, gfp_t flags)
{
	return s ? kmemdup_nul(s, strnlen(s, max), flags) : NULL;
}

/* Always a copy here (no .rodata test): kfree_const() is kfree(). */
static inline const char *kstrdup_const(const char *s, gfp_t flags)
{
	return kstrdup(s, flags);
}

static inline void kfree_const(const void *p)
{
	kfree(p);
}

static inline void *kvmalloc(size_t size, gfp_t flags)
{
	return kmalloc(size, flags);
}

static inline void *kvzalloc(size_t size, gfp_t flags)
{
	return kzalloc(size, flags);
}

static inline void *kvmalloc_array(size_t n, size_t size, gfp_t flags)
{
	return kmalloc_array(n, size, flags);
}

static inline void *kvcalloc(size_t n, size_t size, gfp_t flags)
{
	return kcalloc(n, size, flags);
}

/* The kernel's since 6.12 (@p, new size, flags); krealloc() here. */
static inline void *kvrealloc(const void *p, size_t size, gfp_t flags)
{
	return krealloc(p, size, flags);
}

static inline void kvfree(const void *p)
{
	kfree(p);
}

static inline void kvfree_sensitive(const void *p, size_t len)
{
	(void)len;
	kfree_sensitive(p);
}

#define kmalloc_node(size, flags, node)		kmalloc((size), (flags))
#define kzalloc_node(size, flags, node)		kzalloc((size), (flags))
#define kcalloc_node(n, size, flags, node)	kcalloc((n), (size), (flags))
#define kmalloc_array_node(n, size, flags, node) \
	kmalloc_array((n), (size), (flags))
#define kvmalloc_node(size, flags, node)	kvmalloc((size), (flags))
#define kvzalloc_node(size, flags, node)	kvzalloc((size), (flags))
#define kmem_cache_alloc_node(s, flags, node)	kmem_cache_alloc((s), (flags))
#define kmem_cache_zalloc_node(s, flags, node)	kmem_cache_zalloc((s), (flags))

#endif /* USLAB_LINUX_SLAB_H */
