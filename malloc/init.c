// SPDX-License-Identifier: MIT
/*
 * Library set-up: options from the environment, fork handlers, statistics
 * at exit.
 *
 * The constructor runs after libc's own start-up, which may already have
 * called malloc(): that is fine, every layer initializes itself on first use
 * and the options only tune what is already running.
 *
 * Fork: the prepare handler takes every lower layer's locks, outermost
 * first: slab_fork_prepare() takes slab_mutex, then percpu's (it calls
 * pcp_fork_prepare(), as percpu's locks nest between slab_mutex and the
 * cache locks), then every cache lock; then the zone lock (the whole order:
 * docs/locking.md). The parent handler releases them in reverse order; the
 * child handler re-makes them, so a child forked while other threads
 * allocate finds every lock free and every list consistent. The handlers are registered from the constructor, before the
 * program's own, so they run last in prepare and first after fork: handlers
 * of other libraries that allocate in their prepare step do not deadlock.
 *
 * Locking: none of its own; the atfork handlers hold the lower layers' locks
 * across fork() as described above.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "uslab/malloc.h"
#include "uslab/page_alloc.h"
#include "uslab/slab.h"
#include "lib/log.h"
#include "malloc/internal.h"

/*
 * Referenced by malloc/malloc.c, so that this object (the constructor)
 * comes along with the malloc API wherever the objects are linked one by
 * one; libuslab.a itself is one member (the Makefile), which a program
 * calling only the kernel API pulls in whole.
 */
const char malloc_init_anchor;

static void malloc_fork_prepare(void)
{
	slab_fork_prepare();	/* slab_mutex, percpu's locks, cache locks */
	page_alloc_fork_prepare();
}

static void malloc_fork_parent(void)
{
	page_alloc_fork_parent();
	slab_fork_parent();
}

static void malloc_fork_child(void)
{
	malloc_statseg_fork_child();
	page_alloc_fork_child();
	slab_fork_child();
}

/**
 * malloc_print_stats - slabinfo, buddyinfo, the per-cache table and page
 * allocator line (slab/stats.c), settings that named no cache, and malloc's
 * own counters, to @fd.
 * Context: any; never allocates.
 */
void malloc_print_stats(int fd)
{
	struct page_alloc_stats st;
	char buf[2048];
	size_t pos = 0;

	slabinfo_write_fd(fd);
	page_alloc_buddyinfo(buf, sizeof(buf));
	malloc_write_str(fd, buf);
	/* the table `uslab sim` prints, from the library's own counters */
	malloc_write_str(fd, "\n");
	kmem_cache_stats_write_fd(fd);
	if (kmem_cache_settings_unmatched(NULL, 0)) {
		char names[1024];

		kmem_cache_settings_unmatched(names, sizeof(names));
		uslab_bufprintf(buf, sizeof(buf), &pos,
				"uslab: %s: %s named no cache of this process (none was "
				"created by that name)\n", CONFIG_MALLOC_OPTIONS_ENV, names);
		malloc_write_str(fd, buf);
		pos = 0;
	}
	page_alloc_get_stats(&st);
	uslab_bufprintf(buf, sizeof(buf), &pos,
			"malloc: allocated %zu KiB, free resident %zu KiB, returned %zu KiB, "
			"large %zu KiB, limit %zu KiB, enomem %lu, foreign frees %lu\n",
			st.bytes_allocated >> 10, st.bytes_free_resident >> 10,
			st.bytes_free_returned >> 10, st.bytes_large >> 10,
			st.limit >> 10, st.enomem,
			__atomic_load_n(&malloc_foreign_frees, __ATOMIC_RELAXED));
	/* handlers that allocated inside the allocator (lib/sigsafe.h) */
	if (st.emergency)
		uslab_bufprintf(buf, sizeof(buf), &pos,
				"malloc: signal handlers inside the allocator: %lu emergency "
				"blocks, %lu out now, %lu refused (ENOMEM)\n", st.emergency,
				(unsigned long)__atomic_load_n(&page_alloc_emergency_count,
							       __ATOMIC_RELAXED),
				__atomic_load_n(&page_alloc_emergency_failed,
						__ATOMIC_RELAXED));
	malloc_write_str(fd, buf);
}

/** uslab_malloc_stats - see include/uslab/malloc.h. */
__visible void uslab_malloc_stats(int fd)
{
	malloc_print_stats(fd);
}

/*
 * Where the statistics go at exit: a private copy of stderr, since programs
 * such as coreutils close fd 2 in their own exit handlers.
 */
static int stats_fd = -1;

__attribute__((constructor(101))) static void malloc_init(void)
{
	page_alloc_init();
	malloc_parse_options(getenv(CONFIG_MALLOC_OPTIONS_ENV));
	malloc_apply_options();
	if (malloc_opt(STATS) > 0)
		stats_fd = fcntl(2, F_DUPFD_CLOEXEC, 64);
	pthread_atfork(malloc_fork_prepare, malloc_fork_parent,
		       malloc_fork_child);
	if (malloc_opt(STATS_SHM) > 0)
		malloc_statseg_start();
}

__attribute__((destructor)) static void malloc_exit(void)
{
	malloc_statseg_stop();
	if (stats_fd >= 0)
		malloc_print_stats(stats_fd);
}
