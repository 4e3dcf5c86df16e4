# tools/lib/: what the uslab commands share and the trace library does not
# hold: the option parser every subcommand's table goes through
# (parse-options.c) and the commands' helpers around a trace (cmd.c: the
# process selected by --pid/--comm, a trace opened with it, a reader's
# error said, standard output checked). Linked into the uslab CLI (and the
# fuzzers of its readers, fuzz/Build.mk).

tools-lib-objs := tools/lib/cmd.o tools/lib/parse-options.o
sim-objs += $(tools-lib-objs)
