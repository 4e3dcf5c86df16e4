#!/usr/bin/env bash
# uslab slabinfo/top -p on a child forked by a process started with
# USLAB_OPTIONS=stats_shm: only the process that started with it serves
# statistics (docs/malloc.md, "Live statistics": a fork child unmaps its
# copy), and the message says so. Before, it told the user to "start it
# with USLAB_OPTIONS=stats_shm", which its environment already held.
# A process without the option is still told to start with it.
. "$(dirname "$0")/../lib.sh"
set +e

cat > "$T/fk.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

int main(void)
{
	pid_t c = fork();

	if (c == 0) {
		free(malloc(100));
		printf("%d\n", (int)getpid());
		fflush(stdout);
		sleep(20);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	return 0;
}
C
gcc -O1 -o "$T/fk" "$T/fk.c" || fail "cannot build the program"

for opts in "mag_size=8,stats_shm" "mag_size=8"; do
	USLAB_OPTIONS=$opts LD_PRELOAD="$LIBUSLAB" "$T/fk" > "$T/pid" &
	parent=$!
	for i in $(seq 1 100); do [ -s "$T/pid" ] && break; sleep 0.05; done
	child=$(cat "$T/pid")
	[ -n "$child" ] || { kill $parent; fail "$opts: the child did not start"; }
	for c in slabinfo "top -o"; do
		run_rc "$U" $c -p "$child" > /dev/null 2> "$T/err"
		[ "$rc" -eq 1 ] || bad "$opts: $c -p child: exit $rc, not 1"
		if [ "$opts" = "mag_size=8" ]; then
			grep -q "start it with USLAB_OPTIONS=stats_shm" "$T/err" ||
				bad "$opts: $c -p child: $(cat "$T/err")"
		else
			grep -q "with USLAB_OPTIONS=stats_shm but serves no statistics: only the process that started with it" "$T/err" ||
				bad "$opts: $c -p child: $(cat "$T/err")"
		fi
	done
	kill "$child" 2>/dev/null
	wait $parent
	: > "$T/pid"
done
[ "$failed" -eq 0 ] && echo "a fork child of a stats_shm process is named as one; a process without the option is told to start with it"
exit $failed
