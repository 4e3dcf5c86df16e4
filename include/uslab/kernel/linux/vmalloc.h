/* SPDX-License-Identifier: MIT */
/*
 * <linux/vmalloc.h> for kernel code built against uslab (see linux/slab.h):
 * vmalloc() and its forms on the one heap, kvmalloc()'s way (kmalloc()
 * serves any size; vfree() is kfree()).
 */
#ifndef USLAB_LINUX_VMALLOC_H
#define USLAB_LINUX_VMALLOC_H

#include "slab.h"	/* this folder's: <linux/slab.h> */

static inline void *vmalloc(unsigned long size)
{
	return kvmalloc(size, GFP_KERNEL);
}

static inline void *vzalloc(unsigned long size)
{
	return kvzalloc(size, GFP_KERNEL);
}

static inline void *vmalloc_array(size_t n, size_t size)
{
	return kvmalloc_array(n, size, GFP_KERNEL);
}

static inline void *vcalloc(size_t n, size_t size)
{
	return kvcalloc(n, size, GFP_KERNEL);
}

static inline void vfree(const void *p)
{
	kvfree(p);
}

#endif /* USLAB_LINUX_VMALLOC_H */
