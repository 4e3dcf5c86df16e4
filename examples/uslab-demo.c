// SPDX-License-Identifier: MIT
/*
 * uslab-demo: a small workload on the slab layer, then its slabinfo.
 *
 * Four threads each keep a working set of "inode", "dentry" and
 * "task_struct" objects (caches with a constructor, SLAB_HWCACHE_ALIGN and
 * SLAB_TYPESAFE_BY_RCU), plus kmalloc buffers of assorted sizes, replacing
 * random members for a fixed number of rounds. Half of the objects are
 * freed by another thread than the one that allocated them (through a
 * shared exchange array). At the end some objects stay allocated so the
 * table shows active objects, then everything is printed as
 * /proc/slabinfo 2.1 on stdout.
 *
 *   uslab-demo [rounds]      (default 200000 per thread)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "uslab/page_alloc.h"
#include "uslab/slab.h"

#define DEMO_THREADS	4
#define DEMO_WORKSET	2048
#define DEMO_SHARED	256

struct inode_demo { unsigned long ino; unsigned int mode, nlink; char pad[560]; };
struct dentry_demo { void *parent; char name[40]; unsigned int flags; };
struct task_demo { int pid, tgid; void *mm; char comm[16]; char pad[1500]; };

static struct kmem_cache *inode_cache, *dentry_cache, *task_cache;
static void *shared_slot[DEMO_SHARED];
static unsigned long rounds = 200000;

static void inode_ctor(void *p)
{
	struct inode_demo *i = p;

	i->ino = 0;
	i->mode = 0644;
	i->nlink = 1;
}

/* Objects carry their kind in the first word, so any thread can free them. */
enum kind { K_INODE = 1, K_DENTRY, K_TASK, K_KMALLOC };

struct tagged { void *p; enum kind k; };

static void *alloc_one(enum kind k, unsigned long r)
{
	switch (k) {
	case K_INODE:
		return kmem_cache_alloc(inode_cache, GFP_KERNEL);
	case K_DENTRY:
		return kmem_cache_zalloc(dentry_cache, GFP_KERNEL);
	case K_TASK:
		return kmem_cache_alloc(task_cache, GFP_KERNEL);
	default:
		return kmalloc(8 + (r * 2654435761UL) % 6000, GFP_KERNEL);
	}
}

static void free_one(enum kind k, void *p)
{
	switch (k) {
	case K_INODE:
		kmem_cache_free(inode_cache, p);
		break;
	case K_DENTRY:
		kmem_cache_free(dentry_cache, p);
		break;
	case K_TASK:
		kmem_cache_free(task_cache, p);
		break;
	default:
		kfree(p);
	}
}

static void *worker(void *arg)
{
	static __thread struct tagged set[DEMO_WORKSET];
	unsigned long seed = (unsigned long)arg * 0x9e3779b97f4a7c15UL + 1, r;
	unsigned int i;

	for (r = 0; r < rounds; r++) {
		struct tagged *t;
		enum kind k;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		t = &set[seed % DEMO_WORKSET];
		k = (enum kind)(1 + (seed >> 20) % 4);
		if (t->p) {
			/* Every other object goes through another thread. */
			if ((seed >> 40) & 1 && t->k == K_KMALLOC) {
				void *old = __atomic_exchange_n(
					&shared_slot[(seed >> 44) % DEMO_SHARED],
					t->p, __ATOMIC_ACQ_REL);
				kfree(old);
			} else {
				free_one(t->k, t->p);
			}
		}
		t->p = alloc_one(k, r);
		t->k = k;
		if (!t->p) {
			fprintf(stderr, "uslab-demo: allocation failed\n");
			exit(1);
		}
		memset(t->p, 0x5a, k == K_KMALLOC ? 8 : 16);
	}
	/* Leave a quarter allocated so the table has active objects. */
	for (i = 0; i < DEMO_WORKSET; i++) {
		if (set[i].p && i % 4)
			free_one(set[i].k, set[i].p);
		set[i].p = NULL;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[DEMO_THREADS];
	struct page_alloc_stats st;
	struct timespec t0, t1;
	unsigned long i;
	double secs;

	if (argc > 1)
		rounds = strtoul(argv[1], NULL, 0);
	inode_cache = kmem_cache_create("inode_demo", sizeof(struct inode_demo),
					0, SLAB_HWCACHE_ALIGN, inode_ctor);
	dentry_cache = kmem_cache_create("dentry_demo", sizeof(struct dentry_demo),
					 0, SLAB_TYPESAFE_BY_RCU, NULL);
	task_cache = kmem_cache_create("task_struct_demo", sizeof(struct task_demo),
				       64, SLAB_HWCACHE_ALIGN | SLAB_PANIC, NULL);
	if (!inode_cache || !dentry_cache) {
		perror("uslab-demo: kmem_cache_create");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < DEMO_THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (i = 0; i < DEMO_THREADS; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (i = 0; i < DEMO_SHARED; i++)
		kfree(shared_slot[i]);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	fflush(stdout);
	slabinfo_write_fd(1);
	page_alloc_get_stats(&st);
	printf("\n%d threads x %lu rounds (alloc+free pairs) in %.3f s: %.1f ns of wall time per pair\n",
	       DEMO_THREADS, rounds, secs, secs * 1e9 / (double)(DEMO_THREADS * rounds));
	printf("page_alloc: %zu KiB allocated, %zu KiB free resident\n",
	       st.bytes_allocated >> 10, st.bytes_free_resident >> 10);
	return 0;
}
