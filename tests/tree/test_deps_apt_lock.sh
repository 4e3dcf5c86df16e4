#!/usr/bin/env bash
# scripts/deps.sh against another apt holding the dpkg lock (issue 20,
# finding 21), with stand-ins for apt-get, dpkg-query and id first on PATH:
# the stand-in apt-get fails with apt's "Could not get lock" message unless
# it is asked to wait (-o DPkg::Lock::Timeout=N, which apt honours by
# waiting N seconds for the lock). deps.sh used to fail at once there, and
# on a failure printed the tail of /tmp/uslab-apt.log, a log every run
# shares; now it waits, and prints the log of its own run.
. "$(dirname "$0")/../lib.sh"
set +e
mkdir -p "$T/bin"
cat > "$T/bin/apt-get" <<'SH'
#!/bin/bash
echo "apt-get $*" >> "$FAKE_APT_CALLS"
case " $* " in
*" -o DPkg::Lock::Timeout="[1-9]*) ;;
*) echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)"; exit 100 ;;
esac
[ -n "${FAKE_APT_FAIL:-}" ] && { echo "E: $FAKE_APT_FAIL"; exit 100; }
exit 0
SH
printf '#!/bin/sh\nexit 1\n' > "$T/bin/dpkg-query"	# nothing installed
printf '#!/bin/sh\necho 0\n' > "$T/bin/id"		# as root
chmod +x "$T/bin/"*
export FAKE_APT_CALLS=$T/calls TMPDIR=$T

# the lock held by another apt: deps.sh waits for it and installs
: > "$T/calls"
run_rc env PATH="$T/bin:$PATH" bash scripts/deps.sh fuzz > "$T/out" 2>&1
[ $rc -eq 0 ] || bad "lock held: exit $rc: $(cat "$T/out")"
grep -q '^apt-get .*-o DPkg::Lock::Timeout=300 .*install' "$T/calls" ||
	bad "apt-get install not asked to wait for the lock: $(cat "$T/calls")"
[ -z "$(ls "$T" | grep '^uslab-deps\.')" ] || bad "the log of a run that went well was left behind"

# a failure: the log named and printed is this run's own
echo "an old run's failure" > "$T/uslab-apt.log"
: > "$T/calls"
run_rc env PATH="$T/bin:$PATH" FAKE_APT_FAIL="marker-$$-run" bash scripts/deps.sh fuzz > "$T/out" 2>&1
[ $rc -eq 1 ] || bad "apt failing: exit $rc, expected 1"
log=$(sed -n 's/^deps: apt-get install failed, see \(.*\)$/\1/p' "$T/out")
[ -n "$log" ] && [ "$log" != /tmp/uslab-apt.log ] && [ "$log" != "$T/uslab-apt.log" ] ||
	bad "the failure names a shared log or none: $(cat "$T/out")"
grep -q "marker-$$-run" "$T/out" || bad "the tail printed is not this run's: $(cat "$T/out")"
grep -q "an old run's failure" "$T/out" && bad "another run's log was printed"
grep -q '^apt-get .*-o DPkg::Lock::Timeout=300 .*update' "$T/calls" ||
	bad "apt-get update not asked to wait for the lock: $(cat "$T/calls")"
[ $failed -eq 0 ] && echo "deps.sh: waits for the dpkg lock, one log per run"
exit $failed
