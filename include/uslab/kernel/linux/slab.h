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

#endif /* USLAB_LINUX_SLAB_H */
