# percpu/: per-CPU magazines on rseq, the depot, the reaper.
percpu-objs := percpu/cpu.o percpu/mem.o percpu/rseq.o percpu/magazine.o \
	       percpu/reaper.o percpu/tcache.o
core-objs += $(percpu-objs)

# Long stress run (not part of `make check`): DURATION (or
# USLAB_STRESS_SECONDS) seconds per case: the per-CPU stress (threads,
# migrations, signals, resizes, drains) in rseq mode and in fallback mode,
# then (malloc/Build.mk) the hostile malloc workloads (fork, threads,
# signals) and the fault-injection workload.
STRESS_SECONDS = $(or $(DURATION),$(USLAB_STRESS_SECONDS),30)
stress: $(obj)/tests/percpu/check_percpu_stress $(obj)/tests/percpu/percpu_no_rseq
	$(Q)USLAB_STRESS_SECONDS=$(STRESS_SECONDS) CK_FORK=yes \
		$(obj)/tests/percpu/check_percpu_stress
	$(Q)USLAB_STRESS_SECONDS=$(STRESS_SECONDS) CK_FORK=yes \
		$(obj)/tests/percpu/percpu_no_rseq $(obj)/tests/percpu/check_percpu_stress
.PHONY: stress

# `make check-sanitize`: ASan+UBSan and TSan builds beside this one.
help-check-sanitize := the core suites under ASan+UBSan and TSan (builds beside this one)
check-sanitize: $(obj)/tests/percpu/percpu_no_rseq
	$(Q)bash percpu/check-sanitize.sh $(obj)
.PHONY: check-sanitize

# tests/percpu/percpu_no_rseq: runs a command with rseq failing (seccomp), for the
# fallback-mode test (tests/percpu/test_percpu_modes.sh).
progs += $(obj)/tests/percpu/percpu_no_rseq
$(obj)/tests/percpu/percpu_no_rseq: $(obj)/tests/percpu/percpu_no_rseq.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^

# bench/pcp_pair and `make bench-pcp` (never in `make check`): ns per pair
# here, on the nocache preset and on this preset without per-CPU caching
# (slab layer only), built alongside in $(obj)/nocache and $(obj)/slabonly;
# the hit path's instructions from the disassembly; callgrind on the
# fallback path.
$(obj)/bench/pcp_pair: $(obj)/bench/pcp_pair.o $(obj)/libuslab-core.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench-pcp: $(obj)/bench/pcp_pair
	$(Q)$(MAKE) --no-print-directory O=$(obj)/nocache \
		KCONFIG_CONFIG=$(obj)/nocache/.config nocache_defconfig >/dev/null
	$(Q)$(MAKE) --no-print-directory O=$(obj)/nocache \
		KCONFIG_CONFIG=$(obj)/nocache/.config $(obj)/nocache/bench/pcp_pair
	$(Q)mkdir -p $(obj)/slabonly && cp $(KCONFIG_CONFIG) $(obj)/slabonly/.config && \
		echo '# CONFIG_PERCPU_CACHE is not set' >> $(obj)/slabonly/.config
	$(Q)$(MAKE) --no-print-directory O=$(obj)/slabonly \
		KCONFIG_CONFIG=$(obj)/slabonly/.config $(obj)/slabonly/bench/pcp_pair
	$(Q)bash percpu/bench-pair.sh $(obj) $(obj)/nocache $(obj)/slabonly
.PHONY: bench-pcp
