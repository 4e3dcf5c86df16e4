// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: `uslab sim` end to end on forged traces: the trace is
 * loaded as tune loads it and run through the library's page_alloc, slab
 * and percpu code on virtual CPUs (libuslab-core-vcpu.a). The library runs
 * once per process, so each input runs in a process of its own; one that
 * dies of a signal or exits non-zero (an ASan or UBSan report, a crash) or
 * hangs aborts the fuzzer, and libFuzzer keeps the input.
 *
 * Those processes are forked by a fork server started at initialisation,
 * while the fuzzer is small: forking the fuzzer itself, a hundred MiB and
 * more of sanitizer and corpus memory, cost most of each execution (page
 * tables copied, then the parent's pages faulted back copy-on-write). The
 * server gets the run's options on a pipe; the trace is the memfd
 * forge_path() writes, opened before the server was forked.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fuzz/forge.h"
#include "sim/internal.h"
#include "tools/lib/cmd.h"
#include "uslab/page_alloc.h"

#define FUZZ_SIM_HEAP_MB	256UL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* One simulation, as the server is asked for it. */
struct sim_req {
	unsigned int cpus;		/* sim_trace_load's: 0 = the header's */
	int mag_size;			/* -1: the library's */
};

static int req_fd = -1, status_fd = -1;	/* the fuzzer's ends */

/* sim_trace_load() of @path, opened as uslab tune opens it. Return: 0 or
 * -errno (@t freed). */
static int fuzz_load(struct sim_trace *t, const char *path, unsigned int cpus)
{
	struct trace_reader *r = cmd_open_trace_as("fuzz sim", path);
	int rc;

	if (!r)
		return -EINVAL;
	rc = sim_trace_load(t, r, cpus, "fuzz sim");
	trace_reader_close(r);
	if (rc)
		sim_trace_free(t);
	return rc;
}

/* In a process of its own: load the forged trace and simulate it. */
static void sim_child(const char *path, const struct sim_req *rq)
{
	struct sim_config cfg;
	struct sim_result res;
	struct sim_trace t;

	alarm(20);
	/* The heap capped as USLAB_OPTIONS=limit_mb does: a 20-byte trace
	 * may ask for a 12 GiB block, and the simulator touches each page
	 * of what it is handed (30-60 s a run). */
	page_alloc_set_limit(FUZZ_SIM_HEAP_MB << 20);
	/* the fuzzer loaded this file with these options: it loads */
	if (fuzz_load(&t, path, rq->cpus))
		_exit(3);
	sim_config_init(&cfg);
	cfg.cpus = t.cpus;
	cfg.sample_every = t.n / 16 + 1;
	cfg.mag_size = rq->mag_size;
	sim_run(&t, &cfg, &res);
	_exit(0);
}

/* The fork server: a child per request, its wait status sent back. Ends
 * when the fuzzer does (its end of the pipe closed). */
static void __attribute__((noreturn)) sim_server(int rfd, int wfd, const char *path)
{
	struct sim_req rq;
	int status;
	pid_t pid;

	signal(SIGPIPE, SIG_DFL);
	while (read(rfd, &rq, sizeof(rq)) == (ssize_t)sizeof(rq)) {
		pid = fork();
		if (pid < 0)
			_exit(2);
		if (!pid) {
			close(rfd);
			close(wfd);
			sim_child(path, &rq);
		}
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				_exit(2);
		if (write(wfd, &status, sizeof(status)) != (ssize_t)sizeof(status))
			break;
	}
	_exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct forge_buf empty = { 0 };
	const char *path = forge_path(&empty);	/* the memfd, before the fork */
	int req[2], st[2];
	pid_t pid;

	if (pipe(req) || pipe(st))
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (!pid) {
		close(req[1]);
		close(st[0]);
		sim_server(req[0], st[1], path);
	}
	close(req[0]);
	close(st[1]);
	req_fd = req[1];
	status_fd = st[0];
	return 0;
}

/* One simulation through the server. Return: its child's wait status. */
static int sim_remote(const struct sim_req *rq)
{
	int status;
	ssize_t n;

	if (write(req_fd, rq, sizeof(*rq)) != (ssize_t)sizeof(*rq))
		abort();
	while ((n = read(status_fd, &status, sizeof(status))) < 0)
		if (errno != EINTR)	/* libFuzzer's timer interrupts the wait */
			abort();
	if (n != (ssize_t)sizeof(status)) {
		fprintf(stderr, "fuzz_sim: the fork server is gone\n");
		abort();
	}
	return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct forge_buf o;
	struct sim_trace t;
	struct sim_req rq;
	int status;

	if (forge_trace(data, size, &o))
		goto out;
	/* The header's CPU count one time in four, else --cpus 1..13. */
	rq.cpus = size & 3 ? (unsigned int)(size % 13) + 1 : 0;
	rq.mag_size = size & 2 ? (int)(size % 64) : -1;
	if (fuzz_load(&t, forge_path(&o), rq.cpus))
		goto out;
	sim_trace_free(&t);
	status = sim_remote(&rq);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "fuzz_sim: the simulation %s %d\n", WIFEXITED(status) ?
			"exited with" : "was killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		abort();
	}
out:
	free(o.b);
	return 0;
}
