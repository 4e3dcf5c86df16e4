# bench/: `make bench` (never part of `make check`). Runs bench/run.sh, which
# measures uslab against glibc, jemalloc, tcmalloc and mimalloc in one run
# and writes $(O)/bench/results.txt.
bench-progs := $(obj)/bench/alloc_bench

bench-objs := $(addprefix $(obj)/bench/,alloc_bench.o workloads.o shapes.o programs.o)

$(obj)/bench/alloc_bench: $(bench-objs)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lm -lpthread

# The benchmark calls malloc for its cost: no folding of malloc/free pairs.
$(bench-objs): CFLAGS += -fno-builtin

bench: all $(bench-progs) | $(obj)/.deps-bench
	$(Q)O=$(obj) bash bench/run.sh
.PHONY: bench
