/* SPDX-License-Identifier: MIT */
/*
 * <linux/rcupdate.h> for kernel code built against uslab: liburcu's memb
 * flavour under the kernel's names (rcu_read_lock, synchronize_rcu,
 * call_rcu, rcu_barrier, rcu_dereference, rcu_assign_pointer) plus
 * kfree_rcu from slab.h. Threads that read must call
 * rcu_register_thread() first, as liburcu requires. Link -lurcu-memb.
 */
#ifndef USLAB_LINUX_RCUPDATE_H
#define USLAB_LINUX_RCUPDATE_H

#ifndef RCU_MEMBARRIER
#define RCU_MEMBARRIER		/* liburcu's memb flavour, uslab's */
#endif
#include <urcu.h>		/* the flavour's calls under generic names */
#include "uslab/slab.h"

#endif /* USLAB_LINUX_RCUPDATE_H */
