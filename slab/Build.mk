# slab/: kmem_cache, kmalloc size classes, debug checks, RCU, slabinfo
core-objs += slab/slab.o slab/debug.o slab/kmalloc.o slab/rcu.o \
	slab/slabinfo.o slab/settings.o slab/stats.o

# check_slab's slab_debug reports name its own call sites (dladdr).
$(obj)/tests/slab/check_slab: LDFLAGS += -Wl,--export-dynamic
