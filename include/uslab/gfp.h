/* SPDX-License-Identifier: MIT */
/*
 * gfp_t: allocation flags with the kernel's names, so kernel code compiles
 * unchanged. In userspace nothing sleeps for reclaim, so GFP_KERNEL,
 * GFP_ATOMIC and GFP_NOWAIT behave alike; __GFP_ZERO zeroes, __GFP_NOFAIL
 * retries (after trimming caches) until it succeeds, __GFP_NOWARN silences the
 * failure warning.
 */
#ifndef USLAB_GFP_H
#define USLAB_GFP_H

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned int gfp_t;

#define __GFP_DIRECT_RECLAIM	0x0001u
#define __GFP_KSWAPD_RECLAIM	0x0002u
#define __GFP_IO		0x0004u
#define __GFP_FS		0x0008u
#define __GFP_HIGH		0x0010u
#define __GFP_ZERO		0x0100u
#define __GFP_NOWARN		0x0200u
#define __GFP_NOFAIL		0x0400u
#define __GFP_NORETRY		0x0800u
#define __GFP_COMP		0x1000u
#define __GFP_ACCOUNT		0x2000u
#define __GFP_RECLAIM		(__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM)

#define GFP_ATOMIC		(__GFP_HIGH | __GFP_KSWAPD_RECLAIM)
#define GFP_KERNEL		(__GFP_RECLAIM | __GFP_IO | __GFP_FS)
#define GFP_KERNEL_ACCOUNT	(GFP_KERNEL | __GFP_ACCOUNT)
#define GFP_NOWAIT		(__GFP_KSWAPD_RECLAIM)
#define GFP_NOIO		(__GFP_RECLAIM)
#define GFP_NOFS		(__GFP_RECLAIM | __GFP_IO)
#define GFP_USER		(__GFP_RECLAIM | __GFP_IO | __GFP_FS)

#ifdef __cplusplus
}
#endif

#endif /* USLAB_GFP_H */
