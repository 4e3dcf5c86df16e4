# sim/: trace format, recorder, script/report, importers, and the uslab CLI.
#
# The uslab binary links every object in sim-objs (tools/Build.mk adds the
# dispatcher) with libuslab-core-vcpu.a (percpu/Build.mk): the simulator runs
# the library on virtual CPUs, and nothing else in the CLI calls the core
# (replay preloads libuslab.so; calibrate is its own program on the rseq
# build). Its prerequisites use secondary expansion, so fragments read after
# this one (tools/) still count.

trace-objs := sim/trace_common.o sim/trace_read.o sim/trace_write.o sim/outfile.o
sim-objs   += $(trace-objs) sim/script.o sim/record_collect.o sim/report.o sim/report_callsite.o sim/symbolize.o \
              sim/import_common.o sim/import_mtrace.o sim/import_perf.o sim/import_cmd.o

progs       += $(obj)/uslab
install-bins += $(obj)/uslab
SIM_LIBS    := -lzstd -ldw -lelf

.SECONDEXPANSION:
$(obj)/uslab: $$(addprefix $(obj)/,$$(sim-objs)) $$(vcpu-lib)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(SIM_LIBS) $(LDLIBS)

# White-box suite of the trace format links the format objects.
$(obj)/tests/check_trace: $(addprefix $(obj)/,$(trace-objs))
$(obj)/tests/check_trace: LDLIBS += $(SIM_LIBS)

# --- replay, simulation, tuning, calibration, generators (sim/ owner B).
sim-objs += sim/gen.o sim/replay.o sim/simulate_load.o sim/simulate.o \
            sim/simulate_pcp.o sim/tune.o sim/plot.o sim/calibrate_model.o

# uslab-calibrate times the real (rseq) paths: linked with libuslab-core.a.
calibrate-prog := $(obj)/uslab-calibrate
progs += $(calibrate-prog)
install-bins += $(calibrate-prog)
$(calibrate-prog): $(obj)/sim/calibrate.o $(obj)/sim/calibrate_model.o $(obj)/libuslab-core.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
# --- end replay/sim/tune

# The recorder preloaded by `uslab record`: plain libc only, never uslab, and
# never sanitizers (ASan would bring its own malloc under ours).
rec-cflags := $(filter-out -fsanitize=% -fno-omit-frame-pointer,$(CFLAGS)) \
              -fno-builtin-malloc -fno-builtin-free -fno-builtin-calloc \
              -fno-builtin-realloc -ftls-model=initial-exec
record-lib := $(obj)/libuslab-record.so
progs += $(record-lib)
install-libs += $(record-lib)

$(obj)/sim/record_preload.pic.o: sim/record_preload.c $(autoconf_h) $(flags-stamp) | $(obj)/.deps-ok
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(rec-cflags) -MMD -MP -c -o $@ $<

$(record-lib): $(obj)/sim/record_preload.pic.o
	$(quiet) LD $@
	$(Q)$(CC) -shared -pthread -Wl,-soname,libuslab-record.so -Wl,-z,defs \
		-o $@ $^ -ldl -lunwind
