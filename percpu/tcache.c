// SPDX-License-Identifier: MIT
/*
 * A cache per thread in front of fallback mode's locked path (no rseq:
 * valgrind, a seccomp filter refusing rseq, CONFIG_PERCPU_RSEQ=n). In
 * fallback mode every fast path misses, and each operation used to take
 * the CPU's mutex and ask sched_getcpu(). Here each thread keeps, per
 * cache, a small stack of objects (a *bin*) that it serves with plain
 * loads and stores of its own memory: no lock, no atomic read-modify-write,
 * no system call on a hit. An empty bin takes half a bin from the CPU's
 * magazines, a full one gives half back, each in one hold of the CPU lock
 * (pcp_tc_get()/pcp_tc_put() in magazine.c: the same policy, depot and
 * refill/flush below it, so cross-thread frees and the depot work as
 * before). docs/percpu.md "Modes" has the design and its figures.
 *
 * Per thread: one initial-exec TLS pointer (tc_self; the library may be
 * dlopen'ed, so nothing larger), to a struct pcp_tc made at the thread's
 * first operation on a cache that has a thread cache, with a pointer per
 * cache id; each bin is made at the first use of its cache. Caches up to
 * TC_MAX_SIZE bytes get an id (1..TC_IDS - 1) at creation in fallback
 * mode; id 0 means none (the locked path).
 *
 * A bin holds at most TC_BIN_BYTES of objects (between TC_CAP_MIN and
 * TC_CAP_MAX of them), so a thread holds at most that per cache it uses.
 *
 * Signal handlers: @busy is set around every operation on the thread's
 * own cache. A handler that finds it set (it interrupted its thread's
 * cache) takes the locked path, which refuses it when the thread holds an
 * allocator lock (ops->may_lock: the slab layer's emergency blocks).
 *
 * Fork: an object is never in two places another thread's snapshot could
 * see. A bin's objects are objs[0 .. count); an operation stores the slot
 * before the count that covers it, and takes objects out of the count
 * before they go anywhere else. So a fork child that finds another
 * thread's cache (the thread is gone) may give back what its bins hold
 * (at most the objects a dead thread had in its hands are lost: one batch).
 *
 * Locks: pcp_tc_lock protects the registry of thread caches (creation,
 * exit, fork, the walks of pcp_cache_destroy(), statistics and object
 * counts). It nests inside slab_mutex (kmem_cache_destroy) and outside
 * every other percpu lock; under it, bins are given back straight to the
 * layer above (ops->flush: the slab layer's cache lock) and pcp_mem_lock
 * is taken. The owner's operations take no lock.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include "lib/sigsafe.h"
#include "percpu/internal.h"

#define TC_IDS		120		/* ids of caches with a thread cache; 0: none
					 * (struct pcp_tc then fits 1 KiB) */
#define TC_MAX_SIZE	2048		/* largest object a thread caches */
#define TC_BIN_BYTES	8192		/* objects one bin holds at most, bytes */
#define TC_CAP_MIN	4
#define TC_CAP_MAX	56		/* a bin is then 64 + 56 * 8 = 512 bytes */

struct pcp_tc_bin {
	struct pcp_cache *pc;		/* whose objects */
	unsigned int count;		/* objs[0 .. count) */
	unsigned int cap;
	unsigned int gen;		/* pc->tc_gen when last emptied */
	unsigned int pad;
	uint64_t stat[TC_NR_STATS];
	void *objs[];
} __attribute__((aligned(64)));
static_assert(sizeof(struct pcp_tc_bin) == 64, "bin header is one line");

struct pcp_tc {
	unsigned int busy;		/* inside an operation on this cache */
	bool orphan;			/* a fork child's: its thread is gone */
	struct pcp_tc *next, *prev;	/* registry, under pcp_tc_lock */
	struct pcp_tc_bin *bin[TC_IDS];
};
static_assert(sizeof(struct pcp_tc) <= 1024, "a thread's cache is one 1 KiB block");

/* tc_self's values below a real pointer */
#define TC_NONE		((struct pcp_tc *)0)	/* not made yet */
#define TC_DEAD		((struct pcp_tc *)1)	/* the thread exited, or no key */
#define TC_MAKING	((struct pcp_tc *)2)	/* being made */
#define TC_REAL(t)	((uintptr_t)(t) > 2)

static __thread struct pcp_tc *tc_self __attribute__((tls_model("initial-exec")));

static pthread_mutex_t pcp_tc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pcp_tc *tc_registry;
static unsigned long tc_nr_orphans;	/* a fork child's to give back */
static bool tc_off;			/* pcp_thread_cache_set(false) */
static pthread_key_t tc_key;
static int tc_key_state;		/* 0: none yet, 1: made, -1: failed */
static uint64_t tc_ids[(TC_IDS + 63) / 64];	/* ids in use; bit 0 never */
/* statistics of bins given back (thread exit, destroy) */
static uint64_t tc_retired[TC_IDS][TC_NR_STATS];

static void tc_lock(void)
{
	sigsafe_enter();
	pthread_mutex_lock(&pcp_tc_lock);
}

static void tc_unlock(void)
{
	pthread_mutex_unlock(&pcp_tc_lock);
	sigsafe_exit();
}

static inline unsigned int tc_load(const unsigned int *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* The owner's stores that others read (walks, a fork child): in order. */
static inline void tc_store(unsigned int *p, unsigned int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void tc_count_stat(struct pcp_tc_bin *b, int i)
{
	if (IS_ENABLED(CONFIG_PERCPU_STATS))
		__atomic_store_n(&b->stat[i], __atomic_load_n(&b->stat[i],
				 __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* The statistics a batch just added to the CPU's: zero (walks read them). */
static inline void tc_stats_done(struct pcp_tc_bin *b)
{
	int i;

	for (i = 0; i < TC_NR_STATS; i++)
		__atomic_store_n(&b->stat[i], 0, __ATOMIC_RELAXED);
}

static inline void tc_enter(struct pcp_tc *t)
{
	t->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void tc_exit(struct pcp_tc *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

/* ------------------------------------------------------------------ */
/* Ids */

static unsigned int tc_cap(const struct pcp_cache *pc)
{
	unsigned int cap = TC_BIN_BYTES / max_t(unsigned int, pc->objsize, 1);

	return min_t(unsigned int, max_t(unsigned int, cap, TC_CAP_MIN), TC_CAP_MAX);
}

unsigned int pcp_tc_id_get(const struct pcp_cache *pc)
{
	unsigned int w, bit, id;
	uint64_t old, mask;

	if (pcp_mode_cur != PCP_MODE_FALLBACK || !pc->objsize ||
	    pc->objsize > TC_MAX_SIZE)
		return 0;
	for (w = 0; w < ARRAY_SIZE(tc_ids); w++) {
		mask = w ? ~0ull : ~1ull;	/* id 0: none */
		if (TC_IDS - w * 64 < 64)	/* ids past TC_IDS: never */
			mask &= (1ull << (TC_IDS - w * 64)) - 1;
		old = __atomic_load_n(&tc_ids[w], __ATOMIC_RELAXED);
		while (~old & mask) {
			bit = (unsigned int)__builtin_ctzll(~old & mask);
			if (!__atomic_compare_exchange_n(&tc_ids[w], &old,
							 old | (1ull << bit), false,
							 __ATOMIC_ACQ_REL,
							 __ATOMIC_RELAXED))
				continue;
			id = w * 64 + bit;
			for (bit = 0; bit < TC_NR_STATS; bit++)
				__atomic_store_n(&tc_retired[id][bit], 0,
						 __ATOMIC_RELAXED);
			return id;
		}
	}
	return 0;
}

static void tc_id_put(unsigned int id)
{
	__atomic_and_fetch(&tc_ids[id / 64], ~(1ull << (id % 64)), __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ */
/* Making and giving back */

static void tc_retire_stats(unsigned int id, struct pcp_tc_bin *b)
{
	int i;

	for (i = 0; i < TC_NR_STATS; i++)
		__atomic_add_fetch(&tc_retired[id][i], b->stat[i], __ATOMIC_RELAXED);
}

/*
 * Give back bin @id of @t and free it: to this CPU's magazines (a thread
 * that exits: the next thread finds its objects there), or straight to
 * the layer above when its cache is being destroyed (@to_slabs). Under
 * pcp_tc_lock; @t's thread is not using it (exited, gone with a fork, or
 * the cache is being destroyed).
 */
static void tc_bin_release_locked(struct pcp_tc *t, unsigned int id,
				  bool to_slabs)
{
	struct pcp_tc_bin *b = t->bin[id];
	unsigned int n;

	if (!b)
		return;
	n = tc_load(&b->count);
	tc_store(&b->count, 0);
	if (!to_slabs && pcp_tc_put(b->pc, b->objs, n, b->stat, false)) {
		tc_stats_done(b);	/* added to the CPU's */
	} else if (n) {
		b->pc->ops->flush(b->pc->owner, b->objs, n);
	}
	tc_retire_stats(id, b);
	__atomic_store_n(&t->bin[id], NULL, __ATOMIC_RELEASE);
	pcp_mem_free(b, sizeof(*b) + b->cap * sizeof(void *));
}

static void tc_unlink_locked(struct pcp_tc *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		tc_registry = t->next;
	if (t->next)
		t->next->prev = t->prev;
}

static void tc_release_locked(struct pcp_tc *t)
{
	unsigned int id;

	for (id = 1; id < TC_IDS; id++)
		tc_bin_release_locked(t, id, false);
	tc_unlink_locked(t);
	if (t->orphan)
		__atomic_sub_fetch(&tc_nr_orphans, 1, __ATOMIC_RELAXED);
	pcp_mem_free(t, sizeof(*t));
}

/* The thread's exit (its key's destructor): every bin goes back. */
static void tc_thread_exit(void *arg)
{
	struct pcp_tc *t = arg;

	/* a handler from here on, and later frees (other destructors),
	 * take the locked path */
	tc_enter(t);
	tc_self = TC_DEAD;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tc_lock();
	tc_release_locked(t);
	tc_unlock();
}

static void tc_key_init(void)
{
	tc_key_state = pthread_key_create(&tc_key, tc_thread_exit) ? -1 : 1;
}

/* A fork child's caches of threads that are gone go back (no lock held). */
static noinline void tc_reap_orphans(void)
{
	struct pcp_tc *t, *next;

	tc_lock();
	for (t = tc_registry; t; t = next) {
		next = t->next;
		if (t->orphan)
			tc_release_locked(t);
	}
	tc_unlock();
}

/*
 * The thread's cache, made at its first use. Not from inside the
 * allocator (a signal handler or a constructor under its locks: the
 * registry lock and pcp_mem_lock may be held), nor while being made.
 */
static noinline struct pcp_tc *tc_make(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct pcp_tc *t;

	if (tc_self != TC_NONE || sigsafe_reentered() ||
	    __atomic_load_n(&tc_off, __ATOMIC_RELAXED))
		return NULL;
	tc_self = TC_MAKING;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_once(&once, tc_key_init);
	t = tc_key_state > 0 ? pcp_mem_alloc(sizeof(*t), sizeof(*t)) : NULL;
	if (!t) {
		tc_self = TC_DEAD;	/* no exit hook, or no memory: locked path */
		return NULL;
	}
	t->busy = 1;
	tc_lock();
	t->next = tc_registry;
	if (t->next)
		t->next->prev = t;
	tc_registry = t;
	tc_unlock();
	tc_self = t;
	/* may calloc (keys past 32): busy sends that to the locked path */
	if (pthread_setspecific(tc_key, t)) {
		tc_self = TC_DEAD;
		tc_lock();
		tc_release_locked(t);
		tc_unlock();
		return NULL;
	}
	tc_exit(t);
	return t;
}

/* ------------------------------------------------------------------ */
/* Misses */

/*
 * The bin was emptied by a drain of its cache (pcp_cache_drain(): shrink,
 * trim, resize) since the owner last looked: its objects go back to the
 * layer above. Busy, no lock held. Return: false when the layer above
 * refuses locks now (a handler): the caller takes the locked path.
 */
static bool tc_bin_gen_flush(struct pcp_cache *pc, struct pcp_tc_bin *b,
			     bool ask)
{
	void *buf[TC_CAP_MAX];
	unsigned int n = b->count, gen = tc_load(&pc->tc_gen);

	if (n) {
		if (ask && pc->ops->may_lock && !pc->ops->may_lock(pc->owner))
			return false;
		memcpy(buf, b->objs, n * sizeof(void *));
		tc_store(&b->count, 0);
		pc->ops->flush(pc->owner, buf, n);
	}
	b->gen = gen;
	return true;
}

/* The bin of @pc in @t, made if need be; busy. NULL: the locked path. */
static struct pcp_tc_bin *tc_bin(struct pcp_tc *t, struct pcp_cache *pc)
{
	struct pcp_tc_bin *b = t->bin[pc->tc_id];
	unsigned int cap;

	if (b) {
		if (unlikely(b->gen != tc_load(&pc->tc_gen)) &&
		    !tc_bin_gen_flush(pc, b, true))
			return NULL;
		return b;
	}
	if (sigsafe_reentered())	/* pcp_mem_lock may be held */
		return NULL;
	cap = tc_cap(pc);
	b = pcp_mem_alloc(sizeof(*b) + cap * sizeof(void *), sizeof(*b));
	if (!b)
		return NULL;
	b->pc = pc;
	b->cap = cap;
	b->gen = tc_load(&pc->tc_gen);
	__atomic_store_n(&t->bin[pc->tc_id], b, __ATOMIC_RELEASE);
	return b;
}

/* Operations that found their thread's cache busy and took the locked
 * path: a signal handler's, or the cache's own nested calls (a deferred
 * free given back inside a batch, pthread_setspecific's calloc). */
unsigned long pcp_tc_nr_busy;

static noinline struct pcp_tc *tc_busy(void)
{
	__atomic_add_fetch(&pcp_tc_nr_busy, 1, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * The thread's cache when the hit path cannot use it: off, busy (a
 * handler), not made yet (made here). NULL: the locked path.
 */
static noinline struct pcp_tc *tc_get_cold(void)
{
	struct pcp_tc *t = tc_self;

	if (__atomic_load_n(&tc_off, __ATOMIC_RELAXED))
		return NULL;
	if (TC_REAL(t))
		return t->busy ? tc_busy() : t;
	return tc_make();
}

/* Can the hit path use @t? One load each of the switch and the flag. */
static __always_inline bool tc_usable(const struct pcp_tc *t)
{
	return likely(TC_REAL(t) && !t->busy &&
		      !__atomic_load_n(&tc_off, __ATOMIC_RELAXED));
}

/*
 * The misses' common start: this thread's cache (made if need be),
 * entered (busy), orphans' bins given back, @pc's bin in *@bp (NULL:
 * none). Return: the cache, which the caller leaves with tc_exit(), or
 * NULL: no cache for this thread (nothing entered).
 */
static __always_inline struct pcp_tc *tc_miss_begin(struct pcp_tc *t,
						    struct pcp_cache *pc,
						    struct pcp_tc_bin **bp)
{
	if (!t && !(t = tc_get_cold()))
		return NULL;
	tc_enter(t);
	if (unlikely(__atomic_load_n(&tc_nr_orphans, __ATOMIC_RELAXED)) &&
	    !sigsafe_reentered())
		tc_reap_orphans();
	*bp = tc_bin(t, pc);
	return t;
}

static noinline void *tc_alloc_miss(struct pcp_tc *t, struct pcp_cache *pc)
{
	struct pcp_tc_bin *b;
	void *obj = NULL;
	unsigned int got;

	t = tc_miss_begin(t, pc, &b);
	if (!t)
		return NULL;
	if (!b)
		goto out;
	if (b->count) {		/* the hit path saw an old generation, kept */
		obj = b->objs[b->count - 1];
		tc_store(&b->count, b->count - 1);
		tc_count_stat(b, TC_ALLOC_HIT);
		goto out;
	}
	/* half a bin from the CPU's magazines, one hold of its lock; the
	 * slots are written before the count that covers them */
	got = pcp_tc_get(pc, b->objs, (b->cap + 1) / 2, b->stat);
	if (!got)
		goto out;	/* refused or out of memory: the locked path decides */
	tc_stats_done(b);
	tc_count_stat(b, TC_ALLOC_MISS);
	obj = b->objs[got - 1];
	tc_store(&b->count, got - 1);
out:
	tc_exit(t);
	return obj;
}

/**
 * pcp_tc_alloc - an object of @pc from this thread's cache (fallback mode,
 * @pc has an id).
 * Cost on a hit: the TLS pointer, busy, the bin by id, its gen against
 * the cache's, the count, the slot, the count's store: no lock, no atomic
 * read-modify-write, no system call.
 * Return: the object, or NULL: take the locked path (no thread cache,
 * busy: a signal handler; refused; out of memory).
 */
void *pcp_tc_alloc(struct pcp_cache *pc)
{
	struct pcp_tc *t = tc_self;
	struct pcp_tc_bin *b;
	unsigned int n;
	void *obj;

	if (unlikely(!tc_usable(t)))
		return tc_alloc_miss(NULL, pc);	/* a tail call: no frame here */
	tc_enter(t);
	b = t->bin[pc->tc_id];
	if (unlikely(!b || b->gen != tc_load(&pc->tc_gen) || !(n = b->count))) {
		tc_exit(t);
		return tc_alloc_miss(t, pc);
	}
	obj = b->objs[n - 1];
	tc_store(&b->count, n - 1);
	tc_count_stat(b, TC_ALLOC_HIT);
	tc_exit(t);
	return obj;
}

static noinline bool tc_free_miss(struct pcp_tc *t, struct pcp_cache *pc, void *obj)
{
	void *buf[TC_CAP_MAX];
	struct pcp_tc_bin *b;
	unsigned int n, k, keep;
	bool done = false;

	t = tc_miss_begin(t, pc, &b);
	if (!t)
		return false;
	if (!b)
		goto out;
	n = b->count;
	if (n == b->cap) {
		/*
		 * Full: the older half goes to the CPU's magazines, the newer
		 * (warm) half moves down. Out of the count first (a fork
		 * snapshot sees each object once at most), then moved.
		 */
		k = b->cap / 2;
		keep = n - k;
		memcpy(buf, b->objs, k * sizeof(void *));
		tc_store(&b->count, 0);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		memmove(b->objs, b->objs + k, keep * sizeof(void *));
		tc_store(&b->count, keep);
		if (!pcp_tc_put(pc, buf, k, b->stat, true)) {
			/* refused (a handler): put them back, the locked
			 * path takes @obj */
			tc_store(&b->count, 0);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			memmove(b->objs + k, b->objs, keep * sizeof(void *));
			memcpy(b->objs, buf, k * sizeof(void *));
			tc_store(&b->count, n);
			goto out;
		}
		tc_stats_done(b);
		n = keep;
	}
	b->objs[n] = obj;
	tc_store(&b->count, n + 1);
	tc_count_stat(b, TC_FREE_MISS);
	done = true;
out:
	tc_exit(t);
	return done;
}

/**
 * pcp_tc_free - put @obj in this thread's cache of @pc (fallback mode, @pc
 * has an id). Cost on a hit as pcp_tc_alloc()'s.
 * Return: true, or false: take the locked path (@obj is still the caller's).
 */
bool pcp_tc_free(struct pcp_cache *pc, void *obj)
{
	struct pcp_tc *t = tc_self;
	struct pcp_tc_bin *b;
	unsigned int n;

	if (unlikely(!tc_usable(t)))
		return tc_free_miss(NULL, pc, obj);	/* a tail call */
	tc_enter(t);
	b = t->bin[pc->tc_id];
	if (unlikely(!b || b->gen != tc_load(&pc->tc_gen) ||
		     (n = b->count) >= b->cap)) {
		tc_exit(t);
		return tc_free_miss(t, pc, obj);
	}
	b->objs[n] = obj;
	tc_store(&b->count, n + 1);
	tc_count_stat(b, TC_FREE_HIT);
	tc_exit(t);
	return true;
}

/* ------------------------------------------------------------------ */
/* The cache's life: drain, destroy, counts */

/*
 * pcp_cache_drain(): every thread's bin of @pc goes back at its owner's
 * next operation on @pc (a new generation), this thread's now.
 */
void pcp_tc_drain(struct pcp_cache *pc)
{
	struct pcp_tc *t = tc_self;
	struct pcp_tc_bin *b;

	if (!pc->tc_id)
		return;
	__atomic_add_fetch(&pc->tc_gen, 1, __ATOMIC_RELEASE);
	if (!TC_REAL(t) || t->busy || !(b = t->bin[pc->tc_id]))
		return;
	/* the caller's own call (kmem_cache_shrink()), not a handler's */
	tc_enter(t);
	tc_bin_gen_flush(pc, b, false);
	tc_exit(t);
}

/*
 * pcp_cache_destroy(): no thread uses @pc any more (its contract), so
 * every thread's bin of it is taken here, objects back to the layer
 * above, and the id is free for another cache.
 */
void pcp_tc_cache_destroy(struct pcp_cache *pc)
{
	struct pcp_tc *t;

	if (!pc->tc_id)
		return;
	tc_lock();
	for (t = tc_registry; t; t = t->next)
		tc_bin_release_locked(t, pc->tc_id, true);
	tc_unlock();
	tc_id_put(pc->tc_id);
	pc->tc_id = 0;
}

/*
 * Objects of @pc in thread caches, and (when @st is not NULL) the
 * statistics their bins have not yet added to a CPU's, added to @st.
 */
unsigned long pcp_tc_account(struct pcp_cache *pc, struct pcp_stats *st)
{
	static const enum pcp_stat_item item[TC_NR_STATS] = {
		PCP_STAT_ALLOC_HIT, PCP_STAT_FREE_HIT,
		PCP_STAT_ALLOC_SLOW, PCP_STAT_FREE_SLOW,
	};
	unsigned int id = pc->tc_id;
	unsigned long n = 0;
	struct pcp_tc *t;
	int i;

	if (!id)
		return 0;
	tc_lock();
	for (t = tc_registry; t; t = t->next) {
		struct pcp_tc_bin *b = __atomic_load_n(&t->bin[id], __ATOMIC_ACQUIRE);

		if (!b)
			continue;
		n += tc_load(&b->count);
		if (st)
			for (i = 0; i < TC_NR_STATS; i++)
				st->v[item[i]] += __atomic_load_n(&b->stat[i],
								  __ATOMIC_RELAXED);
	}
	if (st)
		for (i = 0; i < TC_NR_STATS; i++)
			st->v[item[i]] += __atomic_load_n(&tc_retired[id][i],
							  __ATOMIC_RELAXED);
	tc_unlock();
	return n;
}

void pcp_thread_cache_set(bool on)
{
	__atomic_store_n(&tc_off, !on, __ATOMIC_RELAXED);
}

bool pcp_thread_cache_enabled(void)
{
	return pcp_mode_cur == PCP_MODE_FALLBACK && !__atomic_load_n(&tc_off, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* fork: outside every other percpu lock (pcp_fork_prepare()) */

void pcp_tc_fork_prepare(void)
{
	pthread_mutex_lock(&pcp_tc_lock);
}

void pcp_tc_fork_parent(void)
{
	pthread_mutex_unlock(&pcp_tc_lock);
}

/*
 * Only this thread came along: the others' caches are orphans, given
 * back at this thread's next miss (tc_reap_orphans(): not here, where a
 * child that only execs would pay for it).
 */
void pcp_tc_fork_child(void)
{
	struct pcp_tc *t;

	pthread_mutex_init(&pcp_tc_lock, NULL);
	for (t = tc_registry; t; t = t->next) {
		if (t != tc_self && !t->orphan) {
			t->orphan = true;
			tc_nr_orphans++;
		}
	}
}
