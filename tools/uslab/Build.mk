# tools/uslab/: the uslab CLI, perf-style: uslab.c holds the command table,
# builtin-<cmd>.c one subcommand each, plot.c the SVG plots and
# plot-frontier.py the PNG (matplotlib, from the CSV builtin-tune.c writes).
#
# The binary links every object in sim-objs (trace/, sim/, tools/record's
# collector and this folder) with libuslab-core-vcpu.a (percpu/Build.mk): the
# simulator runs the library on virtual CPUs, and nothing else in the CLI
# calls the core (replay preloads libuslab.so; calibrate is its own program
# on the rseq build). Its prerequisites use secondary expansion, so fragments
# read after this one still count.

sim-objs += tools/uslab/uslab.o tools/uslab/builtin-script.o \
            tools/uslab/builtin-report.o tools/uslab/builtin-import.o \
            tools/uslab/builtin-replay.o tools/uslab/builtin-gen.o \
            tools/uslab/builtin-tune.o tools/uslab/builtin-record.o tools/uslab/record-attach.o \
            tools/uslab/builtin-calibrate.o tools/uslab/builtin-sim.o \
            tools/uslab/plot.o tools/uslab/report_callsite.o tools/uslab/report_maps.o tools/uslab/report_stacks.o tools/uslab/report_timeline.o \
            tools/uslab/timeline_draw.o \
            tools/uslab/symbolize.o \
            tools/uslab/replay-stats.o tools/uslab/replay-runs.o tools/uslab/tune-real.o tools/uslab/tune-verify.o tools/uslab/statseg.o \
            tools/uslab/builtin-slabinfo.o tools/uslab/builtin-top.o

# uslab tune --png runs plot-frontier.py: installed in share/uslab/, found
# beside the source when uslab runs from the build tree.
install-data += tools/uslab/plot-frontier.py tools/uslab/plot-timeline.py
$(obj)/tools/uslab/builtin-tune.o $(obj)/tools/uslab/timeline_draw.o: CPPFLAGS += -DUSLAB_SRCDIR='"$(srctree)"'

# A forged statistics segment for the readers' tests
# (tests/tools/test_statseg_foreign_file.sh).
progs += $(obj)/tests/tools/statseg_forge
$(obj)/tests/tools/statseg_forge: $(obj)/tests/tools/statseg_forge.o
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

progs        += $(obj)/uslab
install-bins += $(obj)/uslab

.SECONDEXPANSION:
$(obj)/uslab: $$(addprefix $(obj)/,$$(sim-objs)) $$(vcpu-lib)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(TRACE_LIBS) $(USLAB_LIBS) $(LDLIBS)
# report --sort callsite symbolizes with elfutils (libdw-dev)
USLAB_LIBS := -ldw -lelf
# --- manual pages (recorder/CLI owner): docs/man/*.scd through scdoc
# (Debian package scdoc); `make install` puts them in share/man/man1 and
# `uslab help CMD` shows them.
man-pages := $(patsubst docs/man/%.scd,$(obj)/man/%,$(wildcard docs/man/*.scd))
progs += $(man-pages)
install-man += $(man-pages)
$(obj)/man/%: docs/man/%.scd | $(obj)/.deps-tools
	$(quiet) SCDOC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)scdoc < $< > $@

# The version `uslab --version` prints: the Makefile's USLAB_VERSION.
$(obj)/tools/uslab/uslab.o: CPPFLAGS += -DUSLAB_VERSION='"$(USLAB_VERSION)"'
$(obj)/tools/uslab/uslab.o: $(version-stamp)
# --- end manual pages
