/* SPDX-License-Identifier: MIT */
/* <linux/gfp.h> for kernel code built against uslab (see linux/slab.h). */
#ifndef USLAB_LINUX_GFP_H
#define USLAB_LINUX_GFP_H

#include "uslab/gfp.h"

#endif /* USLAB_LINUX_GFP_H */
