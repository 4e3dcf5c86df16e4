// SPDX-License-Identifier: MIT
/*
 * The zone: the reserved range, its struct page map, the zone lock,
 * limits, statistics and buddyinfo (the return-to-OS policy: reclaim.c).
 *
 * Locking:
 *   pa_zone.lock (a pthread mutex, statically initialised, so it works
 *   before anything else in a preloaded process) protects everything in
 *   struct pa_zone: free lists, free address ranges, the reservation
 *   (page_alloc_end, the map's), the byte counts and counters, and the flags/order/union of
 *   every struct page that is free (PG_buddy, PG_reserved) or is the head of
 *   a block while it changes hands. A block's pages belong to its owner
 *   between alloc and free; the allocator only reads the flags and order
 *   of their head (merge check of a neighbour), which never shows PG_buddy
 *   while allocated and whose order is not written by the owner.
 *   It is only ever held inside a sigsafe section (pa_lock_irqsave,
 *   lib/sigsafe.h), so a signal handler that allocates never waits on its
 *   own thread: it sees the depth and takes no allocator lock. The
 *   per-CPU page lists' try-lock flags (pagelist.c) nest outside it; nothing
 *   holding it takes a flag. The allocator never calls up into slab or
 *   malloc while holding it, and never calls malloc at all (the decay
 *   thread is created from page_alloc_decayd_start(), which the layers
 *   above call holding none of their locks). The system calls made under
 *   it: mprotect when a section is made usable, mmap when the reservation
 *   grows and munmap when it shrinks (once per section or own mapping that
 *   takes new address space); madvise, when the policy
 *   returns memory, runs outside it on a block isolated from the free
 *   lists (counted in bytes_isolated meanwhile).
 *
 *   page_alloc_base and map are written once, under the lock, before map is
 *   published with a release store; readers load map with acquire.
 *   page_alloc_end moves under the lock (release stores); a reader that
 *   holds a pointer the allocator handed out sees an end above it.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include "page_alloc/internal.h"

char *page_alloc_base;
char *page_alloc_end;
size_t page_alloc_span;
struct page *page_alloc_map;
unsigned char *page_alloc_tags;
unsigned char *page_alloc_shadow;

struct pa_zone pa_zone = {
	.lock = OWNED_MUTEX_INITIALIZER,
};

/*
 * The address space, reserved as it is used (docs/page_alloc.md, "Address
 * space"). At init only a place is chosen: the heap's logical range
 * [page_alloc_base, pa_space_end) and below it the logical ranges of the
 * struct page map and the tag bytes. What is reserved is a prefix of each,
 * grown with MAP_FIXED_NOREPLACE as the heap grows and, for the heap,
 * shrunk again when a free range reaches its top: [page_alloc_base,
 * page_alloc_end) is always exactly ours, so page_alloc_owns() stays two
 * compares, and under RLIMIT_AS (ulimit -v, or setrlimit at run time)
 * only what is used counts, so the heap follows the limit.
 */
static char *pa_space_end;	/* end of the heap's logical range */
static struct page *pa_map_start;	/* page_alloc_map, before it is published */
static char *pa_map_top;	/* reserved end of the struct page map */
static char *pa_map_end;	/* its logical end */
static unsigned char *pa_tags_top;	/* reserved end of the tag bytes */
static unsigned char *pa_tags_end;
static unsigned char *pa_shadow_start;	/* the shadow's place: base >> 7 */
static unsigned char *pa_shadow_top;	/* reserved end of the shadow */
static unsigned char *pa_shadow_end;

/*
 * Set when the place could not be chosen by a probe (valgrind puts new
 * mappings at the lowest free address, so a probe says nothing about the
 * room below it): the whole logical range, map and tags included, is then
 * reserved PROT_NONE up front, and growing only maps inside it
 * (MAP_FIXED on our own reservation). RLIMIT_AS is not followed there.
 */
static bool pa_upfront;

/* The struct page map is reserved in steps of this (4 MiB of heap). */
#define PA_MAP_STEP	(64UL << 10)

/* Sections of the buddy allocator, one bit each (pa_page_in_buddy). */
#define PA_MAX_SECTIONS	(((size_t)CONFIG_PAGE_ALLOC_VA_RESERVE_GB << 30) / SECTION_SIZE)
static unsigned long pa_section_bits[(PA_MAX_SECTIONS + 63) / 64];

/*
 * Map @len bytes exactly at @addr, only if nothing is there. A kernel older
 * than 4.17 takes MAP_FIXED_NOREPLACE as a hint: a mapping elsewhere is
 * undone. Return: true when [@addr, @addr + @len) is now ours.
 */
static bool pa_map_fixed(void *addr, size_t len, int prot)
{
	void *p = mmap(addr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		       (pa_upfront ? MAP_FIXED : MAP_FIXED_NOREPLACE), -1, 0);

	if (p == addr)
		return true;
	if (p != MAP_FAILED)
		munmap(p, len);
	return false;
}

/* Bytes of shadow (one per PAGE_ALLOC_SHADOW_GRAIN of heap) for @size. */
#define pa_shadow_size(size)	ALIGN_UP((size) >> PAGE_ALLOC_SHADOW_SHIFT, PAGE_SIZE)

/*
 * Under TSan the shadow has no place: its mmap interceptor turns a hint
 * outside the program's ranges (heap >> 7 is one) into a NULL hint, and
 * MAP_FIXED_NOREPLACE at NULL maps page 0 for root, which TSan then
 * kills the process for ("mmap at bad address", make check-sanitize).
 */
#if defined(__SANITIZE_THREAD__)
#define PA_SHADOW_UNPLACEABLE	1
#else
#define PA_SHADOW_UNPLACEABLE	0
#endif

/*
 * Reserve the struct page map, the tag bytes and the shadow of the heap up
 * to @end (rounded up to PA_MAP_STEP of map). Return: 0 or -ENOMEM.
 */
static int pa_meta_grow_locked(const char *end)
{
	size_t npages = (size_t)(end - page_alloc_base) >> PAGE_SHIFT;
	char *map = (char *)ALIGN_UP((unsigned long)(pa_map_start + npages),
				     PA_MAP_STEP);
	unsigned char *tags = (unsigned char *)ALIGN_UP(
		(unsigned long)(page_alloc_tags + npages), PAGE_SIZE);
	unsigned char *shadow = pa_shadow_start +
		pa_shadow_size((size_t)(end - page_alloc_base));

	map = min_t(char *, map, pa_map_end);
	tags = min_t(unsigned char *, tags, pa_tags_end);
	shadow = min_t(unsigned char *, shadow, pa_shadow_end);
	if (map > pa_map_top) {
		if (!pa_map_fixed(pa_map_top, (size_t)(map - pa_map_top),
				  PROT_READ | PROT_WRITE))
			return -ENOMEM;
		pa_map_top = map;
	}
	if (tags > pa_tags_top) {
		if (!pa_map_fixed(pa_tags_top, (size_t)(tags - pa_tags_top),
				  PROT_READ | PROT_WRITE))
			return -ENOMEM;
		pa_tags_top = tags;
	}
	/*
	 * The shadow, if it has a place: at its first section something
	 * else there (a sanitizer's shadow, a fixed mapping) leaves it out
	 * for good (page_alloc_shadow NULL: its users keep their state
	 * elsewhere); once in use it must follow the heap.
	 */
	if (page_alloc_shadow && shadow > pa_shadow_top) {
		if (!pa_map_fixed(pa_shadow_top, (size_t)(shadow - pa_shadow_top),
				  PROT_READ | PROT_WRITE)) {
			if (pa_shadow_top > pa_shadow_start)
				return -ENOMEM;
			page_alloc_shadow = NULL;
			return 0;
		}
		pa_shadow_top = shadow;
	}
	return 0;
}

/**
 * pa_space_grow_locked - reserve @bytes more at the top of the heap.
 * @bytes: a multiple of PAGE_SIZE.
 *
 * The new part is PROT_NONE (MAP_NORESERVE) with its struct pages
 * reserved; the caller maps what it hands out. Fails at RLIMIT_AS, when
 * something else sits above the top, or at the end of the logical range.
 * Context: zone lock held; mmap under it (once per section or own mapping
 * that does not fit a free range).
 * Return: 0 or -ENOMEM.
 */
int pa_space_grow_locked(size_t bytes)
{
	char *end = page_alloc_end;

	pa_assert_locked();
	if (bytes > (size_t)(pa_space_end - end) ||
	    pa_meta_grow_locked(end + bytes) ||
	    !pa_map_fixed(end, bytes, PROT_NONE))
		return -ENOMEM;
	__atomic_store_n(&page_alloc_end, end + bytes, __ATOMIC_RELEASE);
	__atomic_store_n(&page_alloc_span, end + bytes - page_alloc_base,
			 __ATOMIC_RELEASE);
	return 0;
}

/**
 * pa_as_limited - is the address space limited (RLIMIT_AS finite) now?
 *
 * Asked where address space could be given back (a free range reaching the
 * top, whole free sections at a trim): without a limit it stays reserved,
 * so that a pointer into it is still ours and a double free of a block
 * there is reported as such, not taken for a foreign pointer. A limit set
 * at run time is seen at the next call (one getrlimit).
 */
bool pa_as_limited(void)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

/**
 * pa_space_shrink_locked - give back the reservation from @addr to the top
 * (a free PROT_NONE range that reached it): the address space no longer
 * counts against RLIMIT_AS and is the program's again. The struct page
 * map stays reserved (1/64 of the heap at its highest).
 * Context: zone lock held; munmap under it.
 */
void pa_space_shrink_locked(char *addr)
{
	char *from = (char *)virt_to_page(addr);
	char *to = (char *)virt_to_page(page_alloc_end);
	char *lo = (char *)ALIGN_UP((unsigned long)from, PAGE_SIZE);
	char *hi = (char *)ALIGN_DOWN((unsigned long)to, PAGE_SIZE);

	pa_assert_locked();
	if (pa_upfront)	/* stays reserved: memory back, range still ours */
		mmap(addr, (size_t)(page_alloc_end - addr), PROT_NONE, MAP_PRIVATE |
		     MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	else
		munmap(addr, (size_t)(page_alloc_end - addr));
	__atomic_store_n(&page_alloc_end, addr, __ATOMIC_RELEASE);
	__atomic_store_n(&page_alloc_span, addr - page_alloc_base,
			 __ATOMIC_RELEASE);
	/* Its struct pages zero again, as pa_space_get_locked's "fresh"
	 * says of the top: whole map pages given back, the edges cleared. */
	if (hi > lo) {
		memset(from, 0, (size_t)(lo - from));
		madvise(lo, (size_t)(hi - lo), MADV_DONTNEED);
		memset(hi, 0, (size_t)(to - hi));
	} else {
		memset(from, 0, (size_t)(to - from));
	}
}

/* Mark the section at @sec as buddy memory (pa_page_in_buddy). */
void pa_section_set_locked(const char *sec)
{
	size_t i = (size_t)(sec - page_alloc_base) / SECTION_SIZE;

	pa_assert_locked();
	pa_section_bits[i / 64] |= 1UL << (i % 64);
}

/**
 * pa_release_sections_locked - give the address space of every free whole
 * section back: PROT_NONE again (its memory goes too), then a free range,
 * which own mappings and sections take like any other and which, reaching
 * the top, unreserves it (pa_space_shrink_locked).
 *
 * Called by page_alloc_trim() and when the reservation cannot grow
 * (RLIMIT_AS), so that memory freed as small blocks can serve a large one
 * or the program's own mappings.
 * Context: zone lock held; an mmap per section under it (a rare path).
 * Return: bytes released.
 */
size_t pa_release_sections_locked(void)
{
	struct list_head *h = &pa_zone.free_area[MAX_PAGE_ORDER];
	size_t n = 0;

	pa_assert_locked();
	while (!list_empty(h)) {
		struct page *page = list_first_entry(h, struct page, buddy_list);
		char *sec = page_address(page);
		size_t i = (size_t)(page - page_alloc_map) / SECTION_PAGES;

		if (mmap(sec, SECTION_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
			break;
		buddy_del_free_locked(page, MAX_PAGE_ORDER);
		pa_section_bits[i / 64] &= ~(1UL << (i % 64));
		pa_zone.nr_sections--;
		large_range_put_locked(page, SECTION_PAGES, false);
		n += SECTION_SIZE;
	}
	return n;
}

/*
 * The base alignment of a logical range of @size bytes: 1 GiB, or for
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

/*
 * The heap's layout for a range of @size at @base: the struct page map
 * (@mapsz bytes) just below it, the tags (@tagsz) below the map, the
 * shadow at @base >> PAGE_ALLOC_SHADOW_SHIFT (the shadow of an address is
 * at the address >> 7: no offset to add on free()'s path), far below
 * (1/128 of the address); nothing of any reserved yet
 * (pa_meta_grow_locked() does that). In the up-front reservation
 * (valgrind, which places mappings itself) there is no shadow.
 */
static void pa_set_layout(char *base, size_t size, size_t mapsz, size_t tagsz)
{
	page_alloc_base = base;
	page_alloc_end = base;
	pa_space_end = base + size;
	pa_map_start = (struct page *)(base - mapsz);
	pa_map_top = (char *)pa_map_start;
	pa_map_end = base;
	page_alloc_tags = (unsigned char *)pa_map_start - tagsz;
	pa_tags_top = page_alloc_tags;
	pa_tags_end = (unsigned char *)pa_map_start;
	pa_shadow_start = (unsigned char *)((uintptr_t)base >> PAGE_ALLOC_SHADOW_SHIFT);
	pa_shadow_top = pa_shadow_start;
	pa_shadow_end = pa_shadow_start + pa_shadow_size(size);
	page_alloc_shadow = pa_upfront || PA_SHADOW_UNPLACEABLE ? NULL : pa_shadow_start;
}

/*
 * The fallback of pa_reserve_locked (pa_upfront): reserve tags, map and
 * heap in one PROT_NONE mapping, halving the heap's size while refused
 * (valgrind), down to PA_MIN_RESERVE. Return: the heap's base, or NULL.
 */
static char *pa_reserve_upfront_locked(void)
{
	size_t size, mapsz, tagsz, total;

	for (size = (size_t)CONFIG_PAGE_ALLOC_VA_RESERVE_GB << 30;
	     size >= PA_MIN_RESERVE; size >>= 1) {
		size_t align = pa_base_align(size);
		char *raw, *base;

		mapsz = ALIGN_UP((size >> PAGE_SHIFT) * sizeof(struct page), PA_MAP_STEP);
		tagsz = ALIGN_UP(size >> PAGE_SHIFT, PAGE_SIZE);
		total = tagsz + mapsz + align + size;
		raw = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			   MAP_NORESERVE, -1, 0);
		if (raw == MAP_FAILED)
			continue;
		base = (char *)ALIGN_UP((unsigned long)(raw + tagsz + mapsz), align);
		pa_upfront = true;
		pa_set_layout(base, size, mapsz, tagsz);
		if (!pa_meta_grow_locked(base + SECTION_SIZE))
			return base;
		pa_upfront = false;
		munmap(raw, total);
	}
	return NULL;
}

/*
 * Choose the place: the kernel puts new mappings at the top of the highest
 * free gap (a probe shows where, just below the libraries); the heap's
 * logical range ends there and grows upward from its base, the program's
 * own mappings fill the gap downward from the top, and the two meet only
 * when together they have used the whole range. The struct page map and
 * the tags lie just below the heap. The place is taken when the first
 * section of all three can be reserved there; else (something mapped in
 * the way, a small address space) a range half the size, down to
 * PA_MIN_RESERVE.
 */
static int pa_reserve_locked(void)
{
	size_t size, mapsz, tagsz;
	char *probe, *top, *base = NULL;
	bool limited = false;
	unsigned int o;

	pa_assert_locked();
	probe = mmap(NULL, PAGE_SIZE, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (probe == MAP_FAILED)
		return -ENOMEM;
	munmap(probe, PAGE_SIZE);
	top = (char *)ALIGN_DOWN((unsigned long)probe, SECTION_SIZE);

	for (size = (size_t)CONFIG_PAGE_ALLOC_VA_RESERVE_GB << 30;
	     size >= PA_MIN_RESERVE; size >>= 1) {
		size_t align = pa_base_align(size);

		mapsz = ALIGN_UP((size >> PAGE_SHIFT) * sizeof(struct page), PA_MAP_STEP);
		tagsz = ALIGN_UP(size >> PAGE_SHIFT, PAGE_SIZE);
		if ((unsigned long)top < size + mapsz + tagsz + align + (1UL << 32))
			continue;	/* stay clear of the low 4 GiB */
		base = (char *)ALIGN_DOWN((unsigned long)(top - size), align);
		pa_set_layout(base, size, mapsz, tagsz);
		if (!pa_meta_grow_locked(base + SECTION_SIZE))
			break;
		/* undo what was reserved: only ours, in this range */
		if (pa_map_top > (char *)pa_map_start)
			munmap(pa_map_start, (size_t)(pa_map_top - (char *)pa_map_start));
		if (pa_tags_top > page_alloc_tags)
			munmap(page_alloc_tags, (size_t)(pa_tags_top - page_alloc_tags));
		if (pa_shadow_top > pa_shadow_start)
			munmap(pa_shadow_start,
			       (size_t)(pa_shadow_top - pa_shadow_start));
		base = NULL;
		if (errno == ENOMEM) {
			limited = true;
			break;	/* RLIMIT_AS: a smaller place is no better */
		}
	}
	if (!base && !limited)
		base = pa_reserve_upfront_locked();
	if (!base) {
		page_alloc_base = page_alloc_end = NULL;
		return -ENOMEM;
	}

	for (o = 0; o < NR_PAGE_ORDERS; o++)
		INIT_LIST_HEAD(&pa_zone.free_area[o]);
	INIT_LIST_HEAD(&pa_zone.large_free);
	INIT_LIST_HEAD(&pa_zone.large_dirty);
	pa_zone.limit = (size_t)CONFIG_PAGE_ALLOC_LIMIT_MB << 20;
	pa_zone.resident_free_max = (size_t)CONFIG_PAGE_ALLOC_RESIDENT_FREE_KB << 10;

	__atomic_store_n(&page_alloc_map, pa_map_start, __ATOMIC_RELEASE);
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

bool pa_page_in_buddy(const struct page *page)
{
	size_t i;

	if (page < page_alloc_map ||
	    page >= page_alloc_map + ((size_t)(page_alloc_end - page_alloc_base) >> PAGE_SHIFT))
		return false;
	i = (size_t)(page - page_alloc_map) / SECTION_PAGES;
	return pa_section_bits[i / 64] & (1UL << (i % 64));
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
 * page_alloc_get_stats - a consistent snapshot of the zone's counters.
 * @st: filled in.
 *
 * Context: thread-safe; takes the zone lock. Never allocates.
 */
__visible void page_alloc_get_stats(struct page_alloc_stats *st)
{
	unsigned int o;
	size_t lists;

	memset(st, 0, sizeof(*st));
	if (pa_init_once())
		return;
	lists = pagelist_bytes();
	pagelist_stats(st);
	pa_lock_irqsave();
	/* blocks on per-CPU lists are free memory to the caller */
	st->bytes_pagelists = lists;
	st->bytes_allocated_peak = pa_zone.bytes_allocated_peak;
	st->bytes_allocated = pa_zone.bytes_allocated - min_t(size_t, lists, pa_zone.bytes_allocated);
	st->bytes_large_cached = pa_zone.bytes_large_dirty;
	st->bytes_free_resident = pa_zone.bytes_free_resident +
				  pa_zone.bytes_large_dirty + lists;
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

void page_alloc_stats_sub(struct page_alloc_stats *st,
			  const struct page_alloc_stats *before)
{
	unsigned int o;

	for (o = 0; o < NR_PAGE_ORDERS; o++) {
		st->allocs[o] -= before->allocs[o];
		st->frees[o] -= before->frees[o];
	}
	st->splits -= before->splits;
	st->merges -= before->merges;
	st->pages_fresh -= before->pages_fresh;
	st->pagelist_allocs -= before->pagelist_allocs;
	st->pagelist_frees -= before->pagelist_frees;
	st->pagelist_refills -= before->pagelist_refills;
	st->pagelist_drains -= before->pagelist_drains;
	/* the peak counts blocks on per-CPU page lists; bytes_allocated not */
	st->bytes_allocated_peak -= before->bytes_allocated + before->bytes_pagelists;
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
	uslab_bufprintf(buf, len, &pos, "pagelists %zu kB\n", st.bytes_pagelists >> 10);
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
	pagelist_fork_prepare();
	pa_lock_irqsave();
}

/** page_alloc_fork_parent - release the locks after fork() in the parent. */
void page_alloc_fork_parent(void)
{
	pa_unlock_irqrestore();
	pagelist_fork_release();
}

/**
 * page_alloc_fork_child - re-initialise the zone lock in the child; the
 * state it protects is consistent because prepare held it. The per-CPU
 * lists' flags are released; the decay thread is not there.
 */
void page_alloc_fork_child(void)
{
	owned_init(&pa_zone.lock);
	sigsafe.depth = pa_fork_depth;	/* prepare's section is not left */
	pagelist_fork_release();
	pa_decayd_fork_child();
}
