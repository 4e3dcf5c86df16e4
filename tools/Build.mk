# --- uslab CLI (sim/ owner): the dispatcher; sim/Build.mk links $(obj)/uslab.
sim-objs += tools/uslab.o
# --- end uslab CLI

# --- slab demo (slab/ owner): `make run` runs it until the trace tools land.
progs += $(obj)/uslab-demo
$(obj)/uslab-demo: $(obj)/tools/uslab-demo.o $(obj)/libuslab-core.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
# --- end slab demo

# --- manual pages (recorder/CLI owner): docs/man/*.scd through scdoc
# (Debian package scdoc); `make install` puts them in share/man/man1 and
# `uslab help CMD` shows them.
man-pages := $(patsubst docs/man/%.scd,$(obj)/man/%,$(wildcard docs/man/*.scd))
progs += $(man-pages)
install-man += $(man-pages)
$(obj)/man/%: docs/man/%.scd | $(obj)/.deps-ok
	$(quiet) SCDOC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)scdoc < $< > $@

# The version `uslab --version` prints: the git description of the tree.
USLAB_VERSION := $(shell git -C $(srctree) describe --always --dirty 2>/dev/null || echo unknown)
$(obj)/tools/uslab.o: CPPFLAGS += -DUSLAB_VERSION='"$(USLAB_VERSION)"'
# --- end manual pages
