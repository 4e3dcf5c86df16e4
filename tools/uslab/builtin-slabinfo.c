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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/shmseg.h"
#include "tools/uslab/builtin.h"

static const char slabinfo_usage[] =
	"uslab slabinfo -p PID [-w 'CACHE LIMIT BATCHCOUNT SHAREDFACTOR'] | --gc\n"
	"  print /proc/slabinfo (2.1) of a running process on uslab (started with\n"
	"  USLAB_OPTIONS=stats_shm); -w sets a cache's magazine size (limit) and\n"
	"  batch count, as writing /proc/slabinfo does (and prints nothing); --gc\n"
	"  removes the segments no live process serves";

/* --gc: the provably stale segments (lib/shmseg.h), whoever's pid they name. */
static int slabinfo_gc(const char *cmd)
{
	const struct shmseg_id id = {
		.magic = USLAB_STATSEG_MAGIC,
		.version = USLAB_STATSEG_VERSION,
		.size = sizeof(struct uslab_statseg),
	};
	int n = shmseg_sweep(USLAB_STATSEG_DIR, USLAB_STATSEG_PREFIX, &id);

	if (n < 0) {
		fprintf(stderr, "%s: --gc: %s: %s\n", cmd, USLAB_STATSEG_DIR, strerror(-n));
		return 1;
	}
	printf("removed %d stale segment%s from %s\n", n, n == 1 ? "" : "s", USLAB_STATSEG_DIR);
	return cmd_check_stdout(cmd);
}

int cmd_slabinfo(int argc, char **argv)
{
	const char *cmd = "uslab slabinfo", *write = NULL;
	struct statseg_handle h;
	struct uslab_statseg *snap;
	pid_t pid = 0;
	bool gc = false;
	int first, wres = 0, ret;
	const struct cli_opt opts[] = {
		OPT_STATSEG_PID(&pid),
		OPT_STRING('w', "write", &write, "LINE",
			   "'CACHE LIMIT BATCHCOUNT SHAREDFACTOR', as to /proc/slabinfo"),
		OPT_BOOLEAN(0, "gc", &gc, "remove the segments no live process serves, then exit"),
		OPT_END(),
	};

	first = parse_options(argc, argv, opts, slabinfo_usage,
			      PARSE_OPT_STOP_AT_NON_OPTION | PARSE_OPT_NO_OPERAND);
	if (first <= 0)
		return -first;
	if (gc && (pid || write)) {
		fprintf(stderr, "%s: --gc takes no -p or -w\n", cmd);
		return 2;
	}
	if (gc)
		return slabinfo_gc(cmd);
	if (!pid) {
		fprintf(stderr, "%s: -p PID is required (or --gc)\n", cmd);
		return 2;
	}
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
	statseg_fput_text(stdout, snap->text);	/* what the process wrote, escaped */
	if (ferror(stdout) || fflush(stdout)) {
		fprintf(stderr, "%s: write: %s\n", cmd, strerror(errno));
		free(snap);
		return 1;
	}
	free(snap);
	return 0;
}
