/* SPDX-License-Identifier: MIT */
/*
 * Basic types shared by the public headers and lib/ (the kernel's
 * include/linux/types.h): self-contained, installed.
 */
#ifndef USLAB_TYPES_H
#define USLAB_TYPES_H

#ifdef __cplusplus
extern "C" {
#endif

/* A circular doubly linked list node (lib/list.h has the operations). */
struct list_head {
	struct list_head *next, *prev;
};

#ifdef __cplusplus
}
#endif

#endif /* USLAB_TYPES_H */
