// SPDX-License-Identifier: MIT
/*
 * kmalloc: size classes 8, 16, 32, 64, 96, 128, 192, 256, ... up to
 * KMALLOC_MAX_CACHE_SIZE served by the kmalloc-N caches (created lazily on
 * first use, from the boot cache, never through malloc); larger requests go
 * to page_alloc: a buddy block up to MAX_PAGE_ORDER, a mapping of its own
 * above. Power-of-two classes are naturally aligned, debug or not.
 *
 * Locking: kmalloc-N creation takes slab_mutex (see slab.c); the caches
 * table is published with release stores and read with acquire loads, so
 * the fast path takes no lock.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <urcu/urcu-memb.h>
#include <urcu/rculist.h>
#include "slab/internal.h"

#define KMALLOC_SHIFT_HIGH	(__builtin_ctz(KMALLOC_MAX_CACHE_SIZE))

static const unsigned int kmalloc_sizes[] = {
	8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192,
	16384, 32768, 65536,
};
static const char *const kmalloc_names[] = {
	"kmalloc-8", "kmalloc-16", "kmalloc-32", "kmalloc-64", "kmalloc-96",
	"kmalloc-128", "kmalloc-192", "kmalloc-256", "kmalloc-512",
	"kmalloc-1k", "kmalloc-2k", "kmalloc-4k", "kmalloc-8k",
	"kmalloc-16k", "kmalloc-32k", "kmalloc-64k",
};
/* Index of the first class above 192 (256); classes double from there. */
#define KMALLOC_IDX_256		7
#define NR_KMALLOC_CACHES	(KMALLOC_IDX_256 + KMALLOC_SHIFT_HIGH - 8 + 1)

_Static_assert((CONFIG_KMALLOC_MAX_CACHE_SIZE &
		(CONFIG_KMALLOC_MAX_CACHE_SIZE - 1)) == 0,
	       "CONFIG_KMALLOC_MAX_CACHE_SIZE must be a power of two");

static struct kmem_cache *kmalloc_caches[ARRAY_SIZE(kmalloc_sizes)];

/* Sizes 1..192 in steps of 8 -> class index (the kernel's size_index). */
static const unsigned char size_index[24] = {
	0,			/* 8 */
	1,			/* 16 */
	2, 2,			/* 24, 32 */
	3, 3, 3, 3,		/* 40 .. 64 */
	4, 4, 4, 4,		/* 72 .. 96 */
	5, 5, 5, 5,		/* 104 .. 128 */
	6, 6, 6, 6, 6, 6, 6, 6,	/* 136 .. 192 */
};

/* Class of a size 1 .. KMALLOC_MAX_CACHE_SIZE: a table load or a clz. */
static __always_inline unsigned int kmalloc_index(size_t size)
{
	if (size <= 192)
		return size_index[(size - 1) / 8];
	return KMALLOC_IDX_256 + (unsigned int)(64 - __builtin_clzl(size - 1)) - 8;
}

static __slowpath struct kmem_cache *create_kmalloc_cache(unsigned int idx)
{
	struct kmem_cache *s;
	unsigned int size = kmalloc_sizes[idx];
	/* Natural alignment for power-of-two classes, as the kernel promises. */
	unsigned int align = (size & (size - 1)) ? 0 : size;

	struct kmem_cache *fresh;
	sigset_t all, old;

	slab_init();
	/*
	 * No signal handler may run on this thread while it holds slab_mutex:
	 * one that calls malloc for a class not yet created (programs do,
	 * though malloc is not async-signal-safe) would wait for slab_mutex
	 * forever. Blocked once per class, so the cost does not matter.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/*
	 * Allocate before taking slab_mutex: this allocation may be the first
	 * slow path of the process, which starts the percpu reaper thread, and
	 * pthread_create() calls malloc (the dtv) - with libuslab preloaded that
	 * is kmalloc of another class, which must be able to take slab_mutex.
	 */
	fresh = kmem_cache_zalloc(&kmem_cache_boot, GFP_KERNEL);
	pthread_mutex_lock(&slab_mutex);
	s = __atomic_load_n(&kmalloc_caches[idx], __ATOMIC_ACQUIRE);
	if (s) {
		if (fresh)
			kmem_cache_free(&kmem_cache_boot, fresh);
		goto out_unlock;
	}
	s = fresh;
	if (!s)
		goto out_unlock;
	if (__kmem_cache_create(s, kmalloc_names[idx], size, align,
				__SLAB_KMALLOC, NULL)) {
		/* Only an impossible layout fails; keep the struct simple. */
		kmem_cache_free(&kmem_cache_boot, s);
		s = NULL;
		errno = EINVAL;
		goto out_unlock;
	}
	cds_list_add_tail_rcu(&s->list, &slab_caches);
	__atomic_store_n(&kmalloc_caches[idx], s, __ATOMIC_RELEASE);
out_unlock:
	pthread_mutex_unlock(&slab_mutex);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return s;
}

/**
 * kmalloc_cache_get - the kmalloc cache of class @idx, created on first use.
 * Context: thread-safe; lock-free after the first call for @idx.
 * Return: the cache, or NULL with errno ENOMEM.
 */
struct kmem_cache *kmalloc_cache_get(unsigned int idx)
{
	struct kmem_cache *s = __atomic_load_n(&kmalloc_caches[idx],
					       __ATOMIC_ACQUIRE);

	if (likely(s))
		return s;
	return create_kmalloc_cache(idx);
}

struct kmem_cache *kmalloc_slab(size_t size)
{
	if (!size || size > KMALLOC_MAX_CACHE_SIZE)
		return NULL;
	return kmalloc_cache_get(kmalloc_index(size));
}

static unsigned int size_order(size_t size)
{
	if (size <= PAGE_SIZE)
		return 0;
	return (unsigned int)(64 - __builtin_clzl((size - 1) >> PAGE_SHIFT));
}

/*
 * Beyond the caches: a buddy block of the order covering max(size, align)
 * (buddy blocks are naturally aligned), or an own mapping with @align.
 */
static __slowpath void *kmalloc_large(size_t size, size_t align, gfp_t flags)
{
	size_t need = size > align ? size : align;
	unsigned int attempt = 0;
	void *p;

	if (unlikely(size > KMALLOC_MAX_SIZE)) {
		errno = ENOMEM;
		return NULL;
	}
	for (;;) {
		if (need <= (PAGE_SIZE << MAX_PAGE_ORDER)) {
			struct page *page = alloc_pages(flags & ~__GFP_NOFAIL,
							size_order(need));

			p = page ? page_address(page) : NULL;
		} else {
			p = alloc_pages_large(size, align > PAGE_SIZE ? align :
					      PAGE_SIZE, flags & ~__GFP_NOFAIL);
		}
		if (likely(p) || !(flags & __GFP_NOFAIL))
			break;
		slab_nofail_wait(attempt++);
	}
	if (!p) {
		if (!(flags & __GFP_NOWARN))
			pr_debug("kmalloc: out of memory for %zu bytes", size);
		errno = ENOMEM;
	}
	/* no lock held: may start page_alloc's decay thread */
	page_alloc_decayd_poll();
	return p;
}

/**
 * kmalloc - allocate @size bytes.
 * @flags: GFP flags; __GFP_ZERO zeroes, __GFP_NOFAIL never returns NULL.
 * Context: thread-safe; never calls malloc.
 * Return: the memory (aligned to its size for power-of-two sizes, to 8 at
 * least), ZERO_SIZE_PTR for @size 0, or NULL with errno ENOMEM.
 */
void *kmalloc(size_t size, gfp_t flags)
{
	struct kmem_cache *s;

	if (unlikely(!size))
		return ZERO_SIZE_PTR;
	if (likely(size <= KMALLOC_MAX_CACHE_SIZE)) {
		s = kmalloc_cache_get(kmalloc_index(size));
		return likely(s) ? slab_alloc_fast(s, flags) : NULL;
	}
	return kmalloc_large(size, PAGE_SIZE, flags);
}

void *kzalloc(size_t size, gfp_t flags)
{
	return kmalloc(size, flags | __GFP_ZERO);
}

/** kmalloc_array - @n * @size bytes; NULL (errno ENOMEM) on overflow. */
void *kmalloc_array(size_t n, size_t size, gfp_t flags)
{
	size_t bytes;

	if (unlikely(__builtin_mul_overflow(n, size, &bytes))) {
		errno = ENOMEM;
		return NULL;
	}
	return kmalloc(bytes, flags);
}

void *kcalloc(size_t n, size_t size, gfp_t flags)
{
	return kmalloc_array(n, size, flags | __GFP_ZERO);
}

/**
 * kmalloc_aligned - @size bytes aligned to @align (a power of two; up to
 * the largest buddy block by a block of that order, beyond by an own
 * mapping). Used by the malloc layer for memalign and friends.
 * Return: the memory, ZERO_SIZE_PTR for @size 0, or NULL with errno EINVAL
 * (@align not a power of two) or ENOMEM.
 */
void *kmalloc_aligned(size_t size, size_t align, gfp_t flags)
{
	size_t csize;

	if (unlikely(!align || (align & (align - 1)))) {
		errno = EINVAL;
		return NULL;
	}
	if (align <= ARCH_KMALLOC_MINALIGN || !size)
		return kmalloc(size, flags);
	csize = size > align ? size : align;
	if (csize <= KMALLOC_MAX_CACHE_SIZE) {
		/* A power-of-two class is aligned to its size. */
		csize = (size_t)1 << (64 - __builtin_clzl(csize - 1));
		if (csize <= KMALLOC_MAX_CACHE_SIZE) {
			struct kmem_cache *s = kmalloc_cache_get(kmalloc_index(csize));

			return likely(s) ? slab_alloc_fast(s, flags) : NULL;
		}
	}
	return kmalloc_large(size, align, flags);
}

static __slowpath void kfree_bad(const char *caller, const void *p,
				 const char *why)
{
	slab_bad_pointer(caller, "-", p, why, IS_ENABLED(CONFIG_SLAB_DEBUG_ON));
}

/**
 * kfree - free memory from kmalloc() and friends (any slab object, too).
 * NULL and ZERO_SIZE_PTR are ignored. A pointer uslab did not hand out is
 * reported and ignored (aborts under CONFIG_SLAB_DEBUG_ON).
 * Context: thread-safe.
 */
void kfree(const void *p)
{
	struct page *page;

	if (unlikely(ZERO_OR_NULL_PTR(p)))
		return;
	if (unlikely(!page_alloc_owns(p))) {
		kfree_bad("kfree", p, "not allocated by uslab");
		return;
	}
	page = compound_head(virt_to_page(p));
	if (likely(PageFlag(page, PG_slab))) {
		slab_free_fast(page->slab_cache, (void *)p);
		return;
	}
	if (unlikely(page_address(page) != p)) {
		kfree_bad("kfree", p, "inside a block");
		return;
	}
	if (PageFlag(page, PG_large))
		free_pages_large((void *)p);
	else if (PageFlag(page, PG_head))
		__free_pages(page, page->order);
	else
		kfree_bad("kfree", p, "not an allocated block");
	/* no lock held: may start page_alloc's decay thread */
	page_alloc_decayd_poll();
}

/**
 * ksize - usable size of a kmalloc() allocation (the class size, or the
 * whole block): the caller may use all of it.
 * Return: bytes, 0 for NULL and ZERO_SIZE_PTR.
 */
size_t ksize(const void *p)
{
	struct page *page;

	if (ZERO_OR_NULL_PTR(p) || !page_alloc_owns(p))
		return 0;
	page = compound_head(virt_to_page(p));
	if (PageFlag(page, PG_slab))
		return page->slab_cache->object_size;
	if (PageFlag(page, PG_large))
		return page->large_size;
	return PAGE_SIZE << page->order;
}

/**
 * krealloc - resize @p to @new_size, keeping the contents up to the smaller
 * size. In place when the new size fits the current allocation.
 * Return: the new memory; ZERO_SIZE_PTR (and @p freed) for @new_size 0;
 * NULL with errno ENOMEM, @p left untouched.
 */
void *krealloc(const void *p, size_t new_size, gfp_t flags)
{
	size_t ks;
	void *n;

	if (unlikely(!new_size)) {
		kfree(p);
		return ZERO_SIZE_PTR;
	}
	ks = ksize(p);
	if (ks >= new_size) {
		/* As the kernel before orig_size tracking: the slack is kept. */
		return (void *)p;
	}
	n = kmalloc(new_size, flags);
	if (!n)
		return NULL;
	if (ks)
		memcpy(n, p, ks);
	kfree(p);
	return n;
}

/** kfree_sensitive - clear the whole allocation, then kfree() it. */
void kfree_sensitive(const void *p)
{
	size_t ks = ksize(p);

	if (ks)
		explicit_bzero((void *)p, ks);
	kfree(p);
}
