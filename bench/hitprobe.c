// SPDX-License-Identifier: MIT
/*
 * hitprobe LIB ADDR...: checks a hit path that bench/hitpath.py read from
 * LIB's disassembly against what the CPU runs. A child with LIB preloaded
 * warms malloc(64)/free up (100,000 pairs), stops, and runs 1,000 more
 * pairs; before those, a breakpoint goes on every ADDR (hex, as in the
 * disassembly): the places a conditional branch of the walked path jumps
 * to when it does not fall through. Prints `taken=` and the addresses
 * reached while the pairs ran, in that order, each with the pair it was
 * reached in (ADDR@PAIR; none: the walk is the path). A side the hit takes
 * is reached in pair 0; a later one is a miss now and then (a magazine the
 * reaper trimmed) or, after the first stop, a per-CPU section's abort
 * path. Each breakpoint fires once: the probe stops the child only off the
 * walked path, so the sections it checks run as they always do until then.
 *
 * Needs ptrace of its own child (Yama's ptrace_scope 0 or 1 allows that).
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define WARM 100000
#define PAIRS 1000
#define MAXBP 256

/* The pair the child is in; the probe reads it where a breakpoint stops it. */
static volatile long probe_pair;

static int child(void)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	/* One CPU throughout: resumed after its stop on another CPU, whose
	 * magazine the warm-up never filled, the child missed in pair 0 on a
	 * busy machine, and the walk took the miss for the hit (make check at
	 * load 12-15). Best effort: where pinning is refused, as before. */
	if (cpu >= 0) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	for (int i = 0; i < WARM; i++) {
		void *p = malloc(64);

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	raise(SIGSTOP);
	for (int i = 0; i < PAIRS; i++) {
		void *p;

		probe_pair = i;
		p = malloc(64);

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	raise(SIGSTOP);
	return 0;
}

/* Where the first mapping (file offset 0) of the file @lib starts in
 * @pid (the map names the file a symbolic link leads to). */
static uintptr_t lib_base(pid_t pid, const char *lib)
{
	char path[64], line[4096], real[4096];
	const char *name;
	uintptr_t base = 0;

	if (realpath(lib, real))
		lib = real;
	name = strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, off;
		char *file = strchr(line, '/');

		if (!file || sscanf(line, "%lx-%*x %*s %lx", &lo, &off) != 2 || off)
			continue;
		file[strcspn(file, "\n")] = 0;
		if (!strcmp(strrchr(file, '/') + 1, name)) {
			base = lo;
			break;
		}
	}
	fclose(f);
	return base;
}

int main(int argc, char **argv)
{
	uintptr_t at[MAXBP], base, counter;
	long orig[MAXBP], pair[MAXBP];
	int n = argc - 2, status, order[MAXBP], nhit = 0;
	pid_t pid;

	if (argc == 2 && !strcmp(argv[1], "--child"))
		return child();
	if (argc < 2 || n > MAXBP) {
		fprintf(stderr, "usage: hitprobe LIB ADDR... (at most %d)\n", MAXBP);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		char *end;

		at[i] = (uintptr_t)strtoull(argv[i + 2], &end, 16);
		if (*end) {
			fprintf(stderr, "hitprobe: '%s' is not a hex address\n", argv[i + 2]);
			return 2;
		}
	}
	pid = fork();
	if (pid < 0)
		return perror("fork"), 1;
	if (!pid) {
		char *args[] = { "/proc/self/exe", "--child", NULL };

		if (setenv("LD_PRELOAD", argv[1], 1) || ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(126);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	/* the exec's trap, then the stop after the warm-up */
	for (int stops = 0; stops < 2;) {
		if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
			fprintf(stderr, "hitprobe: the child ended early (status %#x)\n", status);
			return 1;
		}
		stops++;
		if (stops < 2)
			ptrace(PTRACE_CONT, pid, NULL, NULL);
	}
	/* the child's probe_pair: ours moved by where its executable sits */
	counter = (uintptr_t)&probe_pair - lib_base(getpid(), "/proc/self/exe") +
		  lib_base(pid, "/proc/self/exe");
	base = lib_base(pid, argv[1]);
	if (!base) {
		fprintf(stderr, "hitprobe: %s is not mapped in the child\n", argv[1]);
		kill(pid, SIGKILL);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKTEXT, pid, (void *)(base + at[i]), NULL);
		if (errno) {
			perror("hitprobe: PEEKTEXT");
			kill(pid, SIGKILL);
			return 1;
		}
		orig[i] = w;
		ptrace(PTRACE_POKETEXT, pid, (void *)(base + at[i]), (void *)((w & ~0xffL) | 0xcc));
	}
	for (;;) {
		struct user_regs_struct r;
		int i;

		ptrace(PTRACE_CONT, pid, NULL, NULL);
		if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
			break;
		if (WSTOPSIG(status) == SIGSTOP)
			break;		/* the pairs are done */
		if (WSTOPSIG(status) != SIGTRAP) {
			fprintf(stderr, "hitprobe: the child stopped on signal %d\n", WSTOPSIG(status));
			break;
		}
		ptrace(PTRACE_GETREGS, pid, NULL, &r);
		for (i = 0; i < n && base + at[i] != r.rip - 1; i++)
			;
		if (i == n) {
			fprintf(stderr, "hitprobe: a trap at %#llx, not a breakpoint\n", r.rip);
			break;
		}
		/* one hit is enough: note the pair, put the instruction back and
		 * go on (armed again, a stop in a per-CPU section would abort
		 * and retry it forever) */
		pair[nhit] = ptrace(PTRACE_PEEKDATA, pid, (void *)counter, NULL);
		order[nhit++] = i;
		ptrace(PTRACE_POKETEXT, pid, (void *)(base + at[i]), (void *)orig[i]);
		r.rip--;
		ptrace(PTRACE_SETREGS, pid, NULL, &r);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* in the order reached, each with the pair it was reached in */
	printf("taken=");
	for (int k = 0; k < nhit; k++)
		printf("%s%lx@%ld", k ? "," : "", (unsigned long)at[order[k]], pair[k]);
	printf("\n");
	return 0;
}
