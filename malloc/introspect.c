// SPDX-License-Identifier: MIT
/*
 * The C library's introspection calls answered with uslab's figures:
 * mallinfo2() and mallinfo(), malloc_stats() (glibc's layout, on stderr),
 * malloc_info() (glibc's XML, so its parsers read it), and
 * uslab_stats_print(), jemalloc's malloc_stats_print for uslab
 * (include/uslab/malloc.h). The mapping of glibc's terms onto uslab's:
 * docs/malloc.md, "Introspection".
 *
 * One snapshot of every cache's counters (kmem_cache_stats_all: an RCU walk
 * that takes each cache's lock in turn) and the page allocator's; the
 * caches' table goes into an anonymous mapping, never the heap, so these
 * calls do not move what they measure and work from inside a malloc
 * failure. Only malloc_info() allocates: through @fp's stdio, after the
 * snapshot.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "uslab/malloc.h"
#include "uslab/page_alloc.h"
#include "uslab/percpu.h"
#include "uslab/slab.h"
#include "lib/log.h"
#include "malloc/internal.h"

struct figures {
	struct page_alloc_stats pa;
	struct kmem_cache_stats *caches;	/* mapped; NULL when none */
	size_t ncaches, map_bytes;
	size_t system;		/* held from the OS and resident */
	size_t in_use;		/* handed to the program: objects and large blocks */
	size_t slab_free;	/* free objects in slabs (not in magazines) */
	size_t slab_free_n;
	size_t cached;		/* objects in per-CPU magazines and depots */
	size_t cached_n;
	size_t overhead;	/* slab pages not covered by objects */
};

static void figures_get(struct figures *f)
{
	size_t n, slab_bytes = 0, active = 0, other;

	memset(f, 0, sizeof(*f));
	n = kmem_cache_stats_all(NULL, 0);
	for (int tries = 0; n && tries < 4; tries++) {
		size_t want = n + 8, bytes = want * sizeof(*f->caches);
		void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			break;
		n = kmem_cache_stats_all(p, want);
		if (n <= want) {
			f->caches = p;
			f->ncaches = n;
			f->map_bytes = bytes;
			break;
		}
		munmap(p, bytes);	/* caches were created meanwhile */
	}
	page_alloc_get_stats(&f->pa);
	for (size_t i = 0; i < f->ncaches; i++) {
		const struct kmem_cache_stats *c = &f->caches[i];
		size_t free_n = c->num_objs > c->active_objs + c->cached_objs ?
				c->num_objs - c->active_objs - c->cached_objs : 0;

		active += c->active_objs * c->object_size;
		slab_bytes += c->slab_bytes;
		f->slab_free_n += free_n;
		f->slab_free += free_n * c->size;
		f->cached_n += c->cached_objs;
		f->cached += c->cached_objs * c->size;
	}
	f->system = f->pa.bytes_allocated + f->pa.bytes_free_resident;
	/*
	 * Pages handed out but not to slabs are large blocks, all in use,
	 * except percpu's own (headers, magazines: a program that freed
	 * everything read 1.3 MB in use after its first use of many classes)
	 */
	other = slab_bytes + pcp_page_bytes();
	f->in_use = active + (f->pa.bytes_allocated > other ?
			      f->pa.bytes_allocated - other : 0);
	f->overhead = slab_bytes > active + f->slab_free + f->cached ?
		      slab_bytes - active - f->slab_free - f->cached : 0;
}

static void figures_put(struct figures *f)
{
	if (f->caches)
		munmap(f->caches, f->map_bytes);
	f->caches = NULL;
}

/* mallinfo2's fields in uslab's terms: docs/malloc.md, "Introspection". */
__visible struct mallinfo2 mallinfo2(void)
{
	struct mallinfo2 mi;
	struct figures f;

	figures_get(&f);
	memset(&mi, 0, sizeof(mi));
	mi.arena = f.system;
	mi.ordblks = f.slab_free_n;
	mi.smblks = f.cached_n;
	mi.hblks = 0;
	mi.hblkhd = f.pa.bytes_large;
	mi.usmblks = f.pa.bytes_allocated_peak;
	mi.fsmblks = f.cached;
	mi.uordblks = f.in_use;
	mi.fordblks = f.system > f.in_use ? f.system - f.in_use : 0;
	mi.keepcost = f.pa.bytes_free_resident;
	figures_put(&f);
	return mi;
}

__visible struct mallinfo mallinfo(void)
{
	struct mallinfo2 m2 = mallinfo2();
	struct mallinfo mi;

	/* The old interface's ints wrap, as glibc's do. */
	mi.arena = (int)m2.arena;
	mi.ordblks = (int)m2.ordblks;
	mi.smblks = (int)m2.smblks;
	mi.hblks = (int)m2.hblks;
	mi.hblkhd = (int)m2.hblkhd;
	mi.usmblks = (int)m2.usmblks;
	mi.fsmblks = (int)m2.fsmblks;
	mi.uordblks = (int)m2.uordblks;
	mi.fordblks = (int)m2.fordblks;
	mi.keepcost = (int)m2.keepcost;
	return mi;
}

/* glibc's layout and fd (stderr): one "arena", then the totals. */
__visible void malloc_stats(void)
{
	struct figures f;
	char buf[1024];
	size_t pos = 0;

	figures_get(&f);
	uslab_bufprintf(buf, sizeof(buf), &pos,
			"Arena 0:\n"
			"system bytes     = %10zu\n"
			"in use bytes     = %10zu\n"
			"Total (incl. mmap):\n"
			"system bytes     = %10zu\n"
			"in use bytes     = %10zu\n"
			"max mmap regions = %10u\n"
			"max mmap bytes   = %10zu\n",
			f.system - f.pa.bytes_large, f.in_use - min_t(size_t, f.in_use, f.pa.bytes_large),
			f.system, f.in_use, 0u, f.pa.bytes_large);
	figures_put(&f);
	malloc_write_str(2, buf);
}

/*
 * glibc's XML (malloc/malloc.c __malloc_info, version 1), one heap: the
 * <sizes> are the kmalloc classes' free objects (glibc lists its free
 * chunks by size), "fast" the objects in per-CPU magazines (glibc's fast
 * bins and tcache), "rest" the free objects in slabs, "mmap" the large
 * mappings (count 0: uslab keeps no count of them, the size is exact).
 */
__visible int malloc_info(int options, FILE *fp)
{
	struct figures f;
	uint32_t from = 1;

	if (options)		/* as glibc: the error number itself */
		return EINVAL;
	figures_get(&f);
	/* the kmalloc classes by size (insertion sort: no allocation) */
	for (size_t i = 1; i < f.ncaches; i++) {
		struct kmem_cache_stats t = f.caches[i];
		uint64_t key = (t.flags & KMEM_CACHE_STATS_KMALLOC ? 0 : 1ull << 32) | t.object_size;
		size_t j = i;

		for (; j > 0; j--) {
			const struct kmem_cache_stats *p = &f.caches[j - 1];

			if (((p->flags & KMEM_CACHE_STATS_KMALLOC ? 0 : 1ull << 32) | p->object_size) <= key)
				break;
			f.caches[j] = *p;
		}
		f.caches[j] = t;
	}
	fputs("<malloc version=\"1\">\n<heap nr=\"0\">\n<sizes>\n", fp);
	/* the totals are the rows' (malloc's caches, not the named ones) */
	f.cached = f.cached_n = f.slab_free = f.slab_free_n = 0;
	for (size_t i = 0; i < f.ncaches; i++) {
		const struct kmem_cache_stats *c = &f.caches[i];
		uint64_t free_n = c->num_objs > c->active_objs + c->cached_objs ?
				  c->num_objs - c->active_objs - c->cached_objs : 0;

		if (!(c->flags & KMEM_CACHE_STATS_KMALLOC))
			break;
		f.cached_n += c->cached_objs;
		f.cached += c->cached_objs * c->size;
		f.slab_free_n += free_n;
		f.slab_free += free_n * c->size;
		if (free_n + c->cached_objs)
			fprintf(fp, "  <size from=\"%u\" to=\"%u\" total=\"%" PRIu64 "\" count=\"%" PRIu64 "\"/>\n",
				min_t(uint32_t, from, c->object_size), c->object_size,
				(free_n + c->cached_objs) * c->size, free_n + c->cached_objs);
		from = c->object_size + 1;
	}
	fprintf(fp, "</sizes>\n"
		"<total type=\"fast\" count=\"%zu\" size=\"%zu\"/>\n"
		"<total type=\"rest\" count=\"%zu\" size=\"%zu\"/>\n"
		"<system type=\"current\" size=\"%zu\"/>\n"
		"<system type=\"max\" size=\"%zu\"/>\n"
		"<aspace type=\"total\" size=\"%zu\"/>\n"
		"<aspace type=\"mprotect\" size=\"%zu\"/>\n"
		"</heap>\n",
		f.cached_n, f.cached, f.slab_free_n, f.slab_free, f.system,
		max_t(size_t, f.system, f.pa.bytes_allocated_peak), f.system, f.system);
	fprintf(fp, "<total type=\"fast\" count=\"%zu\" size=\"%zu\"/>\n"
		"<total type=\"rest\" count=\"%zu\" size=\"%zu\"/>\n"
		"<total type=\"mmap\" count=\"%d\" size=\"%zu\"/>\n"
		"<system type=\"current\" size=\"%zu\"/>\n"
		"<system type=\"max\" size=\"%zu\"/>\n"
		"<aspace type=\"total\" size=\"%zu\"/>\n"
		"<aspace type=\"mprotect\" size=\"%zu\"/>\n"
		"</malloc>\n",
		f.cached_n, f.cached, f.slab_free_n, f.slab_free, 0, f.pa.bytes_large,
		f.system, max_t(size_t, f.system, f.pa.bytes_allocated_peak), f.system, f.system);
	figures_put(&f);
	return ferror(fp) ? -1 : 0;
}

/* ---- uslab_stats_print ----------------------------------------------------- */

struct sink {
	void (*write_cb)(void *, const char *);
	void *opaque;
	char buf[2048];
	size_t pos;
};

static void sink_flush(struct sink *s)
{
	if (!s->pos)
		return;
	if (s->write_cb)
		s->write_cb(s->opaque, s->buf);
	else
		malloc_write_str(2, s->buf);
	s->pos = 0;
	s->buf[0] = 0;
}

#define sink_printf(s, ...)							\
	do {									\
		if ((s)->pos > sizeof((s)->buf) - 700)				\
			sink_flush(s);						\
		uslab_bufprintf((s)->buf, sizeof((s)->buf), &(s)->pos, __VA_ARGS__); \
	} while (0)

/* A cache name as a JSON string's contents: names are the program's own. */
static void sink_json_name(struct sink *s, const char *name)
{
	for (; *name; name++) {
		unsigned char c = (unsigned char)*name;

		if (c < 0x20 || c == '"' || c == '\\')
			sink_printf(s, "\\u%04x", c);
		else
			sink_printf(s, "%c", c);
	}
}

static void print_json(struct sink *s, const struct figures *f, bool caches, bool pages)
{
	sink_printf(s, "{\"uslab\": {\"version\": \"%s\", \"malloc\": {\"system\": %zu, "
		    "\"in_use\": %zu, \"free_in_slabs\": %zu, \"free_in_slabs_objects\": %zu, "
		    "\"in_magazines\": %zu, \"in_magazines_objects\": %zu, \"slab_overhead\": %zu, "
		    "\"large\": %zu, \"foreign_frees\": %lu}",
		    USLAB_VERSION_STRING, f->system, f->in_use, f->slab_free, f->slab_free_n,
		    f->cached, f->cached_n, f->overhead, f->pa.bytes_large,
		    __atomic_load_n(&malloc_foreign_frees, __ATOMIC_RELAXED));
	if (pages)
		sink_printf(s, ", \"pages\": {\"allocated\": %zu, \"allocated_peak\": %zu, "
			    "\"free_resident\": %zu, \"pagelists\": %zu, \"large_cached\": %zu, "
			    "\"returned\": %zu, \"limit\": %zu, \"splits\": %lu, \"merges\": %lu, "
			    "\"trims\": %lu, \"enomem\": %lu, \"fresh\": %lu}",
			    f->pa.bytes_allocated, f->pa.bytes_allocated_peak,
			    f->pa.bytes_free_resident, f->pa.bytes_pagelists, f->pa.bytes_large_cached,
			    f->pa.bytes_free_returned, f->pa.limit, f->pa.splits, f->pa.merges,
			    f->pa.trims, f->pa.enomem, f->pa.pages_fresh);
	if (caches) {
		sink_printf(s, ", \"caches\": [");
		for (size_t i = 0; i < f->ncaches; i++) {
			const struct kmem_cache_stats *c = &f->caches[i];

			sink_printf(s, "%s{\"name\": \"", i ? ", " : "");
			sink_json_name(s, c->name);
			sink_printf(s, "\", \"object_size\": %u, \"size\": %u, \"active_objs\": %" PRIu64
				    ", \"num_objs\": %" PRIu64 ", \"cached_objs\": %" PRIu64
				    ", \"slabs\": %" PRIu64 ", \"slab_bytes\": %" PRIu64
				    ", \"slab_bytes_peak\": %" PRIu64 ", \"allocs\": %" PRIu64
				    ", \"frees\": %" PRIu64 ", \"alloc_hits\": %" PRIu64
				    ", \"free_hits\": %" PRIu64 ", \"counted\": %s}",
				    c->object_size, c->size, c->active_objs, c->num_objs,
				    c->cached_objs, c->nr_slabs, c->slab_bytes, c->slab_bytes_peak,
				    c->allocs, c->frees, c->alloc_hits, c->free_hits,
				    c->flags & KMEM_CACHE_STATS_COUNTED ? "true" : "false");
		}
		sink_printf(s, "]");
	}
	sink_printf(s, "}}\n");
}

static void print_text(struct sink *s, const struct figures *f, bool caches, bool pages)
{
	char line[512];

	sink_printf(s, "___ uslab %s statistics ___\n", USLAB_VERSION_STRING);
	sink_printf(s, "held from the OS, resident: %12zu bytes\n"
		    "in use by the program:      %12zu bytes (large blocks %zu)\n"
		    "free objects in slabs:      %12zu bytes (%zu objects)\n"
		    "objects in magazines:       %12zu bytes (%zu objects)\n"
		    "slab tails and headers:     %12zu bytes\n"
		    "free pages, resident:       %12zu bytes\n"
		    "peak pages handed out:      %12zu bytes\n",
		    f->system, f->in_use, f->pa.bytes_large, f->slab_free, f->slab_free_n,
		    f->cached, f->cached_n, f->overhead, f->pa.bytes_free_resident,
		    f->pa.bytes_allocated_peak);
	if (pages) {
		kmem_cache_stats_page_line(&f->pa, line, sizeof(line));
		sink_printf(s, "%s", line);
	}
	if (caches && f->ncaches) {
		struct kmem_cache_stats_sum sum = { 0 };

		kmem_cache_stats_header(line, sizeof(line));
		sink_printf(s, "%s", line);
		for (size_t i = 0; i < f->ncaches; i++) {
			if (!kmem_cache_stats_shown(&f->caches[i]))
				continue;
			kmem_cache_stats_sum_add(&sum, &f->caches[i]);
			kmem_cache_stats_row(&f->caches[i], line, sizeof(line));
			sink_printf(s, "%s", line);
		}
		kmem_cache_stats_total(sum.allocs, sum.frees, sum.hits, line, sizeof(line));
		sink_printf(s, "%s", line);
	}
	sink_printf(s, "--- end of uslab statistics ---\n");
}

/** uslab_version - see include/uslab/malloc.h. */
__visible const char *uslab_version(void)
{
	return USLAB_VERSION_STRING;
}

/** uslab_stats_print - see include/uslab/malloc.h. */
__visible void uslab_stats_print(void (*write_cb)(void *opaque, const char *text),
				 void *opaque, const char *opts)
{
	struct sink s = { .write_cb = write_cb, .opaque = opaque };
	bool json = false, caches = true, pages = true;
	struct figures f;

	for (; opts && *opts; opts++) {
		if (*opts == 'J')
			json = true;
		else if (*opts == 'c')
			caches = false;
		else if (*opts == 'p')
			pages = false;
	}
	figures_get(&f);
	if (json)
		print_json(&s, &f, caches, pages);
	else
		print_text(&s, &f, caches, pages);
	sink_flush(&s);
	figures_put(&f);
}
