// SPDX-License-Identifier: MIT
/*
 * The exported forms of the page map helpers, for programs built against
 * the installed library: they cannot reach the hidden range variables that
 * the library's own code reads inline (uslab/page_alloc.h).
 */
#undef USLAB_INTERNAL		/* declare the exported forms, not the inline ones */
#include "uslab/page_alloc.h"

bool page_alloc_owns(const void *addr)
{
	return __page_alloc_owns(addr);
}

struct page *virt_to_page(const void *addr)
{
	return __virt_to_page(addr);
}

void *page_address(const struct page *page)
{
	return __page_address(page);
}

unsigned long page_to_pfn(const struct page *page)
{
	return __page_to_pfn(page);
}
