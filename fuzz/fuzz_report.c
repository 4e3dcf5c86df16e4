// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: `uslab report` (the summary, --folded, --sort callsite,
 * callsite,size and --children on the stack and object tables) and
 * `uslab script` on forged traces (fuzz/forge.h), through their command
 * entry points, output discarded.
 * Memory must follow the file: -rss_limit_mb catches a table sized by a
 * declared or sparse number.
 */
#include <getopt.h>
#include <stdio.h>
#include "fuzz/forge.h"
#include "tools/uslab/builtin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* uslab.c's, for report --timeline's PNG script: no binary folder here
 * (the fuzzer draws no PNG). */
int cmd_exe_dir(char *dir, size_t len)
{
	(void)dir;
	(void)len;
	return -1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct forge_buf o;
	char a0[] = "report", a1[] = "script", h[] = "-H", f[] = "--folded",
	     w[] = "--weight=peak", p[64], so[] = "--sort", cs[] = "callsite",
	     css[] = "callsite,size", ch[] = "--children";
	char *rargv[6], *sargv[4];

	if (!forge_trace(data, size, &o)) {
		snprintf(p, sizeof(p), "%s", forge_path(&o));
		rargv[0] = a0; rargv[1] = p; rargv[2] = NULL;
		optind = 0;
		cmd_report(2, rargv);
		/* the call stacks' pass (stacks, objects, peak bookkeeping) */
		rargv[1] = f; rargv[2] = w; rargv[3] = p; rargv[4] = NULL;
		optind = 0;
		cmd_report(4, rargv);
		/* the call-site views, one per input (the stacks pick) */
		rargv[1] = so;
		rargv[2] = size % 3 == 1 ? css : cs;
		rargv[3] = size % 3 == 2 ? ch : p;
		rargv[4] = size % 3 == 2 ? p : NULL;
		rargv[5] = NULL;
		optind = 0;
		cmd_report(size % 3 == 2 ? 5 : 4, rargv);
		sargv[0] = a1; sargv[1] = h; sargv[2] = p; sargv[3] = NULL;
		optind = 0;
		cmd_script(3, sargv);
	}
	free(o.b);
	return 0;
}
