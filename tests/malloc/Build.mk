# tests/malloc: what its suites need beyond the library, built by make
# before any suite starts, so a suite's TEST_TIMEOUT budget covers the
# test and not the build (redis from Debian's source takes 200 s quiet and
# more than 300 s on a loaded 2-core machine).
check-prereqs-malloc += $(obj)/redis/redis-server

# No prerequisite on the script: it keeps its own cache (an instant call).
$(obj)/redis/redis-server: | $(obj)/.deps-test
	$(quiet) REDIS $@
	$(Q)bash scripts/redis-build.sh $(obj) >/dev/null
