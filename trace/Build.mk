# trace/: the trace format (reader, writer, op table, CRC), the address -> id
# map and the importers. A library that knows nothing about the allocator:
# the uslab CLI, the fuzzers and tests/trace link these objects.

trace-objs := trace/trace_common.o trace/trace_read.o trace/trace_write.o trace/decode.o \
              trace/outfile.o trace/import_common.o trace/import_mtrace.o \
              trace/import_perf.o
sim-objs   += $(trace-objs)
TRACE_LIBS := -lzstd

# White-box suite of the trace format links the format objects, and lib/'s
# hash table (lib/Build.mk: secondary expansion, whatever the order read).
.SECONDEXPANSION:
$(obj)/tests/trace/check_trace: $(addprefix $(obj)/,$(trace-objs)) $$(addprefix $(obj)/,$$(lib-tools-objs))
$(obj)/tests/trace/check_trace: LDLIBS += $(TRACE_LIBS)

# Hostile-trace writer for the shell tests (tests/trace/test_trace_hostile.sh).
progs += $(obj)/tests/trace/trace_forge
$(obj)/tests/trace/trace_forge: $(obj)/tests/trace/trace_forge.o $(addprefix $(obj)/,$(trace-objs)) $$(addprefix $(obj)/,$$(lib-tools-objs))
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(TRACE_LIBS) $(LDLIBS)
