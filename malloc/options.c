// SPDX-License-Identifier: MIT
/*
 * Runtime options: one environment variable (CONFIG_MALLOC_OPTIONS_ENV,
 * USLAB_OPTIONS by default) holding "name=value" items separated by commas,
 * described by ONE table below (name, default, description, parser).
 *
 *   USLAB_OPTIONS=mag_size=64,mag_size.kmalloc-256=16,trim=1024,stats
 *   USLAB_OPTIONS=slab_debug=FZPU,kmalloc-64,conn_cache,stats
 *   USLAB_OPTIONS=help		print the table on stderr
 *
 * Parsing happens once, from the library constructor, into a fixed buffer:
 * no malloc, no stdio. An unknown or malformed item gives one warning on
 * stderr naming it and is ignored, so its default stands; the other items
 * still apply.
 *
 * The cache settings (mag_size, batch, depot_limit, for every kmalloc cache
 * or .<cache>) are slab/'s: parsed by kmem_cache_setting_parse() and kept
 * by slab/ until the cache they name is created (kmalloc-N caches are
 * created on first use, a service's whenever it calls kmem_cache_create).
 * One that names no cache by exit is reported then, under `stats`.
 *
 * slab_debug takes the kernel's syntax, whose cache list is separated by
 * commas too: the items after "slab_debug=FLAGS" that hold no '=' and are
 * not the name of an option continue its list ("slab_debug=FZ,kmalloc-64,
 * stats" is kmalloc-64 and the stats flag). slab/ parses the list
 * (kmem_cache_debug_parse(), into the same settings as mag_size).
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

#ifndef CONFIG_PERCPU_ADAPT_MIN_BYTES
#define CONFIG_PERCPU_ADAPT_MIN_BYTES	0
#define CONFIG_PERCPU_ADAPT_MAX_BYTES	0
#define CONFIG_PERCPU_ADAPT_BUDGET_KB	0
#endif
#define ADAPT_DEFAULT	(IS_ENABLED(CONFIG_PERCPU_ADAPT) ? "Kconfig (1)" : "Kconfig (0)")

#define __stringify_1(x)	#x
#define __stringify(x)		__stringify_1(x)

struct malloc_opts malloc_opts = {
	.trim_kb = -1,
	.reaper_ms = -1,
	.limit_mb = -1,
	.adapt = -1, .adapt_min = -1, .adapt_max = -1, .adapt_budget_kb = -1,
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

/* A decimal number in [min, max]: slab/'s parser, shared by every option. */
static int parse_long(const char *val, long min, long max, long *out)
{
	return kmem_cache_parse_long(val, min, max, out);
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

/* reaper_ms: 0 (off) or a period in [min, max]. */
static int parse_reaper(const struct malloc_option *o, const char *suffix,
			const char *val)
{
	if (!suffix && val && !strcmp(val, "0")) {
		*o->field = 0;
		return 0;
	}
	return parse_num(o, suffix, val);
}

/*
 * mag_size, batch, depot_limit (optionally .<cache>): slab/ parses the item
 * (the same parser as `uslab sim` and slabinfo writes) and malloc_apply_
 * options() hands it over.
 */
static int parse_cache_setting(const struct malloc_option *o, const char *suffix,
			       const char *val)
{
	char item[160];
	size_t pos = 0;
	int err;

	if (malloc_opts.nr_settings == MALLOC_MAX_SETTINGS)
		return -ENOSPC;
	uslab_bufprintf(item, sizeof(item), &pos, "%s%s%s=%s", o->name,
			suffix ? "." : "", suffix ? suffix : "", val);
	err = kmem_cache_setting_parse(item,
				       &malloc_opts.settings[malloc_opts.nr_settings]);
	if (err)
		return err;
	malloc_opts.nr_settings++;
	return 0;
}

/*
 * slab_debug[=FLAGS[,cache...][;FLAGS,cache...]] or slab_debug.<cache>=FLAGS
 * (malloc_parse_options() has joined the list's items again).
 */
static int parse_slab_debug(const struct malloc_option *o, const char *suffix,
			    const char *val)
{
	int n;

	if (suffix)
		return parse_cache_setting(o, suffix, val ? val : "");
	n = kmem_cache_debug_parse(val, &malloc_opts.settings[malloc_opts.nr_settings],
				   MALLOC_MAX_SETTINGS - malloc_opts.nr_settings);
	if (n < 0)
		return n;
	malloc_opts.nr_settings += (unsigned int)n;
	return 0;
}

/* One row per option, every row the same shape on purpose: name, default,
 * help (USLAB_OPTIONS=help prints them), parser and its bounds. */
static const struct malloc_option malloc_options[] = {
	{ "mag_size", "Kconfig (" __stringify(CONFIG_PERCPU_MAG_SIZE) ")",
	  "objects per per-CPU magazine of every kmalloc cache (0 = by object "
	  "size); mag_size.<cache>=N for one cache, named before or after it "
	  "exists: mag_size.kmalloc-64=32, by size mag_size.64=32, or a "
	  "kmem_cache_create name mag_size.conn_cache=64",
	  parse_cache_setting, NULL, NULL, 0, 0 },
	{ "batch", "Kconfig (" __stringify(CONFIG_PERCPU_BATCHCOUNT) ")",
	  "objects moved per refill or flush (0 = half a magazine); "
	  "batch.<cache>=N for one cache",
	  parse_cache_setting, NULL, NULL, 0, 0 },
	{ "depot_limit", "by size (Kconfig " __stringify(CONFIG_PERCPU_DEPOT_LIMIT) " x " __stringify(CONFIG_PERCPU_MAG_BYTES) " B, 1-4x the count)",
	  "full magazines each kmalloc cache's depot keeps (-1 = unlimited); "
	  "depot_limit.<cache>=N for one cache",
	  parse_cache_setting, NULL, NULL, 0, 0 },
	{ "reaper_ms", "Kconfig (" __stringify(CONFIG_PERCPU_REAPER_PERIOD_MS) ")",
	  "period of the background reaper that trims depots and idle CPUs "
	  "(10 .. 600000; 0 = no reaper and no page decay thread, as `uslab sim --no-reaper`)",
	  parse_reaper, &malloc_opts.reaper_ms, NULL, 10, 600000 },
	{ "adapt", ADAPT_DEFAULT,
	  "1: magazines size themselves per cache and CPU (grow on refills and "
	  "flushes, shrink on unused objects, within adapt_min..adapt_max bytes "
	  "and adapt_budget_kb per CPU); 0: fixed sizes (mag_size)",
	  parse_num, &malloc_opts.adapt, NULL, 0, 1 },
	{ "adapt_min", "Kconfig (" __stringify(CONFIG_PERCPU_ADAPT_MIN_BYTES) ")",
	  "adaptive: first and smallest magazine, bytes of objects (at least one object)",
	  parse_num, &malloc_opts.adapt_min, NULL, 8, 1L << 30 },
	{ "adapt_max", "Kconfig (" __stringify(CONFIG_PERCPU_ADAPT_MAX_BYTES) ")",
	  "adaptive: largest magazine, bytes of objects (at most 4096 objects)",
	  parse_num, &malloc_opts.adapt_max, NULL, 8, 1L << 30 },
	{ "adapt_budget_kb", "Kconfig (" __stringify(CONFIG_PERCPU_ADAPT_BUDGET_KB) ")",
	  "adaptive: KiB of objects one CPU's magazines may hold over all caches",
	  parse_num, &malloc_opts.adapt_budget_kb, NULL, 16, 1L << 30 },
	{ "trim", __stringify(CONFIG_PAGE_ALLOC_RESIDENT_FREE_KB),
	  "KiB of free pages kept resident before the rest goes back to the OS",
	  parse_num, &malloc_opts.trim_kb, NULL, 0, 1L << 40 },
	{ "limit_mb", __stringify(CONFIG_PAGE_ALLOC_LIMIT_MB),
	  "cap on memory held, MiB (0 = none); beyond it malloc fails with ENOMEM",
	  parse_num, &malloc_opts.limit_mb, NULL, 0, 1L << 30 },
	{ "stats", "0",
	  "print slabinfo, buddyinfo and malloc counters on stderr at exit",
	  parse_flag, NULL, &malloc_opts.stats, 0, 0 },
	{ "stats_shm", "0",
	  "serve live statistics to `uslab slabinfo -p PID` and `uslab top -p PID` "
	  "(/dev/shm/uslab.PID and one sleeping thread)",
	  parse_flag, NULL, &malloc_opts.stats_shm, 0, 0 },
	{ "debug", "0",
	  "poison, red zones (from the size asked) and free checks on every "
	  "malloc size class: slab_debug=FZP,kmalloc-*",
	  parse_flag, NULL, &malloc_opts.debug, 0, 0 },
	{ "slab_debug", "none",
	  "the kernel's slab_debug: F checks, Z red zones, P poisoning, U call "
	  "sites, - off; alone = FZPU for every cache; slab_debug=FZPU,kmalloc-64,"
	  "conn_cache for those caches (kmalloc-* a prefix), blocks separated by "
	  "';' (slab_debug='P,kmalloc-*;-,kmalloc-8'), or slab_debug.<cache>=FZ; "
	  "debug caches have no magazines (docs/slab.md)",
	  parse_slab_debug, NULL, NULL, 0, 0 },
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
		if (!val && o->parse != parse_flag && o->parse != parse_slab_debug)
			return -EINVAL;
		return o->parse(o, suffix, val);
	}
	return -ENOENT;
}

/* Is the item of @len bytes at @item (up to a '.') the name of an option? */
static bool is_option_name(const char *item, size_t len)
{
	size_t n = strcspn(item, ".");

	if (n > len)
		n = len;
	for (size_t i = 0; i < ARRAY_SIZE(malloc_options); i++)
		if (strlen(malloc_options[i].name) == n &&
		    !strncmp(item, malloc_options[i].name, n))
			return true;
	return false;
}

/**
 * malloc_parse_options - parse an option string into malloc_opts.
 * @str: "name=value,name=value..."; NULL or empty is fine.
 * Context: constructor, or a test; not thread-safe.
 * Return: the number of items ignored (each warned about on stderr).
 */
int malloc_parse_options(const char *str)
{
	char buf[4096], orig[128];
	char *item, *next;
	int bad = 0;
	size_t len;

	if (!str)
		return 0;
	len = strlen(str);
	if (len >= sizeof(buf)) {
		option_warn("(whole string)", "longer than 4095 characters");
		return 1;
	}
	memcpy(buf, str, len + 1);
	for (item = buf; item; item = next) {
		const char *why;
		int err;

		next = strchr(item, ',');
		/* slab_debug=FLAGS,name,name...: the names are its list */
		if (!strncmp(item, "slab_debug=", 11)) {
			while (next) {
				char *nx = next + 1;
				size_t n = strcspn(nx, ",");

				if (!n || memchr(nx, '=', n) || is_option_name(nx, n))
					break;
				next = nx[n] ? nx + n : NULL;
			}
		}
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
		case -EOPNOTSUPP: why = "no per-CPU magazines in this build"; break;
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

static void setting_warn(const struct kmem_cache_setting *set, int err)
{
	char item[128];

	kmem_cache_setting_str(set, item, sizeof(item));
	option_warn(item, err == -ENOSPC ? "too many per-cache settings" :
		    "rejected by the cache");
}

/*
 * debug: slab_debug=FZP on every kmalloc cache, as the kernel's
 * slab_debug=FZP,kmalloc-* (the caches that exist are re-made with the
 * flags; slab/kmalloc.c). Added after the program's own slab_debug items,
 * so that one naming a cache wins (the first setting that names a cache
 * does). malloc then sends every size through kmalloc(), which hands a
 * debug class the size asked for: the red zone starts there.
 */
static void malloc_debug_enable(void)
{
	struct kmem_cache_setting set;
	int err = kmem_cache_debug_parse("FZP,kmalloc-*", &set, 1);

	if (err >= 0)
		err = kmem_cache_setting_add(&set);
	if (err == -EOPNOTSUPP)
		option_warn("debug", "no slab debugging in this build");
	else if (err < 0)
		option_warn("debug", "rejected by the kmalloc caches");
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
	for (unsigned int i = 0; i < malloc_opts.nr_settings; i++) {
		int err = kmem_cache_setting_add(&malloc_opts.settings[i]);

		if (err)
			setting_warn(&malloc_opts.settings[i], err);
	}
	if (malloc_opts.adapt_min >= 0 || malloc_opts.adapt_max >= 0 ||
	    malloc_opts.adapt_budget_kb >= 0) {
		if (pcp_adapt_set_bounds(malloc_opts.adapt_min > 0 ? (unsigned long)malloc_opts.adapt_min : 0,
					 malloc_opts.adapt_max > 0 ? (unsigned long)malloc_opts.adapt_max : 0,
					 malloc_opts.adapt_budget_kb > 0 ?
					 (unsigned long)malloc_opts.adapt_budget_kb : 0))
			option_warn("adapt_min/adapt_max", "adapt_min is above adapt_max");
	}
	if (malloc_opts.adapt >= 0)
		pcp_adapt_set(malloc_opts.adapt == 1);
	if (malloc_opts.reaper_ms == 0)
		page_alloc_decayd_disable();	/* no background thread at all */
	if (malloc_opts.reaper_ms >= 0) {
		int err = pcp_reaper_set_period((unsigned long)malloc_opts.reaper_ms);
		char item[64];
		size_t pos = 0;

		uslab_bufprintf(item, sizeof(item), &pos, "reaper_ms=%ld",
				malloc_opts.reaper_ms);
		if (err)
			option_warn(item, err == -EOPNOTSUPP ?
				    "no reaper in this build" : "rejected");
	}
	if (malloc_opts.debug)
		malloc_debug_enable();
	/*
	 * slab_debug on a kmalloc cache: every size through kmalloc(), which
	 * gives a debug class the size asked for (its red zone starts there)
	 * and the call site; malloc's byte-table route knows neither.
	 */
	if (kmem_cache_debug_kmalloc())
		__atomic_store_n(&malloc_small_max, 0, __ATOMIC_RELEASE);
}
