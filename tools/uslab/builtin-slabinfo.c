// SPDX-License-Identifier: MIT
/*
 * uslab slabinfo -p PID [-w 'CACHE LIMIT BATCHCOUNT SHAREDFACTOR']
 *
 * /proc/slabinfo (version 2.1) of a running process on libuslab, read
 * through its statistics segment (USLAB_OPTIONS=stats_shm). -w is the
 * kernel's write to /proc/slabinfo: the process applies it through the
 * same call as its own slabinfo writes (slabinfo_write()), and the
 * magazines take the new size at their next refill or flush.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/uslab/builtin.h"

static const char slabinfo_usage[] =
	"uslab slabinfo -p PID [-w 'CACHE LIMIT BATCHCOUNT SHAREDFACTOR']\n"
	"  print /proc/slabinfo (2.1) of a running process on uslab (started with\n"
	"  USLAB_OPTIONS=stats_shm); -w sets a cache's magazine size (limit) and\n"
	"  batch count, as writing /proc/slabinfo does, and prints nothing";

int cmd_slabinfo(int argc, char **argv)
{
	const char *cmd = "uslab slabinfo", *write = NULL;
	struct statseg_handle h;
	struct uslab_statseg *snap;
	pid_t pid = 0;
	int first, wres = 0, ret;
	const struct cli_opt opts[] = {
		OPT_STATSEG_PID(&pid),
		OPT_STRING('w', "write", &write, "LINE",
			   "'CACHE LIMIT BATCHCOUNT SHAREDFACTOR', as to /proc/slabinfo"),
		OPT_END(),
	};

	first = parse_options(argc, argv, opts, slabinfo_usage,
			      PARSE_OPT_STOP_AT_NON_OPTION | PARSE_OPT_NO_OPERAND);
	if (first <= 0)
		return -first;
	if (write && strlen(write) >= USLAB_STATSEG_CMD) {
		fprintf(stderr, "%s: -w: line longer than %d bytes\n", cmd, USLAB_STATSEG_CMD - 1);
		return 2;
	}
	if (write) {	/* the field and its range, before the process is asked */
		char why[200];

		if (slabinfo_check(write, why, sizeof(why))) {
			fprintf(stderr, "%s: -w '%s': %s\n", cmd, write, why);
			return 2;
		}
	}
	snap = malloc(sizeof(*snap));
	if (!snap) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return 1;
	}
	if (statseg_open(cmd, pid, &h)) {
		free(snap);
		return 1;
	}
	ret = statseg_snapshot(&h, write, &wres, snap);
	statseg_close(&h);
	if (ret) {
		free(snap);
		return 1;
	}
	if (write && wres) {
		fprintf(stderr, "%s: -w '%s': %s\n", cmd, write,
			wres == -ENOENT ? "no such cache in the process" :
			wres == -EINVAL ? "expected 'CACHE LIMIT BATCHCOUNT SHAREDFACTOR' with "
					  "values the cache accepts" : strerror(-wres));
		free(snap);
		return 1;
	}
	if (write) {	/* applied: nothing else to say (as a write to /proc) */
		free(snap);
		return 0;
	}
	if (fputs(snap->text, stdout) == EOF || fflush(stdout)) {
		fprintf(stderr, "%s: write: %s\n", cmd, strerror(errno));
		free(snap);
		return 1;
	}
	free(snap);
	return 0;
}
