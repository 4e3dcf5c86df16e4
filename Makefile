# SPDX-License-Identifier: MIT
#
# uslab top-level Makefile, in the style of Kbuild.
#
#   make                 build everything (uses configs/performance_defconfig
#                        when there is no .config yet)
#   make run             the main job on the bundled default
#   make check           build and run every test suite
#   make deps-PURPOSE    install the Debian packages of one purpose
#                        (core tools test fuzz bench plot menuconfig all)
#   make <name>_defconfig, defconfig, olddefconfig, savedefconfig, menuconfig
#   make install PREFIX=/usr/local
#   make clean, distclean
#   V=1                  show full commands
#
# Each folder contributes through its own Build.mk fragment (objects, programs,
# tests), so that one layer's owner never edits another layer's rules.

MAKEFLAGS += --no-builtin-rules --no-builtin-variables
.DELETE_ON_ERROR:
.SUFFIXES:
.DEFAULT_GOAL := all

srctree := $(CURDIR)
O       ?= build
obj     := $(O)
PREFIX  ?= /usr/local
DESTDIR ?=
PYTHON  := /usr/bin/python3
KCONFIG_CONFIG ?= .config
export KCONFIG_CONFIG

ifeq ($(V),1)
  Q :=
  quiet := @true
else
  Q := @
  quiet := @printf '  %-8s %s\n'
endif

CC      ?= gcc
ifeq ($(origin CC),default)
  CC := gcc
endif
AR      := ar
CLANG   ?= clang

# ---------------------------------------------------------------------------
# Configuration (kconfiglib from python3-kconfiglib, run with /usr/bin/python3)

config-targets := defconfig olddefconfig savedefconfig menuconfig %_defconfig \
                  listnewconfig
no-dot-config  := $(filter $(config-targets) clean distclean deps deps-% help help-desc-% no-dot-config-help-probe,$(MAKECMDGOALS))

autoconf_h := $(obj)/include/generated/autoconf.h
auto_conf  := $(obj)/auto.conf
kconfig-files := Kconfig $(wildcard */Kconfig)

# Debian packages by purpose (scripts/deps.sh): .deps-ok is the library's
# (compiler, liburcu, kconfiglib, sdt.h), asked for by every object; each
# other target asks for its own .deps-<purpose> (tools test fuzz bench plot
# menuconfig), so building the library installs nothing it does not use.
$(obj)/.deps-ok: scripts/deps.sh
	$(Q)mkdir -p $(obj)
	$(Q)bash scripts/deps.sh core
	$(Q)touch $@
$(obj)/.deps-%: scripts/deps.sh
	$(Q)mkdir -p $(obj)
	$(Q)bash scripts/deps.sh $*
	$(Q)touch $@
deps-%: $(obj)/.deps-% ;

# A fresh clone has no .config: start from the default preset.
$(KCONFIG_CONFIG): | $(obj)/.deps-ok
	$(quiet) CONFIG "$@ from configs/performance_defconfig"
	$(Q)$(PYTHON) -m defconfig --kconfig Kconfig configs/performance_defconfig >/dev/null

# genconfig rewrites the header only when its contents change, so objects
# rebuild exactly when the configuration does.
$(autoconf_h) $(auto_conf) &: $(KCONFIG_CONFIG) $(kconfig-files) | $(obj)/.deps-ok
	$(Q)mkdir -p $(dir $(autoconf_h))
	$(Q)$(PYTHON) -m olddefconfig Kconfig >/dev/null
	$(quiet) GEN $(autoconf_h)
	$(Q)$(PYTHON) -m genconfig --header-path $(autoconf_h) --config-out $(auto_conf) Kconfig

presets := $(patsubst configs/%_defconfig,%,$(wildcard configs/*_defconfig))
%_defconfig: configs/%_defconfig | $(obj)/.deps-ok
	$(Q)$(PYTHON) -m defconfig --kconfig Kconfig $<
# Chosen only when configs/NAME_defconfig does not exist.
%_defconfig:
	@echo "make: no preset '$*': configs/ has $(foreach p,$(presets),$(p)_defconfig)" >&2
	@exit 2
defconfig: performance_defconfig
olddefconfig: | $(obj)/.deps-ok
	$(Q)$(PYTHON) -m olddefconfig Kconfig
savedefconfig: | $(obj)/.deps-ok
	$(Q)$(PYTHON) -m savedefconfig --kconfig Kconfig --out defconfig
	@echo "wrote ./defconfig (copy it to configs/<name>_defconfig to make a preset)"
menuconfig: | $(obj)/.deps-ok $(obj)/.deps-menuconfig
	$(Q)MENUCONFIG_STYLE=aquatic $(PYTHON) -m menuconfig Kconfig
listnewconfig: | $(obj)/.deps-ok
	$(Q)$(PYTHON) -m listnewconfig Kconfig
.PHONY: defconfig olddefconfig savedefconfig menuconfig listnewconfig

ifeq ($(no-dot-config),)
-include $(auto_conf)
endif

# ---------------------------------------------------------------------------
# Flags.  CONFIG_CC_WERROR (on by default, always on in CI) adds -Werror.

OPT       ?= -O2
WARNINGS  := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
             -Wno-unused-parameter -Wformat=2 -Wvla
ifneq ($(CONFIG_CC_WERROR)$(CI),)
  WARNINGS += -Werror
endif
ifeq ($(CONFIG_DEBUG_SANITIZE),y)
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
endif
# USLAB_INTERNAL: built into the library (or linked with its objects), so
# public headers show the inline helpers and the library's own calls.
CPPFLAGS  := -D_GNU_SOURCE -DUSLAB_INTERNAL -I$(srctree)/include -I$(srctree) -I$(obj)/include \
             -include $(autoconf_h)
# -ffunction-sections: each function in a section of its own, so that the
# link of libuslab.so can put the ones programs run together
# (malloc/libuslab-hot.lds, below).
CFLAGS    := -std=gnu11 $(OPT) -g -fPIC -pthread -fno-strict-aliasing \
             -ffunction-sections -fvisibility=hidden $(WARNINGS) $(SANFLAGS) \
             $(EXTRA_CFLAGS)
LDFLAGS   := -pthread $(SANFLAGS) $(EXTRA_LDFLAGS)
LDLIBS    := -lurcu-memb -lurcu-common -lpthread -lrt -lm
# The one version: the release (pkg-config's Version) and the git
# description of the tree built; `uslab --version`, the library's
# uslab_version() and uslab_stats_print() say both.
USLAB_RELEASE := 0.1.0
USLAB_GIT := $(shell git -C $(srctree) describe --always --dirty 2>/dev/null || echo unknown)
USLAB_VERSION := $(USLAB_RELEASE) (git $(USLAB_GIT))
# Rewritten when the version changes: the objects that carry it depend on
# it (tools/uslab/uslab.o, malloc/introspect.o), so they never disagree.
version-stamp := $(obj)/.version
$(shell mkdir -p $(obj); [ "`cat $(version-stamp) 2>/dev/null`" = "$(USLAB_VERSION)" ] || echo "$(USLAB_VERSION)" > $(version-stamp))
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)

# Objects rebuild when the flags change, not only when sources do.
flags-stamp := $(obj)/.flags
flags-now   := $(CC) $(CPPFLAGS) $(CFLAGS)
ifneq ($(no-dot-config),)
else
$(shell mkdir -p $(obj); [ "`cat $(flags-stamp) 2>/dev/null`" = "$(flags-now)" ] || echo "$(flags-now)" > $(flags-stamp))
endif

# ---------------------------------------------------------------------------
# What each folder contributes.  Fragments append to:
#   core-objs      objects of lib/ page_alloc/ slab/ percpu/ (libuslab-core.a)
#   malloc-objs    objects of malloc/ (libuslab.so, libuslab.a)
#   vcpu-objs      objects added to libuslab-core-vcpu.a (malloc's policy)
#   sim-objs       objects of the uslab CLI (trace/ sim/ tools/)
#   progs          extra programs, built by `make`
#   check-progs    Check suites (tests/*/check_*.c are found automatically)
#   check-scripts  shell tests run by `make check`
#   clean-files    extra things `make clean` removes
#   install-bins   programs `make install` puts in bin/
#   install-libs   extra shared objects `make install` puts in lib/
#   install-data   files `make install` puts in share/uslab/

core-objs   :=
malloc-objs :=
vcpu-objs   :=
sim-objs    :=
progs       :=
check-progs :=
check-scripts :=
clean-files :=
install-bins :=
install-libs :=
install-data :=
install-man :=

-include $(wildcard */Build.mk) $(wildcard */*/Build.mk)

core-lib   := $(obj)/libuslab-core.a
shared-lib := $(obj)/libuslab.so
static-lib := $(obj)/libuslab.a

all: $(core-lib) $(if $(malloc-objs),$(shared-lib) $(static-lib)) $(progs)
.PHONY: all

# The uslab CLI's objects (trace/, sim/, tools/) need zstd.
$(addprefix $(obj)/,$(sim-objs)): | $(obj)/.deps-tools

$(obj)/%.o: %.c $(autoconf_h) $(flags-stamp) | $(obj)/.deps-ok
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(obj)/%.o: %.S $(autoconf_h) $(flags-stamp) | $(obj)/.deps-ok
	$(quiet) AS $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(core-lib): $(addprefix $(obj)/,$(core-objs))
	$(quiet) AR $@
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# One member, the whole library linked into one relocatable object: a
# program that calls only the kernel API (kmem_cache_*, kmalloc) pulls in
# malloc/init.o's constructor (USLAB_OPTIONS, fork handlers, stats) and
# the malloc API with it, as linking libuslab.so does. Members of their own
# would bring only what the program names, and glibc's malloc would serve
# it beside an allocator that never read its options.
$(static-lib): $(addprefix $(obj)/,$(core-objs) $(malloc-objs))
	$(quiet) AR $@
	$(Q)rm -f $@ $(obj)/libuslab-static.o && $(CC) -r -nostdlib -o $(obj)/libuslab-static.o $^ && \
		$(AR) rcs $@ $(obj)/libuslab-static.o

# Exported: the calls malloc/libuslab.map lists (versioned) and the malloc
# API (unversioned, see the map); everything else is hidden.
uslab-map := malloc/libuslab.map
# Relative relocations packed (DT_RELR, binutils 2.38 and glibc 2.36; ld
# leaves them as RELA where the C library cannot read them): the kmalloc
# tables' 2,050 pointers to the bypass cache were 49 KiB of .rela.dyn,
# read at every load and resident in every process (docs/malloc.md,
# "What the library itself costs a process"; test_malloc_relocs_small.sh).
relr-ldflag := $(shell printf 'int x; int *p = &x;\n' | \
	$(CC) -x c -fPIC -shared -Wl,-z,pack-relative-relocs -o /dev/null - \
	>/dev/null 2>&1 && echo -Wl,-z,pack-relative-relocs)
# The code programs run first in .text (malloc/libuslab-hot.lds, written by
# scripts/hot-text.sh) and every segment on a 64 KiB boundary (ld.so then
# loads the library 64 KiB-aligned): the kernel maps file-backed code 64
# KiB at a time around a touch (fault-around), so the code that runs
# fills the first window and the rest of .text (reports, statistics,
# options, debug) is not mapped: 96 -> 64 KiB of resident code in every
# process (docs/page_alloc.md, "Fixed cost of a small program";
# tests/malloc/test_malloc_text_resident.sh).
# The unwind tables go in a segment of their own, 64 KiB past .rodata
# (malloc/libuslab-unwind.lds, malloc/unwind-gap.S): a read of .rodata no
# longer maps them (36 -> 12 KiB resident).
uslab-hot-lds := malloc/libuslab-hot.lds
uslab-unwind-lds := malloc/libuslab-unwind.lds
$(shared-lib): $(addprefix $(obj)/,$(core-objs) $(malloc-objs) malloc/unwind-gap.o) \
		$(uslab-map) $(uslab-hot-lds) $(uslab-unwind-lds)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libuslab.so -Wl,-z,nodelete \
		$(relr-ldflag) -Wl,--version-script=$(uslab-map) \
		-Wl,-T,$(uslab-hot-lds) -Wl,-T,$(uslab-unwind-lds) \
		-Wl,-z,max-page-size=0x10000 \
		-o $@ $(filter %.o,$^) $(LDLIBS)

# Tests live in one folder per layer, tests/<layer>/ (tests/README.md).
# Check suites: tests/<layer>/check_<name>.c, linked against the core library.
auto-check := $(patsubst %.c,$(obj)/%,$(wildcard tests/*/check_*.c))
check-progs += $(auto-check)
# Check and the other test tools: before any suite compiles, and before check runs.
$(addsuffix .o,$(auto-check)) $(patsubst %.c,$(obj)/vcpu/%.o,$(wildcard tests/*/vcpu/*.c)): | $(obj)/.deps-test
$(auto-check): $(obj)/tests/%: $(obj)/tests/%.o $(core-lib)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

check-scripts += $(sort $(wildcard tests/*/test_*.sh))

# Everything `check` runs, built but not run (then run one suite by hand).
check-build: all $(check-progs)
.PHONY: check-build

# Every suite runs even when an earlier one fails; the summary says which.
# check-prereqs-<layer>: what a layer's suites need built first (a fragment
# of tests/<layer>/ adds to it), outside every suite's time budget.
check-prereqs := $(foreach l,$(patsubst tests/%/,%,$(wildcard tests/*/)),$(check-prereqs-$(l)))
check: all $(check-progs) $(check-prereqs) | $(obj)/.deps-test
	$(Q)O=$(obj) bash tests/run-all.sh $(check-progs) $(check-scripts)
.PHONY: check

# make check-<layer>: only the suites of tests/<layer>/ (check-slab,
# check-trace, ...). Fragments add what a folder's tests need beyond its
# suites (fuzz/Build.mk: check-tree needs the fuzzers).
test-layers := $(patsubst tests/%/,%,$(wildcard tests/*/))
define check-layer-rule
check-$(1): all $$(filter $(obj)/tests/$(1)/%,$$(check-progs)) $$(check-prereqs-$(1)) | $(obj)/.deps-test
	$$(Q)O=$$(obj) bash tests/run-all.sh $$(filter $(obj)/tests/$(1)/%,$$(check-progs)) \
		$$(filter tests/$(1)/%,$$(check-scripts))
help-check-$(1) := run the suites of tests/$(1)/ only
endef
$(foreach l,$(test-layers),$(eval $(call check-layer-rule,$(l))))
.PHONY: $(addprefix check-,$(test-layers))

# Layers only look down (shared/DESIGN.md): includes, and calls (nm over the
# objects of each folder); fails on either looking up.
check-layers: all
	$(Q)O=$(obj) bash scripts/check-layers.sh
.PHONY: check-layers

run: all | $(obj)/.deps-plot
	$(Q)O=$(obj) bash scripts/run.sh
.PHONY: run

# Installed: lib/ (libuslab.so, libuslab.a, libuslab-core.a, pkg-config
# files uslab.pc and uslab-static.pc), include/uslab/ (public headers, the
# configuration as autoconf.h, kernel/linux/ for <linux/slab.h>), bin/.
# One recipe: `make install` and the staging prefix that examples/ build
# against (examples/Build.mk) both run it. $(1): where files go (DESTDIR
# included); $(2): the prefix the pkg-config files name.
install-files := $(core-lib) $(if $(malloc-objs),$(shared-lib) $(static-lib)) \
                 $(install-bins) $(install-libs) $(install-data) $(install-man) $(autoconf_h) \
                 $(wildcard include/uslab/*.h include/uslab/kernel/linux/*.h) \
                 scripts/uslab.pc.in scripts/uslab-static.pc.in
define install-to
	$(Q)install -d $(1)/lib $(1)/include/uslab/kernel/linux $(1)/lib/pkgconfig $(1)/bin
	$(Q)install -m 644 include/uslab/*.h $(1)/include/uslab/
	$(Q)install -m 644 include/uslab/kernel/linux/*.h $(1)/include/uslab/kernel/linux/
	$(Q)install -m 644 $(autoconf_h) $(1)/include/uslab/autoconf.h
	$(Q)install -m 644 $(core-lib) $(1)/lib/
	$(Q)$(if $(malloc-objs),install -m 755 $(shared-lib) $(1)/lib/ && install -m 644 $(static-lib) $(1)/lib/)
	$(Q)$(if $(install-bins),install -m 755 $(install-bins) $(1)/bin/)
	$(Q)$(if $(install-libs),install -m 755 $(install-libs) $(1)/lib/)
	$(Q)$(if $(install-data),install -d $(1)/share/uslab && install -m 644 $(install-data) $(1)/share/uslab/)
	$(Q)$(if $(install-man),install -d $(1)/share/man/man1 && install -m 644 $(install-man) $(1)/share/man/man1/)
	$(Q)for pc in uslab uslab-static; do \
		sed -e 's|@PREFIX@|$(2)|g' -e 's|@VERSION@|$(USLAB_RELEASE)|g' scripts/$$pc.pc.in > $(1)/lib/pkgconfig/$$pc.pc || exit 1; \
	done
endef
# Refused before anything is built or made, when the goals name install: a
# path with blanks (the recipe's install -d split it: PREFIX='/opt/my lib'
# made /opt/my and ./lib/... in the tree, and the pkg-config flags README's
# cc lines expand unquoted would split it again), and a relative PREFIX (the
# .pc files and the rpath would name it relative: usable from the tree's top
# only).
ifneq ($(filter install,$(MAKECMDGOALS)),)
ifneq ($(word 2,$(DESTDIR)$(PREFIX)),)
$(error make install: PREFIX or DESTDIR '$(DESTDIR)$(PREFIX)' holds a blank: the pkg-config flags would split it; nothing installed)
endif
ifeq ($(filter /%,$(PREFIX)),)
$(error make install: PREFIX '$(PREFIX)' is not an absolute path (the pkg-config files name it); PREFIX=$$PWD/$(PREFIX)? nothing installed)
endif
endif
install: all
	$(quiet) INSTALL "$(DESTDIR)$(PREFIX)"
	$(call install-to,$(DESTDIR)$(PREFIX),$(PREFIX))
.PHONY: install

# A staging install inside the build output, for programs that build
# against the library as its users do (examples/Build.mk).
stage-prefix := $(abspath $(obj))/prefix
$(stage-prefix)/.installed: $(install-files)
	$(quiet) INSTALL $(stage-prefix)
	$(call install-to,$(stage-prefix),$(stage-prefix))
	$(Q)touch $@

clean:
	$(quiet) CLEAN $(obj)
	$(Q)rm -rf $(obj) $(clean-files)
distclean: clean
	$(Q)rm -f .config .config.old defconfig
.PHONY: clean distclean

# make help: every phony target of every fragment (from make's own
# database, so a new target shows up without editing this), with the
# description a fragment gives it in help-<target>, and every preset.
help-all        := build the libraries, the uslab CLI and the tools (default)
help-check      := build and run every test suite (make check must stay green)
help-check-build := build everything make check runs, without running it
help-check-layers := fail on an include or a call that goes up the layers
help-run        := the main job on the bundled default trace
help-install    := install libraries, headers, uslab, man pages (PREFIX=$(PREFIX))
help-clean      := remove the build output ($(O))
help-distclean  := clean, and remove .config
help-defconfig  := the default preset (performance_defconfig)
help-olddefconfig := update .config for new Kconfig symbols
help-savedefconfig := write a minimal ./defconfig from .config
help-menuconfig := edit .config in a menu
help-listnewconfig := list Kconfig symbols .config does not set
help-help       := this list
help-bench      := benchmarks against glibc, jemalloc, tcmalloc, mimalloc
help-stress     := long stress runs
help-stress-malloc := long stress runs of the malloc layer
help-bench-pcp  := per-CPU magazine micro-benchmarks
help-fuzz       := each libFuzzer target for FUZZ_TIME seconds
help-fuzz-build := build the fuzz targets
help:
	@echo "usage: make [TARGET] [O=DIR] [V=1] [PREFIX=DIR]"
	@echo
	@echo "targets:"
	@# one make, its database read once: the .PHONY targets and each one's
	@# help-TARGET text (a target without one says so)
	@$(MAKE) -pRrq -f $(firstword $(MAKEFILE_LIST)) no-dot-config-help-probe 2>/dev/null | \
		awk '/^\.PHONY:/ { for (i = 2; i <= NF; i++) t[$$i] = 1 } \
		     /^help-[^ ]+ :?= / { n = $$1; sub(/^help-/, "", n); v = $$0; \
					 sub(/^[^=]*= ?/, "", v); d[n] = v } \
		     END { for (k in t) printf "  %-20s %s\n", k, \
			   (k in d) ? d[k] : "(undescribed: add help-" k " to its Build.mk)" }' | sort
	@echo "  <preset>_defconfig   .config from configs/<preset>_defconfig"
	@echo "  deps-<purpose>       install the Debian packages of one purpose"
	@echo "                       (core tools test fuzz bench plot menuconfig all)"
	@echo
	@echo "presets: $(presets)"
	@echo
	@echo "variables: O=DIR (build output, default build), V=1 (full commands),"
	@echo "           PREFIX=DIR and DESTDIR=DIR (install), CC, OPT, EXTRA_CFLAGS"
.PHONY: help

# Dependency files of our own objects only (the redis build under $(obj)/redis has its own).
-include $(shell find $(obj) -name '*.d' -type f -not -path '$(obj)/redis/*' 2>/dev/null)
