core-objs += lib/log.o lib/fault_inject.o lib/sigsafe.o lib/procfs.o lib/thread.o \
             lib/shmseg.o

# The tools' part of lib/: the keyed hash table (lib/hashmap.h) and the
# growing array (lib/grow.h) allocate,
# so it stays out of the allocator's libraries; the trace library, the CLI,
# the fuzzers and the trace tests link it.
lib-tools-objs := lib/hashmap.o lib/grow.o
sim-objs += $(lib-tools-objs)
$(obj)/tests/lib/check_hashmap: $(addprefix $(obj)/,$(lib-tools-objs))
