// SPDX-License-Identifier: MIT
/*
 * A parent for the recorder's process tests (test_record_default.sh,
 * test_record_procs.sh): it holds N blocks while it starts the children
 * its command line names, one after the other, each waited for, then frees
 * the blocks. So the program makes exactly N mallocs and N frees, and its
 * children are other processes of the same recording.
 *
 *	parent N BASE STEP CHILD...
 *
 * Block i has BASE + i * STEP bytes. A CHILD is
 *	fork:K		a forked child (no exec) that mallocs and frees K
 *			blocks of 32 bytes
 *	spawn:PATH	posix_spawn of PATH
 *	vfork:PATH	vfork, then exec PATH with the argument "vforked"
 * Exit status: 0; 1 when a child could not be started; 2 on bad usage.
 */
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Start @child (the forms above) and wait for it; -1 if it did not start. */
static int run_child(const char *child)
{
	const char *path = strchr(child, ':');
	char *argv[3] = { NULL, NULL, NULL };
	pid_t pid;
	int st;

	if (!path)
		return -1;
	path++;
	argv[0] = (char *)base_name(path);
	if (!strncmp(child, "fork:", 5)) {
		long k = strtol(path, NULL, 10);

		pid = fork();
		if (pid == 0) {
			for (long i = 0; i < k; i++)
				free(malloc(32));
			_exit(0);
		}
	} else if (!strncmp(child, "spawn:", 6)) {
		if (posix_spawn(&pid, path, NULL, NULL, argv, environ))
			return -1;
	} else if (!strncmp(child, "vfork:", 6)) {
		argv[1] = "vforked";
		pid = vfork();
		if (pid == 0) {
			execv(path, argv);
			_exit(127);
		}
	} else {
		return -1;
	}
	if (pid < 0)
		return -1;
	return waitpid(pid, &st, 0) == pid ? 0 : -1;
}

int main(int argc, char **argv)
{
	enum { MAX_BLOCKS = 100000 };
	static void *p[MAX_BLOCKS];
	long n, base, step;
	int status = 0;

	if (argc < 4)
		return 2;
	n = strtol(argv[1], NULL, 10);
	base = strtol(argv[2], NULL, 10);
	step = strtol(argv[3], NULL, 10);
	if (n < 0 || n > MAX_BLOCKS || base < 1 || step < 0)
		return 2;
	for (long i = 0; i < n; i++)
		p[i] = malloc((size_t)(base + i * step));
	for (int c = 4; c < argc; c++)
		if (run_child(argv[c]))
			status = 1;
	for (long i = 0; i < n; i++)
		free(p[i]);
	return status;
}
