# examples/: programs that use the library's public API.
#
# uslab-demo: the slab demo `make run` opens with (scripts/run.sh).

progs += $(obj)/uslab-demo
$(obj)/uslab-demo: $(obj)/examples/uslab-demo.o $(obj)/libuslab-core.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The services, built against the installed library exactly as a user
# builds theirs: from a staging install (the `make install` recipe into
# $(obj)/prefix, see the Makefile) through pkg-config, nothing from the tree.
#
#   build/examples/uslab-kv          Redis-protocol key-value server, kmem_caches
#   build/examples/uslab-kv-malloc   the same server on plain malloc/free
#
# examples/kv/README.md says how to run and measure them.

stage-prefix := $(abspath $(obj))/prefix
stage-pc     := PKG_CONFIG_PATH=$(stage-prefix)/lib/pkgconfig pkg-config
example-cflags = -std=gnu11 -O2 -g -pthread $(WARNINGS)

$(obj)/examples/uslab-kv: examples/kv/kv.c $(stage-prefix)/.installed
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(example-cflags) -DKV_USLAB -o $@ $< \
		$$($(stage-pc) --cflags --libs uslab) \
		-Wl,-rpath,$$($(stage-pc) --variable=libdir uslab)

$(obj)/examples/uslab-kv-malloc: examples/kv/kv.c
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(example-cflags) -o $@ $< $$(pkg-config --cflags --libs liburcu-memb)

progs += $(obj)/examples/uslab-kv $(obj)/examples/uslab-kv-malloc

# `make bench-kv`: the server under redis-benchmark, kmem_cache build against
# the malloc build on glibc and on each preloaded peer (examples/kv/bench.sh).
# `make bench` runs it too, before bench/run.sh.
bench-kv: $(obj)/examples/uslab-kv $(obj)/examples/uslab-kv-malloc $(shared-lib)
	$(Q)O=$(obj) bash examples/kv/bench.sh
bench: bench-kv
help-bench-kv := the kv server under redis-benchmark, uslab against glibc and the peers
.PHONY: bench-kv
