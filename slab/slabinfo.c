// SPDX-License-Identifier: MIT
/*
 * slabinfo in the /proc/slabinfo 2.1 format, and the tunables it shows
 * (limit, batchcount, sharedfactor: the per-CPU magazine settings).
 *
 * Locking: the cache list is walked under RCU (caches may be created and
 * destroyed meanwhile: destroy waits a grace period before freeing); each
 * line is a snapshot taken under its cache's lock. Tunables are written
 * under the cache lock; slabinfo_write() looks the cache up and sets them
 * inside one RCU read-side section, so the cache cannot be freed in
 * between. Nothing here allocates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu/urcu-memb.h>
#include <urcu/rculist.h>
#include "lib/log.h"
#include "slab/internal.h"

/* LIMIT and BATCHCOUNT are mag_size and batch: their rows' bounds */
#define SLABINFO_MAX_LIMIT	(uslab_tunables[USLAB_OPT_MAG_SIZE].max)

static const char slabinfo_header[] =
	"# name            <active_objs> <num_objs> <objsize> <objperslab> "
	"<pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : "
	"slabdata <active_slabs> <num_slabs> <sharedavail>\n";

static void slabinfo_head(char *buf, size_t len, size_t *pos)
{
	uslab_bufprintf(buf, len, pos, "slabinfo - version: 2.1\n");
	/* the per-CPU primitive in force: rseq, fallback, vcpu or off */
	uslab_bufprintf(buf, len, pos, "# percpu: %s\n", pcp_mode());
	uslab_bufprintf(buf, len, pos, "%s", slabinfo_header);
}

static void slabinfo_line(struct kmem_cache *s, char *buf, size_t len,
			  size_t *pos)
{
	unsigned long active_objs, num_objs, active_slabs, num_slabs;
	unsigned int limit, batch, shared;

	/* objects held in magazines are free, not active */
	unsigned long cached = s->pcp ? pcp_cache_objects(s->pcp, NULL) : 0;

	slab_lock(s);
	active_objs = s->nr_inuse > cached ? s->nr_inuse - cached : 0;
	num_objs = s->nr_slabs * s->objects;
	active_slabs = s->nr_partial + s->nr_full;
	num_slabs = s->nr_slabs;
	limit = s->limit;
	batch = s->batchcount;
	shared = s->shared;
	slab_unlock(s);
	/* what the magazines are in force at: a cache whose magazines grew
	 * while it cycled (docs/percpu.md, "Magazines that grow") */
	if (s->pcp && !pcp_cache_is_bypass(s->pcp) && limit)
		pcp_cache_get_tunables(s->pcp, &limit, &batch);
	/* adaptive magazines: the largest size in force over the CPUs, and
	 * the batch they move: the cache's at its fixed size, where each CPU
	 * starts, else half (docs/percpu.md, "Adaptive sizing") */
	if (s->pcp && pcp_adapt_enabled()) {
		unsigned int lo, hi;

		pcp_cache_mag_range(s->pcp, &lo, &hi);
		if (hi != limit)
			batch = (hi + 1) / 2;
		limit = hi;
	}

	uslab_bufprintf(buf, len, pos,
			"%-17s %6lu %6lu %6u %4u %4u : tunables %4u %4u %4u"
			" : slabdata %6lu %6lu %6lu\n",
			s->name, active_objs, num_objs, s->size, s->objects,
			1U << s->order, limit, batch, shared, active_slabs,
			num_slabs, 0UL);
}

/**
 * slabinfo_show - /proc/slabinfo 2.1 text for every cache into @buf.
 * Context: thread-safe, while other threads create and destroy caches;
 * never allocates.
 * Return: bytes written, NUL-terminated, truncated to @len.
 */
size_t slabinfo_show(char *buf, size_t len)
{
	struct kmem_cache *s;
	size_t pos = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	slab_init();
	slabinfo_head(buf, len, &pos);
	slab_rcu_read_lock();
	cds_list_for_each_entry_rcu(s, &slab_caches, list)
		slabinfo_line(s, buf, len, &pos);
	slab_rcu_read_unlock();
	return pos;
}

/**
 * slabinfo_write_fd - slabinfo to @fd, one line at a time from a stack
 * buffer, however many caches there are.
 * Context: as slabinfo_show().
 * Return: 0 or -errno from write(2).
 */
int slabinfo_write_fd(int fd)
{
	struct kmem_cache *s;
	char line[512];
	size_t pos = 0;
	int err;

	slab_init();
	slabinfo_head(line, sizeof(line), &pos);
	err = uslab_write_all(fd, line, pos);
	if (err)
		return err;
	slab_rcu_read_lock();
	cds_list_for_each_entry_rcu(s, &slab_caches, list) {
		pos = 0;
		slabinfo_line(s, line, sizeof(line), &pos);
		err = uslab_write_all(fd, line, pos);
		if (err)
			break;
	}
	slab_rcu_read_unlock();
	return err;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* The next blank-separated word of *@pp as a number in [@min, @max];
 * when it is not, @why says so for the field @name. */
static int parse_field(const char **pp, const char *name, long min, long max,
		       const char *max_is, long *val, char *why, size_t len)
{
	const char *p = skip_space(*pp);
	size_t n = strcspn(p, " \t\n");
	char word[24];
	size_t pos = 0;

	if (!n || n >= sizeof(word)) {
		uslab_bufprintf(why, len, &pos, "%s: expected %ld to %ld%s, found %s", name,
				min, max, max_is, n ? "a longer word" : "nothing");
		return -EINVAL;
	}
	memcpy(word, p, n);
	word[n] = '\0';
	*pp = p + n;
	if (kmem_cache_parse_long(word, min, max, val)) {
		uslab_bufprintf(why, len, &pos, "%s: expected %ld to %ld%s, found '%s'", name,
				min, max, max_is, word);
		return -EINVAL;
	}
	return 0;
}

/* The fields of a write; @why (may be NULL) says what is wrong. */
static int slabinfo_parse(const char *line, char *cache, size_t cache_len, long *limit,
			  long *batch, long *shared, char *why, size_t len)
{
	char scratch[160];
	const char *p;
	size_t n, pos = 0;

	if (!why) {
		why = scratch;
		len = sizeof(scratch);
	}
	why[0] = 0;
	if (!line)
		return -EINVAL;
	p = skip_space(line);
	n = strcspn(p, " \t\n");
	if (!n || n >= cache_len) {
		uslab_bufprintf(why, len, &pos, "CACHE: expected a cache name of 1 to %zu "
				"bytes, found %s", cache_len - 1, n ? "a longer one" : "nothing");
		return -EINVAL;
	}
	memcpy(cache, p, n);
	cache[n] = '\0';
	p += n;
	if (parse_field(&p, "LIMIT", 1, SLABINFO_MAX_LIMIT, "", limit, why, len))
		return -EINVAL;
	if (parse_field(&p, "BATCHCOUNT", 1, *limit, " (the LIMIT)", batch, why, len) ||
	    parse_field(&p, "SHAREDFACTOR", 0, SLAB_MAX_SHARED, "", shared, why, len))
		return -EINVAL;
	p = skip_space(p);
	if (*p == '\n')
		p++;
	if (*p) {
		uslab_bufprintf(why, len, &pos, "expected 4 fields 'CACHE LIMIT BATCHCOUNT "
				"SHAREDFACTOR', found more: '%.20s'", p);
		return -EINVAL;
	}
	return 0;
}

/** slabinfo_check - see include/uslab/slab.h. */
int slabinfo_check(const char *line, char *why, size_t len)
{
	char cache[SLAB_NAME_LEN];
	long limit, batch, shared;

	return slabinfo_parse(line, cache, sizeof(cache), &limit, &batch, &shared, why, len);
}

/**
 * slabinfo_write - "<cache> <limit> <batchcount> <sharedfactor>", as
 * writing /proc/slabinfo did under SLAB; a trailing newline is accepted.
 * The limit and batch are kept as the cache's settings (slab/settings.c),
 * so they are the ones USLAB_OPTIONS and the simulator set.
 * Context: thread-safe; an RCU reader, takes the cache lock.
 * Return: 0, -EINVAL for a malformed line or bad values, -ENOENT for an
 * unknown cache.
 */
int slabinfo_write(const char *line)
{
	struct kmem_cache_setting mag, bat;
	char cache[SLAB_NAME_LEN];
	long limit, batch, shared;
	struct kmem_cache *s, *found = NULL;
	int err;

	if (slabinfo_parse(line, cache, sizeof(cache), &limit, &batch, &shared, NULL, 0))
		return -EINVAL;
	/* -EOPNOTSUPP (no magazines) is the !kmem_cache_pcp() case below */
	err = kmem_cache_setting_make(&mag, KMEM_TUNE_MAG_SIZE, cache, strlen(cache), limit);
	if (!err)
		err = kmem_cache_setting_make(&bat, KMEM_TUNE_BATCH, cache, strlen(cache), batch);
	if (err && err != -EOPNOTSUPP)
		return -EINVAL;

	/*
	 * Under RCU, not slab_mutex: resizing drains magazines, which may free
	 * TYPESAFE_BY_RCU slabs through call_rcu, and call_rcu may call
	 * malloc (kmalloc-N creation takes slab_mutex). kmem_cache_destroy()
	 * waits for this reader before freeing the cache.
	 */
	slab_rcu_read_lock();
	cds_list_for_each_entry_rcu(s, &slab_caches, list) {
		if (!strcmp(s->name, cache)) {
			found = s;
			break;
		}
	}
	if (!found) {
		err = -ENOENT;
	} else if (!kmem_cache_pcp(found)) {
		/* a debug cache or no magazines: the values are only shown */
		err = kmem_cache_set_tunables(found, (unsigned int)limit,
					      (unsigned int)batch, (unsigned int)shared);
	} else {
		err = slab_settings_store(&mag);
		err = err ? err : slab_settings_store(&bat);
		if (!err) {
			slab_lock(found);
			WRITE_ONCE(found->shared, (unsigned int)shared);
			slab_unlock(found);
			err = slab_settings_apply(found);
		}
	}
	slab_rcu_read_unlock();
	return err;
}
