// SPDX-License-Identifier: MIT
/*
 * `uslab record [-o FILE] -- CMD [ARGS]`: runs CMD with libuslab-record.so
 * preloaded, then has the collector (tools/record/collect.c) turn each
 * process image's raw file into a trace.
 *
 * The first image of CMD's process goes to FILE; every other image (forked
 * children, exec'd programs) to FILE.<pid>[.<n>]. The raw files are removed
 * in every case. No locks: single-threaded.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tools/record/record.h"
#include "tools/uslab/builtin.h"

/* The recorder library: $USLAB_RECORD_LIB, else next to this binary or in ../lib. */
static int find_lib(char *buf, size_t len)
{
	const char *env = getenv("USLAB_RECORD_LIB");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		if (!realpath(env, buf) || access(buf, R_OK))
			return -1;
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	/* The build tree keeps it beside uslab; `make install` puts it in lib/. */
	if ((size_t)snprintf(buf, len, "%s/libuslab-record.so", exe) < len &&
	    !access(buf, R_OK))
		return 0;
	if ((size_t)snprintf(buf, len, "%s/../lib/libuslab-record.so", exe) < len &&
	    !access(buf, R_OK))
		return 0;
	return -1;
}

static int run_child(char **argv, const char *lib, const char *dir, pid_t *pidp)
{
	const char *old = getenv("LD_PRELOAD");
	char *preload;
	pid_t pid;

	if (asprintf(&preload, "%s%s%s", lib, old && *old ? ":" : "",
		     old ? old : "") < 0)
		return -ENOMEM;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		free(preload);
		return -errno;
	}
	if (!pid) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		setenv("LD_PRELOAD", preload, 1);
		setenv(REC_ENV_DIR, dir, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "uslab record: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	free(preload);
	*pidp = pid;
	return 0;
}

/* The root image made no allocation at all: still an (empty) trace. */
static int write_empty(const char *out, char **argv)
{
	struct trace_meta meta = { .clock_id = CLOCK_MONOTONIC };
	struct trace_writer *w;
	char cmd[4096] = "";
	size_t o = 0;
	int rc;

	for (int i = 0; argv[i] && o + 2 < sizeof(cmd); i++)
		o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, "%s%s", i ? " " : "", argv[i]);
	meta.cmdline = cmd;
	meta.cpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	strcpy(meta.tool, "uslab record");
	rc = trace_writer_open(&w, out, &meta, 0);
	return rc ? rc : trace_writer_close(w);
}

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

int cmd_record(int argc, char **argv)
{
	static const char usage[] =
		"uslab record [-o FILE] [-l LEVEL] [-q] -- CMD [ARGS]\n"
		"  runs CMD with the recorder preloaded and writes its allocation trace\n"
		"  -o FILE   trace of CMD's first process image (default uslab.ustr);\n"
		"            other processes and exec'd images go to FILE.<pid>[.<n>]\n"
		"  -l LEVEL  zstd level (default 3)\n"
		"  -q        no summary on stderr\n"
		"  exit status: CMD's (128+signal when killed), 1 when writing failed";
	const char *out = "uslab.ustr";
	char lib[PATH_MAX], dir[PATH_MAX];
	struct record_image *img;
	size_t nimg = 0;
	int c, level = 0, status = 0, rc, ret, failed = 0;
	bool quiet = false;
	pid_t pid = -1;
	struct timespec t_start, t_ran, t_end;

	while ((c = getopt(argc, argv, "+o:l:qh")) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'l':
			level = atoi(optarg);
			break;
		case 'q':
			quiet = true;
			break;
		default:
			return cmd_usage(usage);
		}
	}
	if (optind >= argc)
		return cmd_usage(usage);
	if (strlen(out) > PATH_MAX - 64) {
		fprintf(stderr, "uslab record: %s: name too long\n", out);
		return 1;
	}
	if (find_lib(lib, sizeof(lib))) {
		fprintf(stderr, "uslab record: libuslab-record.so not found next to uslab (set USLAB_RECORD_LIB)\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s.rec.XXXXXX", out);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "uslab record: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	rc = run_child(argv + optind, lib, dir, &pid);
	if (rc) {
		fprintf(stderr, "uslab record: fork: %s\n", strerror(-rc));
		record_remove_dir(dir);
		return 1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	clock_gettime(CLOCK_MONOTONIC, &t_ran);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	ret = WIFEXITED(status) ? WEXITSTATUS(status) :
	      WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

	img = record_list_images(dir, out, pid, &nimg);
	if (!nimg || !img[0].root) {
		/* No allocation in CMD itself (or it could not start). */
		if (ret != 127 && (rc = write_empty(out, argv + optind))) {
			fprintf(stderr, "uslab record: %s: %s\n", out, strerror(-rc));
			failed = 1;
		}
	}
	for (size_t i = 0; i < nimg && !failed; i++)
		if (record_convert(&img[i], level))
			failed = 1;
	if (failed)
		for (size_t i = 0; i < nimg; i++)
			if (img[i].written)
				unlink(img[i].out);
	for (size_t i = 0; i < nimg && !failed && !quiet; i++)
		fprintf(stderr, "uslab record: %s: %" PRIu64 " events, %u threads, pid %u%s"
			" (%" PRIu64 " unmatched frees dropped, %" PRIu64 " lost frees added)\n",
			img[i].out, img[i].events, img[i].threads, img[i].pid,
			img[i].root ? "" : img[i].gen ? " (exec'd image)" : " (child)",
			img[i].dropped, img[i].fixups);
	clock_gettime(CLOCK_MONOTONIC, &t_end);
	if (!failed && !quiet)
		fprintf(stderr, "uslab record: command ran %.3f s, traces written in %.3f s\n",
			secs(&t_start, &t_ran), secs(&t_ran, &t_end));
	free(img);
	record_remove_dir(dir);
	if (failed)
		return ret ? ret : 1;
	return ret;
}
