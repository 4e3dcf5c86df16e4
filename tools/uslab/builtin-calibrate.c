// SPDX-License-Identifier: MIT
/*
 * uslab calibrate: runs uslab-calibrate (sim/calibrate.c), which times the
 * real allocator paths and writes the tuner's cost model
 * (sim/calibrate_model.c reads it).
 *
 * No locks: single-threaded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tools/uslab/builtin.h"

/*
 * cmd_calibrate - run uslab-calibrate, which sits next to this binary: it
 * links the rseq library, whose paths are the ones to time (this binary
 * carries the virtual-CPU build).
 */
int cmd_calibrate(int argc, char **argv)
{
	char self[4096], prog[4200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0) {
		fprintf(stderr, "uslab calibrate: cannot find my own binary\n");
		return 1;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	snprintf(prog, sizeof(prog), "%.*s/uslab-calibrate", (int)(slash - self), self);
	argv[0] = prog;
	execv(prog, argv);
	fprintf(stderr, "uslab calibrate: %s: %s\n", prog, strerror(errno));
	(void)argc;
	return 1;
}
