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

#define SLABINFO_MAX_LIMIT	4096
#define SLABINFO_MAX_SHARED	4096

/*
 * Defaults: CONFIG_PERCPU_MAG_SIZE and CONFIG_PERCPU_BATCHCOUNT, or when 0,
 * the old SLAB's enable_cpucache() table by object size. Debug caches and
 * builds without per-CPU caching have none (0 0 0, as SLUB shows).
 */
void slab_default_tunables(struct kmem_cache *s)
{
	if (!IS_ENABLED(CONFIG_PERCPU_CACHE) || slab_debug(s)) {
		s->limit = s->batchcount = s->shared = 0;
		return;
	}
	/* one table, percpu/'s (documented in docs/percpu.md) */
	s->limit = pcp_default_limit(s->size);
	s->batchcount = pcp_default_batchcount(s->limit);
	s->shared = s->size <= PAGE_SIZE ? 8 : 0;
}

/**
 * kmem_cache_set_tunables - set the magazine size (@limit), the refill and
 * flush batch (@batchcount) and @shared of @s.
 * The magazines of every CPU are drained and come back at the new size
 * (debug caches have none: the values are only stored).
 * Context: thread-safe, also while other threads use @s; takes the cache
 * lock, then the per-CPU layer's locks (never both at once).
 * Return: 0, or -EINVAL unless 1 <= @limit <= 4096,
 * 1 <= @batchcount <= @limit and @shared <= 4096.
 */
int kmem_cache_set_tunables(struct kmem_cache *s, unsigned int limit,
			    unsigned int batchcount, unsigned int shared)
{
	if (!s || limit < 1 || limit > SLABINFO_MAX_LIMIT || batchcount < 1 ||
	    batchcount > limit || shared > SLABINFO_MAX_SHARED)
		return -EINVAL;
	slab_lock(s);
	WRITE_ONCE(s->limit, limit);
	WRITE_ONCE(s->batchcount, batchcount);
	WRITE_ONCE(s->shared, shared);
	slab_unlock(s);
	if (s->pcp)
		return pcp_cache_set_tunables(s->pcp, limit, batchcount);
	return 0;
}

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

static int parse_uint(const char **pp, unsigned int *val)
{
	const char *p = skip_space(*pp);
	char *end;
	unsigned long v;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(p, &end, 10);
	if (errno || v > 0xffffffffUL)
		return -EINVAL;
	*val = (unsigned int)v;
	*pp = end;
	return 0;
}

/**
 * slabinfo_write - "<cache> <limit> <batchcount> <sharedfactor>", as
 * writing /proc/slabinfo did under SLAB; a trailing newline is accepted.
 * Context: thread-safe; an RCU reader, takes the cache lock.
 * Return: 0, -EINVAL for a malformed line or bad values, -ENOENT for an
 * unknown cache.
 */
int slabinfo_write(const char *line)
{
	char name[SLAB_NAME_LEN];
	unsigned int limit, batch, shared;
	struct kmem_cache *s, *found = NULL;
	const char *p;
	size_t n;
	int err;

	if (!line)
		return -EINVAL;
	p = skip_space(line);
	n = strcspn(p, " \t\n");
	if (!n || n >= sizeof(name))
		return -EINVAL;
	memcpy(name, p, n);
	name[n] = '\0';
	p += n;
	if (parse_uint(&p, &limit) || parse_uint(&p, &batch) ||
	    parse_uint(&p, &shared))
		return -EINVAL;
	p = skip_space(p);
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;

	/*
	 * Under RCU, not slab_mutex: resizing drains magazines, which may free
	 * TYPESAFE_BY_RCU slabs through call_rcu, and call_rcu may call
	 * malloc (kmalloc-N creation takes slab_mutex). kmem_cache_destroy()
	 * waits for this reader before freeing the cache.
	 */
	slab_rcu_read_lock();
	cds_list_for_each_entry_rcu(s, &slab_caches, list) {
		if (!strcmp(s->name, name)) {
			found = s;
			break;
		}
	}
	err = found ? kmem_cache_set_tunables(found, limit, batch, shared) : -ENOENT;
	slab_rcu_read_unlock();
	return err;
}
