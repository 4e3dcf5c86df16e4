# tools/record/: both ends of the recorder's raw stream. preload.c is
# libuslab-record.so, preloaded into the recorded program (plain libc only,
# never uslab, never sanitizers: ASan would bring its own malloc under ours);
# collect.c runs in `uslab record` and merges the raw files into a trace.

sim-objs += tools/record/collect.o

rec-cflags := $(filter-out -fsanitize=% -fno-omit-frame-pointer,$(CFLAGS)) \
              -fno-builtin-malloc -fno-builtin-free -fno-builtin-calloc \
              -fno-builtin-realloc -ftls-model=initial-exec
record-lib := $(obj)/libuslab-record.so
progs += $(record-lib)
install-libs += $(record-lib)

$(obj)/tools/record/preload.pic.o: tools/record/preload.c $(autoconf_h) $(flags-stamp) | $(obj)/.deps-tools
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(rec-cflags) -MMD -MP -c -o $@ $<

$(obj)/tools/record/got.pic.o: tools/record/got.c $(autoconf_h) $(flags-stamp) | $(obj)/.deps-tools
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(rec-cflags) -MMD -MP -c -o $@ $<

# got.pic.o: `record -p`'s GOT redirection (the recorder dlopen'd by gdb)
$(record-lib): $(obj)/tools/record/preload.pic.o $(obj)/tools/record/got.pic.o
	$(quiet) LD $@
	$(Q)$(CC) -shared -pthread -Wl,-soname,libuslab-record.so -Wl,-z,defs \
		-o $@ $^ -ldl -lunwind
