# percpu/: per-CPU magazines on rseq, the depot, the reaper.
percpu-objs := percpu/cpu.o percpu/mem.o percpu/rseq.o percpu/magazine.o \
	       percpu/reaper.o
core-objs += $(percpu-objs)
