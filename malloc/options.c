// SPDX-License-Identifier: MIT
/*
 * Runtime options: one environment variable (CONFIG_MALLOC_OPTIONS_ENV,
 * USLAB_OPTIONS by default) holding "name=value" items separated by commas,
 * described by ONE table below (name, default, description, parser).
 *
 *   USLAB_OPTIONS=mag_size=64,mag_size.kmalloc-256=16,trim=1024,stats
 *   USLAB_OPTIONS=help		print the table on stderr
 *
 * Parsing happens once, from the library constructor, into a fixed buffer:
 * no malloc, no stdio. An unknown or malformed item gives one warning on
 * stderr naming it and is ignored, so its default stands; the other items
 * still apply.
 *
 * Locking: none; parsing and applying run once from the constructor.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "uslab/page_alloc.h"
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "lib/log.h"
#include "malloc/internal.h"

/* Symbols that depend on the reaper; 0 shows "none" in the help table. */
#ifndef CONFIG_PERCPU_REAPER_PERIOD_MS
#define CONFIG_PERCPU_REAPER_PERIOD_MS	0
#endif

#define __stringify_1(x)	#x
#define __stringify(x)		__stringify_1(x)

struct malloc_opts malloc_opts = {
	.mag_size = -1,
	.batch = -1,
	.depot_limit = MALLOC_OPT_UNSET,
	.trim_kb = -1,
	.reaper_ms = -1,
	.limit_mb = -1,
};

struct malloc_option;
typedef int (*malloc_option_parser)(const struct malloc_option *o,
				    const char *suffix, const char *val);

struct malloc_option {
	const char *name;
	const char *def;
	const char *desc;
	malloc_option_parser parse;
	long *field;		/* for the numeric parsers */
	bool *flag;		/* for parse_flag */
	long min, max;
};

/* A decimal number in [min, max]; no sign except a leading '-'. */
static int parse_long(const char *val, long min, long max, long *out)
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

static int parse_num(const struct malloc_option *o, const char *suffix,
		     const char *val)
{
	if (suffix)
		return -EINVAL;
	return parse_long(val, o->min, o->max, o->field);
}

/* "stats", "stats=1", "stats=0", also yes/no/on/off/true/false. */
static int parse_flag(const struct malloc_option *o, const char *suffix,
		      const char *val)
{
	static const char *const yes[] = { "1", "y", "yes", "on", "true" };
	static const char *const no[] = { "0", "n", "no", "off", "false" };

	if (suffix)
		return -EINVAL;
	if (!val) {
		*o->flag = true;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcmp(val, yes[i])) {
			*o->flag = true;
			return 0;
		}
		if (!strcmp(val, no[i])) {
			*o->flag = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* fail_slab=P[:I[:T[:S]]], fail_page=...: fault injection per layer. */
static int parse_fault(const struct malloc_option *o, const char *suffix,
		       const char *val)
{
	if (suffix || !val)
		return -EINVAL;
	return !strcmp(o->name, "fail_slab") ? kmem_cache_set_fault(val) :
				   page_alloc_set_fault(val);
}

/* mag_size=N for every kmalloc cache, mag_size.<cache or size>=N for one. */
static int parse_mag_size(const struct malloc_option *o, const char *suffix,
			  const char *val)
{
	struct malloc_cache_opt *c;
	long limit, size;
	int err;

	if (!suffix)
		return parse_num(o, NULL, val);
	err = parse_long(val, o->min, o->max, &limit);
	if (err)
		return err;
	if (!*suffix || strlen(suffix) >= MALLOC_CACHE_NAME_LEN)
		return -EINVAL;
	if (malloc_opts.nr_cache_opts == MALLOC_MAX_CACHE_OPTS)
		return -ENOSPC;
	c = &malloc_opts.cache_opts[malloc_opts.nr_cache_opts];
	memset(c, 0, sizeof(*c));
	if (!parse_long(suffix, 1, KMALLOC_MAX_CACHE_SIZE, &size))
		c->size = (size_t)size;
	else
		memcpy(c->name, suffix, strlen(suffix) + 1);
	c->limit = (unsigned int)limit;
	malloc_opts.nr_cache_opts++;
	return 0;
}

static const struct malloc_option malloc_options[] = {
	{ "mag_size", "Kconfig (" __stringify(CONFIG_PERCPU_MAG_SIZE) ")",
	  "objects per per-CPU magazine of every kmalloc cache; "
	  "mag_size.<cache>=N (mag_size.kmalloc-64=32) or "
	  "mag_size.<bytes>=N (mag_size.64=32) for one cache",
	  parse_mag_size, &malloc_opts.mag_size, NULL, 1, 4096 },
	{ "batch", "Kconfig (" __stringify(CONFIG_PERCPU_BATCHCOUNT) ")",
	  "objects moved per refill or flush (0 = half a magazine)",
	  parse_num, &malloc_opts.batch, NULL, 0, 4096 },
	{ "depot_limit", __stringify(CONFIG_PERCPU_DEPOT_LIMIT),
	  "full magazines each kmalloc cache's depot keeps (-1 = unlimited)",
	  parse_num, &malloc_opts.depot_limit, NULL, -1, 65536 },
	{ "reaper_ms", "Kconfig (" __stringify(CONFIG_PERCPU_REAPER_PERIOD_MS) ")",
	  "period of the background reaper that trims depots and idle CPUs",
	  parse_num, &malloc_opts.reaper_ms, NULL, 10, 600000 },
	{ "trim", __stringify(CONFIG_PAGE_ALLOC_RESIDENT_FREE_KB),
	  "KiB of free pages kept resident before the rest goes back to the OS",
	  parse_num, &malloc_opts.trim_kb, NULL, 0, 1L << 40 },
	{ "limit_mb", __stringify(CONFIG_PAGE_ALLOC_LIMIT_MB),
	  "cap on memory held, MiB (0 = none); beyond it malloc fails with ENOMEM",
	  parse_num, &malloc_opts.limit_mb, NULL, 0, 1L << 30 },
	{ "stats", "0",
	  "print slabinfo, buddyinfo and malloc counters on stderr at exit",
	  parse_flag, NULL, &malloc_opts.stats, 0, 0 },
	{ "debug", "0",
	  "poison, red zones and free checks on every malloc size class",
	  parse_flag, NULL, &malloc_opts.debug, 0, 0 },
	{ "fail_slab", "0 (off)",
	  "failslab: probability%[:interval[:times[:space]]] of slab allocations to fail with ENOMEM",
	  parse_fault, NULL, NULL, 0, 0 },
	{ "fail_page", "0 (off)",
	  "fail_page_alloc: probability%[:interval[:times[:space]]] of page allocations to fail with ENOMEM",
	  parse_fault, NULL, NULL, 0, 0 },
	{ "help", "", "print this table on stderr",
	  parse_flag, NULL, &malloc_opts.help, 0, 0 },
};

/* Writes @s to @fd in full; never allocates. */
void malloc_write_str(int fd, const char *s)
{
	uslab_write_all(fd, s, strlen(s));
}

static void option_warn(const char *item, const char *why)
{
	char buf[512];
	size_t pos = 0;

	uslab_bufprintf(buf, sizeof(buf), &pos,
			"uslab: %s: ignoring option '%s' (%s); its default stands"
			" (%s=help lists the options)\n",
			CONFIG_MALLOC_OPTIONS_ENV, item, why,
			CONFIG_MALLOC_OPTIONS_ENV);
	malloc_write_str(2, buf);
}

static int parse_item(char *item)
{
	char *val = strchr(item, '=');
	char *suffix;

	if (val)
		*val++ = '\0';
	suffix = strchr(item, '.');
	if (suffix)
		*suffix++ = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(malloc_options); i++) {
		const struct malloc_option *o = &malloc_options[i];

		if (strcmp(item, o->name))
			continue;
		if (!val && o->parse != parse_flag)
			return -EINVAL;
		return o->parse(o, suffix, val);
	}
	return -ENOENT;
}

/**
 * malloc_parse_options - parse an option string into malloc_opts.
 * @str: "name=value,name=value..."; NULL or empty is fine.
 * Context: constructor, or a test; not thread-safe.
 * Return: the number of items ignored (each warned about on stderr).
 */
int malloc_parse_options(const char *str)
{
	char buf[1024], orig[128];
	char *item, *next;
	int bad = 0;
	size_t len;

	if (!str)
		return 0;
	len = strlen(str);
	if (len >= sizeof(buf)) {
		option_warn("(whole string)", "longer than 1023 characters");
		return 1;
	}
	memcpy(buf, str, len + 1);
	for (item = buf; item; item = next) {
		const char *why;
		int err;

		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		if (!*item)
			continue;
		len = strlen(item);
		if (len >= sizeof(orig))
			len = sizeof(orig) - 1;
		memcpy(orig, item, len);
		orig[len] = '\0';
		err = parse_item(item);
		if (!err)
			continue;
		switch (err) {
		case -ENOENT: why = "unknown option"; break;
		case -ERANGE: why = "value out of range"; break;
		case -ENOSPC: why = "too many per-cache settings"; break;
		default: why = "malformed value"; break;
		}
		option_warn(orig, why);
		bad++;
	}
	return bad;
}

/** malloc_print_help - the option table, one option a line, to @fd. */
void malloc_print_help(int fd)
{
	char buf[512];
	size_t pos = 0;

	uslab_bufprintf(buf, sizeof(buf), &pos,
			"uslab options: %s=name=value,name=value...\n",
			CONFIG_MALLOC_OPTIONS_ENV);
	malloc_write_str(fd, buf);
	for (size_t i = 0; i < ARRAY_SIZE(malloc_options); i++) {
		const struct malloc_option *o = &malloc_options[i];

		pos = 0;
		uslab_bufprintf(buf, sizeof(buf), &pos, "  %-12s default %-12s %s\n",
				o->name, *o->def ? o->def : "-", o->desc);
		malloc_write_str(fd, buf);
	}
}

/*
 * The magazines in front of @s, or NULL when it has none: nocache builds,
 * debug caches (those get percpu's bypass cache, whose limit is 0).
 */
static struct pcp_cache *cache_magazines(struct kmem_cache *s, unsigned int *limit)
{
	struct pcp_cache *pc = s ? kmem_cache_pcp(s) : NULL;
	unsigned int batch = 0;

	*limit = 0;
	if (pc)
		pcp_cache_get_tunables(pc, limit, &batch);
	return *limit ? pc : NULL;
}

/*
 * Put @limit (or, when negative, the cache's current limit) and the batch
 * option into force on @s. The batch is the option, or Kconfig's, or half
 * the magazine when both say 0; never above the limit.
 * Return: 0, -ENOENT for no cache, -EINVAL when the cache refuses.
 */
static int set_tunables(struct kmem_cache *s, long limit)
{
	long batch = malloc_opts.batch > 0 ? malloc_opts.batch : CONFIG_PERCPU_BATCHCOUNT;

	unsigned int now;

	if (!s)
		return -ENOENT;
	if (!cache_magazines(s, &now))
		return -EOPNOTSUPP;
	if (limit <= 0)
		limit = now;
	if (batch <= 0)
		batch = limit / 2 ? limit / 2 : 1;
	if (batch > limit)
		batch = limit;
	return kmem_cache_set_tunables(s, (unsigned int)limit,
				       (unsigned int)batch, 0);
}

static void tunables_warn(const char *what, long value, int err)
{
	char item[96];
	size_t pos = 0;

	uslab_bufprintf(item, sizeof(item), &pos, "%s=%ld", what, value);
	option_warn(item, err == -ENOENT ? "no such cache" :
		    err == -EOPNOTSUPP ? "no per-CPU magazines in this build" :
		    "rejected by the cache");
}

/**
 * malloc_apply_options - put the parsed options into force.
 * Context: constructor; the caches may already be in use (tunables are safe
 * to change under load).
 */
void malloc_apply_options(void)
{
	if (malloc_opts.help)
		malloc_print_help(2);
	if (malloc_opts.limit_mb >= 0)
		page_alloc_set_limit((size_t)malloc_opts.limit_mb << 20);
	if (malloc_opts.trim_kb >= 0)
		page_alloc_set_resident_free((size_t)malloc_opts.trim_kb << 10);
	if (malloc_opts.mag_size > 0 || malloc_opts.batch > 0) {
		int err = 0;

		unsigned int i;

		/* One warning for the option, not one per cache. */
		for_each_kmalloc_class(i) {
			int e = set_tunables(kmalloc_slab(kmalloc_info[i].size),
					     malloc_opts.mag_size);

			err = err ? err : e;
		}
		if (err && malloc_opts.mag_size > 0)
			tunables_warn("mag_size", malloc_opts.mag_size, err);
		else if (err)
			tunables_warn("batch", malloc_opts.batch, err);
	}
	for (unsigned int i = 0; i < malloc_opts.nr_cache_opts; i++) {
		struct malloc_cache_opt *c = &malloc_opts.cache_opts[i];
		struct kmem_cache *s;
		char what[64];
		size_t pos = 0;
		int err;

		if (c->size) {
			uslab_bufprintf(what, sizeof(what), &pos, "mag_size.%zu", c->size);
			s = kmalloc_slab(c->size);
		} else {
			uslab_bufprintf(what, sizeof(what), &pos, "mag_size.%s", c->name);
			s = kmem_cache_find(c->name);
		}
		err = set_tunables(s, c->limit);
		if (err)
			tunables_warn(what, c->limit, err);
	}
	if (malloc_opts.depot_limit != MALLOC_OPT_UNSET) {
		unsigned int dl = malloc_opts.depot_limit < 0 ? PCP_DEPOT_UNLIMITED :
				  (unsigned int)malloc_opts.depot_limit;
		unsigned int lim, i;
		int err = 0;

		for_each_kmalloc_class(i) {
			struct pcp_cache *pc = cache_magazines(
					kmalloc_slab(kmalloc_info[i].size), &lim);

			if (!pc)
				err = -EOPNOTSUPP;
			else if (pcp_cache_set_depot_limit(pc, dl))
				err = -EINVAL;
		}
		if (err)
			tunables_warn("depot_limit", malloc_opts.depot_limit, err);
	}
	if (malloc_opts.reaper_ms > 0) {
		int err = pcp_reaper_set_period((unsigned long)malloc_opts.reaper_ms);
		char item[64];
		size_t pos = 0;

		uslab_bufprintf(item, sizeof(item), &pos, "reaper_ms=%ld",
				malloc_opts.reaper_ms);
		if (err)
			option_warn(item, err == -EOPNOTSUPP ?
				    "no reaper in this build" : "rejected");
	}
	if (malloc_opts.debug && malloc_debug_enable())
		option_warn("debug", "cannot create the debug caches");
}
