# --- uslab CLI (sim/ owner): the dispatcher; sim/Build.mk links $(obj)/uslab.
sim-objs += tools/uslab.o
# --- end uslab CLI
