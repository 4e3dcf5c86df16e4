# sim/: trace format, recorder, script/report, importers, and the uslab CLI.
#
# The uslab binary links every object in sim-objs (tools/Build.mk adds the
# dispatcher) with libuslab-core.a. Its prerequisites use secondary
# expansion, so fragments read after this one (tools/) still count.

trace-objs := sim/trace_common.o sim/trace_read.o sim/trace_write.o
sim-objs   += $(trace-objs) sim/script.o

progs       += $(obj)/uslab
install-bins += $(obj)/uslab
SIM_LIBS    := -lzstd

.SECONDEXPANSION:
$(obj)/uslab: $$(addprefix $(obj)/,$$(sim-objs)) $(core-lib)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(SIM_LIBS) $(LDLIBS)

# White-box suite of the trace format links the format objects.
$(obj)/tests/check_trace: $(addprefix $(obj)/,$(trace-objs))
$(obj)/tests/check_trace: LDLIBS += $(SIM_LIBS)

# --- replay, simulation, tuning, calibration, generators (sim/ owner B).
sim-objs += sim/gen.o sim/replay.o sim/simulate_load.o
# --- end replay/sim/tune
