# malloc/: the malloc API, linked into libuslab.so and libuslab.a, and the
# programs of its tests (tests/malloc/) and benchmarks (bench/).
malloc-objs += malloc/malloc.o malloc/options.o malloc/debug.o malloc/init.o

# The conformance suite, built twice: plain (run on glibc and preloaded with
# libuslab.so) and linked statically against libuslab.a.
malloc-test-progs := $(obj)/tests/malloc/conform $(obj)/tests/malloc/conform-static
progs += $(malloc-test-progs)

$(obj)/tests/malloc/conform: $(obj)/tests/malloc/conform.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lpthread

$(obj)/tests/malloc/conform-static: $(obj)/tests/malloc/conform.o $(obj)/libuslab.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The suite calls malloc for its effects: no folding of malloc/free pairs.
$(obj)/tests/malloc/conform.o: CFLAGS += -fno-builtin

$(obj)/tests/malloc/misuse: $(obj)/tests/malloc/misuse.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^
$(obj)/tests/malloc/misuse.o: CFLAGS += -fno-builtin -Wno-use-after-free -Wno-free-nonheap-object
progs += $(obj)/tests/malloc/misuse

# Fault injection's randomized workload (tests/test_malloc_faults.sh).
$(obj)/tests/malloc/faults: $(obj)/tests/malloc/faults.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^
$(obj)/tests/malloc/faults.o: CFLAGS += -fno-builtin
progs += $(obj)/tests/malloc/faults

# Hostile workloads (tests/test_malloc_robust.sh): threads, fork, signals,
# migrations, larson, xmalloc-test, ENOMEM under ulimit -v.
$(obj)/tests/malloc/robust: $(obj)/tests/malloc/robust.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lpthread
$(obj)/tests/malloc/robust.o: CFLAGS += -fno-builtin
progs += $(obj)/tests/malloc/robust

# `make stress` also runs the hostile workloads for longer
# (USLAB_STRESS_SECONDS per case and mode, 10 by default).
stress: stress-malloc
stress-malloc: $(obj)/tests/malloc/robust $(obj)/tests/percpu_no_rseq $(obj)/libuslab.so \
	       $(obj)/tests/malloc/faults
	$(Q)O=$(obj) ROBUST_SECONDS=$(or $(DURATION),$${USLAB_STRESS_SECONDS:-10}) \
		$(srctree)/tests/test_malloc_robust.sh
	$(Q)O=$(obj) bash $(srctree)/tests/test_malloc_faults.sh
.PHONY: stress-malloc
