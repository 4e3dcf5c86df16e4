# page_alloc/: the buddy page allocator (zone, buddy lists, own mappings)
core-objs += page_alloc/zone.o page_alloc/buddy.o page_alloc/large.o \
	page_alloc/pcp.o page_alloc/decay.o
