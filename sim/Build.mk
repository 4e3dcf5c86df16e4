# sim/: the simulation engine (the library's own page_alloc, slab and percpu
# code on virtual CPUs), the cost model and its calibration.
#
# The engine's objects go into the uslab CLI (tools/uslab/Build.mk links them
# with libuslab-core-vcpu.a from percpu/Build.mk); uslab-calibrate times the
# real (rseq) paths and is linked with libuslab-core.a.

sim-objs += sim/simulate_load.o sim/simulate.o sim/simulate_layers.o sim/tune.o \
            sim/calibrate_model.o

calibrate-prog := $(obj)/uslab-calibrate
progs += $(calibrate-prog)
install-bins += $(calibrate-prog)
$(calibrate-prog): $(obj)/sim/calibrate.o $(obj)/sim/calibrate_model.o $(obj)/libuslab-core.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
