// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: `uslab report` and `uslab script` on forged traces
 * (fuzz/forge.h), through their command entry points, output discarded.
 * Memory must follow the file: -rss_limit_mb catches a table sized by a
 * declared or sparse number.
 */
#include <getopt.h>
#include <stdio.h>
#include "fuzz/forge.h"
#include "tools/uslab/builtin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct forge_buf o;
	char a0[] = "report", a1[] = "script", h[] = "-H", p[64];
	char *rargv[3], *sargv[4];

	if (!forge_trace(data, size, &o)) {
		snprintf(p, sizeof(p), "%s", forge_path(&o));
		rargv[0] = a0; rargv[1] = p; rargv[2] = NULL;
		optind = 0;
		cmd_report(2, rargv);
		sargv[0] = a1; sargv[1] = h; sargv[2] = p; sargv[3] = NULL;
		optind = 0;
		cmd_script(3, sargv);
	}
	free(o.b);
	return 0;
}
