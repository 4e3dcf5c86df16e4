core-objs += lib/log.o lib/fault_inject.o lib/sigsafe.o
