// SPDX-License-Identifier: MIT
/*
 * Slab debugging, as SLUB's slab_debug=FZPU: poisoning of free objects
 * (0x6b, last byte 0xa5, checked on allocation), red zones on both sides of
 * each object (0xbb while free, 0xcc while allocated, checked on free and on
 * allocation; on kmalloc caches the red zone starts at the size asked for),
 * checks on every free for pointers that are not objects of the cache and
 * for double frees (the object found on its slab's freelist), and the call
 * sites of each object's last allocation and free (SLAB_STORE_USER).
 * Every report names the cache and the object, says what was wrong and
 * where, then aborts: the user asked for the check, and going on would
 * corrupt the heap. Caches with SLAB_STORE_USER add who allocated and
 * freed the object and which call found the damage, symbolized with
 * dladdr(3) (exported symbols; otherwise object file + offset).
 *
 * Locking: the _locked functions run under the cache lock, which keeps the
 * slab's freelist still while it is walked. The others take no lock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "slab/internal.h"

void slab_fatal(void)
{
	abort();
}

/*
 * The free mark (CONFIG_SLAB_FREE_HARDENED): random per process, never 0
 * (live objects hold 0 there), chosen before the first slab is made.
 * Objects of different processes never meet; a fork child keeps the key
 * with the heap it inherits.
 */
unsigned long slab_free_key;

/**
 * slab_free_key_init - choose slab_free_key once (first slab of any cache).
 * Context: any thread; lock-free (the first store wins). Never allocates:
 * getrandom(2) without blocking, else the kernel's AT_RANDOM bytes mixed
 * with the clock.
 */
void slab_free_key_init(void)
{
	unsigned long k = 0, expect = 0;
	struct timespec ts;

	if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k)) {
		const unsigned long *at = (const void *)getauxval(AT_RANDOM);

		clock_gettime(CLOCK_MONOTONIC, &ts);
		k = (at ? at[0] ^ at[1] : 0) ^
		    ((unsigned long)ts.tv_nsec * 0x9e3779b97f4a7c15ul) ^
		    (unsigned long)&k;
	}
	k |= 1;		/* never 0; odd, so never an aligned pointer either */
	__atomic_compare_exchange_n(&slab_free_key, &expect, k, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------- */
/* SLAB_STORE_USER: call sites */

static unsigned long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long)ts.tv_sec * 1000 + (unsigned long)ts.tv_nsec / 1000000;
}

static struct slab_track *get_track(struct kmem_cache *s, const void *obj,
				    enum slab_track_item item)
{
	return (struct slab_track *)((char *)obj + s->track_off) + item;
}

static void set_track(struct kmem_cache *s, void *obj,
		      enum slab_track_item item, unsigned long addr)
{
	struct slab_track *t = get_track(s, obj, item);
	int cpu = sched_getcpu();

	t->addr = addr;
	t->when_ms = now_ms();
	t->cpu = cpu < 0 ? -1 : cpu;
	t->pid = (int)gettid();
}

/*
 * @addr as "symbol+0xoff/0xsize (object)" (the kernel's %pS, plus the
 * file), "object+0xoff" when no exported symbol covers it, or the bare
 * address. dladdr1 takes the loader's lock and never allocates.
 */
static void format_site(char *buf, size_t len, unsigned long addr)
{
	const ElfW(Sym) *sym = NULL;
	const char *base;
	Dl_info info;
	size_t pos = 0;

	if (!addr) {
		/* kmalloc_aligned() and the magazines' refills pass none */
		uslab_bufprintf(buf, len, &pos, "(call site not recorded)");
		return;
	}
	if (!dladdr1((void *)addr, &info, (void **)&sym, RTLD_DL_SYMENT) ||
	    !info.dli_fname) {
		uslab_bufprintf(buf, len, &pos, "0x%lx", addr);
		return;
	}
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	if (info.dli_sname && info.dli_saddr && sym)
		uslab_bufprintf(buf, len, &pos, "%s+0x%lx/0x%lx (%s)",
				info.dli_sname, addr - (unsigned long)info.dli_saddr,
				(unsigned long)sym->st_size, base);
	else
		uslab_bufprintf(buf, len, &pos, "%s+0x%lx", base,
				addr - (unsigned long)info.dli_fbase);
}

static void print_track(const char *what, const struct slab_track *t,
			unsigned long now)
{
	char site[256];

	if (!t->pid)
		return;		/* never happened */
	format_site(site, sizeof(site), t->addr);
	pr_err("%s in %s age=%lums cpu=%d pid=%d", what, site,
	       now - t->when_ms, t->cpu, t->pid);
}

/*
 * The lines a SLAB_STORE_USER cache adds to a report on @obj: its last
 * allocation and free, and the call that found the damage (@by, at @addr).
 */
static void print_user(struct kmem_cache *s, const void *obj, const char *by,
		       unsigned long addr)
{
	unsigned long now;
	char site[256];

	if (!s->track_off)
		return;
	now = now_ms();
	print_track("Allocated", get_track(s, obj, TRACK_ALLOC), now);
	print_track("Freed", get_track(s, obj, TRACK_FREE), now);
	if (by) {
		format_site(site, sizeof(site), addr);
		pr_err("Found by %s called from %s", by, site);
	}
}

/**
 * slab_report_double_free - @obj was given back while already free.
 * One line naming the caller, the cache and the object (then, on
 * SLAB_STORE_USER caches, its allocation, its first free and this call's
 * site @addr), then abort.
 */
static void __attribute__((noreturn))
report_double_free(const char *caller, struct kmem_cache *s, const void *obj,
		   unsigned long addr)
{
	pr_err("%s(%s): double free of object 0x%lx", caller, s->name,
	       (unsigned long)obj);
	print_user(s, obj, caller, addr);
	slab_fatal();
}

void slab_report_double_free(const char *caller, struct kmem_cache *s,
			     const void *obj, unsigned long addr)
{
	report_double_free(caller, s, obj, addr);
}

/*
 * An object about to be handed out lacks its free mark (slab_take_bad()):
 * a mark read back as 0 was cleared by an earlier allocation (freed
 * twice); any other value was written since its free, by its owner after
 * a second hand-out or by a write after free: the two cannot be told
 * apart, so the line names both.
 */
void slab_report_taken_twice(const char *caller, struct kmem_cache *s,
			     const void *obj, unsigned long word)
{
	if (!word)
		report_double_free(caller, s, obj, 0);
	pr_err("%s(%s): double free of object 0x%lx, or a write into it "
	       "after its free (its free mark reads 0x%lx)", caller, s->name,
	       (unsigned long)obj, word);
	print_user(s, obj, caller, 0);
	slab_fatal();
}

/**
 * report_interior - @obj is inside a slab of @s but no object start;
 * SLAB_STORE_USER caches name the object around it and its call sites.
 */
static void __attribute__((noreturn))
report_interior(const char *caller, struct kmem_cache *s, const void *obj,
		unsigned long addr)
{
	struct page *slab = virt_to_slab(obj);

	pr_err("%s(%s): invalid pointer 0x%lx (not at an object boundary)",
	       caller, s->name, (unsigned long)obj);
	/* the object whose stride holds @obj (its left red zone included) */
	if (s->track_off && slab && slab->slab_cache == s &&
	    (size_t)((const char *)obj - (const char *)slab_base(slab)) / s->size <
	    slab->objects) {
		const char *o = slab_nearest_obj(s, slab, obj);

		pr_err("Pointer is %ld bytes into object 0x%lx",
		       (long)((const char *)obj - o), (unsigned long)o);
		print_user(s, o, caller, addr);
	}
	slab_fatal();
}

/**
 * slab_free_unaligned - @obj failed slab_free_check()'s boundary test. On
 * a debug cache (which fails it on purpose) this is its whole free, fully
 * checked; otherwise @obj is inside a slab of @s but no object start:
 * report and abort. @addr: the free's call site.
 */
void slab_free_unaligned(const char *caller, struct kmem_cache *s, void *obj,
			 unsigned long addr)
{
	if (slab_debug(s)) {
		__slab_free(s, obj, addr);
		return;
	}
	report_interior(caller, s, obj, addr);
}

/**
 * slab_bad_pointer - report a pointer that is not an object of @cache.
 * @fatal: abort after the report (debug caches); otherwise the caller
 * ignores the call and the pointer leaks, which is better than corrupting
 * a slab.
 * Context: any; writes with write(2), never allocates.
 */
void slab_bad_pointer(const char *caller, const char *cache, const void *p,
		      const char *why, bool fatal)
{
	pr_err("%s(%s): invalid pointer 0x%lx (%s)", caller, cache,
	       (unsigned long)p, why);
	if (fatal)
		slab_fatal();
}

/**
 * slab_free_not_slab - a free to @s of @obj, which no slab holds. Outside
 * uslab's range: "not a slab object", and the free is ignored (@fatal:
 * abort). Inside it, where only slabs and blocks are handed out: an
 * object freed again after its slab went back to the page allocator (or
 * a wild pointer into the heap); hardened builds abort, as kfree() does
 * for a block, before the pages are freed twice.
 * Context: any; writes with write(2), never allocates.
 */
void slab_free_not_slab(const char *caller, struct kmem_cache *s,
			const void *obj, bool fatal)
{
	if (page_alloc_owns(obj))
		slab_bad_pointer(caller, s->name, obj, "no slab is allocated there",
				 fatal || IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) ||
				 IS_ENABLED(CONFIG_SLAB_DEBUG_ON));
	else
		slab_bad_pointer(caller, s->name, obj, "not a slab object", fatal);
}

/* Who is checking: the free (its API name) or an allocation, and where. */
struct slab_site {
	const char *by;
	unsigned long addr;
};

static void __attribute__((noreturn))
report_overwrite(struct kmem_cache *s, const char *what, const void *at,
		 const void *obj, unsigned char want, const struct slab_site *site)
{
	pr_err("%s overwritten at 0x%lx (cache %s, object 0x%lx)", what,
	       (unsigned long)at, s->name, (unsigned long)obj);
	pr_err("First byte 0x%02x instead of 0x%02x, at offset %ld of the object",
	       *(const unsigned char *)at, want,
	       (long)((const char *)at - (const char *)obj));
	print_user(s, obj, site->by, site->addr);
	slab_fatal();
}

/* First byte of [@start, @start + @len) that is not @value, or NULL. */
static const unsigned char *check_bytes(const void *start, unsigned char value,
					size_t len)
{
	const unsigned char *p = start;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != value)
			return p + i;
	return NULL;
}

static bool is_object(const struct kmem_cache *s, const struct page *slab,
		      const void *p)
{
	const char *base = slab_base(slab);
	size_t off;

	if ((const char *)p < base + s->red_left_pad)
		return false;
	off = (size_t)((const char *)p - base - s->red_left_pad);
	return off % s->size == 0 && off / s->size < slab->objects;
}

/*
 * Where an allocated object's right red zone starts: the size asked for on
 * kmalloc caches (the kernel's kmalloc red zone), else the object's end.
 * A stored size beyond the object (corrupt) counts as the object's end.
 */
static size_t orig_size(struct kmem_cache *s, const void *obj)
{
	size_t n;

	if (!s->orig_off)
		return s->object_size;
	n = *(const unsigned long *)((const char *)obj + s->orig_off);
	return n <= s->object_size ? n : s->object_size;
}

static void check_redzone(struct kmem_cache *s, char *obj, unsigned char val,
			  const struct slab_site *site)
{
	const unsigned char *bad;
	size_t from = val == SLUB_RED_ACTIVE ? orig_size(s, obj) : s->object_size;

	bad = check_bytes(obj - s->red_left_pad, val, s->red_left_pad);
	if (!bad)
		bad = check_bytes(obj + from, val, s->rz_end - from);
	if (bad)
		report_overwrite(s, "Redzone", bad, obj, val, site);
}

static void set_redzone(struct kmem_cache *s, char *obj, unsigned char val)
{
	memset(obj - s->red_left_pad, val, s->red_left_pad);
	memset(obj + s->object_size, val, s->rz_end - s->object_size);
}

/**
 * slab_debug_set_orig_size - kmalloc(@size) got @obj from a kmalloc cache
 * with red zones: the red zone now starts at @size (ksize() says @size).
 * Context: @obj is the caller's, freshly allocated.
 */
void slab_debug_set_orig_size(struct kmem_cache *s, void *obj, size_t size)
{
	if (!s->orig_off || size > s->object_size)
		return;
	*(unsigned long *)((char *)obj + s->orig_off) = size;
	memset((char *)obj + size, SLUB_RED_ACTIVE, s->object_size - size);
}

/** slab_debug_orig_size - the size asked for @obj (kmalloc red zone). */
size_t slab_debug_orig_size(struct kmem_cache *s, const void *obj)
{
	return orig_size(s, obj);
}

static void poison_object(struct kmem_cache *s, char *obj)
{
	memset(obj, POISON_FREE, s->object_size - 1);
	obj[s->object_size - 1] = (char)POISON_END;
}

/** slab_debug_init_object - debug state of a new slab's free object. */
void slab_debug_init_object(struct kmem_cache *s, void *obj)
{
	if (s->flags & __OBJECT_POISON)
		poison_object(s, obj);
	if (s->flags & SLAB_RED_ZONE)
		set_redzone(s, obj, SLUB_RED_INACTIVE);
	if (s->track_off)
		memset((char *)obj + s->track_off, 0, 2 * sizeof(struct slab_track));
}

/**
 * slab_debug_alloc_locked - @obj was just taken off @slab's freelist:
 * check the next free pointer, the free red zone and the poison, then mark
 * the red zone active and record the allocation's call site @addr.
 * Context: cache lock held. Aborts with a report on corruption.
 */
void slab_debug_alloc_locked(struct kmem_cache *s, struct page *slab, void *obj,
			     unsigned long addr)
{
	const struct slab_site site = { "an allocation", addr };
	const unsigned char *bad;
	void *next = slab->freelist;

	slab_assert_locked(s);
	if (next && !is_object(s, slab, next)) {
		pr_err("Freepointer 0x%lx corrupt (cache %s, object 0x%lx)",
		       (unsigned long)next, s->name, (unsigned long)obj);
		print_user(s, obj, site.by, addr);
		slab_fatal();
	}
	if (s->flags & SLAB_RED_ZONE)
		check_redzone(s, obj, SLUB_RED_INACTIVE, &site);
	if (s->flags & __OBJECT_POISON) {
		bad = check_bytes(obj, POISON_FREE, s->object_size - 1);
		if (bad)
			report_overwrite(s, "Poison", bad, obj, POISON_FREE, &site);
		bad = (unsigned char *)obj + s->object_size - 1;
		if (*bad != POISON_END)
			report_overwrite(s, "Poison", bad, obj, POISON_END, &site);
	}
	if (s->flags & SLAB_RED_ZONE)
		set_redzone(s, obj, SLUB_RED_ACTIVE);
	if (s->orig_off)
		*(unsigned long *)((char *)obj + s->orig_off) = s->object_size;
	if (s->track_off)
		set_track(s, obj, TRACK_ALLOC, addr);
}

/**
 * slab_debug_free_locked - check a free of @obj to @s: an object of this
 * cache, at an object boundary, not already free, red zones intact; then
 * mark it free (inactive red zone, poison).
 * @caller: named in the report ("kmem_cache_free", "kfree").
 * @addr: the free's call site, recorded by SLAB_STORE_USER.
 * Context: cache lock held. Aborts with a report on any failure.
 * Return: the slab of @obj.
 */
struct page *slab_debug_free_locked(struct kmem_cache *s, void *obj,
				    const char *caller, unsigned long addr)
{
	const struct slab_site site = { caller, addr };
	struct page *slab;
	void *p;
	unsigned int n = 0;

	slab_assert_locked(s);
	if (!page_alloc_owns(obj) || !(slab = virt_to_slab(obj))) {
		slab_free_not_slab(caller, s, obj, true);
		slab_fatal();	/* (it does not return) */
	}
	if (slab->slab_cache != s) {
		pr_err("%s(%s): invalid pointer 0x%lx (object of cache %s)",
		       caller, s->name, (unsigned long)obj,
		       slab->slab_cache->name);
		slab_fatal();
	}
	if (!is_object(s, slab, obj))
		report_interior(caller, s, obj, addr);
	for (p = slab->freelist; p; p = get_freepointer(s, p)) {
		if (p == obj)
			report_double_free(caller, s, obj, addr);
		if (++n > slab->objects || !is_object(s, slab, p)) {
			pr_err("Freelist corrupt (cache %s, slab 0x%lx)",
			       s->name, (unsigned long)slab_base(slab));
			slab_fatal();
		}
	}
	if (s->flags & SLAB_RED_ZONE) {
		check_redzone(s, obj, SLUB_RED_ACTIVE, &site);
		set_redzone(s, obj, SLUB_RED_INACTIVE);
	}
	if (s->flags & __OBJECT_POISON)
		poison_object(s, obj);
	if (s->track_off)
		set_track(s, obj, TRACK_FREE, addr);
	return slab;
}

/* ---------------------------------------------------------------------- */
/* Checks of a block's user other than its free */

/*
 * A report on @p by @caller; @fatal aborts after it (the hardened and
 * debug builds, and every debug cache), else the caller refuses the call.
 */
static void report_block(const char *caller, const char *cache, const void *p,
			 const char *why, bool fatal)
{
	pr_err("%s(%s): invalid pointer 0x%lx (%s)", caller, cache,
	       (unsigned long)p, why);
	if (fatal)
		slab_fatal();
}

/* Does a free of @obj, an object of @s, wait on @slab's freelist? */
static __slowpath bool on_freelist(struct kmem_cache *s, struct page *slab,
				 const void *obj)
{
	unsigned int n = 0;
	bool found = false;
	void *p;

	/*
	 * A signal handler that interrupted its thread inside the allocator
	 * (realloc or malloc_usable_size there) may not take the cache lock:
	 * its thread may hold it (lib/sigsafe.h). Not checked then; a free
	 * of the object is deferred and checked when the thread gives it back.
	 */
	if (sigsafe_reentered())
		return false;
	slab_lock(s);
	for (p = slab->freelist; p && n++ <= slab->objects; p = get_freepointer(s, p)) {
		if (p == obj || !is_object(s, slab, p)) {
			found = p == obj;
			break;
		}
	}
	slab_unlock(s);
	return found;
}

/* A pointer no block of the page allocator starts at: report (cold). */
static __slowpath size_t bad_block(const char *caller, const struct page *head,
				   const void *p, bool fatal)
{
	if (page_address(head) != p)
		report_block(caller, "kmalloc-large", p, "inside a block", fatal);
	else
		report_block(caller, "kmalloc-large", p,
			     "no block is allocated there", fatal);
	return 0;
}

/* @p inside a slab of @s, at no object start: report (cold). */
static __slowpath size_t bad_object(const char *caller, struct kmem_cache *s,
				    const void *p, unsigned long addr, bool fatal)
{
	if (fatal || slab_debug(s))
		report_interior(caller, s, p, addr);
	report_block(caller, s->name, p, "not at an object boundary", false);
	return 0;
}

/* Object @p of @s is free: report (cold). */
static __slowpath size_t freed_object(const char *caller, struct kmem_cache *s,
				      const void *p, unsigned long addr, bool fatal)
{
	pr_err("%s(%s): invalid pointer 0x%lx (object already freed)",
	       caller, s->name, (unsigned long)p);
	if (fatal || slab_debug(s)) {
		print_user(s, p, caller, addr);
		slab_fatal();
	}
	return 0;
}

/*
 * ksize_checked()'s whole check, for what its fast test did not pass: a
 * debug cache's object, a large block, a bad pointer.
 */
static __slowpath size_t ksize_checked_slow(const void *p, const char *caller,
					    unsigned long addr)
{
	const bool fatal = IS_ENABLED(CONFIG_SLAB_FREE_HARDENED) ||
			   IS_ENABLED(CONFIG_SLAB_DEBUG_ON);
	struct page *head = compound_head(virt_to_page(p));
	struct kmem_cache *s;

	if (!PageFlag(head, PG_slab)) {
		if (page_address(head) != p ||
		    (!PageFlag(head, PG_large) && !PageFlag(head, PG_head)))
			return bad_block(caller, head, p, fatal);
		return ksize(p);
	}
	s = head->slab_cache;
	if (!is_object(s, head, p))
		return bad_object(caller, s, p, addr, fatal);
	if (slab_obj_marked_free(s, p) ||
	    (slab_debug(s) && on_freelist(s, head, p)))
		return freed_object(caller, s, p, addr, fatal);
	return orig_size(s, p);
}

/**
 * ksize_checked - ksize() of @p for a caller about to use the whole block
 * (realloc copies it, malloc_usable_size promises it): @p must be the start
 * of a live block, as a free checks it (slab_free_check(), kfree()). A
 * slab object must sit at an object boundary (the hardened free's
 * multiply-compare; is_object() on debug caches) and must not be free (the
 * free mark of CONFIG_SLAB_FREE_HARDENED; a debug cache's freelist); a
 * block of the page allocator must start at its first page and be
 * allocated. Otherwise one line names @caller, the cache and the pointer,
 * as the free's reports do; hardened and debug builds (and every debug
 * cache) then abort, others return 0 and the caller refuses the call.
 * @addr: the API call's site (SLAB_STORE_USER caches print it).
 * Cost on an object of a plain cache: ksize()'s lookups, the
 * multiply-compare and the mark's load and compare, no call (everything
 * else is ksize_checked_slow()'s).
 * Context: any thread; takes a debug cache's lock to walk its freelist.
 * Return: the usable size as ksize() says it; 0 for NULL and pointers
 * not uslab's (a signal handler's emergency block has its size).
 */
size_t ksize_checked(const void *p, const char *caller, unsigned long addr)
{
	struct page *head;
	struct kmem_cache *s;
	uint64_t n;

	n = kmalloc_usable_fast(p);	/* a live kmalloc object */
	if (likely(n))
		return n;
	if (unlikely(ZERO_OR_NULL_PTR(p) || !page_alloc_owns(p)))
		return ksize(p);
	head = compound_head(virt_to_page(p));
	if (unlikely(!PageFlag(head, PG_slab)))
		return ksize_checked_slow(p, caller, addr);
	s = head->slab_cache;
	n = (uint64_t)((const char *)p - (const char *)slab_base(head));
	/* (a debug cache's obj_magic and obj_limit fail every pointer) */
	if (unlikely(slab_debug(s) || n * s->obj_magic >= s->obj_limit ||
		     slab_obj_marked_free(s, p)))
		return ksize_checked_slow(p, caller, addr);
	return s->object_size;	/* (a plain cache has no kmalloc red zone) */
}
