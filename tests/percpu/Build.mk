# tests/percpu: test_percpu_modes.sh and test_percpu_valgrind.sh also run
# slab's suite (under seccomp, a restricted cpuset, valgrind), so
# `make check-percpu` builds it first (from a clean build/ it was missing:
# "build/tests/slab/check_slab: No such file or directory").
check-prereqs-percpu += $(obj)/tests/slab/check_slab
# test_percpu_fallback_misuse_reported.sh runs malloc's misuse program
# preloaded under the seccomp launcher.
check-prereqs-percpu += $(obj)/tests/malloc/misuse $(obj)/libuslab.so
# test_percpu_fallback_hostile.sh runs malloc's robust workloads so.
check-prereqs-percpu += $(obj)/tests/malloc/robust
