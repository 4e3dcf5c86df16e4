// SPDX-License-Identifier: MIT
/*
 * Per-cache settings (magazine size, batch, depot limit) and the one place
 * that computes a cache's tunables.
 *
 * A setting may name a cache that does not exist yet: the kmalloc-N caches
 * are created on first use, after the malloc layer has read USLAB_OPTIONS,
 * and a service creates its own caches whenever it likes. So settings are
 * kept here, in the order given, and every cache resolves its tunables from
 * them when it is created (slab_settings_resolve(), called by
 * __kmem_cache_create()); a setting added later is applied at once to the
 * caches it names that already exist. Three front ends share this parser
 * and this resolution: USLAB_OPTIONS (malloc/options.c), `uslab sim
 * --mag-size/--batch/--depot-limit` (sim/), and, for the numbers and their
 * ranges, slabinfo writes (slabinfo.c).
 *
 * Names: "kmalloc-64" or any kmem_cache_create() name, or a byte size
 * ("64", "100"), which means the kmalloc cache serving that size. No name
 * means every kmalloc cache (malloc's), as mag_size=N always did.
 *
 * Defaults, when no setting names a cache: percpu's table by object size
 * (pcp_default_limit(), Kconfig PERCPU_MAG_SIZE) and pcp_default_batchcount()
 * of that limit; the depot limit is percpu's (Kconfig PERCPU_DEPOT_LIMIT).
 * A batch never exceeds the magazine.
 *
 * Locking: settings_lock protects the table; nothing is called under it.
 * It nests inside slab_mutex (kmalloc-N creation resolves under it). A
 * setting added while a cache is being created is not lost: the creator
 * compares settings_gen after publishing the cache and applies again.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <urcu/urcu-memb.h>
#include <urcu/rculist.h>
#include "slab/internal.h"

#define SLAB_MAX_SETTINGS	256
#define SLAB_SETTING_MAX_MAG	4096
#define SLAB_SETTING_MAX_DEPOT	65536

struct slab_setting_entry {
	struct kmem_cache_setting set;
	bool matched;
};

static pthread_mutex_t settings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slab_setting_entry settings[SLAB_MAX_SETTINGS];
static unsigned int nr_settings;
static unsigned int settings_gen;

static const char *const tunable_names[] = {
	[KMEM_TUNE_MAG_SIZE] = "mag_size",
	[KMEM_TUNE_BATCH] = "batch",
	[KMEM_TUNE_DEPOT_LIMIT] = "depot_limit",
};

/**
 * kmem_cache_parse_long - a decimal number in [@min, @max]: digits with an
 * optional leading '-', nothing else. The one number parser of settings and
 * slabinfo writes.
 * Return: 0, -EINVAL (malformed) or -ERANGE.
 */
__visible int kmem_cache_parse_long(const char *val, long min, long max, long *out)
{
	bool neg = false;
	long v = 0;

	if (!val || !*val)
		return -EINVAL;
	if (*val == '-')
		neg = true, val++;
	if (!*val)
		return -EINVAL;
	for (; *val; val++) {
		if (*val < '0' || *val > '9')
			return -EINVAL;
		if (v > (LONG_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (*val - '0');
	}
	if (neg)
		v = -v;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static void tunable_range(enum kmem_cache_tunable what, long *min, long *max)
{
	if (what == KMEM_TUNE_DEPOT_LIMIT) {
		*min = -1;
		*max = SLAB_SETTING_MAX_DEPOT;
	} else {
		*min = 0;			/* 0: the default */
		*max = SLAB_SETTING_MAX_MAG;
	}
}

/**
 * kmem_cache_setting_parse - "mag_size[.CACHE]=N", "batch[.CACHE]=N" or
 * "depot_limit[.CACHE]=N" into @set; nothing is applied.
 * Return: 0; -ENOENT when the item is not one of these three (the caller
 * may know it); -EINVAL malformed; -ERANGE value or size out of range;
 * -EOPNOTSUPP when this build has no per-CPU magazines at all.
 */
__visible int kmem_cache_setting_parse(const char *item, struct kmem_cache_setting *set)
{
	const char *eq, *dot, *name = NULL;
	size_t klen, nlen = 0;
	long min, max, size;
	int what, err;

	if (!item)
		return -EINVAL;
	eq = strchr(item, '=');
	dot = strchr(item, '.');
	if (dot && eq && dot > eq)
		dot = NULL;
	klen = dot ? (size_t)(dot - item) : eq ? (size_t)(eq - item) : strlen(item);
	for (what = 0; what < (int)ARRAY_SIZE(tunable_names); what++)
		if (strlen(tunable_names[what]) == klen &&
		    !strncmp(item, tunable_names[what], klen))
			break;
	if (what == (int)ARRAY_SIZE(tunable_names))
		return -ENOENT;
	if (!eq)
		return -EINVAL;
	memset(set, 0, sizeof(*set));
	set->what = (enum kmem_cache_tunable)what;
	tunable_range(set->what, &min, &max);
	err = kmem_cache_parse_long(eq + 1, min, max, &set->value);
	if (err)
		return err;
	if (dot) {
		name = dot + 1;
		nlen = (size_t)(eq - name);
		if (!nlen || nlen >= sizeof(set->key))
			return -EINVAL;
		memcpy(set->key, name, nlen);
		set->key[nlen] = '\0';
		if (!kmem_cache_parse_long(set->key, LONG_MIN + 1, LONG_MAX, &size)) {
			const char *kname;

			/* a byte size: the kmalloc cache that serves it */
			if (size < 1 || (size_t)size > KMALLOC_MAX_CACHE_SIZE)
				return -ERANGE;
			kname = kmalloc_info[kmalloc_index((size_t)size)].name;
			memcpy(set->cache, kname, strlen(kname) + 1);
		} else {
			memcpy(set->cache, set->key, nlen + 1);
		}
	}
	if (!IS_ENABLED(CONFIG_PERCPU_CACHE) || IS_ENABLED(CONFIG_SLAB_DEBUG_ON))
		return -EOPNOTSUPP;
	return 0;
}

/* Does @set speak about @s? (no name: every kmalloc cache) */
static bool setting_matches(const struct kmem_cache_setting *set,
			    const struct kmem_cache *s)
{
	if (!set->cache[0])
		return s->flags & __SLAB_KMALLOC;
	return !strcmp(set->cache, s->name);
}

/*
 * The tunables @s gets from the settings and the defaults; marks the
 * settings that matched. @depot is -2 when no setting names a depot limit.
 */
static void resolve_tunables(struct kmem_cache *s, unsigned int *limit,
			     unsigned int *batch, long *depot, unsigned int *gen)
{
	long mag = 0, bat = 0;
	unsigned int i, pass;

	*depot = -2;
	pthread_mutex_lock(&settings_lock);
	/* every-kmalloc-cache settings first: one naming the cache wins */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < nr_settings; i++) {
			struct slab_setting_entry *e = &settings[i];

			if (!e->set.cache[0] != !pass || !setting_matches(&e->set, s))
				continue;
			e->matched = true;
			switch (e->set.what) {
			/* 0 takes a setting back: the general one or the default */
			case KMEM_TUNE_MAG_SIZE:
				mag = e->set.value ? e->set.value : mag;
				break;
			case KMEM_TUNE_BATCH:
				bat = e->set.value ? e->set.value : bat;
				break;
			case KMEM_TUNE_DEPOT_LIMIT:
				*depot = e->set.value;
				break;
			}
		}
	}
	*gen = settings_gen;
	pthread_mutex_unlock(&settings_lock);

	*limit = mag > 0 ? (unsigned int)mag : pcp_default_limit(s->size);
	*batch = bat > 0 ? (unsigned int)bat : pcp_default_batchcount(*limit);
	if (*batch > *limit)
		*batch = *limit;
}

/**
 * slab_settings_resolve - tunables of a cache being created: the settings
 * that name it, else the defaults. Debug caches and builds without per-CPU
 * caching have none (0 0 0, as SLUB shows).
 * Context: @s not yet visible; may be called under slab_mutex.
 */
void slab_settings_resolve(struct kmem_cache *s)
{
	unsigned int limit, batch, gen;
	long depot;

	resolve_tunables(s, &limit, &batch, &depot, &gen);
	s->settings_gen = gen;
	if (!IS_ENABLED(CONFIG_PERCPU_CACHE) || slab_debug(s)) {
		s->limit = s->batchcount = s->shared = 0;
		s->depot_limit = -2;
		return;
	}
	s->limit = limit;
	s->batchcount = batch;
	s->shared = s->size <= PAGE_SIZE ? 8 : 0;
	s->depot_limit = depot;
}

/* Put the resolved tunables of a live cache into force. */
static int settings_apply(struct kmem_cache *s)
{
	struct pcp_cache *pc = kmem_cache_pcp(s);
	unsigned int limit, batch, gen, now_limit, now_batch;
	long depot;
	int err = 0;

	if (!pc)
		return -EOPNOTSUPP;
	resolve_tunables(s, &limit, &batch, &depot, &gen);
	pcp_cache_get_tunables(pc, &now_limit, &now_batch);
	if (limit != now_limit || batch != now_batch)
		err = kmem_cache_set_tunables(s, limit, batch, READ_ONCE(s->shared));
	if (!err && depot != -2)
		err = pcp_cache_set_depot_limit(pc, depot < 0 ? PCP_DEPOT_UNLIMITED :
						(unsigned int)depot);
	WRITE_ONCE(s->settings_gen, gen);
	return err;
}

/**
 * slab_settings_recheck - after @s is on slab_caches: apply settings added
 * since it resolved its tunables.
 * Context: not under slab_mutex (resizing drains magazines).
 */
void slab_settings_recheck(struct kmem_cache *s)
{
	if (__atomic_load_n(&settings_gen, __ATOMIC_ACQUIRE) != READ_ONCE(s->settings_gen))
		settings_apply(s);
}

/**
 * slab_settings_store - keep @set; one naming the same tunable of the same
 * cache (or of every kmalloc cache) replaces it, so repeated writes never
 * fill the table.
 * Return: 0 or -ENOSPC when SLAB_MAX_SETTINGS different ones are kept.
 */
int slab_settings_store(const struct kmem_cache_setting *set)
{
	unsigned int i;

	pthread_mutex_lock(&settings_lock);
	for (i = 0; i < nr_settings; i++)
		if (settings[i].set.what == set->what &&
		    !strcmp(settings[i].set.cache, set->cache))
			break;
	if (i == SLAB_MAX_SETTINGS) {
		pthread_mutex_unlock(&settings_lock);
		return -ENOSPC;
	}
	if (i == nr_settings) {
		settings[i].matched = false;
		nr_settings++;
	}
	settings[i].set = *set;
	__atomic_store_n(&settings_gen, settings_gen + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&settings_lock);
	return 0;
}

/**
 * slab_settings_apply - put the tunables that the settings and defaults
 * give @s into force (it exists, it is on slab_caches).
 * Context: an RCU reader or holding a reference; may drain magazines.
 * Return: 0, -EOPNOTSUPP for a cache without magazines, or the error of
 * kmem_cache_set_tunables().
 */
int slab_settings_apply(struct kmem_cache *s)
{
	return settings_apply(s);
}

/**
 * kmem_cache_setting_add - keep @set for caches created from now on and
 * apply it to the existing caches it names.
 * Context: thread-safe; an RCU reader; may drain magazines.
 * Return: 0; -ENOSPC when SLAB_MAX_SETTINGS are kept already; the first
 * error of kmem_cache_set_tunables() on an existing cache.
 */
__visible int kmem_cache_setting_add(const struct kmem_cache_setting *set)
{
	struct kmem_cache *s;
	int err;

	slab_init();
	err = slab_settings_store(set);
	if (err)
		return err;
	slab_rcu_read_lock();
	cds_list_for_each_entry_rcu(s, &slab_caches, list) {
		int e;

		if (!setting_matches(set, s))
			continue;
		e = settings_apply(s);
		if (e == -EOPNOTSUPP)
			continue;	/* a debug cache among the kmalloc ones */
		err = err ? err : e;
	}
	slab_rcu_read_unlock();
	return err;
}

/** kmem_cache_setting - kmem_cache_setting_parse() then _add(). */
__visible int kmem_cache_setting(const char *item)
{
	struct kmem_cache_setting set;
	int err = kmem_cache_setting_parse(item, &set);

	return err ? err : kmem_cache_setting_add(&set);
}

/**
 * kmem_cache_setting_str - @set as the item it came from
 * ("mag_size.kmalloc-64=32", "batch=8") into @buf.
 * Return: @buf.
 */
__visible char *kmem_cache_setting_str(const struct kmem_cache_setting *set, char *buf,
			     size_t len)
{
	size_t pos = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	uslab_bufprintf(buf, len, &pos, "%s%s%s=%ld", tunable_names[set->what],
			set->key[0] ? "." : "", set->key, set->value);
	return buf;
}

/**
 * kmem_cache_settings_unmatched - the settings that named a cache which
 * never existed (so far), as items separated by ", ", into @buf.
 * Context: thread-safe; never allocates.
 * Return: how many.
 */
__visible unsigned int kmem_cache_settings_unmatched(char *buf, size_t len)
{
	unsigned int i, n = 0;
	size_t pos = 0;
	char item[128];

	if (len)
		buf[0] = '\0';
	pthread_mutex_lock(&settings_lock);
	for (i = 0; i < nr_settings; i++) {
		const struct slab_setting_entry *e = &settings[i];

		if (e->matched || !e->set.cache[0])
			continue;
		kmem_cache_setting_str(&e->set, item, sizeof(item));
		if (len)
			uslab_bufprintf(buf, len, &pos, "%s%s", n ? ", " : "", item);
		n++;
	}
	pthread_mutex_unlock(&settings_lock);
	return n;
}

/**
 * kmem_cache_settings_clear - forget every setting (caches keep what they
 * have). For a process that runs several configurations one after the
 * other on fresh caches (tests).
 */
__visible void kmem_cache_settings_clear(void)
{
	pthread_mutex_lock(&settings_lock);
	nr_settings = 0;
	__atomic_store_n(&settings_gen, settings_gen + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&settings_lock);
}
