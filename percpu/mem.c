// SPDX-License-Identifier: MIT
/*
 * Memory for magazines, struct pcp_cpu and the per-cache arrays, from
 * page_alloc (never from malloc: this runs inside a preloaded malloc).
 *
 * Blocks below a page come from power-of-two classes of 64 .. 2048 bytes
 * carved out of order-0 pages and kept on a free list per class once
 * freed (their pages are not given back: the number of magazines is
 * bounded by CPUs x caches x 2 + depots). A page or more is a page_alloc
 * block of its own and goes straight back to it.
 *
 * Locks: pcp_mem_lock protects the class free lists. It is the innermost
 * lock of percpu/ (page_alloc's zone lock nests inside it).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include "lib/sigsafe.h"
#include "uslab/page_alloc.h"
#include "percpu/internal.h"

#define PCP_MEM_MIN_SHIFT	6
#define PCP_MEM_CLASSES		(PAGE_SHIFT - PCP_MEM_MIN_SHIFT)	/* 64..2048 */

struct pcp_free_block {
	struct pcp_free_block *next;
};

static pthread_mutex_t pcp_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pcp_free_block *pcp_mem_free_list[PCP_MEM_CLASSES];
static size_t pcp_page_bytes_held;	/* pcp_page_bytes() */

/* @bytes of page_alloc memory taken (> 0) or given back (< 0) by percpu. */
void pcp_page_bytes_add(long bytes)
{
	__atomic_add_fetch(&pcp_page_bytes_held, (size_t)bytes, __ATOMIC_RELAXED);
}

size_t pcp_page_bytes(void)
{
	return __atomic_load_n(&pcp_page_bytes_held, __ATOMIC_RELAXED);
}

static unsigned int pcp_size_shift(size_t size)
{
	unsigned int shift = PCP_MEM_MIN_SHIFT;

	while (((size_t)1 << shift) < size)
		shift++;
	return shift;
}

/**
 * pcp_mem_alloc - memory of @size bytes, aligned to its class (at least 64
 * bytes, a page for a page or more), its first @zero bytes zeroed.
 * @size: bytes wanted.
 * @zero: bytes to zero from the start (@size for all of it). A magazine
 *        asks for its header alone: its slots are written before they
 *        are read, and zeroing a 16-64 KiB block that page_alloc hands
 *        out resident (a magazine freed by a trim, then made again) wrote
 *        every page of it, where a magazine's objects reach only the pages
 *        its count does (docs/page_alloc.md "Fixed cost of a small
 *        program").
 * Context: thread-safe; takes pcp_mem_lock and page_alloc's lock.
 * Return: the block, or NULL with errno ENOMEM.
 */
void *pcp_mem_alloc(size_t size, size_t zero)
{
	unsigned int shift = pcp_size_shift(size);
	struct pcp_free_block *b;
	struct page *page;
	unsigned int cls;

	zero = min_t(size_t, zero, (size_t)1 << shift);
	if (shift >= PAGE_SHIFT) {
		unsigned int order = shift - PAGE_SHIFT;

		if (zero == (size_t)1 << shift) {
			page = alloc_pages(__GFP_ZERO | __GFP_NOWARN, order);
			if (!page)
				return NULL;
			b = page_address(page);
		} else {
			page = alloc_pages(__GFP_NOWARN, order);
			if (!page)
				return NULL;
			b = page_address(page);
			memset(b, 0, zero);
		}
		pcp_page_bytes_add((long)1 << shift);
		return b;
	}
	cls = shift - PCP_MEM_MIN_SHIFT;
	sigsafe_enter();
	pthread_mutex_lock(&pcp_mem_lock);
	b = pcp_mem_free_list[cls];
	if (!b) {
		size_t step = (size_t)1 << shift, off;
		char *base;

		page = alloc_pages(__GFP_NOWARN, 0);
		if (!page) {
			pthread_mutex_unlock(&pcp_mem_lock);
	sigsafe_exit();
			errno = ENOMEM;
			return NULL;
		}
		pcp_page_bytes_add(PAGE_SIZE);	/* never given back */
		base = page_address(page);
		/* the whole page becomes blocks of this class */
		for (off = PAGE_SIZE - step; off > 0; off -= step) {
			struct pcp_free_block *nb = (void *)(base + off);

			nb->next = pcp_mem_free_list[cls];
			pcp_mem_free_list[cls] = nb;
		}
		b = (void *)base;
	} else {
		pcp_mem_free_list[cls] = b->next;
	}
	pthread_mutex_unlock(&pcp_mem_lock);
	sigsafe_exit();
	memset(b, 0, zero);
	return b;
}

/** pcp_mem_free - give back a block of @size bytes from pcp_mem_alloc(). */
void pcp_mem_free(void *p, size_t size)
{
	unsigned int shift = pcp_size_shift(size);
	struct pcp_free_block *b = p;

	if (!p)
		return;
	if (shift >= PAGE_SHIFT) {
		__free_pages(virt_to_page(p), shift - PAGE_SHIFT);
		pcp_page_bytes_add(-((long)1 << shift));
		return;
	}
	sigsafe_enter();
	pthread_mutex_lock(&pcp_mem_lock);
	b->next = pcp_mem_free_list[shift - PCP_MEM_MIN_SHIFT];
	pcp_mem_free_list[shift - PCP_MEM_MIN_SHIFT] = b;
	pthread_mutex_unlock(&pcp_mem_lock);
	sigsafe_exit();
}

void pcp_mem_fork_prepare(void)
{
	pthread_mutex_lock(&pcp_mem_lock);
}

void pcp_mem_fork_parent(void)
{
	pthread_mutex_unlock(&pcp_mem_lock);
}

void pcp_mem_fork_child(void)
{
	pthread_mutex_init(&pcp_mem_lock, NULL);
}
