// SPDX-License-Identifier: MIT
/*
 * Per-cache settings (magazine size, batch, depot limit, slab_debug) and
 * the one place that computes a cache's tunables: the table of tunables
 * (<uslab/tunables.h>) and its parsers, the kept settings, the resolution.
 * A leaf of slab/: it calls nothing of the folder (it reads kmalloc's name
 * table to turn a byte size into a cache name); putting settings into live
 * caches is slab.c's (kmem_cache_setting_add(), slab_settings_recheck()),
 * re-making a kmalloc cache kmalloc.c's.
 *
 * A setting may name a cache that does not exist yet: the kmalloc-N caches
 * are created on first use, after the malloc layer has read USLAB_OPTIONS,
 * and a service creates its own caches whenever it likes. So settings are
 * kept here, in the order given, and every cache resolves its tunables from
 * them when it is created (slab_settings_resolve(), called by
 * __kmem_cache_create()); a setting added later is applied at once to the
 * caches it names that already exist (slab.c). The front ends share the
 * rows, these parsers and this resolution: USLAB_OPTIONS
 * (malloc/options.c), `uslab sim --mag-size/--batch/--depot-limit` (sim/),
 * slabinfo writes (slabinfo.c).
 *
 * Names: "kmalloc-64" or any kmem_cache_create() name, or a byte size
 * ("64", "100"), which means the kmalloc cache serving that size; a name
 * ending in '*' matches every cache it begins ("kmalloc-*"). No name
 * means every kmalloc cache (malloc's), as mag_size=N always did.
 *
 * slab_debug (the kernel's slab_debug= boot parameter, docs/slab.md) is
 * kept in the same table: "slab_debug.NAME=FZPU" per cache, or the
 * kernel's list "slab_debug=FZ,kmalloc-64,dentry;P,kmalloc-*" which
 * kmem_cache_debug_parse() turns into such settings. Its flags are
 * resolved when a cache is created, before its layout
 * (slab_settings_debug_flags()), as the kernel's kmem_cache_flags(): the
 * first setting that names the cache wins, else the last one without a
 * name (every cache), else none (FZP everywhere under SLAB_DEBUG_ON).
 * A kmalloc cache that exists already is re-made (slab.c asks kmalloc.c).
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

struct slab_setting_entry {
	struct kmem_cache_setting set;
	bool matched;
};

static pthread_mutex_t settings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slab_setting_entry settings[SLAB_MAX_SETTINGS];
static unsigned int nr_settings;
static unsigned int settings_gen;

#define USLAB_TUNABLE_ROW(id, nm, k, sc, lo, hi, dflt, text)	\
	[USLAB_OPT_##id] = { .name = #nm, .kind = USLAB_TK_##k,		\
			     .scope = USLAB_TS_##sc, .min = lo, .max = hi,	\
			     .def = dflt, .help = text },
__visible const struct uslab_tunable uslab_tunables[USLAB_NR_TUNABLES] = {
	USLAB_TUNABLES(USLAB_TUNABLE_ROW)
};
#undef USLAB_TUNABLE_ROW

/* slab_debug letters, the kernel's (mm/slub.c parse_slub_debug_flags). */
static const struct {
	char letter;
	slab_flags_t flag;
} debug_letters[] = {
	{ 'F', SLAB_CONSISTENCY_CHECKS },
	{ 'Z', SLAB_RED_ZONE },
	{ 'P', SLAB_POISON },
	{ 'U', SLAB_STORE_USER },
};

/*
 * "FZPU", "fz", "-" (off), "" (all four, the kernel's "full debugging"),
 * of @len bytes, into @out. Return: 0 or -EINVAL (any other letter).
 */
static int debug_letters_parse(const char *val, size_t len, long *out)
{
	long flags = len ? 0 : (long)SLAB_DEBUG_FLAGS;
	size_t i, k;

	for (i = 0; i < len; i++) {
		char c = val[i];

		if (c == '-') {
			flags = 0;	/* switch everything off */
			continue;
		}
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		for (k = 0; k < ARRAY_SIZE(debug_letters); k++)
			if (debug_letters[k].letter == c)
				break;
		if (k == ARRAY_SIZE(debug_letters))
			return -EINVAL;
		flags |= (long)debug_letters[k].flag;
	}
	*out = flags;
	return 0;
}

/* Does @pattern ("kmalloc-64", "kmalloc-*") name @name? */
static bool name_matches(const char *pattern, const char *name)
{
	const char *glob = strchr(pattern, '*');

	if (glob)
		return !strncmp(pattern, name, (size_t)(glob - pattern));
	return !strcmp(pattern, name);
}

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

/** uslab_tunable_find - see include/uslab/tunables.h. */
__visible const struct uslab_tunable *uslab_tunable_find(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(uslab_tunables); i++)
		if (strlen(uslab_tunables[i].name) == len &&
		    !strncmp(name, uslab_tunables[i].name, len))
			return &uslab_tunables[i];
	return NULL;
}

/* "1", "y", "yes", "on", "true" and their opposites. */
static int flag_parse(const char *val, long *out)
{
	static const char *const yes[] = { "1", "y", "yes", "on", "true" };
	static const char *const no[] = { "0", "n", "no", "off", "false" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcmp(val, yes[i]) || !strcmp(val, no[i])) {
			*out = !strcmp(val, yes[i]);
			return 0;
		}
	}
	return -EINVAL;
}

/** uslab_tunable_parse - see include/uslab/tunables.h. */
__visible int uslab_tunable_parse(const struct uslab_tunable *t, const char *val, long *out)
{
	switch (t->kind) {
	case USLAB_TK_FLAG:
		if (!val) {
			*out = 1;
			return 0;
		}
		return flag_parse(val, out);
	case USLAB_TK_DEBUG:
		/* "slab_debug" alone: full debugging, as the kernel */
		return debug_letters_parse(val ? val : "", val ? strlen(val) : 0, out);
	case USLAB_TK_OFF_OR_NUM:
		if (val && !strcmp(val, "0")) {
			*out = 0;
			return 0;
		}
		/* fall through */
	case USLAB_TK_NUM:
		return kmem_cache_parse_long(val, t->min, t->max, out);
	case USLAB_TK_FAULT:
		break;
	}
	return -EINVAL;
}

/** uslab_tunable_split - see include/uslab/tunables.h. */
__visible void uslab_tunable_split(char *item, char **name, char **cache, char **val)
{
	char *eq = strchr(item, '=');
	char *dot;

	if (eq)
		*eq++ = '\0';
	dot = strchr(item, '.');
	if (dot)
		*dot++ = '\0';
	*name = item;
	*cache = dot;
	*val = eq;
}

/** kmem_cache_setting_make - see include/uslab/slab.h. */
__visible int kmem_cache_setting_make(struct kmem_cache_setting *set,
				      enum kmem_cache_tunable what,
				      const char *cache, size_t len, long value)
{
	const struct uslab_tunable *t;
	long size;

	memset(set, 0, sizeof(*set));
	set->what = what;
	set->value = value;
	if ((unsigned int)what > KMEM_TUNE_DEBUG)
		return -EINVAL;
	t = &uslab_tunables[what];
	if (t->kind == USLAB_TK_NUM && (value < t->min || value > t->max))
		return -ERANGE;
	if (cache) {
		if (!len || len >= sizeof(set->key))
			return -EINVAL;
		memcpy(set->key, cache, len);
		set->key[len] = '\0';
		if (!kmem_cache_parse_long(set->key, LONG_MIN + 1, LONG_MAX, &size)) {
			const char *kname;

			/* a byte size: the kmalloc cache that serves it */
			if (size < 1 || (size_t)size > KMALLOC_MAX_CACHE_SIZE)
				return -ERANGE;
			kname = kmalloc_info[kmalloc_index((size_t)size)].name;
			memcpy(set->cache, kname, strlen(kname) + 1);
		} else {
			memcpy(set->cache, set->key, len + 1);
		}
	}
	if (what == KMEM_TUNE_DEBUG)
		return IS_ENABLED(CONFIG_SLAB_DEBUG) ? 0 : -EOPNOTSUPP;
	if (!IS_ENABLED(CONFIG_PERCPU_CACHE) || IS_ENABLED(CONFIG_SLAB_DEBUG_ON))
		return -EOPNOTSUPP;
	return 0;
}

/**
 * kmem_cache_setting_parse - "mag_size[.CACHE]=N", "batch[.CACHE]=N",
 * "depot_limit[.CACHE]=N" or "slab_debug[.CACHE][=FZPU]" into @set: split
 * once, then the row's parser and kmem_cache_setting_make(); nothing is
 * applied.
 * Return: 0; -ENOENT when the item is not one of these (the caller may
 * know it); -EINVAL malformed; -ERANGE value or size out of range;
 * -EOPNOTSUPP when this build has no per-CPU magazines at all (no slab
 * debugging, for slab_debug).
 */
__visible int kmem_cache_setting_parse(const char *item, struct kmem_cache_setting *set)
{
	const struct uslab_tunable *t;
	char buf[160], *name, *cache, *val;
	long v;
	int err;

	if (!item || strlen(item) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, item, strlen(item) + 1);
	uslab_tunable_split(buf, &name, &cache, &val);
	t = uslab_tunable_find(name, strlen(name));
	if (!t || t->scope != USLAB_TS_CACHE)
		return -ENOENT;
	err = uslab_tunable_parse(t, val, &v);
	if (err)
		return err;
	return kmem_cache_setting_make(set, (enum kmem_cache_tunable)(t - uslab_tunables),
				       cache, cache ? strlen(cache) : 0, v);
}

/**
 * kmem_cache_debug_parse - slab_debug's value in the kernel's syntax into
 * settings: blocks separated by ';', each "FLAGS" (every cache) or
 * "FLAGS,name,name..." (those caches; "kmalloc-*" a prefix); empty FLAGS =
 * FZPU, '-' = none. NULL or "" = FZPU for every cache. Each block's flags
 * are read once; each name becomes one setting (kmem_cache_setting_make()).
 * Return: settings stored in @sets, or -EINVAL, -ENOSPC, -EOPNOTSUPP.
 */
__visible int kmem_cache_debug_parse(const char *val, struct kmem_cache_setting *sets,
			   unsigned int max)
{
	const char *p = val ? val : "";
	unsigned int n = 0;
	int err;

	for (;;) {
		const char *end = strchrnul(p, ';');
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *fend = comma ? comma : end;
		const char *nm = comma ? comma + 1 : NULL;
		long flags;

		if (fend - p > 16 || debug_letters_parse(p, (size_t)(fend - p), &flags))
			return -EINVAL;
		do {
			const char *ne = nm ? memchr(nm, ',', (size_t)(end - nm)) : NULL;

			if (nm && !ne)
				ne = end;
			if (n == max)
				return -ENOSPC;
			err = kmem_cache_setting_make(&sets[n], KMEM_TUNE_DEBUG, nm,
						      nm ? (size_t)(ne - nm) : 0, flags);
			if (err)
				return err;
			n++;
			nm = nm && ne < end ? ne + 1 : NULL;
		} while (nm);
		if (!*end)
			break;
		p = end + 1;
	}
	return (int)n;
}

/* Does @set speak about @s? (no name: every kmalloc cache; slab_debug:
 * every cache) */
bool slab_setting_matches(const struct kmem_cache_setting *set,
			    const struct kmem_cache *s)
{
	if (!set->cache[0])
		return set->what == KMEM_TUNE_DEBUG || (s->flags & __SLAB_KMALLOC);
	return name_matches(set->cache, s->name);
}

/* Could @set make a kmalloc cache a debug cache? */
bool slab_setting_debug_may_kmalloc(const struct kmem_cache_setting *set)
{
	const char *glob = strchr(set->cache, '*');
	size_t n = glob ? (size_t)(glob - set->cache) : strlen(set->cache);

	if (set->what != KMEM_TUNE_DEBUG || !set->value)
		return false;
	if (!set->cache[0])
		return true;
	if (n > 8)
		n = 8;
	return !strncmp(set->cache, "kmalloc-", glob ? n : 8);
}

/**
 * slab_settings_debug_flags - @flags of a cache named @name being created,
 * with the debug flags the slab_debug settings give it: the first one
 * naming it, else the last one for every cache, else none
 * (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON under
 * CONFIG_SLAB_DEBUG_ON). Flags the creator asked for stay.
 * Context: thread-safe; may be called under slab_mutex.
 */
slab_flags_t slab_settings_debug_flags(const char *name, slab_flags_t flags)
{
	slab_flags_t dflt = IS_ENABLED(CONFIG_SLAB_DEBUG_ON) ?
		SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON : 0;
	slab_flags_t named = 0;
	bool found = false;
	unsigned int i;

	pthread_mutex_lock(&settings_lock);
	for (i = 0; i < nr_settings; i++) {
		struct slab_setting_entry *e = &settings[i];

		if (e->set.what != KMEM_TUNE_DEBUG)
			continue;
		if (!e->set.cache[0]) {
			dflt = (slab_flags_t)e->set.value;
		} else if (!found && name_matches(e->set.cache, name)) {
			named = (slab_flags_t)e->set.value;
			found = true;
			e->matched = true;
		}
	}
	pthread_mutex_unlock(&settings_lock);
	return flags | (found ? named : dflt);
}

/**
 * kmem_cache_debug_kmalloc - may a slab_debug setting kept now make a
 * kmalloc cache a debug cache? (malloc then sends every size to kmalloc(),
 * which passes the size asked for.)
 */
__visible bool kmem_cache_debug_kmalloc(void)
{
	bool any = false;
	unsigned int i;

	pthread_mutex_lock(&settings_lock);
	for (i = 0; i < nr_settings && !any; i++)
		any = slab_setting_debug_may_kmalloc(&settings[i].set);
	pthread_mutex_unlock(&settings_lock);
	return any;
}

/**
 * slab_settings_tunables - the tunables @s gets from the settings and the
 * defaults; marks the settings that matched. @depot is -2 when no setting
 * names a depot limit; @gen the table's generation they come from.
 * Context: thread-safe; may be called under slab_mutex.
 */
void slab_settings_tunables(struct kmem_cache *s, unsigned int *limit,
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

			if (e->set.what == KMEM_TUNE_DEBUG)
				continue;	/* slab_settings_debug_flags() */
			if (!e->set.cache[0] != !pass || !slab_setting_matches(&e->set, s))
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
			case KMEM_TUNE_DEBUG:
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

	slab_settings_tunables(s, &limit, &batch, &depot, &gen);
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

/*
 * fork(): slab_fork_prepare() takes settings_lock last of slab's locks,
 * the parent releases it, the child re-makes it (a child forked while
 * another thread stored a setting would otherwise find it held forever).
 */
void slab_settings_fork_prepare(void)
{
	pthread_mutex_lock(&settings_lock);
}

void slab_settings_fork_parent(void)
{
	pthread_mutex_unlock(&settings_lock);
}

void slab_settings_fork_child(void)
{
	pthread_mutex_init(&settings_lock, NULL);
}

/** slab_settings_gen - the table's generation: one more at each change. */
unsigned int slab_settings_gen(void)
{
	return __atomic_load_n(&settings_gen, __ATOMIC_ACQUIRE);
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
	/* slab_debug keeps every setting in order: the first match wins */
	for (i = 0; i < nr_settings && set->what != KMEM_TUNE_DEBUG; i++)
		if (settings[i].set.what == set->what &&
		    !strcmp(settings[i].set.cache, set->cache))
			break;
	if (set->what == KMEM_TUNE_DEBUG)
		i = nr_settings;
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
	if (set->what == KMEM_TUNE_DEBUG) {
		char letters[8];
		size_t k, n = 0;

		for (k = 0; k < ARRAY_SIZE(debug_letters); k++)
			if (set->value & (long)debug_letters[k].flag)
				letters[n++] = debug_letters[k].letter;
		if (!n)
			letters[n++] = '-';
		letters[n] = '\0';
		uslab_bufprintf(buf, len, &pos, "%s%s%s=%s", uslab_tunables[set->what].name,
				set->key[0] ? "." : "", set->key, letters);
		return buf;
	}
	uslab_bufprintf(buf, len, &pos, "%s%s%s=%ld", uslab_tunables[set->what].name,
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
