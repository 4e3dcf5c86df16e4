/* SPDX-License-Identifier: MIT */
/*
 * <linux/slab.h> for kernel code built against uslab: compile with
 * -I<prefix>/include -I<prefix>/include/uslab and include it unchanged.
 */
#ifndef USLAB_LINUX_SLAB_H
#define USLAB_LINUX_SLAB_H

#include "../gfp.h"
#include "../slab.h"

#endif /* USLAB_LINUX_SLAB_H */
