#!/usr/bin/env bash
# Hostile schedules and sandboxes for the preloaded library
# (tests/malloc/robust.c, one case per run, each checking its own blocks):
# every case on glibc first (the case itself must be right), then on uslab
# in rseq mode, with uslab's own rseq area, in fallback mode (seccomp makes
# rseq fail), on one CPU, under valgrind; ENOMEM and a real program under
# ulimit -v. A hang is caught by the timeout.
set -u
O=${O:-build}
robust=$O/tests/malloc/robust
noseq=$O/tests/percpu/percpu_no_rseq
lib=$(realpath "$O/libuslab.so")
for f in "$robust" "$noseq" "$lib"; do
	[ -e "$f" ] || { echo "missing $f (run make O=$O first)"; exit 1; }
done
unset USLAB_OPTIONS
S=${ROBUST_SECONDS:-0.7}
tmo="timeout -k 5 60"
fail=0
run() {
	local what=$1; shift
	if out=$("$@" 2>&1); then
		echo "PASS $what: ${out##*$'\n'}"
	else
		echo "FAIL $what (status $?):"
		echo "$out" | tail -5
		fail=1
	fi
}
cases="threads fork migrate larson xmalloc align"
for c in $cases; do
	run "glibc $c" $tmo "$robust" $c $S
	run "uslab $c" $tmo env LD_PRELOAD="$lib" "$robust" $c $S
done
# Handlers that call malloc: glibc may deadlock on its arena lock (malloc
# is not async-signal-safe); uslab must not, in rseq mode, with its own
# rseq area, in fallback mode (every lock held in a sigsafe section: the
# handler takes none, docs/percpu.md "Signal handlers that allocate") and
# with debug caches (no magazines: the locked slab paths), nor in its lazy
# creation of kmalloc caches (slab_mutex, signals blocked there).
# Builds where every operation takes a lock (no magazines: nocache; debug
# caches bypass them: SLAB_DEBUG_ON) are not run here.
if grep -q '^CONFIG_PERCPU_CACHE=y' "$O/auto.conf" 2>/dev/null &&
   ! grep -q '^CONFIG_SLAB_DEBUG_ON=y' "$O/auto.conf"; then
	run "uslab signals" $tmo env LD_PRELOAD="$lib" "$robust" signals $S
	run "uslab own rseq area: signals" $tmo env GLIBC_TUNABLES=glibc.pthread.rseq=0 \
		LD_PRELOAD="$lib" "$robust" signals $S
	run "uslab fallback (no rseq): signals" $tmo "$noseq" env LD_PRELOAD="$lib" \
		"$robust" signals $S
	run "uslab debug caches: signals" $tmo env USLAB_OPTIONS=debug LD_PRELOAD="$lib" \
		"$robust" signals $S
	# Handlers allocating beyond the kmalloc caches on threads that live
	# in the page allocator (finding 4: the zone lock is only held with
	# signals blocked). 20 s without it ends in a hang (the timeout).
	run "uslab signals-large" $tmo env LD_PRELOAD="$lib" "$robust" signals-large $S
	# Many threads, each with its own timer whose handler allocates and
	# keeps some blocks: no handler allocation refused while memory
	# exists (the 64-slot emergency table refused most of them in
	# fallback mode: 446,848 ENOMEM in 227,346 handler runs at 300
	# threads, and some in rseq mode at 64).
	run "uslab signals-threads (64)" $tmo env ROBUST_THREADS=64 LD_PRELOAD="$lib" \
		"$robust" signals-threads $S
	run "uslab fallback (no rseq): signals-threads (64)" $tmo "$noseq" env \
		ROBUST_THREADS=64 USLAB_OPTIONS=stats LD_PRELOAD="$lib" "$robust" \
		signals-threads $S
	# the statistics say what the handlers had: blocks, none left, none refused
	if ! grep -Eq '^malloc: signal handlers inside the allocator: [1-9][0-9]* emergency blocks, 0 out now, 0 refused' <<<"$out"; then
		echo "FAIL fallback signals-threads: statistics: $(grep -E '^malloc: signal' <<<"$out")"
		fail=1
	fi
	run "uslab fallback (no rseq): signals-threads (300)" $tmo "$noseq" env \
		ROBUST_THREADS=300 LD_PRELOAD="$lib" "$robust" signals-threads $S
	run "uslab debug caches: signals-threads (64)" $tmo env USLAB_OPTIONS=debug \
		ROBUST_THREADS=64 LD_PRELOAD="$lib" "$robust" signals-threads $S
	# and two threads that fork while the handlers allocate; the children
	# free handlers' blocks
	run "uslab fallback (no rseq): signals-fork (64)" $tmo "$noseq" env \
		ROBUST_THREADS=64 LD_PRELOAD="$lib" "$robust" signals-fork $S
else
	echo "SKIP signals: every operation takes a lock in this build"
fi
for c in larson xmalloc fork; do
	run "uslab own rseq area: $c" $tmo env GLIBC_TUNABLES=glibc.pthread.rseq=0 \
		LD_PRELOAD="$lib" "$robust" $c $S
	run "uslab fallback (no rseq): $c" $tmo "$noseq" env LD_PRELOAD="$lib" "$robust" $c $S
done
if taskset -c 0 true 2>/dev/null; then
	for c in migrate larson threads; do
		run "uslab on one CPU: $c" $tmo taskset -c 0 env LD_PRELOAD="$lib" "$robust" $c $S
	done
fi
# ulimit -v: the reservation must shrink to fit, malloc fail with ENOMEM
# and work again after frees; a real program starts and gets MemoryError.
run "glibc enomem (ulimit -v 600000)" $tmo bash -c "ulimit -v 600000 && exec $robust enomem"
run "uslab enomem (ulimit -v 600000)" $tmo bash -c "ulimit -v 600000 && LD_PRELOAD=$lib exec $robust enomem"
run "uslab python3 (ulimit -v 400000)" $tmo bash -c "ulimit -v 400000 && LD_PRELOAD=$lib exec /usr/bin/python3 -c '
l = []
try:
    while True:
        l.append(bytearray(1 << 20))
except MemoryError:
    print(\"MemoryError after\", len(l), \"MiB\")
'"
if command -v valgrind >/dev/null; then
	# memcheck replaces every malloc it finds, libuslab.so's included,
	# unless told that this soname is the program's own allocator; the
	# statistics at exit prove uslab's malloc ran (kmalloc caches in use;
	# without the option only the library's own 32 kB), in fallback mode
	# (valgrind cannot run rseq sections)
	run "uslab under valgrind: xmalloc" $tmo env LD_PRELOAD="$lib" USLAB_OPTIONS=stats \
		valgrind -q --error-exitcode=9 --soname-synonyms=somalloc=nouserintercepts \
		"$robust" xmalloc 0.3
	if [ $fail -eq 0 ] && ! { grep -q '^# percpu: fallback' <<<"$out" &&
		grep -q '^kmalloc-[0-9]' <<<"$out"; }; then
		echo "FAIL uslab under valgrind: uslab's malloc did not run: $(echo "$out" | tail -3)"
		fail=1
	fi
	# the handlers' emergency blocks (a lock-free pool, own mappings)
	# under memcheck, in fallback mode: no error, none refused
	if grep -q '^CONFIG_PERCPU_CACHE=y' "$O/auto.conf" 2>/dev/null &&
	   ! grep -q '^CONFIG_SLAB_DEBUG_ON=y' "$O/auto.conf"; then
		run "uslab under valgrind, fallback: signals-threads (8)" $tmo "$noseq" \
			valgrind -q --error-exitcode=9 --soname-synonyms=somalloc=nouserintercepts \
			env ROBUST_THREADS=8 LD_PRELOAD="$lib" USLAB_OPTIONS=stats \
			"$robust" signals-threads 0.3
		if [ $fail -eq 0 ] && ! { grep -q '^# percpu: fallback' <<<"$out" &&
			grep -Eq 'emergency [1-9]' <<<"$out"; }; then
			echo "FAIL uslab under valgrind, fallback: no emergency block: $(echo "$out" | tail -3)"
			fail=1
		fi
	fi
fi
exit $fail
