# sim/: the simulation engine (the library's own page_alloc, slab and percpu
# code on virtual CPUs), the cost model and its calibration.
#
# The engine's objects go into the uslab CLI (tools/uslab/Build.mk links them
# with libuslab-core-vcpu.a, below); uslab-calibrate times the real (rseq)
# paths and is linked with libuslab-core.a.

sim-objs += sim/simulate_load.o sim/simulate.o sim/simulate_layers.o sim/tune.o \
            sim/calibrate_model.o

calibrate-prog := $(obj)/uslab-calibrate
progs += $(calibrate-prog)
install-bins += $(calibrate-prog)
$(calibrate-prog): $(obj)/sim/calibrate.o $(obj)/sim/calibrate_model.o $(obj)/trace/outfile.o \
                   $(obj)/libuslab-core.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# ---------------------------------------------------------------------------
# The virtual-CPU library the engine runs on: the core's sources (lib,
# page_alloc, percpu, slab) built with -DUSLAB_VCPU=1 into $(obj)/vcpu/,
# archived as libuslab-core-vcpu.a, with malloc's policy (vcpu-objs,
# malloc/Build.mk). lib/cpuclock.h's virtual backend: CPUs and clock that
# the engine sets, periodic work run by the clock; no rseq, no threads.
# core-objs is complete only once every Build.mk is read: second expansion.
vcpu-lib := $(obj)/libuslab-core-vcpu.a
progs += $(vcpu-lib)

$(obj)/vcpu/%.o: %.c $(autoconf_h) $(flags-stamp) | $(obj)/.deps-ok
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) -DUSLAB_VCPU=1 $(CFLAGS) -MMD -MP -c -o $@ $<

.SECONDEXPANSION:
$(vcpu-lib): $$(addprefix $(obj)/vcpu/,$$(core-objs) $$(vcpu-objs))
	$(quiet) AR $@
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# Check suites of the virtual-CPU library: tests/<layer>/vcpu/check_<name>.c
# becomes $(obj)/tests/<layer>/check_<name> (so make check-<layer> runs it),
# built with -DUSLAB_VCPU=1 and linked with libuslab-core-vcpu.a (the
# tests/*/check_*.c rule does not pick them up).
vcpu-check-src := $(wildcard tests/*/vcpu/check_*.c)
vcpu-check-prog = $(obj)/$(patsubst %/vcpu/,%/,$(dir $(1)))$(basename $(notdir $(1)))
define vcpu-check-rule
$(call vcpu-check-prog,$(1)): $(obj)/vcpu/$(1:.c=.o) $$$$(vcpu-lib)
	$$(quiet) LD $$@
	$$(Q)mkdir -p $$(dir $$@)
	$$(Q)$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(CHECK_LIBS) $$(LDLIBS)
endef
check-progs += $(foreach f,$(vcpu-check-src),$(call vcpu-check-prog,$(f)))
$(foreach f,$(vcpu-check-src),$(eval $(call vcpu-check-rule,$(f))))
