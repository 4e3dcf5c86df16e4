#!/usr/bin/env bash
# malloc's hostile workloads (tests/malloc/robust.c, each checking its own
# blocks) preloaded in fallback mode, where the thread caches
# (percpu/tcache.c) serve every operation: 4000 short-lived threads (each
# cache made and given back at exit), fork from 4 threads beside 2
# allocating ones (the child gives back the caches of the threads that
# did not come along and allocates on), threads migrating, larson's
# blocks freed by other threads, xmalloc's producer/consumer. Under
# tests/percpu/percpu_no_rseq (rseq refused, as in a sandbox); the mode
# is checked. test_malloc_robust.sh runs these in rseq mode.
. "$(dirname "$0")/../lib.sh"
set +e
need_magazines "check the thread caches under malloc's workloads"
robust=$O/tests/malloc/robust
noseq=$O/tests/percpu/percpu_no_rseq
[ -x "$robust" ] && [ -x "$noseq" ] || fail "$robust or $noseq not built"
env USLAB_OPTIONS=stats LD_PRELOAD="$LIBUSLAB" "$noseq" "$robust" align 1 \
	>"$T/out" 2>"$T/err"
grep -q '^# percpu: fallback' "$T/err" || bad "not in fallback mode under $noseq"
for c in threads fork migrate larson xmalloc; do
	if out=$(timeout 120 env LD_PRELOAD="$LIBUSLAB" "$noseq" "$robust" $c 1 2>&1); then
		echo "ok   fallback $c: ${out##*$'\n'}"
	else
		bad "fallback $c (status $?):"
		echo "$out" | tail -5
	fi
done
exit $failed
