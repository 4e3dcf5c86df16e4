#!/usr/bin/env bash
# CPU identity, time and periodic work live in lib/ (issue 21, item 4):
# page_alloc registers its own decay work with lib/cpuclock.c and percpu
# its reaper, in the real library and in the simulator's (libuslab-core-vcpu,
# $O/vcpu/); percpu is no longer page_alloc's decay agent (no call of
# page_alloc_decay or page_alloc_set_decay_agent from percpu/), the page
# lists take their CPU from lib (no vcpu special case in pagelist.c), and
# sim/Build.mk, not percpu/Build.mk, builds the virtual-CPU library. nm over
# the built objects; before, the vcpu build's percpu/magazine.o called
# page_alloc_decay and percpu/cpu.o page_alloc_set_decay_agent.
. "$(dirname "$0")/../lib.sh"
set +e
for d in "$O" "$O/vcpu"; do
	[ -f "$d/percpu/reaper.o" ] && [ -f "$d/page_alloc/reclaim.o" ] ||
		skip "$d: percpu/reaper.o or page_alloc/reclaim.o not built"
	nm -u "$d"/percpu/*.o | awk '{ print $2 }' |
		grep -xE 'page_alloc_decay|page_alloc_set_decay_agent' | sort -u > "$T/agent"
	[ -s "$T/agent" ] && bad "$d/percpu/ calls page_alloc's decay itself: $(tr '\n' ' ' < "$T/agent")"
	for o in percpu/reaper.o page_alloc/reclaim.o; do
		nm -u "$d/$o" | grep -qw uslab_periodic_start ||
			bad "$d/$o does not register its work with lib/cpuclock.c"
	done
	nm -u "$d/page_alloc/pagelist.o" | grep -qw sched_getcpu &&
		bad "$d/page_alloc/pagelist.o asks sched_getcpu, not lib's CPU"
	nm --defined-only "$d/lib/cpuclock.o" | grep -qw uslab_periodic_start ||
		bad "$d/lib/cpuclock.o does not define uslab_periodic_start"
done
grep -q 'USLAB_VCPU' page_alloc/pagelist.c && bad "page_alloc/pagelist.c has a vcpu special case"
grep -q 'DUSLAB_VCPU=1' percpu/Build.mk && bad "percpu/Build.mk builds the virtual-CPU library"
grep -q 'DUSLAB_VCPU=1' sim/Build.mk || bad "sim/Build.mk does not build the virtual-CPU library"
[ "$failed" -eq 0 ] && echo "periodic work registered with lib/ by page_alloc and percpu (real and vcpu builds)"
exit $failed
