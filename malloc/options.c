// SPDX-License-Identifier: MIT
/*
 * Runtime options: one environment variable (CONFIG_MALLOC_OPTIONS_ENV,
 * USLAB_OPTIONS by default) holding "name=value" items separated by commas.
 * The options are the rows of <uslab/tunables.h> (name, parser, bounds,
 * default, where it applies, help): this file splits each item once into
 * name, cache and value (uslab_tunable_split()), parses the value with its
 * row's parser and keeps the value, or the cache setting, until applied.
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
 * The cache settings (mag_size, batch, depot_limit, slab_debug; for every
 * kmalloc cache or .<cache>) are kept by slab/ until the cache they name is
 * created (kmalloc-N caches are created on first use, a service's whenever
 * it calls kmem_cache_create). One that names no cache by exit is reported
 * then, under `stats`.
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
#include "uslab/malloc.h"
#include "uslab/page_alloc.h"
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "uslab/tunables.h"
#include "lib/log.h"
#include "malloc/internal.h"

struct malloc_opts malloc_opts;

/* Every option unset: its default stands. */
static void malloc_opts_reset(void)
{
	for (size_t i = 0; i < USLAB_NR_TUNABLES; i++)
		malloc_opts.val[i] = MALLOC_OPT_UNSET;
	malloc_opts.nr_settings = 0;
}

/* A cache setting, its value parsed by its row, kept for slab/. */
static int parse_cache_setting(const struct uslab_tunable *t, const char *cache,
			       const char *val)
{
	enum kmem_cache_tunable what = (enum kmem_cache_tunable)(t - uslab_tunables);
	long v;
	int n;

	if (malloc_opts.nr_settings == MALLOC_MAX_SETTINGS)
		return -ENOSPC;
	if (what == KMEM_TUNE_DEBUG && !cache) {
		/* slab_debug[=FLAGS[,cache...][;FLAGS,cache...]] */
		n = kmem_cache_debug_parse(val,
					   &malloc_opts.settings[malloc_opts.nr_settings],
					   MALLOC_MAX_SETTINGS - malloc_opts.nr_settings);
		if (n < 0)
			return n;
		malloc_opts.nr_settings += (unsigned int)n;
		return 0;
	}
	n = uslab_tunable_parse(t, val, &v);
	if (!n)
		n = kmem_cache_setting_make(&malloc_opts.settings[malloc_opts.nr_settings],
					    what, cache, cache ? strlen(cache) : 0, v);
	if (n)
		return n;
	malloc_opts.nr_settings++;
	return 0;
}

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
	const struct uslab_tunable *t;
	char *name, *cache, *val;

	uslab_tunable_split(item, &name, &cache, &val);
	t = uslab_tunable_find(name, strlen(name));
	if (!t)
		return -ENOENT;
	if (t->scope == USLAB_TS_CACHE)
		return parse_cache_setting(t, cache, val);
	if (cache)
		return -EINVAL;
	if (t->kind == USLAB_TK_FAULT) {
		/* fail_slab=P[:I[:T[:S]]], fail_page=...: the layer's parser */
		if (!val)
			return -EINVAL;
		return t->scope == USLAB_TS_SLAB ? kmem_cache_set_fault(val) :
						   page_alloc_set_fault(val);
	}
	return uslab_tunable_parse(t, val, &malloc_opts.val[t - uslab_tunables]);
}

/* Is the item of @len bytes at @item (up to a '.') the name of an option? */
static bool is_option_name(const char *item, size_t len)
{
	size_t n = strcspn(item, ".");

	if (n > len)
		n = len;
	return uslab_tunable_find(item, n) != NULL;
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

	malloc_opts_reset();
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

/* A row's default as the help table shows it. */
static void default_str(const struct uslab_tunable *t, char *buf, size_t len)
{
	size_t pos = 0;

	if (t->kind == USLAB_TK_FAULT || t->kind == USLAB_TK_DEBUG)
		uslab_bufprintf(buf, len, &pos, "none");
	else if (t - uslab_tunables == USLAB_OPT_BATCH && !t->def)
		uslab_bufprintf(buf, len, &pos, "half a mag");
	else if (t->scope == USLAB_TS_CACHE && (!t->def || t->def == USLAB_DEPOT_BY_SIZE))
		uslab_bufprintf(buf, len, &pos, "by size");
	else if (t - uslab_tunables == USLAB_OPT_REAPER_MS && !IS_ENABLED(CONFIG_PERCPU_REAPER))
		uslab_bufprintf(buf, len, &pos, "none");
	else if (t->scope == USLAB_TS_PERCPU && !IS_ENABLED(CONFIG_PERCPU_CACHE))
		uslab_bufprintf(buf, len, &pos, "none");	/* no magazines */
	else if (t - uslab_tunables == USLAB_OPT_HELP)
		uslab_bufprintf(buf, len, &pos, "-");
	else
		uslab_bufprintf(buf, len, &pos, "%ld", t->def);
}

/** malloc_print_help - the option table, one option a line, to @fd. */
void malloc_print_help(int fd)
{
	char buf[768], def[32];
	size_t pos = 0;

	uslab_bufprintf(buf, sizeof(buf), &pos,
			"uslab options: %s=name=value,name=value...\n",
			CONFIG_MALLOC_OPTIONS_ENV);
	malloc_write_str(fd, buf);
	for (size_t i = 0; i < USLAB_NR_TUNABLES; i++) {
		const struct uslab_tunable *t = &uslab_tunables[i];

		default_str(t, def, sizeof(def));
		pos = 0;
		uslab_bufprintf(buf, sizeof(buf), &pos, "  %-15s default %-12s ", t->name, def);
		if (t->kind == USLAB_TK_NUM || t->kind == USLAB_TK_OFF_OR_NUM)
			uslab_bufprintf(buf, sizeof(buf), &pos, "%s%ld .. %ld: ",
					t->kind == USLAB_TK_OFF_OR_NUM ? "0 or " : "",
					t->min, t->max);
		uslab_bufprintf(buf, sizeof(buf), &pos, "%s\n", t->help);
		malloc_write_str(fd, buf);
	}
}

/** uslab_option - see include/uslab/malloc.h. */
__visible long uslab_option(const char *name)
{
	const struct uslab_tunable *t = uslab_tunable_find(name, strlen(name));

	if (!t || t->scope == USLAB_TS_CACHE || t->kind == USLAB_TK_FAULT)
		return MALLOC_OPT_UNSET;
	return malloc_opts.val[t - uslab_tunables];
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
	int err = kmem_cache_setting_make(&set, KMEM_TUNE_DEBUG, "kmalloc-*", 9,
					  SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON);

	if (!err)
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
	long reaper_ms = malloc_opt(REAPER_MS);
	long adapt_min = malloc_opt(ADAPT_MIN), adapt_max = malloc_opt(ADAPT_MAX);
	long adapt_budget_kb = malloc_opt(ADAPT_BUDGET_KB);

	if (malloc_opt(HELP) > 0)
		malloc_print_help(2);
	if (malloc_opt(LIMIT_MB) >= 0)
		page_alloc_set_limit((size_t)malloc_opt(LIMIT_MB) << 20);
	if (malloc_opt(TRIM) >= 0)
		page_alloc_set_resident_free((size_t)malloc_opt(TRIM) << 10);
	for (unsigned int i = 0; i < malloc_opts.nr_settings; i++) {
		int err = kmem_cache_setting_add(&malloc_opts.settings[i]);

		if (err)
			setting_warn(&malloc_opts.settings[i], err);
	}
	if (adapt_min >= 0 || adapt_max >= 0 || adapt_budget_kb >= 0) {
		/* 0 keeps Kconfig's value; the rows' bounds keep every one above 0 */
		if (pcp_adapt_set_bounds(adapt_min > 0 ? (unsigned long)adapt_min : 0,
					 adapt_max > 0 ? (unsigned long)adapt_max : 0,
					 adapt_budget_kb > 0 ? (unsigned long)adapt_budget_kb : 0))
			option_warn("adapt_min/adapt_max", "adapt_min is above adapt_max");
	}
	if (malloc_opt(ADAPT) >= 0)
		pcp_adapt_set(malloc_opt(ADAPT) == 1);
	if (malloc_opt(TCACHE) >= 0)
		pcp_thread_cache_set(malloc_opt(TCACHE) == 1);
	if (reaper_ms == 0)
		page_alloc_decayd_disable();	/* no background thread at all */
	if (reaper_ms >= 0) {
		int err = pcp_reaper_set_period((unsigned long)reaper_ms);
		char item[64];
		size_t pos = 0;

		uslab_bufprintf(item, sizeof(item), &pos, "reaper_ms=%ld", reaper_ms);
		if (err)
			option_warn(item, err == -EOPNOTSUPP ?
				    "no reaper in this build" : "rejected");
	}
	if (malloc_opt(DEBUG) > 0)
		malloc_debug_enable();
	/*
	 * slab_debug on a kmalloc cache: every size through kmalloc(), which
	 * gives a debug class the size asked for (its red zone starts there)
	 * and the call site; malloc's byte-table route knows neither.
	 */
	if (kmem_cache_debug_kmalloc())
		malloc_small_close();
}
