/* SPDX-License-Identifier: MIT */
/*
 * The statistics segment: how `uslab slabinfo -p PID` and `uslab top -p PID`
 * look into a running process on libuslab (preloaded or linked).
 *
 * With USLAB_OPTIONS=stats_shm the library creates /dev/shm/uslab.<pid>
 * (mode 0600: the same user or root may read it; uslab.<pid>.<random> when
 * that name is held by a file it may not remove) and starts one agent
 * thread that sleeps on a futex in the segment. A reader takes the
 * readers' file lock (lib/shmseg.h, bounded wait), optionally puts a
 * slabinfo write in @cmd, increments @request and wakes the futex; the agent applies the
 * write, copies every cache's counters (kmem_cache_stats_all()) and the
 * slabinfo 2.1 text into the segment, sets @done to the request it served
 * and wakes the reader. Nothing runs in the process between requests, and
 * the allocation fast paths never touch the segment.
 *
 * The serving process holds the file's alive lock (lib/shmseg.h) until it
 * exits, execs or dies; a watcher process then removes the file, and a
 * file whose lock nobody holds is provably stale: the only kind anyone
 * removes. A fork child does not serve its parent's segment.
 *
 * Every field is input to the reader, and so is the file: the reader
 * takes it only from the target process's owner (or root), mode 0600, a
 * regular file of this size, alive, with the process's pid and start
 * time; it reads it with pread (a file truncated under it is an error, not
 * SIGBUS); counts are bounded by the arrays before use, strings by their
 * buffers, and every byte printed is escaped.
 */
#ifndef USLAB_STATSEG_H
#define USLAB_STATSEG_H

#include <stdint.h>
#include "uslab/slab.h"

#ifdef __cplusplus
extern "C" {
#endif

#define USLAB_STATSEG_MAGIC	0x31474553424c5355ull	/* "USLBSEG1" */
#define USLAB_STATSEG_VERSION	3	/* 2: the alive lock, lib/shmseg.h; 3: adaptive magazine fields */
#define USLAB_STATSEG_DIR	"/dev/shm"
#define USLAB_STATSEG_PREFIX	"uslab."		/* + decimal pid */
#define USLAB_STATSEG_CACHES	1024
#define USLAB_STATSEG_TEXT	(256 * 1024)
#define USLAB_STATSEG_CMD	256

struct uslab_statseg {
	uint64_t magic;
	uint32_t version;
	uint32_t size;			/* bytes of the whole segment */
	int32_t pid;			/* the process that serves it */
	uint32_t flags;			/* USLAB_STATSEG_F_* */
	uint64_t start_time;		/* /proc/<pid>/stat field 22 */

	/* request/answer: futex words, shared between processes */
	uint32_t request;		/* bumped by the reader */
	uint32_t done;			/* = request once served */

	/* a slabinfo write to apply first ("" = none), and its result */
	char cmd[USLAB_STATSEG_CMD];
	int32_t cmd_result;		/* 0 or -errno, as slabinfo_write() */
	uint32_t pad0;

	/* the snapshot */
	uint64_t snap_ns;		/* CLOCK_MONOTONIC when it was taken */
	uint64_t snaps;			/* snapshots served so far */
	char mode[16];			/* per-CPU mode: "rseq", "fallback", "off" */
	uint32_t nr_caches;		/* entries of @caches filled */
	uint32_t total_caches;		/* caches that existed (may exceed the array) */
	uint32_t text_len;		/* bytes of @text */
	uint32_t pad1;
	struct kmem_cache_stats caches[USLAB_STATSEG_CACHES];
	char text[USLAB_STATSEG_TEXT];	/* slabinfo 2.1, NUL-terminated */
};

#define USLAB_STATSEG_F_COUNTED	0x1	/* hit/refill/flush counters compiled in */

#ifdef __cplusplus
}
#endif

#endif /* USLAB_STATSEG_H */
