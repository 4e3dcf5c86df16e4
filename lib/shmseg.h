/* SPDX-License-Identifier: MIT */
/*
 * The file of a shared-memory segment in /dev/shm whose life is told by a
 * lock, not by a pid: the process that serves it holds a read lock (an
 * open file description lock, F_OFD_SETLK) on byte SHMSEG_BYTE_ALIVE from
 * before the file gets its name until its last mapping of it goes (exit,
 * any signal, exec). A segment nobody holds that lock on is provably
 * stale, whatever pid namespace or /proc the looker has; readers take
 * turns with a write lock on byte SHMSEG_BYTE_READER.
 *
 * Used for the statistics segment (include/uslab/statseg.h) by its writer
 * (malloc/statseg.c) and its readers (tools/uslab/statseg.c). The format
 * is the caller's: these functions know only its identity (magic, version
 * and size in the first 16 bytes).
 */
#ifndef USLAB_LIB_SHMSEG_H
#define USLAB_LIB_SHMSEG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define SHMSEG_BYTE_ALIVE	0
#define SHMSEG_BYTE_READER	1

/* The first 16 bytes of a segment: what makes it one of ours. */
struct shmseg_id {
	uint64_t magic;
	uint32_t version;
	uint32_t size;		/* of the whole file */
};

/* lib/shmseg.c */
/*
 * shmseg_lock - a lock on one byte of @fd (@type F_RDLCK, F_WRLCK or
 * F_UNLCK), never waiting. Return: 0 or -errno (-EAGAIN: held).
 */
int shmseg_lock(int fd, short type, off_t byte);
/*
 * shmseg_alive - whether another open file description holds the alive
 * lock of @fd's file. Return: 1 held, 0 not held, -errno when unknown.
 */
int shmseg_alive(int fd);
/*
 * shmseg_check - whether @fd is a regular file of @id's size whose first
 * 16 bytes are @id; its stat in @st. Reads with pread (no mapping).
 */
bool shmseg_check(int fd, const struct shmseg_id *id, struct stat *st);
/*
 * shmseg_remove_if - remove @name in @dirfd when it still names the file
 * @st describes: renamed away first, checked, then unlinked, so a segment
 * linked under that name in the meantime stays (it is renamed back).
 * Return: 1 removed, 0 not (another file, not ours to remove), -errno.
 */
int shmseg_remove_if(int dirfd, const char *name, const struct stat *st);
/*
 * shmseg_remove_stale - remove @name in @dirfd when it is provably stale:
 * a segment of @id whose alive lock nobody holds. A file that is not a
 * segment of @id, or that we may not read, is left as it is.
 * Return: 1 removed, 0 left, -errno.
 */
int shmseg_remove_stale(int dirfd, const char *name, const struct shmseg_id *id);
/*
 * shmseg_sweep - shmseg_remove_stale on every entry of @dir named
 * @prefix<digits>[.<anything>] or .@prefix<anything> (a writer's or a
 * remover's temporary name). Return: how many were removed, or -errno
 * when @dir cannot be read.
 */
int shmseg_sweep(const char *dir, const char *prefix, const struct shmseg_id *id);
/* shmseg_random - a random 64-bit suffix for a file name (getrandom, else the clock). */
uint64_t shmseg_random(void);

#endif /* USLAB_LIB_SHMSEG_H */
