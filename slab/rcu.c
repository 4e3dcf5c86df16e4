// SPDX-License-Identifier: MIT
/*
 * RCU from liburcu (memb flavour): kfree_rcu(), slabs of
 * SLAB_TYPESAFE_BY_RCU caches returned to page_alloc only after a grace
 * period, and the RCU walk of the cache list.
 *
 * liburcu wants readers and call_rcu() callers registered. A thread the
 * application has not registered is registered only for the length of one
 * of these paths (a read-side section, one call_rcu, one barrier) and
 * unregistered at its end: the registration is borrowed, never kept, so
 * the application may still call rcu_register_thread() later (liburcu
 * asserts a thread registers once) and no thread leaves a reader behind.
 *
 * Recursion: call_rcu() and rcu_barrier() may call malloc (the call_rcu
 * worker's creation, barrier work items), which is this allocator when
 * preloaded. They are only ever called with no slab lock and no slab_mutex
 * held, and from paths kmalloc itself never takes (TYPESAFE_BY_RCU caches
 * are never kmalloc caches), so that malloc cannot come back here.
 *
 * Locking: no lock of its own; liburcu's internal locks only.
 */
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>
#include <urcu/call-rcu.h>
#include "slab/internal.h"

/* call_rcu reuses the first bytes of the slab arm; slab_cache stays valid. */
_Static_assert(offsetof(struct page, rcu_space) + sizeof(struct rcu_head) <=
	       offsetof(struct page, slab_cache),
	       "rcu_head must overlay slab_list only");

/* Depth of this thread's read-side sections under a borrowed registration. */
static __thread unsigned int rcu_borrowed;
static unsigned long kfree_rcu_pending;

/**
 * rcu_borrow - make the calling thread an RCU reader if it is not one
 * (the call_rcu worker and application readers already are).
 * Return: true when it registered here; give it back with rcu_give_back().
 * Context: any thread; no slab lock held (registration takes liburcu's
 * registry lock).
 */
static bool rcu_borrow(void)
{
	if (likely(URCU_TLS(urcu_memb_reader).registered))
		return false;
	urcu_memb_register_thread();
	return true;
}

static void rcu_give_back(bool borrowed)
{
	if (borrowed)
		urcu_memb_unregister_thread();
}

void slab_rcu_read_lock(void)
{
	if (rcu_borrowed)
		rcu_borrowed++;
	else if (rcu_borrow())
		rcu_borrowed = 1;
	urcu_memb_read_lock();
}

void slab_rcu_read_unlock(void)
{
	urcu_memb_read_unlock();
	if (rcu_borrowed && --rcu_borrowed == 0)
		rcu_give_back(true);
}

void slab_rcu_synchronize(void)
{
	urcu_memb_synchronize_rcu();
}

void slab_rcu_barrier(void)
{
	bool borrowed = rcu_borrow();

	urcu_memb_barrier();
	rcu_give_back(borrowed);
}

/* kmem_cache_destroy(): objects of the cache may still wait in kfree_rcu(). */
void slab_rcu_barrier_if_pending(void)
{
	if (__atomic_load_n(&kfree_rcu_pending, __ATOMIC_ACQUIRE))
		slab_rcu_barrier();
}

static void rcu_free_slab(struct rcu_head *head)
{
	struct page *slab = (struct page *)((char *)head -
					    offsetof(struct page, rcu_space));

	ClearPageFlag(slab, PG_rcu);
	ClearPageFlag(slab, PG_slab);
	__free_pages(slab, slab->slab_order);
}

/**
 * slab_rcu_free_slab - give a SLAB_TYPESAFE_BY_RCU slab back to page_alloc
 * after a grace period: readers inside rcu_read_lock() may still look at
 * its objects, which stay mapped and of the same type until then.
 * Context: no slab lock held (call_rcu may allocate).
 */
void slab_rcu_free_slab(struct page *slab)
{
	bool borrowed;

	SetPageFlag(slab, PG_rcu);
	borrowed = rcu_borrow();
	urcu_memb_call_rcu((struct rcu_head *)slab->rcu_space, rcu_free_slab);
	rcu_give_back(borrowed);
}

static void kfree_rcu_cb(struct rcu_head *head)
{
	struct page *page = compound_head(virt_to_page(head));
	void *obj;

	/* The object holding @head: the slab object around it, or the block. */
	if (PageFlag(page, PG_slab))
		obj = slab_nearest_obj(page->slab_cache, page, head);
	else
		obj = page_address(page);
	kfree(obj);
	__atomic_fetch_sub(&kfree_rcu_pending, 1, __ATOMIC_RELEASE);
}

/**
 * __kfree_rcu - kfree() the object that embeds @head after a grace period
 * (the kfree_rcu(ptr, field) macro).
 * @offset: of @head in the object; the callback finds the object from the
 *          slab layout instead, since liburcu passes only @head.
 * Context: any thread, inside or outside rcu_read_lock(); no slab lock held.
 */
void __kfree_rcu(struct rcu_head *head, size_t offset)
{
	bool borrowed;

	__atomic_fetch_add(&kfree_rcu_pending, 1, __ATOMIC_RELAXED);
	borrowed = rcu_borrow();
	urcu_memb_call_rcu(head, kfree_rcu_cb);
	rcu_give_back(borrowed);
}

/** kvfree_rcu_mightsleep - wait for a grace period, then kfree(@p). */
void kvfree_rcu_mightsleep(const void *p)
{
	if (ZERO_OR_NULL_PTR(p))
		return;
	slab_rcu_synchronize();
	kfree(p);
}

/** kfree_rcu_barrier - wait until every kfree_rcu() issued so far is done. */
void kfree_rcu_barrier(void)
{
	slab_rcu_barrier();
}

/*
 * fork(): liburcu's call_rcu workers must be paused around fork and
 * re-made in the child, or callbacks queued by the child would never run.
 */
void slab_rcu_fork_prepare(void)
{
	urcu_memb_call_rcu_before_fork();
}

void slab_rcu_fork_parent(void)
{
	urcu_memb_call_rcu_after_fork_parent();
}

void slab_rcu_fork_child(void)
{
	urcu_memb_call_rcu_after_fork_child();
}
