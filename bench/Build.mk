# bench/: `make bench` (never part of `make check`). Runs bench/run.sh, which
# measures uslab against glibc, jemalloc, tcmalloc and mimalloc in one run
# and writes $(O)/bench/results.txt.
bench-progs := $(obj)/bench/alloc_bench $(obj)/bench/hitprobe
# built by `make`: tests/bench/ checks that they do the work they claim
progs += $(bench-progs)

bench-objs := $(addprefix $(obj)/bench/,alloc_bench.o workloads.o shapes.o programs.o)

# lib/procfs.o: the peak RSS (VmHWM) without stdio, nothing of uslab's heap
$(obj)/bench/alloc_bench: $(bench-objs) $(obj)/lib/procfs.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lm -lpthread

# hitprobe runs itself with the library under test preloaded: no uslab here.
$(obj)/bench/hitprobe: $(obj)/bench/hitprobe.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^

# The benchmark calls malloc for its cost: no folding of malloc/free pairs.
$(bench-objs) $(obj)/bench/hitprobe.o: CFLAGS += -fno-builtin

bench: all $(bench-progs) | $(obj)/.deps-bench
	$(Q)O=$(obj) bash bench/run.sh
.PHONY: bench
