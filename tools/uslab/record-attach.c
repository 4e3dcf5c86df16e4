// SPDX-License-Identifier: MIT
/*
 * `uslab record -p PID [--duration S] [-g]`: record a process that is
 * already running, on whatever malloc it uses, as heaptrack -p does. gdb
 * (Debian's, run in batch mode) stops the process, dlopen()s the recorder
 * library into it (RTLD_LOCAL: it interposes nothing) and calls its
 * uslab_record_attach(DIR, DEPTH), which points the malloc family's GOT
 * slots of every loaded object at its wrappers (tools/record/got.c) and
 * returns; gdb detaches and the process runs on, recorded. At the end of
 * the duration, on Ctrl-C (or TERM, HUP), gdb comes back once to call
 * uslab_record_detach() (the slots back, the buffers written); if the
 * process exits first, its exit writes them. The raw files then become a
 * trace as for `uslab record CMD` (tools/record/collect.c), where the
 * blocks freed during the recording but allocated before it are written
 * as allocated at time 0 ("alive at attach"), so report, replay and sim
 * match their frees. Limits: docs/sim.md, "Attaching".
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tools/record/record.h"
#include "tools/uslab/builtin.h"

#define GDB		"/usr/bin/gdb"

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static bool alive(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	if (kill(pid, 0) && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* Runs gdb on @pid with the -ex commands @ex (NULL-terminated); its
 * standard output into @out. Return: gdb's exit status, or -errno. */
static int run_gdb(pid_t pid, const char *const *ex, char *out, size_t len)
{
	const char *argv[32];
	char pidbuf[16];
	int pfd[2], status, n = 0;
	size_t got = 0;
	pid_t g;

	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	argv[n++] = "gdb";
	argv[n++] = "-nx";
	argv[n++] = "-batch";
	argv[n++] = "-p";
	argv[n++] = pidbuf;
	argv[n++] = "-ex";
	argv[n++] = "set confirm off";
	for (; *ex && n < 28; ex++) {
		argv[n++] = "-ex";
		argv[n++] = *ex;
	}
	argv[n] = NULL;
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	g = fork();
	if (g < 0)
		return -errno;
	if (!g) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		dup2(pfd[1], STDOUT_FILENO);
		dup2(pfd[1], STDERR_FILENO);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		/* Ctrl-C is ours to act on: gdb must not stop half-way */
		signal(SIGINT, SIG_IGN);
		execv(GDB, (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		char scratch[4096];
		ssize_t r = got < len - 1 ? read(pfd[0], out + got, len - 1 - got) :
			    read(pfd[0], scratch, sizeof(scratch));	/* full: drained */

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (got < len - 1)
			got += (size_t)r;
	}
	out[got] = 0;
	close(pfd[0]);
	while (waitpid(g, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The value gdb printed for "$N = ..." (the last number on that line). */
static bool gdb_value(const char *out, int n, long long *v)
{
	char key[16];
	const char *p;

	snprintf(key, sizeof(key), "$%d = ", n);
	p = strstr(out, key);
	if (!p)
		return false;
	p += strlen(key);
	if (!strncmp(p, "(void *) ", 9))
		p += 9;
	*v = strtoll(p, NULL, 0);
	return true;
}

/* The last lines of gdb's output, for a message. */
static void say_gdb(const char *out)
{
	const char *p = out + strlen(out);

	for (int lines = 0; p > out && lines < 6; p--)
		if (p[-1] == '\n' && p != out + strlen(out))
			lines++;
	fprintf(stderr, "uslab record: gdb said:\n%s%s", p, *p && p[strlen(p) - 1] != '\n' ? "\n" : "");
}

/* /proc/PID/cmdline as an argv (for the trace's command), static storage. */
static char **proc_argv(pid_t pid)
{
	static char buf[4096];
	static char *argv[64];
	char path[64];
	ssize_t n;
	int fd, k = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(buf, sizeof(buf), "(pid %d)", (int)pid);
		n = (ssize_t)strlen(buf) + 1;
	}
	buf[n] = 0;
	for (char *p = buf; p < buf + n && k < 63; p += strlen(p) + 1)
		argv[k++] = p;
	argv[k] = NULL;
	return argv;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int record_attach(const struct record_attach_opts *o)
{
	static char gdb_out[1 << 16];
	char cmd1[PATH_MAX + 64], cmd2[PATH_MAX + 96];
	const char *ex[8];
	struct record_result res;
	struct stat sb;
	char path[64];
	long long v;
	double t0, t_ran, t_end;
	unsigned int running[1];
	bool still;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d", (int)o->pid);
	if (stat(path, &sb) || !alive(o->pid)) {
		fprintf(stderr, "uslab record: -p %d: no such running process\n", (int)o->pid);
		return 1;
	}
	if (o->pid == getpid()) {
		fprintf(stderr, "uslab record: -p %d: that is uslab itself\n", (int)o->pid);
		return 1;
	}
	if (access(GDB, X_OK)) {
		fprintf(stderr, "uslab record: -p needs gdb (" GDB ": %s; Debian package gdb, "
			"scripts/deps.sh tools)\n", strerror(errno));
		return 1;
	}
	/* the process writes its raw files here: under its own uid too */
	if (sb.st_uid != geteuid())
		chmod(o->dir, 0733);
	snprintf(cmd1, sizeof(cmd1), "call (void *) dlopen(\"%s\", 2)", o->lib);
	snprintf(cmd2, sizeof(cmd2), "call (long) " REC_ATTACH_FN "(\"%s\", %u)", o->dir, o->depth);
	ex[0] = "set pagination off";
	ex[1] = cmd1;
	ex[2] = cmd2;
	ex[3] = "detach";
	ex[4] = NULL;
	t0 = now_s();
	rc = run_gdb(o->pid, ex, gdb_out, sizeof(gdb_out));
	if (rc < 0) {
		fprintf(stderr, "uslab record: " GDB ": %s\n", strerror(-rc));
		return 1;
	}
	if (strstr(gdb_out, "ptrace: Operation not permitted")) {
		fprintf(stderr, "uslab record: -p %d: ptrace is not permitted here (another "
			"user's process, kernel.yama.ptrace_scope, or a container without "
			"CAP_SYS_PTRACE)\n", (int)o->pid);
		return 1;
	}
	if (!gdb_value(gdb_out, 1, &v) || !v) {
		fprintf(stderr, "uslab record: -p %d: the recorder could not be loaded into the process\n",
			(int)o->pid);
		say_gdb(gdb_out);
		return 1;
	}
	if (!gdb_value(gdb_out, 2, &v) || v < 0) {
		fprintf(stderr, "uslab record: -p %d: the recorder did not start%s%s\n", (int)o->pid,
			gdb_value(gdb_out, 2, &v) ? ": " : "",
			gdb_value(gdb_out, 2, &v) ? strerror((int)-v) : "");
		if (v == -EBUSY)
			fprintf(stderr, "uslab record: (it is being recorded already, or was: "
				"one attach per process)\n");
		say_gdb(gdb_out);
		return 1;
	}
	if (!o->quiet)
		fprintf(stderr, "uslab record: attached to %d (%lld calls redirected: the malloc family, "
			"uslab's kernel API); "
			"%s\n", (int)o->pid, v, o->duration > 0 ? "recording for the duration, Ctrl-C to stop early" :
			"Ctrl-C to stop");
	{
		struct sigaction sa = { .sa_handler = on_stop };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	while (!stop_sig && (o->duration <= 0 || now_s() - t0 < o->duration) && alive(o->pid)) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	t_ran = now_s();
	still = alive(o->pid);
	if (still) {
		ex[0] = "set pagination off";
		ex[1] = "call (int) " REC_DETACH_FN "()";
		ex[2] = "detach";
		ex[3] = NULL;
		rc = run_gdb(o->pid, ex, gdb_out, sizeof(gdb_out));
		if (rc < 0 || !gdb_value(gdb_out, 1, &v) || v) {
			fprintf(stderr, "uslab record: -p %d: the recorder could not be stopped "
				"cleanly: the trace may miss the last events\n", (int)o->pid);
			if (rc >= 0)
				say_gdb(gdb_out);
		}
		still = alive(o->pid);
	} else if (!o->quiet) {
		fprintf(stderr, "uslab record: %d exited: writing the trace of what was recorded\n",
			(int)o->pid);
	}
	running[0] = (unsigned int)o->pid;
	{
		struct record_opts ro = {
			.dir = o->dir, .out = o->out, .argv = proc_argv(o->pid), .root = o->pid,
			.root_start = (uint64_t)(t0 * 1e9), .run = true, .level = o->level,
			.running = running, .nrunning = still ? 1 : 0,
		};

		rc = record_collect(&ro, &res);
	}
	t_end = now_s();
	if (rc) {
		if (rc == -ENOENT)
			fprintf(stderr, "uslab record: -p %d: nothing was recorded\n", (int)o->pid);
		return 1;
	}
	if (!o->quiet) {
		fprintf(stderr, "uslab record: %s: %" PRIu64 " events, %" PRIu64 " blocks alive at "
			"attach (allocated before it, freed during it: written as allocated at "
			"time 0), %" PRIu64 " frees of blocks never seen dropped\n",
			o->out, res.events, res.alive_at_attach, res.dropped);
		if (o->depth)
			fprintf(stderr, "uslab record: %u distinct call stacks, %" PRIu64
				" frames, %u mapped objects\n", res.nstacks, res.nframes, res.nobjects);
		fprintf(stderr, "uslab record: recorded %.3f s, trace written in %.3f s; %d %s\n",
			t_ran - t0, t_end - t_ran, (int)o->pid,
			still ? "runs on" : "has exited");
	}
	return 0;
}

/* --duration: a number of seconds, or with a unit: ms, s, m, h ("1.5s",
 * "500ms", "2m"); above 0, at most a week. opt->value: the double. */
const char *record_opt_duration(const struct cli_opt *opt, const char *arg)
{
	static const struct { const char *unit; double s; } units[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "m", 60 }, { "min", 60 }, { "h", 3600 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || !(v > 0))
		return "a duration above 0: seconds, or with ms, s, m or h (500ms, 5s, 2m)";
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(end, units[i].unit)) {
			v *= units[i].s;
			if (v > 7 * 86400.0)
				return "a duration of at most a week (168h)";
			*(double *)opt->value = v;
			return NULL;
		}
	return "a duration above 0: seconds, or with ms, s, m or h (500ms, 5s, 2m)";
}
