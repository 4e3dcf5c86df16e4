# libFuzzer targets (clang from Debian) for every reader: the trace format,
# mtrace logs, perf script kmem text.
#   make fuzz                 each target for FUZZ_TIME seconds (default 300)
#   make check                runs tests/test_fuzz.sh: each for a few seconds
# Seed corpora live in fuzz/corpus/<target>/ and stay small: runs write new
# inputs to a scratch directory, never into the tree.

FUZZ_TIME   ?= 300
FUZZ_FLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
               -D_GNU_SOURCE -I$(srctree)/include -I$(srctree) -I$(obj)/include \
               -include $(autoconf_h) -Wall -Wextra -Wno-unused-parameter
fuzz-common := trace/trace_common.c trace/trace_read.c trace/import_common.c \
               trace/import_mtrace.c trace/import_perf.c
fuzz-bins   := $(obj)/fuzz/fuzz_trace $(obj)/fuzz/fuzz_mtrace $(obj)/fuzz/fuzz_perf

$(obj)/fuzz/fuzz_trace: fuzz/fuzz_trace.c $(fuzz-common) trace/internal.h include/uslab/trace.h $(autoconf_h)
	$(quiet) FUZZ $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(fuzz-common) -lzstd

$(obj)/fuzz/fuzz_mtrace: fuzz/fuzz_import.c $(fuzz-common) trace/internal.h include/uslab/trace.h $(autoconf_h)
	$(quiet) FUZZ $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -DFUZZ_MTRACE -o $@ $< $(fuzz-common) -lzstd

$(obj)/fuzz/fuzz_perf: fuzz/fuzz_import.c $(fuzz-common) trace/internal.h include/uslab/trace.h $(autoconf_h)
	$(quiet) FUZZ $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -DFUZZ_PERF -o $@ $< $(fuzz-common) -lzstd

fuzz-build: $(fuzz-bins)
fuzz: $(fuzz-bins)
	$(Q)O=$(obj) FUZZ_TIME=$(FUZZ_TIME) bash tests/test_fuzz.sh
.PHONY: fuzz fuzz-build

# make check runs tests/test_fuzz.sh briefly: build the targets first.
check: $(fuzz-bins)
