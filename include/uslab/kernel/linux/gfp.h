/* SPDX-License-Identifier: MIT */
/*
 * <linux/gfp.h> for kernel code built against uslab (see linux/slab.h):
 * the GFP flags and, as in the kernel, the page allocator's calls
 * (alloc_pages, __get_free_pages, free_pages, ... from <uslab/page_alloc.h>)
 * with their one-page forms, the kernel's macros.
 */
#ifndef USLAB_LINUX_GFP_H
#define USLAB_LINUX_GFP_H

#include "uslab/gfp.h"
#include "uslab/page_alloc.h"

#define alloc_page(gfp_mask)		alloc_pages(gfp_mask, 0)
#define __free_page(page)		__free_pages((page), 0)
#define __get_free_page(gfp_mask)	__get_free_pages((gfp_mask), 0)
#define get_zeroed_page(gfp_mask)	__get_free_pages((gfp_mask) | __GFP_ZERO, 0)
#define free_page(addr)			free_pages((addr), 0)

#endif /* USLAB_LINUX_GFP_H */
