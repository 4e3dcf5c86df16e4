/* SPDX-License-Identifier: MIT */
/*
 * <linux/slab.h> for kernel code built against uslab, included unchanged:
 * `pkg-config --cflags uslab` gives the two include paths it needs
 * (<prefix>/include and <prefix>/include/uslab/kernel).
 */
#ifndef USLAB_LINUX_SLAB_H
#define USLAB_LINUX_SLAB_H

#include "uslab/gfp.h"
#include "uslab/slab.h"

/* A cache named after its struct, of its size and alignment (the kernel's). */
#define KMEM_CACHE(__struct, __flags)					\
	kmem_cache_create(#__struct, sizeof(struct __struct),		\
			  __alignof__(struct __struct), (__flags), NULL)

#endif /* USLAB_LINUX_SLAB_H */
