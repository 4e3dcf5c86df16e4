# sim/: trace format, recorder, script/report, importers, and the uslab CLI.
#
# The uslab binary links every object in sim-objs (tools/Build.mk adds the
# dispatcher) with libuslab-core.a. Its prerequisites use secondary
# expansion, so fragments read after this one (tools/) still count.

trace-objs := sim/trace_common.o sim/trace_read.o sim/trace_write.o
sim-objs   += $(trace-objs) sim/script.o sim/record_collect.o sim/report.o \
              sim/import_common.o sim/import_mtrace.o sim/import_perf.o sim/import_cmd.o

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

# The recorder preloaded by `uslab record`: plain libc only, never uslab, and
# never sanitizers (ASan would bring its own malloc under ours).
rec-cflags := $(filter-out -fsanitize=% -fno-omit-frame-pointer,$(CFLAGS)) \
              -fno-builtin-malloc -fno-builtin-free -fno-builtin-calloc \
              -fno-builtin-realloc -ftls-model=initial-exec
record-lib := $(obj)/libuslab-record.so
progs += $(record-lib)

$(obj)/sim/record_preload.pic.o: sim/record_preload.c $(autoconf_h) $(flags-stamp) | $(obj)/.deps-ok
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(rec-cflags) -MMD -MP -c -o $@ $<

$(record-lib): $(obj)/sim/record_preload.pic.o
	$(quiet) LD $@
	$(Q)$(CC) -shared -pthread -Wl,-soname,libuslab-record.so -Wl,-z,defs \
		-o $@ $^ -ldl
