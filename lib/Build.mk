core-objs += lib/log.o lib/fault_inject.o lib/sigsafe.o lib/procfs.o lib/thread.o \
             lib/cpuclock.o \
             lib/shmseg.o
