/* SPDX-License-Identifier: MIT */
/*
 * What /proc says about a process, read without allocating (safe inside the
 * allocator: open, read into a stack buffer, sscanf of numbers only).
 */
#ifndef USLAB_LIB_PROCFS_H
#define USLAB_LIB_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* lib/procfs.c */
/*
 * proc_start_time - field 22 of /proc/@pid/stat, the process's start time in
 * clock ticks since boot: tells a reused pid from the process it named.
 * Context: any thread; no locks, no allocation.
 * Return: the start time, 0 when the process is gone or unreadable.
 */
uint64_t proc_start_time(pid_t pid);
/* The resident set of this process in bytes (/proc/self/statm), 0 if
 * unreadable. Context: any thread; no locks, no allocation. */
uint64_t proc_rss_bytes(void);
/* VmHWM of /proc/self/status (the peak resident set), in bytes; -1 if unknown. */
int64_t proc_hwm_bytes(void);
/* Restart that peak (Linux 4.0: "5" to clear_refs), so a later reading is
 * a run's own. Return: true when it took. */
bool proc_reset_hwm(void);

#endif /* USLAB_LIB_PROCFS_H */
