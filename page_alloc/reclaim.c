// SPDX-License-Identifier: MIT
/*
 * Giving memory back to the OS, all of it here: the return policy's
 * allowance (the fixed watermark and the share that grows with the heap,
 * the kernel's watermarks), the extent cache's own allowance and release
 * (cached own mappings unmapped, least recently freed first), the buddy
 * blocks given back (buddy_reclaim, largest first, madvise outside the
 * lock), decay (page_alloc_decay, the decay thread's ticks), trim
 * (page_alloc_trim) and the watermark's setters. The entry points call in:
 * a free over the allowance (buddy.c, large.c, pagelist.c: pa_over_allowance_
 * locked then pa_reclaim_after_free), an own mapping handed out (large.c:
 * pa_large_allocated_locked), every hand-out (pa_add_allocated_locked).
 *
 * The decay work (the kernel's kswapd, in spirit): free memory that a
 * program stops using goes back to the OS within about
 * CONFIG_PAGE_ALLOC_DECAY_MS, whichever layers sit above. It belongs to
 * page_alloc, so a build without per-CPU magazines (the nocache preset,
 * debug caches) decays as the default one does. It is a periodic work of
 * lib/cpuclock.h, a tick every quarter period (pa_decay_tick): the real
 * backend runs it on a thread of its own (the decay thread), the virtual
 * one (the simulator's library) at the virtual clock's deadlines, so a
 * simulation decays as the library does, on virtual time.
 *
 * Starting it: pthread_create may call malloc, so it cannot start inside
 * page_alloc (callers hold slab and percpu locks there). The first free
 * that finds free resident memory over the fixed watermark only marks it
 * wanted (pa_decayd_kick); page_alloc_decayd_poll(), called by the layers
 * above at points where they hold none of their locks (the slab layer's
 * unbatched alloc and free, kmalloc's large paths, the percpu reaper's
 * start and passes), starts it. The thread runs with every signal blocked
 * and is detached: it only waits and calls pa_decay_tick(), which takes
 * the zone lock like any caller, so exit may find it anywhere. A fork
 * child has none (its state goes back to "not started"; the next poll
 * there starts one if the child frees enough).
 *
 * Without it (not yet started, a fork child, pthread_create refused,
 * reaper_ms=0, `uslab sim --no-reaper`) the allowance is the fixed
 * watermark only: nothing would give a larger share back.
 *
 * Locking: the allowance's state (the sliding peaks) is under pa_zone.lock
 * (zone.c); a block or mapping being given back is isolated under it and
 * returned (madvise, mmap PROT_NONE) without it. The decay work's state
 * is one atomic word, the decay agent flag another; lib/cpuclock.c orders
 * the work's thread.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include "lib/cpuclock.h"
#include "lib/thread.h"
#include "page_alloc/internal.h"

/* lib/thread.h's states; OFF: pthread_create refused, reaper_ms=0, sim --no-reaper */
enum {
	DECAYD_NONE	= USLAB_THREAD_NONE,	/* not wanted yet */
	DECAYD_WANTED	= USLAB_THREAD_WANTED,	/* something to decay: start at the next poll */
	DECAYD_RUNNING	= USLAB_THREAD_RUNNING,
	DECAYD_OFF	= USLAB_THREAD_OFF,
};
_Static_assert(DECAYD_WANTED == PAGE_ALLOC_DECAYD_WANTED,
	       "page_alloc_decayd_poll() tests the value in the public header");

int page_alloc_decayd_state;

static void pa_decay_run(void)
{
	pa_decay_tick();
}

/* Four ticks per period: the recent peak is the highest of the last four (decay_high_locked). */
static struct uslab_periodic pa_decay_work = {
	.name = "page_alloc decay",
	.fn = pa_decay_run,
	.state = &page_alloc_decayd_state,
	.period_ns = (uint64_t)CONFIG_PAGE_ALLOC_DECAY_MS * 1000000u / 4,
	.detached = true,
	.stack = 64 << 10,
};

/*
 * Mark the decay work wanted (a free went over the fixed watermark).
 * Context: any, also under the caller's locks: one load, maybe one CAS.
 */
void pa_decayd_kick(void)
{
	int expected = DECAYD_NONE;

	if (__atomic_load_n(&page_alloc_decayd_state, __ATOMIC_RELAXED) != DECAYD_NONE)
		return;
	__atomic_compare_exchange_n(&page_alloc_decayd_state, &expected, DECAYD_WANTED,
				    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/**
 * page_alloc_decayd_start - start the decay work if a free asked for it.
 *
 * The body of page_alloc_decayd_poll() (include/uslab/page_alloc.h).
 * Context: the caller holds no allocator lock (pthread_create may call
 * malloc). Thread-safe: one caller starts it.
 */
void page_alloc_decayd_start(void)
{
	int r = uslab_periodic_start(&pa_decay_work, DECAYD_WANTED);

	if (!r)
		page_alloc_set_decay_agent(true);
	else if (r > 0)
		pr_info("page_alloc: no decay thread (error %d); free memory "
			"beyond the watermark goes back at once", r);
}

/**
 * page_alloc_decayd_disable - never start the decay thread (the malloc
 * layer's reaper_ms=0: no background thread at all, as `uslab sim
 * --no-reaper`, whose counts a real run then matches). Without an agent
 * only the fixed watermark applies. A thread already running stays.
 * Context: any; lock-free.
 */
void page_alloc_decayd_disable(void)
{
	int cur = __atomic_load_n(&page_alloc_decayd_state, __ATOMIC_RELAXED);

	while ((cur == DECAYD_NONE || cur == DECAYD_WANTED) &&
	       !__atomic_compare_exchange_n(&page_alloc_decayd_state, &cur,
					    DECAYD_OFF, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* In a fork child: the thread is not there (OFF stays OFF). */
void pa_decayd_fork_child(void)
{
	page_alloc_set_decay_agent(false);
	if (__atomic_load_n(&page_alloc_decayd_state, __ATOMIC_RELAXED) != DECAYD_OFF)
		__atomic_store_n(&page_alloc_decayd_state, DECAYD_NONE, __ATOMIC_RELAXED);
}

/** page_alloc_decayd_running - whether the decay thread runs. */
bool page_alloc_decayd_running(void)
{
	return __atomic_load_n(&page_alloc_decayd_state, __ATOMIC_ACQUIRE) ==
	       DECAYD_RUNNING;
}

/*
 * The return policy's allowance grows with the heap (the kernel's
 * watermarks grow with the zone): pa_resident_free_pct percent of the
 * memory handed out may stay free and resident, plus whatever was freed
 * since the peak of the recent past (pa_alloc_high), so that memory a
 * program frees and takes again within the decay period (a loop that
 * frees half its live set and builds it again) is not paid for with a
 * madvise per block and a page fault per page when it comes back.
 * pa_alloc_high is the highest bytes_allocated of the last
 * PA_HIGH_WINDOWS decay ticks (a sliding maximum: pa_high_win[] holds the
 * maxima of the previous ticks, pa_high_cur the current one's), so memory
 * goes back once it has stayed unused for a whole period. All under the
 * zone lock.
 */
#define PA_HIGH_WINDOWS	4
static unsigned int pa_resident_free_pct = CONFIG_PAGE_ALLOC_RESIDENT_FREE_PCT;
static size_t pa_alloc_high;
static size_t pa_high_cur;
static size_t pa_high_win[PA_HIGH_WINDOWS];
static unsigned int pa_high_next;
/*
 * The cache of freed own mappings has an allowance of its own (tcmalloc's
 * and jemalloc's extent caches): pa_large_cache_pct percent of the highest
 * bytes_large reached *by an allocation* in the last PA_HIGH_WINDOWS decay
 * ticks. A window in which no own mapping was allocated counts 0, so once
 * a program stops allocating large blocks for a whole period the cache
 * has no allowance left and the decay thread gives it back.
 */
static unsigned int pa_large_cache_pct = CONFIG_PAGE_ALLOC_LARGE_CACHE_PCT;
static size_t pa_large_high;
static size_t pa_large_cur;
static size_t pa_large_win[PA_HIGH_WINDOWS];
/*
 * Set while the decay work runs (page_alloc_decayd_start; a test may set
 * it): without it the share of the heap is not kept, since nothing would
 * ever give it back (not started yet, reaper_ms=0, a fork child). Atomic: the fork child clears it before taking any lock.
 */
static bool pa_decay_agent;

/*
 * A decay tick closes the current window: the burst part of the allowance
 * becomes what was freed since the highest point of the last
 * PA_HIGH_WINDOWS windows. Memory freed in a burst and not taken again
 * goes back one period later, at once (jemalloc's decay is a smooth curve
 * over ten seconds; one period of a second is the promise here); memory
 * that a workload takes again within the period never leaves.
 * page_alloc_decay() (@whole) forgets every window.
 */
static void decay_high_locked(bool whole)
{
	size_t used = pa_zone.bytes_allocated;
	size_t high = used;

	size_t large_high = 0;

	pa_assert_locked();
	if (whole) {
		memset(pa_high_win, 0, sizeof(pa_high_win));
		memset(pa_large_win, 0, sizeof(pa_large_win));
	} else {
		pa_high_win[pa_high_next] = pa_high_cur;
		pa_large_win[pa_high_next] = pa_large_cur;
		pa_high_next = (pa_high_next + 1) % PA_HIGH_WINDOWS;
		for (unsigned int i = 0; i < PA_HIGH_WINDOWS; i++) {
			high = max_t(size_t, high, pa_high_win[i]);
			large_high = max_t(size_t, large_high, pa_large_win[i]);
		}
	}
	pa_high_cur = used;
	pa_alloc_high = high;
	pa_large_cur = 0;
	pa_large_high = large_high;
}

/* An own mapping was handed out: bytes_large moves the cache's peak. */
void pa_large_allocated_locked(void)
{
	pa_assert_locked();
	if (pa_zone.bytes_large > pa_large_cur)
		pa_large_cur = pa_zone.bytes_large;
	if (pa_zone.bytes_large > pa_large_high)
		pa_large_high = pa_zone.bytes_large;
}

/*
 * Cached own mappings kept regardless of the allowance: the cache's own
 * share, while a decay agent runs (nothing else would give it back).
 */
size_t pa_large_cache_allowance_locked(void)
{
	pa_assert_locked();
	if (!__atomic_load_n(&pa_decay_agent, __ATOMIC_RELAXED))
		return 0;
	return pa_large_high / 100 * pa_large_cache_pct;
}

/*
 * Free resident memory that counts against an allowance of @max bytes:
 * free buddy blocks, and cached own mappings beyond the cache's share.
 * @max 0 (a trim, a watermark of 0) keeps no share: everything counts.
 */
size_t pa_free_counted_locked(size_t max)
{
	size_t keep = max ? pa_large_cache_allowance_locked() : 0;
	size_t large = pa_zone.bytes_large_dirty;

	pa_assert_locked();
	return pa_zone.bytes_free_resident + (large > keep ? large - keep : 0);
}

/*
 * @bytes more are handed out (a buddy block or an own mapping): the peaks
 * follow, the sliding one included, so that memory freed and taken again
 * within the decay period stays resident whichever path it takes
 * (malloc-large's 5..25 MiB blocks refaulted every page while only buddy
 * allocations moved the peak).
 */
void pa_add_allocated_locked(size_t bytes)
{
	pa_assert_locked();
	pa_zone.bytes_allocated += bytes;
	if (pa_zone.bytes_allocated > pa_zone.bytes_allocated_peak)
		pa_zone.bytes_allocated_peak = pa_zone.bytes_allocated;
	if (pa_zone.bytes_allocated > pa_high_cur)
		pa_high_cur = pa_zone.bytes_allocated;
	if (pa_zone.bytes_allocated > pa_alloc_high)
		pa_alloc_high = pa_zone.bytes_allocated;
}

/*
 * The return policy's allowance: free memory that may stay resident now,
 * the larger of the fixed watermark and pa_resident_free_pct percent of
 * the memory handed out plus what was freed since the recent peak.
 */
size_t resident_allowance_locked(void)
{
	size_t used = pa_zone.bytes_allocated;
	size_t burst = pa_alloc_high > used ? pa_alloc_high - used : 0;

	pa_assert_locked();
	/* no agent to give it back, or a preset that keeps no share (nocache) */
	if (!__atomic_load_n(&pa_decay_agent, __ATOMIC_RELAXED) ||
	    !pa_resident_free_pct)
		return pa_zone.resident_free_max;
	return max_t(size_t, pa_zone.resident_free_max,
		     used * pa_resident_free_pct / 100 + burst);
}

/*
 * After a free, under the zone lock: is more free memory possibly
 * resident than the policy allows? @max gets the allowance.
 */
bool pa_over_allowance_locked(size_t *max)
{
	pa_assert_locked();
	*max = resident_allowance_locked();
	return pa_free_counted_locked(*max) > *max;
}

/*
 * Then, with no lock held: give back a bounded amount (a few blocks,
 * largest first, down to three quarters of the allowance, so that a heap
 * hovering at the allowance does not pay a madvise and the page faults
 * after it on every free). The first time there is something to decay,
 * the decay thread is started.
 */
void pa_reclaim_after_free(size_t max)
{
	pa_decayd_kick();
	buddy_reclaim(max - max / 4, 4);
}

/* Free memory that may be resident: buddy blocks and cached own mappings. */
size_t pa_free_resident_locked(void)
{
	pa_assert_locked();
	return pa_zone.bytes_free_resident + pa_zone.bytes_large_dirty;
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
		if (pa_free_counted_locked(max_resident) > max_resident &&
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
	ret += page_alloc_emergency_trim();	/* no lock: its pool's empty chunks */
	if (pa_as_limited()) {
		pa_lock_irqsave();
		pa_release_sections_locked();
		pa_unlock_irqrestore();
	}
	pa_probe(trim, ret);
	return ret;
}

/*
 * The struct pages of a big mapping cost 1/64 of it; give back the map pages
 * wholly inside its tail pages, so that a program freeing big buffers does
 * not keep their map resident. The first and last struct page are kept:
 * they carry the free range. Called before the range is back on the free
 * list, while nobody else can touch these struct pages.
 */
static void large_release_map(struct page *head, size_t npages)
{
	unsigned long lo = ALIGN_UP((unsigned long)(head + 1), PAGE_SIZE);
	unsigned long hi = ALIGN_DOWN((unsigned long)(head + npages - 1), PAGE_SIZE);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/*
 * Return the cached mapping at @head (isolated from the lists) to the OS:
 * back to a PROT_NONE reservation, its struct page map released, then a
 * PROT_NONE free range. Called with no lock held.
 */
void large_unmap_range(struct page *head, size_t npages)
{
	void *addr = page_address(head);
	size_t bytes = npages << PAGE_SHIFT;

	/*
	 * Back to a PROT_NONE reservation: frees the memory, and the
	 * address range can only be touched again once handed out anew.
	 */
	if (mmap(addr, bytes, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
		 -1, 0) == MAP_FAILED)
		madvise(addr, bytes, MADV_DONTNEED);
	pa_probe(large_unmap, addr, bytes);
	large_release_map(head, npages);

	pa_lock_irqsave();
	large_range_put_locked(head, npages, false);
	pa_unlock_irqrestore();
}

/*
 * Give cached mappings back to the OS, the least recently freed first,
 * while free resident memory (buddy and cache) is above @max_resident, at
 * most @max_ranges of them (0: no bound).
 * Context: takes and drops the zone lock; the caller must not hold it.
 * Return: bytes given back.
 */
size_t large_reclaim(size_t max_resident, unsigned int max_ranges)
{
	size_t returned = 0;
	unsigned int n = 0;

	for (;;) {
		struct page *head = NULL;
		size_t npages = 0;

		pa_lock_irqsave();
		if (!list_empty(&pa_zone.large_dirty) &&
		    pa_zone.bytes_large_dirty > (max_resident ?
				pa_large_cache_allowance_locked() : 0) &&
		    pa_free_counted_locked(max_resident) > max_resident &&
		    (!max_ranges || n < max_ranges)) {
			head = list_last_entry(&pa_zone.large_dirty, struct page,
					       range_list);
			npages = head->range_pages;
			large_range_del_locked(head);
			pa_stat_inc(trims);
		}
		pa_unlock_irqrestore();
		if (!head)
			break;
		large_unmap_range(head, npages);
		returned += npages << PAGE_SHIFT;
		n++;
	}
	return returned;
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
 * page_alloc_set_resident_free_pct - let free resident memory grow with
 * the memory in use.
 * @pct: percent of the recent peak of bytes handed out that may stay free
 *       and resident (the allowance is the larger of this and
 *       page_alloc_set_resident_free()'s watermark); 0 leaves only the
 *       watermark. Values above 100 are taken as 100.
 *
 * Context: thread-safe; takes the zone lock, may call madvise (outside
 * it) when the allowance shrinks.
 */
void page_alloc_set_resident_free_pct(unsigned int pct)
{

	if (pa_init_once())
		return;
	pa_lock_irqsave();
	pa_resident_free_pct = min_t(unsigned int, pct, 100);
	pa_unlock_irqrestore();
	page_alloc_decay();
}

/**
 * page_alloc_set_decay_agent - say whether page_alloc_decay() will be
 * called periodically from now on.
 * @on: true once a periodic caller runs (the reaper thread started);
 *      false where none does (a fork child): the allowance falls back to
 *      the fixed watermark, applied from the next free.
 *
 * Context: any thread, also a fork child before any lock is re-made; an
 * atomic store, no lock.
 */
void page_alloc_set_decay_agent(bool on)
{
	__atomic_store_n(&pa_decay_agent, on, __ATOMIC_RELAXED);
}

/*
 * Idle per-CPU lists drained, the recent peak decayed (@whole: forgotten),
 * free memory beyond the allowance given back. Return: bytes given back.
 */
static size_t decay_step(bool whole)
{
	size_t max;

	drain_all_pages(true);
	pa_lock_irqsave();
	decay_high_locked(whole);
	max = resident_allowance_locked();
	pa_unlock_irqrestore();
	return buddy_reclaim(max, 0);
}

/**
 * page_alloc_decay - forget the peak: the allowance falls to what the
 * memory in use now gives, and free memory beyond it (buddy blocks, the
 * per-CPU lists, cached own mappings) goes back to the OS.
 *
 * The decay work (below) takes smaller steps (pa_decay_tick); this is
 * the whole step, for explicit callers (page_alloc_set_resident_free_pct,
 * tests).
 *
 * Context: thread-safe; takes the zone lock per block, madvise outside it.
 * Return: bytes given back.
 */
size_t page_alloc_decay(void)
{
	if (pa_init_once())
		return 0;
	return decay_step(true);
}

/*
 * One step of the decay work: per-CPU lists that saw no traffic since
 * the last tick are drained, the recent peak moves on by one window (decay_high_locked), and
 * free memory beyond the allowance goes back.
 */
size_t pa_decay_tick(void)
{
	return decay_step(false);
}
