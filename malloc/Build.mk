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

# The other test programs, one object each and no uslab linked in (they run
# on glibc or preloaded), calling malloc for its effects like the suite:
#   misuse      heap misuse for the debug option (tests/malloc/test_malloc_options.sh,
#               test_malloc_hardened.sh)
#   faults      fault injection's randomized workload (test_malloc_faults.sh)
#   robust      hostile workloads (test_malloc_robust.sh): threads, fork,
#               signals, migrations, larson, xmalloc-test, ENOMEM under ulimit -v
#   slabdebug   slab_debug's preload test (tests/slab/test_slab_debug.sh):
#               call sites by name
#   introspect  malloc_info/malloc_stats/mallinfo2/uslab_stats_print
#               (test_malloc_introspect.sh): plain, run on glibc and preloaded
#   aslimit     the heap under an address-space limit (test_malloc_aslimit.sh)
#   classrss    heap pages written by a size class's first object
#               (test_malloc_class_rss.sh)
#   unwind      libuslab.so's unwind tables out of memory and still found
#               (test_malloc_unwind_apart.sh)
malloc-test-one := $(addprefix $(obj)/tests/malloc/,misuse faults robust slabdebug introspect aslimit classrss unwind)
$(malloc-test-one): %: %.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) $(malloc-test-ldflags-$(notdir $@)) -o $@ $^ $(malloc-test-libs-$(notdir $@))
malloc-test-libs-robust := -lpthread
malloc-test-libs-introspect := -ldl
malloc-test-ldflags-slabdebug := -Wl,--export-dynamic
$(addsuffix .o,$(malloc-test-one)): CFLAGS += -fno-builtin
# the two that free bad pointers and use freed memory on purpose
$(obj)/tests/malloc/misuse.o $(obj)/tests/malloc/slabdebug.o: \
	CFLAGS += -Wno-use-after-free -Wno-free-nonheap-object -Wno-stringop-overflow -Wno-array-bounds
progs += $(malloc-test-one)

# `make stress` also runs the hostile workloads for longer
# (USLAB_STRESS_SECONDS per case and mode, 10 by default).
stress: stress-malloc
stress-malloc: $(obj)/tests/malloc/robust $(obj)/tests/percpu/percpu_no_rseq $(obj)/libuslab.so \
	       $(obj)/tests/malloc/faults
	$(Q)O=$(obj) ROBUST_SECONDS=$(or $(DURATION),$${USLAB_STRESS_SECONDS:-10}) \
		$(srctree)/tests/malloc/test_malloc_robust.sh
	$(Q)O=$(obj) bash $(srctree)/tests/malloc/test_malloc_faults.sh
.PHONY: stress-malloc
