// SPDX-License-Identifier: MIT
/*
 * The zone: the reserved range, its struct page map, the zone lock, the
 * return-to-OS policy, limits, statistics and buddyinfo.
 *
 * Locking:
 *   pa_zone.lock (a pthread mutex, statically initialised, so it works
 *   before anything else in a preloaded process) protects everything in
 *   struct pa_zone: free lists, free address ranges, buddy_top,
 *   large_bottom, the byte counts and counters, and the flags/order/union of
 *   every struct page that is free (PG_buddy, PG_reserved) or is the head of
 *   a block while it changes hands. A block's pages belong to its owner
 *   between alloc and free; the allocator only reads the flags and order
 *   of their head (merge check of a neighbour), which never shows PG_buddy
 *   while allocated and whose order is not written by the owner.
 *   It is only ever held inside a sigsafe section (pa_lock_irqsave,
 *   lib/sigsafe.h), so a signal handler that allocates never waits on its
 *   own thread: it sees the depth and takes no allocator lock. The
 *   per-CPU page lists' try-lock flags (pcp.c) nest outside it; nothing
 *   holding it takes a flag. The allocator never calls up into slab or
 *   malloc while holding it, and never calls malloc at all (the decay
 *   thread is created from page_alloc_decayd_start(), which the layers
 *   above call holding none of their locks). The only system call made under it is mprotect
 *   when a section grows (once per section); madvise, when the policy
 *   returns memory, runs outside it on a block isolated from the free
 *   lists (counted in bytes_isolated meanwhile).
 *
 *   page_alloc_base/end/map are written once, under the lock, before map is
 *   published with a release store; readers load map with acquire.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include "page_alloc/internal.h"

char *page_alloc_base;
char *page_alloc_end;
struct page *page_alloc_map;
unsigned char *page_alloc_tags;

struct pa_zone pa_zone = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/*
 * The range to try first: the configured size, but under a finite
 * RLIMIT_AS (ulimit -v) at most half the limit, so that the reservation
 * leaves room for the program's own mappings (stacks, libraries, a JVM's
 * heap) and does not fail outright when the limit is below the default.
 */
static size_t pa_reserve_want(void)
{
	size_t want = (size_t)CONFIG_PAGE_ALLOC_VA_RESERVE_GB << 30;
	struct rlimit rl;

	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		while (want > PA_MIN_RESERVE && want > rl.rlim_cur / 2)
			want >>= 1;
	return want;
}

/*
 * The base alignment of a reservation of @size bytes: 1 GiB, or for
 * smaller ones the largest power of two not above the size (still a
 * multiple of SECTION_SIZE, which is all the buddy arithmetic needs; own
 * mappings align by address).
 */
static size_t pa_base_align(size_t size)
{
	size_t align = PA_BASE_ALIGN;

	while (align > size && align > SECTION_SIZE)
		align >>= 1;
	return align;
}

static int pa_reserve_locked(void)
{
	size_t size, mapsz, align = PA_BASE_ALIGN;
	char *raw = MAP_FAILED, *base;
	void *map = MAP_FAILED, *tags = MAP_FAILED;
	unsigned int o;

	pa_assert_locked();
	/*
	 * Reserve address space only. A smaller range is tried when the
	 * configured one is refused (ulimit -v, valgrind, overcommit),
	 * down to PA_MIN_RESERVE.
	 */
	for (size = pa_reserve_want(); size >= PA_MIN_RESERVE; size >>= 1) {
		size = ALIGN_DOWN(size, SECTION_SIZE);
		align = pa_base_align(size);
		raw = mmap(NULL, size + align, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (raw == MAP_FAILED)
			continue;
		mapsz = (size >> PAGE_SHIFT) * sizeof(struct page);
		map = mmap(NULL, mapsz, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (map != MAP_FAILED)
			tags = mmap(NULL, size >> PAGE_SHIFT, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (tags != MAP_FAILED)
			break;
		if (map != MAP_FAILED)
			munmap(map, mapsz);
		munmap(raw, size + align);
		raw = MAP_FAILED;
		map = MAP_FAILED;
	}
	if (raw == MAP_FAILED)
		return -ENOMEM;

	/* Keep only the aligned part of the reservation. */
	base = (char *)ALIGN_UP((unsigned long)raw, align);
	if (base > raw)
		munmap(raw, (size_t)(base - raw));
	if (base + size < raw + size + align)
		munmap(base + size, (size_t)(raw + size + align - (base + size)));

	for (o = 0; o < NR_PAGE_ORDERS; o++)
		INIT_LIST_HEAD(&pa_zone.free_area[o]);
	INIT_LIST_HEAD(&pa_zone.large_free);
	INIT_LIST_HEAD(&pa_zone.large_dirty);
	pcplist_init_locked();
	pa_zone.buddy_top = base;
	pa_zone.large_bottom = base + size;
	pa_zone.limit = (size_t)CONFIG_PAGE_ALLOC_LIMIT_MB << 20;
	pa_zone.resident_free_max = (size_t)CONFIG_PAGE_ALLOC_RESIDENT_FREE_KB << 10;

	page_alloc_base = base;
	page_alloc_end = base + size;
	page_alloc_tags = tags;
	__atomic_store_n(&page_alloc_map, (struct page *)map, __ATOMIC_RELEASE);
	return 0;
}

/**
 * page_alloc_init - reserve the range and the struct page map.
 *
 * Idempotent: every entry point calls it; the first caller reserves under
 * the zone lock, later ones return after one acquire load.
 *
 * Context: thread-safe; takes the zone lock the first time. Never allocates.
 * Return: 0, or -ENOMEM when not even PA_MIN_RESERVE of address space
 * can be had.
 */
int page_alloc_init(void)
{
	int ret = 0;

	if (pa_initialized())
		return 0;
	pa_lock_irqsave();
	if (!pa_initialized())
		ret = pa_reserve_locked();
	pa_unlock_irqrestore();
	return ret;
}

/* Free memory that may be resident: buddy blocks and cached own mappings. */
size_t pa_free_resident_locked(void)
{
	pa_assert_locked();
	return pa_zone.bytes_free_resident + pa_zone.bytes_large_dirty;
}

bool pa_page_in_buddy(const struct page *page)
{
	return page >= page_alloc_map &&
	       (const char *)page_address(page) < pa_zone.buddy_top;
}

/*
 * Take the largest possibly-resident free block off its free list, so that
 * it can be given back to the OS without the lock held. Possibly-resident
 * blocks sit at the front of each list: the candidate of an order is its
 * first block.
 * Return: the block (@order and @resident filled in), or NULL if no free
 * block may be resident.
 */
static struct page *isolate_resident_locked(unsigned int *order,
					    unsigned int *resident)
{
	int o;

	pa_assert_locked();
	for (o = MAX_PAGE_ORDER; o >= 0; o--) {
		struct list_head *h = &pa_zone.free_area[o];
		struct page *page;

		if (list_empty(h))
			continue;
		page = list_first_entry(h, struct page, buddy_list);
		if (!page->buddy_resident)
			continue;
		*order = (unsigned int)o;
		*resident = page->buddy_resident;
		buddy_del_free_locked(page, (unsigned int)o);
		pa_zone.bytes_isolated += order_bytes((unsigned int)o);
		return page;
	}
	return NULL;
}

/*
 * The return policy: while more than @max_resident bytes of free memory may
 * be resident, give cached own mappings back (large_reclaim), then the
 * largest possibly-resident free block with
 * MADV_DONTNEED, at most @max_blocks of them (0: no bound). Each block is
 * isolated under the zone lock, returned without it (the madvise of a large
 * resident block takes long enough to stall every other thread), then freed
 * again as known-zero, merging as usual.
 *
 * Context: takes and drops the zone lock; the caller must not hold it.
 * Return: bytes given back (resident upper bounds of the blocks).
 */
size_t buddy_reclaim(size_t max_resident, unsigned int max_blocks)
{
	size_t returned;
	unsigned int n = 0;

	/* Cached own mappings first: the largest, and the least warm. */
	returned = large_reclaim(max_resident, max_blocks);
	for (;;) {
		unsigned int order, resident;
		struct page *page = NULL;
		void *addr;
		int ret;

		pa_lock_irqsave();
		if (pa_free_resident_locked() > max_resident &&
		    (!max_blocks || n < max_blocks))
			page = isolate_resident_locked(&order, &resident);
		pa_unlock_irqrestore();
		if (!page)
			break;

		/*
		 * DONTNEED on private anonymous memory: the pages are freed
		 * and read back as zeros, so the block is known-zero now.
		 */
		addr = page_address(page);
		ret = madvise(addr, order_bytes(order), MADV_DONTNEED);
		pa_probe(page_return, addr, order_bytes(order));

		pa_lock_irqsave();
		pa_zone.bytes_isolated -= order_bytes(order);
		buddy_free_block_locked(page, order, ret ? resident : 0);
		if (!ret)
			pa_stat_inc(trims);
		pa_unlock_irqrestore();
		if (ret)
			break;
		returned += (size_t)resident << PAGE_SHIFT;
		n++;
	}
	return returned;
}

/**
 * page_alloc_trim - give every free, possibly resident page back to the OS.
 *
 * Context: thread-safe; takes the zone lock per block, madvise outside it.
 * Return: bytes given back (an upper bound: pages that were never touched
 * are counted when they share a block with touched ones).
 */
size_t page_alloc_trim(void)
{
	size_t ret;

	if (pa_init_once())
		return 0;
	drain_all_pages(false);
	ret = buddy_reclaim(0, 0);
	pa_probe(trim, ret);
	return ret;
}

/**
 * page_alloc_set_limit - cap the bytes handed out (buddy blocks and own
 * mappings together).
 * @bytes: the cap; 0 removes it. A cap below what is already handed out
 *         makes every allocation fail until enough is freed.
 *
 * Context: thread-safe; takes the zone lock.
 * Return: the previous cap.
 */
size_t page_alloc_set_limit(size_t bytes)
{
	size_t old;

	if (pa_init_once())
		return 0;
	/* The per-CPU lists count against the cap: start from none. */
	drain_all_pages(false);
	pa_lock_irqsave();
	old = pa_zone.limit;
	pa_zone.limit = bytes;
	pa_unlock_irqrestore();
	return old;
}

/**
 * page_alloc_set_resident_free - set the watermark of the return policy.
 * @bytes: free memory that may stay resident; beyond it, the largest free
 *         blocks are given back at once.
 *
 * Context: thread-safe; takes the zone lock, may call madvise (outside it).
 */
void page_alloc_set_resident_free(size_t bytes)
{

	if (pa_init_once())
		return;
	pa_lock_irqsave();
	pa_zone.resident_free_max = bytes;
	pa_unlock_irqrestore();
	buddy_reclaim(bytes, 0);
}

/**
 * page_alloc_get_stats - a consistent snapshot of the zone's counters.
 * @st: filled in.
 *
 * Context: thread-safe; takes the zone lock. Never allocates.
 */
__visible void page_alloc_get_stats(struct page_alloc_stats *st)
{
	unsigned int o;
	size_t pcp;

	memset(st, 0, sizeof(*st));
	if (pa_init_once())
		return;
	pcp = pcplist_bytes();
	pcplist_stats(st->allocs, st->frees, &st->pages_fresh);
	pa_lock_irqsave();
	/* blocks on per-CPU lists are free memory to the caller */
	st->bytes_pcp = pcp;
	st->bytes_allocated_peak = pa_zone.bytes_allocated_peak;
	st->bytes_allocated = pa_zone.bytes_allocated - min_t(size_t, pcp, pa_zone.bytes_allocated);
	st->bytes_large_cached = pa_zone.bytes_large_dirty;
	st->bytes_free_resident = pa_zone.bytes_free_resident +
				  pa_zone.bytes_large_dirty + pcp;
	/* a block being returned right now counts as returned */
	st->bytes_free_returned = pa_zone.bytes_free + pa_zone.bytes_isolated -
				  pa_zone.bytes_free_resident;
	st->bytes_large = pa_zone.bytes_large;
	st->limit = pa_zone.limit;
	memcpy(st->nr_free, pa_zone.nr_free, sizeof(st->nr_free));
	for (o = 0; o < NR_PAGE_ORDERS; o++) {
		st->allocs[o] += pa_zone.allocs[o];
		st->frees[o] += pa_zone.frees[o];
	}
	st->splits = pa_zone.splits;
	st->merges = pa_zone.merges;
	st->trims = pa_zone.trims;
	st->enomem = pa_zone.enomem;
	st->large_reuse = pa_zone.large_reuse;
	st->large_maps = pa_zone.large_maps;
	st->pages_fresh += pa_zone.pages_fresh;
	pa_unlock_irqrestore();
	st->emergency = __atomic_load_n(&page_alloc_emergency_total, __ATOMIC_RELAXED);
}

__visible void page_alloc_reset_peak(void)
{

	if (pa_init_once())
		return;
	pa_lock_irqsave();
	pa_zone.bytes_allocated_peak = pa_zone.bytes_allocated;
	pa_unlock_irqrestore();
}

/**
 * page_alloc_buddyinfo - the zone in /proc/buddyinfo style, then totals.
 * @buf: output, always NUL-terminated when @len > 0.
 * @len: size of @buf.
 *
 * The first line is exactly /proc/buddyinfo's ("Node 0, zone %8s" then
 * "%6lu " per order); the lines after it are "name value unit" totals.
 *
 * Context: thread-safe; takes the zone lock. Never allocates.
 * Return: bytes written, not counting the NUL.
 */
size_t page_alloc_buddyinfo(char *buf, size_t len)
{
	struct page_alloc_stats st;
	size_t pos = 0;
	unsigned int o;

	if (!len)
		return 0;
	buf[0] = '\0';
	page_alloc_get_stats(&st);
	uslab_bufprintf(buf, len, &pos, "Node 0, zone %8s ", "uslab");
	for (o = 0; o < NR_PAGE_ORDERS; o++)
		uslab_bufprintf(buf, len, &pos, "%6lu ", st.nr_free[o]);
	uslab_bufprintf(buf, len, &pos, "\n");
	uslab_bufprintf(buf, len, &pos, "allocated %zu kB\n", st.bytes_allocated >> 10);
	uslab_bufprintf(buf, len, &pos, "large %zu kB\n", st.bytes_large >> 10);
	uslab_bufprintf(buf, len, &pos, "free_resident %zu kB\n", st.bytes_free_resident >> 10);
	uslab_bufprintf(buf, len, &pos, "free_returned %zu kB\n", st.bytes_free_returned >> 10);
	uslab_bufprintf(buf, len, &pos, "limit %zu kB\n", st.limit >> 10);
	uslab_bufprintf(buf, len, &pos, "pcp %zu kB\n", st.bytes_pcp >> 10);
	uslab_bufprintf(buf, len, &pos, "large_cached %zu kB\n",
			st.bytes_large_cached >> 10);
	uslab_bufprintf(buf, len, &pos,
			"splits %lu merges %lu trims %lu enomem %lu emergency %lu\n",
			st.splits, st.merges, st.trims, st.enomem, st.emergency);
	return pos;
}

/**
 * page_alloc_fork_prepare - take the zone lock before fork().
 *
 * With page_alloc_fork_parent/child, registered by the malloc layer with
 * pthread_atfork(), so that the child never inherits a lock held by a
 * thread that does not exist there.
 *
 * Context: pthread_atfork prepare handler; the caller's other allocator
 * locks must already be held (they nest outside this one).
 */
/* The forking thread's sigsafe depth before prepare: its child's after. */
static unsigned long pa_fork_depth;

void page_alloc_fork_prepare(void)
{
	page_alloc_init();
	pa_fork_depth = sigsafe.depth;
	pcplist_fork_prepare();
	pa_lock_irqsave();
}

/** page_alloc_fork_parent - release the locks after fork() in the parent. */
void page_alloc_fork_parent(void)
{
	pa_unlock_irqrestore();
	pcplist_fork_release();
}

/**
 * page_alloc_fork_child - re-initialise the zone lock in the child; the
 * state it protects is consistent because prepare held it. The per-CPU
 * lists' flags are released; the decay thread is not there.
 */
void page_alloc_fork_child(void)
{
	pthread_mutex_init(&pa_zone.lock, NULL);
	sigsafe.depth = pa_fork_depth;	/* prepare's section is not left */
	pcplist_fork_release();
	pa_decayd_fork_child();
}
