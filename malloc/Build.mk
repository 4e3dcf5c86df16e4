# malloc/: the malloc API, linked into libuslab.so and libuslab.a, and the
# programs of its tests (tests/malloc/) and benchmarks (bench/).
#
# malloc/policy.o (the rules of malloc/policy.h as uslab_malloc() ...) is
# the policy: also linked into the simulator's virtual-CPU core
# (libuslab-core-vcpu.a, sim/Build.mk) so that `uslab sim` runs the same
# malloc. malloc.o holds the exported names, options.o and init.o the
# preload glue (environment, fork handlers, stats at exit).
malloc-policy-objs := malloc/policy.o
malloc-objs += $(malloc-policy-objs) malloc/malloc.o malloc/options.o malloc/init.o
# introspect.o: mallinfo2, malloc_stats, malloc_info, uslab_stats_print
malloc-objs += malloc/introspect.o
$(obj)/malloc/introspect.o: CPPFLAGS += -DUSLAB_VERSION_STRING='"$(USLAB_VERSION)"'
$(obj)/malloc/introspect.o: $(version-stamp)
# statseg.o: USLAB_OPTIONS=stats_shm, the live view (`uslab top -p`)
malloc-objs += malloc/statseg.o
vcpu-objs += $(malloc-policy-objs)

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
$(obj)/tests/malloc/misuse.o: CFLAGS += -fno-builtin -Wno-use-after-free -Wno-free-nonheap-object -Wno-stringop-overflow -Wno-array-bounds
progs += $(obj)/tests/malloc/misuse

# Fault injection's randomized workload (tests/malloc/test_malloc_faults.sh).
$(obj)/tests/malloc/faults: $(obj)/tests/malloc/faults.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^
$(obj)/tests/malloc/faults.o: CFLAGS += -fno-builtin
progs += $(obj)/tests/malloc/faults

# Hostile workloads (tests/malloc/test_malloc_robust.sh): threads, fork, signals,
# migrations, larson, xmalloc-test, ENOMEM under ulimit -v.
$(obj)/tests/malloc/robust: $(obj)/tests/malloc/robust.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lpthread
$(obj)/tests/malloc/robust.o: CFLAGS += -fno-builtin
progs += $(obj)/tests/malloc/robust

# `make stress` also runs the hostile workloads for longer
# (USLAB_STRESS_SECONDS per case and mode, 10 by default).
stress: stress-malloc
stress-malloc: $(obj)/tests/malloc/robust $(obj)/tests/percpu/percpu_no_rseq $(obj)/libuslab.so \
	       $(obj)/tests/malloc/faults
	$(Q)O=$(obj) ROBUST_SECONDS=$(or $(DURATION),$${USLAB_STRESS_SECONDS:-10}) \
		$(srctree)/tests/malloc/test_malloc_robust.sh
	$(Q)O=$(obj) bash $(srctree)/tests/malloc/test_malloc_faults.sh
.PHONY: stress-malloc

# slab_debug's preload test (tests/slab/test_slab_debug.sh): call sites by name.
$(obj)/tests/malloc/slabdebug: $(obj)/tests/malloc/slabdebug.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -Wl,--export-dynamic -o $@ $^
$(obj)/tests/malloc/slabdebug.o: CFLAGS += -fno-builtin -Wno-use-after-free -Wno-free-nonheap-object -Wno-stringop-overflow -Wno-array-bounds
progs += $(obj)/tests/malloc/slabdebug

# malloc_info/malloc_stats/mallinfo2/uslab_stats_print's test program
# (tests/malloc/test_malloc_introspect.sh): plain, run on glibc and preloaded.
$(obj)/tests/malloc/introspect: $(obj)/tests/malloc/introspect.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -ldl
$(obj)/tests/malloc/introspect.o: CFLAGS += -fno-builtin
progs += $(obj)/tests/malloc/introspect

# The heap under an address-space limit (tests/malloc/test_malloc_aslimit.sh).
$(obj)/tests/malloc/aslimit: $(obj)/tests/malloc/aslimit.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^
$(obj)/tests/malloc/aslimit.o: CFLAGS += -fno-builtin
progs += $(obj)/tests/malloc/aslimit
