# libFuzzer targets (clang from Debian) for every reader: the trace format,
# mtrace logs, perf script kmem text; and, on forged traces whose checksums
# and zstd frames are right (fuzz/forge.h), the reader's decoder and
# trailer checks, report and script, the loaders of sim, tune and replay,
# and sim end to end on the library (libuslab-core-vcpu.a, not instrumented).
#   make fuzz                 each target for FUZZ_TIME seconds (default 300)
#   make check                runs tests/tree/test_fuzz.sh: each for a few seconds
# Seed corpora live in fuzz/corpus/<target>/ and stay small: runs write new
# inputs to a scratch directory, never into the tree.

FUZZ_TIME   ?= 300
FUZZ_FLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
               -D_GNU_SOURCE -DUSLAB_INTERNAL -I$(srctree)/include -I$(srctree) -I$(obj)/include \
               -include $(autoconf_h) -Wall -Wextra -Wno-unused-parameter
fuzz-common := lib/hashmap.c lib/grow.c trace/trace_common.c trace/trace_read.c trace/import_common.c \
               trace/import_mtrace.c trace/import_perf.c
fuzz-trace  := lib/hashmap.c lib/grow.c trace/trace_common.c trace/trace_read.c trace/decode.c trace/outfile.c
fuzz-bins   := $(obj)/fuzz/fuzz_trace $(obj)/fuzz/fuzz_mtrace $(obj)/fuzz/fuzz_perf \
               $(obj)/fuzz/fuzz_trace_struct $(obj)/fuzz/fuzz_report \
               $(obj)/fuzz/fuzz_loaders $(obj)/fuzz/fuzz_sim
fuzz-deps   := fuzz/forge.h trace/internal.h trace/trace.h sim/internal.h sim/sim.h include/uslab/trace.h $(autoconf_h)

# clang and its libFuzzer runtime are the fuzzers' own (scripts/deps.sh fuzz).
$(fuzz-bins): | $(obj)/.deps-fuzz $(obj)/.deps-tools

$(obj)/fuzz/fuzz_trace: fuzz/fuzz_trace.c $(fuzz-common) trace/internal.h trace/trace.h include/uslab/trace.h $(autoconf_h)
	$(quiet) FUZZ $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(fuzz-common) -lzstd

$(obj)/fuzz/fuzz_mtrace: fuzz/fuzz_import.c $(fuzz-common) trace/internal.h trace/trace.h include/uslab/trace.h $(autoconf_h)
	$(quiet) FUZZ $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -DFUZZ_MTRACE -o $@ $< $(fuzz-common) -lzstd

$(obj)/fuzz/fuzz_perf: fuzz/fuzz_import.c $(fuzz-common) trace/internal.h trace/trace.h include/uslab/trace.h $(autoconf_h)
	$(quiet) FUZZ $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -DFUZZ_PERF -o $@ $< $(fuzz-common) -lzstd

$(obj)/fuzz/fuzz_trace_struct: fuzz/fuzz_trace_struct.c $(fuzz-trace) $(fuzz-deps)
	$(quiet) FUZZ $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(fuzz-trace) -lzstd

# report counts sizes by slab's kmalloc classes (kmalloc_info[]):
# libuslab-core-vcpu.a, as the loaders below.
.SECONDEXPANSION:
fuzz-report-src := tools/uslab/builtin-report.c tools/uslab/builtin-script.c \
                   tools/uslab/report_callsite.c tools/uslab/report_maps.c tools/uslab/report_stacks.c \
                   tools/uslab/report_timeline.c tools/uslab/timeline_draw.c tools/uslab/symbolize.c \
                   tools/lib/parse-options.c tools/lib/cmd.c
$(obj)/fuzz/fuzz_report: fuzz/fuzz_report.c $(fuzz-trace) $(fuzz-report-src) $(fuzz-deps) $$(vcpu-lib)
	$(quiet) FUZZ $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(fuzz-trace) $(fuzz-report-src) $(vcpu-lib) -lzstd -ldw -lelf $(LDLIBS) -lm

# builtin-replay.c calls replay-stats.c (whose table formatter is slab's),
# replay-runs.c (--runs) and timeline_draw.c (--timeline)
# (libuslab-core-vcpu.a, percpu/Build.mk: secondary expansion below).
.SECONDEXPANSION:
fuzz-loaders-src := sim/simulate_load.c tools/uslab/replay-stats.c tools/uslab/replay-runs.c \
                    tools/lib/parse-options.c tools/lib/cmd.c tools/uslab/timeline_draw.c
$(obj)/fuzz/fuzz_loaders: fuzz/fuzz_loaders.c $(fuzz-trace) $(fuzz-loaders-src) tools/uslab/builtin-replay.c $(fuzz-deps) $$(vcpu-lib)
	$(quiet) FUZZ $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(fuzz-trace) $(fuzz-loaders-src) $(vcpu-lib) -lzstd $(LDLIBS) -lm

fuzz-sim-src := sim/simulate_load.c sim/simulate.c sim/simulate_layers.c sim/calibrate_model.c \
                tools/lib/cmd.c
# libuslab-core-vcpu.a comes from percpu/Build.mk: secondary expansion, so
# the order the fragments are read in does not matter.
.SECONDEXPANSION:
$(obj)/fuzz/fuzz_sim: fuzz/fuzz_sim.c $(fuzz-trace) $(fuzz-sim-src) $(fuzz-deps) $$(vcpu-lib)
	$(quiet) FUZZ $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(fuzz-trace) $(fuzz-sim-src) $(vcpu-lib) -lzstd $(LDLIBS) -lm

fuzz-build: $(fuzz-bins)
fuzz: $(fuzz-bins)
	$(Q)O=$(obj) FUZZ_TIME=$(FUZZ_TIME) bash tests/tree/test_fuzz.sh
.PHONY: fuzz fuzz-build

# make check (and check-tree) runs tests/tree/test_fuzz.sh briefly: build the targets first.
check check-tree: $(fuzz-bins)
