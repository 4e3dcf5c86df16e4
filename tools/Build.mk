# --- uslab CLI (sim/ owner): the dispatcher; sim/Build.mk links $(obj)/uslab.
sim-objs += tools/uslab.o
# --- end uslab CLI

# --- slab demo (slab/ owner): `make run` runs it until the trace tools land.
progs += $(obj)/uslab-demo
$(obj)/uslab-demo: $(obj)/tools/uslab-demo.o $(obj)/libuslab-core.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
# --- end slab demo
