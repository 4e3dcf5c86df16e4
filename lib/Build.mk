core-objs += lib/log.o
