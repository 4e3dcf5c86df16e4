/* SPDX-License-Identifier: MIT */
/*
 * Types the public headers share, as the kernel's <linux/types.h> holds
 * struct list_head. The list operations are in lib/list.h (not installed).
 */
#ifndef USLAB_TYPES_H
#define USLAB_TYPES_H

struct list_head {
	struct list_head *next, *prev;
};

#endif /* USLAB_TYPES_H */
