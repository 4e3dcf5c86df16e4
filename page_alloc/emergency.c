// SPDX-License-Identifier: MIT
/*
 * Emergency mappings: memory for a signal handler that interrupted its own
 * thread inside the allocator (lib/sigsafe.h). That thread may hold any
 * allocator lock, so these blocks come straight from mmap (which takes
 * none of ours) and are remembered in a small fixed table, so that free(),
 * kfree(), realloc() and malloc_usable_size() know them later, from any
 * thread. They sit outside the reserved range: page_alloc_owns() is false
 * for them, and the callers that see a pointer they do not own ask here
 * before calling it foreign.
 *
 * In rseq mode a handler that allocates while its thread is in a slow
 * path is rare (a slow path is one call per magazine batch); in fallback
 * mode every call is a locked section, so most handler allocations that
 * interrupt an allocating thread come here (docs/percpu.md, "Signal
 * handlers that allocate", has the counts). The table is small; when it
 * is full the allocation fails with ENOMEM, as a GFP_ATOMIC one may.
 *
 * Locking: none. A slot's address word is claimed and released by CAS
 * (0 free, 1 being filled or emptied, else the block); the length is
 * written before the address is published.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include "page_alloc/internal.h"

#define PA_EMERG_SLOTS	64
#define PA_EMERG_BUSY	1UL

static struct {
	unsigned long addr;
	size_t bytes;
} pa_emerg[PA_EMERG_SLOTS];

/* Blocks now mapped: free() of a foreign pointer looks only when not 0. */
unsigned int page_alloc_emergency_count;
/* Blocks ever handed out (stats, tests). */
unsigned long page_alloc_emergency_total;

/*
 * A mapping of @bytes aligned to @align (a power of two, at least a page):
 * mapped @align - PAGE_SIZE larger, the ends beside the aligned block
 * unmapped again. Return: the block, or MAP_FAILED.
 */
static void *emerg_map(size_t bytes, size_t align)
{
	size_t extra = align - PAGE_SIZE, head;
	char *p;

	if (bytes + extra < bytes)
		return MAP_FAILED;
	p = mmap(NULL, bytes + extra, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || !extra)
		return p;
	head = (align - ((uintptr_t)p & (align - 1))) & (align - 1);
	if (head)
		munmap(p, head);
	if (extra - head)
		munmap(p + head + bytes, extra - head);
	return p + head;
}

/**
 * page_alloc_emergency_alloc - @size bytes (zeroed) aligned to @align
 * (a power of two; at least a page), from an own mapping outside the
 * reserved range.
 * Context: async-signal-safe; no lock, mmap and maybe munmap.
 * Return: the block, or NULL with errno ENOMEM (table full, mmap failed).
 */
void *page_alloc_emergency_alloc(size_t size, size_t align)
{
	size_t bytes = (size + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1);
	void *p;

	if (align < PAGE_SIZE)
		align = PAGE_SIZE;
	if (!size || bytes < size || (align & (align - 1)))
		goto nomem;
	for (unsigned int i = 0; i < PA_EMERG_SLOTS; i++) {
		unsigned long expect = 0;

		if (!__atomic_compare_exchange_n(&pa_emerg[i].addr, &expect,
						 PA_EMERG_BUSY, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		p = emerg_map(bytes, align);
		if (p == MAP_FAILED) {
			__atomic_store_n(&pa_emerg[i].addr, 0, __ATOMIC_RELEASE);
			goto nomem;
		}
		pa_emerg[i].bytes = bytes;
		__atomic_add_fetch(&page_alloc_emergency_count, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&pa_emerg[i].addr, (unsigned long)p, __ATOMIC_RELEASE);
		__atomic_add_fetch(&page_alloc_emergency_total, 1, __ATOMIC_RELAXED);
		return p;
	}
nomem:
	errno = ENOMEM;
	return NULL;
}

static int emerg_find(const void *p)
{
	if (!__atomic_load_n(&page_alloc_emergency_count, __ATOMIC_RELAXED))
		return -1;
	for (int i = 0; i < PA_EMERG_SLOTS; i++)
		if (__atomic_load_n(&pa_emerg[i].addr, __ATOMIC_ACQUIRE) ==
		    (unsigned long)p)
			return i;
	return -1;
}

/**
 * page_alloc_emergency_size - the usable size of emergency block @p.
 * Context: any; lock-free.
 * Return: its bytes, or 0 when @p is not an emergency block.
 */
size_t page_alloc_emergency_size(const void *p)
{
	int i = emerg_find(p);

	return i < 0 ? 0 : pa_emerg[i].bytes;
}

/**
 * page_alloc_emergency_free - unmap @p if it is an emergency block.
 * Context: any, also a signal handler; lock-free.
 * Return: true when @p was one (and is gone now).
 */
bool page_alloc_emergency_free(const void *p)
{
	int i = emerg_find(p);
	unsigned long expect = (unsigned long)p;

	if (i < 0 || !__atomic_compare_exchange_n(&pa_emerg[i].addr, &expect,
						  PA_EMERG_BUSY, false,
						  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;	/* not one, or another thread frees it now */
	munmap((void *)p, pa_emerg[i].bytes);
	__atomic_sub_fetch(&page_alloc_emergency_count, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&pa_emerg[i].addr, 0, __ATOMIC_RELEASE);
	return true;
}
