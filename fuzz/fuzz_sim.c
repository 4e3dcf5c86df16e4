// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: `uslab sim` end to end on forged traces: the trace is
 * loaded as tune loads it and run through the library's page_alloc, slab
 * and percpu code on virtual CPUs (libuslab-core-vcpu.a). The library runs
 * once per process, so each input runs in a forked child; a child that
 * dies of a signal (an ASan or UBSan report, a crash) or hangs aborts the
 * parent, and libFuzzer keeps the input.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fuzz/forge.h"
#include "sim/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct forge_buf o;
	struct sim_trace t;
	pid_t pid;
	int status;

	if (forge_trace(data, size, &o))
		goto out;
	/* The header's CPU count one time in four, else --cpus 1..13. */
	if (sim_trace_load(&t, forge_path(&o), size & 3 ? (unsigned int)(size % 13) + 1 : 0,
			   "fuzz sim"))
		goto out;
	pid = fork();
	if (pid < 0)
		abort();
	if (!pid) {
		struct sim_config cfg;
		struct sim_result res;

		alarm(20);
		sim_config_init(&cfg);
		cfg.cpus = t.cpus;
		cfg.sample_every = t.n / 16 + 1;
		if (size & 2)
			cfg.mag_size = (int)(size % 64);
		sim_run(&t, &cfg, &res);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)	/* libFuzzer's timer interrupts the wait */
			abort();
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "fuzz_sim: the simulation %s %d\n", WIFEXITED(status) ?
			"exited with" : "was killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		abort();
	}
	sim_trace_free(&t);
out:
	free(o.b);
	return 0;
}
