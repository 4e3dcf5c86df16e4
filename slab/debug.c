// SPDX-License-Identifier: MIT
/*
 * Slab debugging, as SLUB's slub_debug=FPZ: poisoning of free objects
 * (0x6b, last byte 0xa5, checked on allocation), red zones on both sides of
 * each object (0xbb while free, 0xcc while allocated, checked on free and on
 * allocation), and checks on every free for pointers that are not objects of
 * the cache and for double frees (the object found on its slab's freelist).
 * Every report names the cache and the object, says what was wrong and
 * where, then aborts: the user asked for the check, and going on would
 * corrupt the heap.
 *
 * Locking: the _locked functions run under the cache lock, which keeps the
 * slab's freelist still while it is walked. The others take no lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <time.h>
#include "slab/internal.h"

static void __attribute__((noreturn)) slab_fatal(void)
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

/**
 * slab_report_double_free - @obj was given back while already free.
 * One line naming the caller, the cache and the object, then abort.
 */
void slab_report_double_free(const char *caller, struct kmem_cache *s,
			     const void *obj)
{
	pr_err("%s(%s): double free of object 0x%lx", caller, s->name,
	       (unsigned long)obj);
	slab_fatal();
}

/** slab_report_interior - @obj is inside a slab of @s but no object start. */
void slab_report_interior(const char *caller, struct kmem_cache *s,
			  const void *obj)
{
	slab_bad_pointer(caller, s->name, obj, "not at an object boundary", true);
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

static void __attribute__((noreturn))
report_overwrite(struct kmem_cache *s, const char *what, const void *at,
		 const void *obj)
{
	pr_err("%s overwritten at 0x%lx (cache %s, object 0x%lx)", what,
	       (unsigned long)at, s->name, (unsigned long)obj);
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

static void check_redzone(struct kmem_cache *s, char *obj, unsigned char val)
{
	const unsigned char *bad;

	bad = check_bytes(obj - s->red_left_pad, val, s->red_left_pad);
	if (!bad)
		bad = check_bytes(obj + s->object_size, val,
				  s->rz_end - s->object_size);
	if (bad)
		report_overwrite(s, "Redzone", bad, obj);
}

static void set_redzone(struct kmem_cache *s, char *obj, unsigned char val)
{
	memset(obj - s->red_left_pad, val, s->red_left_pad);
	memset(obj + s->object_size, val, s->rz_end - s->object_size);
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
}

/**
 * slab_debug_alloc_locked - @obj was just taken off @slab's freelist:
 * check the next free pointer, the free red zone and the poison, then mark
 * the red zone active.
 * Context: cache lock held. Aborts with a report on corruption.
 */
void slab_debug_alloc_locked(struct kmem_cache *s, struct page *slab, void *obj)
{
	const unsigned char *bad;
	void *next = slab->freelist;

	slab_assert_locked(s);
	if (next && !is_object(s, slab, next)) {
		pr_err("Freepointer 0x%lx corrupt (cache %s, object 0x%lx)",
		       (unsigned long)next, s->name, (unsigned long)obj);
		slab_fatal();
	}
	if (s->flags & SLAB_RED_ZONE)
		check_redzone(s, obj, SLUB_RED_INACTIVE);
	if (s->flags & __OBJECT_POISON) {
		bad = check_bytes(obj, POISON_FREE, s->object_size - 1);
		if (!bad && ((unsigned char *)obj)[s->object_size - 1] != POISON_END)
			bad = (unsigned char *)obj + s->object_size - 1;
		if (bad)
			report_overwrite(s, "Poison", bad, obj);
	}
	if (s->flags & SLAB_RED_ZONE)
		set_redzone(s, obj, SLUB_RED_ACTIVE);
}

/**
 * slab_debug_free_locked - check a free of @obj to @s: an object of this
 * cache, at an object boundary, not already free, red zones intact; then
 * mark it free (inactive red zone, poison).
 * @caller: named in the report ("kmem_cache_free", "kfree").
 * Context: cache lock held. Aborts with a report on any failure.
 * Return: the slab of @obj.
 */
struct page *slab_debug_free_locked(struct kmem_cache *s, void *obj,
				    const char *caller)
{
	struct page *slab;
	void *p;
	unsigned int n = 0;

	slab_assert_locked(s);
	if (!page_alloc_owns(obj) || !(slab = virt_to_slab(obj)))
		slab_bad_pointer(caller, s->name, obj, "not a slab object", true);
	if (slab->slab_cache != s) {
		pr_err("%s(%s): invalid pointer 0x%lx (object of cache %s)",
		       caller, s->name, (unsigned long)obj,
		       slab->slab_cache->name);
		slab_fatal();
	}
	if (!is_object(s, slab, obj))
		slab_bad_pointer(caller, s->name, obj,
				 "not at an object boundary", true);
	for (p = slab->freelist; p; p = get_freepointer(s, p)) {
		if (p == obj) {
			pr_err("%s(%s): double free of object 0x%lx", caller,
			       s->name, (unsigned long)obj);
			slab_fatal();
		}
		if (++n > slab->objects || !is_object(s, slab, p)) {
			pr_err("Freelist corrupt (cache %s, slab 0x%lx)",
			       s->name, (unsigned long)slab_base(slab));
			slab_fatal();
		}
	}
	if (s->flags & SLAB_RED_ZONE) {
		check_redzone(s, obj, SLUB_RED_ACTIVE);
		set_redzone(s, obj, SLUB_RED_INACTIVE);
	}
	if (s->flags & __OBJECT_POISON)
		poison_object(s, obj);
	return slab;
}
