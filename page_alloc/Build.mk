# page_alloc/: the buddy page allocator (zone, buddy lists, per-CPU page
# lists, own mappings and their cache; reclaim.c gives memory back)
core-objs += page_alloc/zone.o page_alloc/buddy.o page_alloc/large.o \
	page_alloc/pagelist.o page_alloc/reclaim.o page_alloc/emergency.o \
	page_alloc/resident.o
core-objs += page_alloc/api.o
