# examples/: small programs that use the library's public API.
# uslab-demo: the slab demo `make run` opens with (scripts/run.sh).

progs += $(obj)/uslab-demo
$(obj)/uslab-demo: $(obj)/examples/uslab-demo.o $(obj)/libuslab-core.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
