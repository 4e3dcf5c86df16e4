// SPDX-License-Identifier: MIT
/*
 * `uslab record [-g] [-o FILE] -- CMD [ARGS]`: runs CMD with
 * libuslab-record.so preloaded, as a child subreaper (so the processes it
 * leaves behind are still ours to name), then has the collector
 * (tools/record/collect.c) write one trace of every process of the run.
 * Signals (docs/man/uslab-record.1.scd): INT and QUIT are ignored while
 * CMD runs (the terminal sends them to the whole group); TERM and HUP are
 * forwarded to CMD's pid, and the trace of what was recorded is written
 * when it has ended. From CMD's end on, a fatal signal removes the raw
 * folder and the unfinished trace (out_catch_fatal) before we die of it.
 * CMD gets PR_SET_PDEATHSIG SIGTERM: it does not run on unrecorded when we
 * are killed (SIGKILL).
 * No locks: single-threaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
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

	if (env && *env) {
		if (!realpath(env, buf) || access(buf, R_OK))
			return -1;
		return 0;
	}
	if (cmd_exe_dir(exe, sizeof(exe)))
		return -1;
	/* The build tree keeps it beside uslab; `make install` puts it in lib/. */
	if ((size_t)snprintf(buf, len, "%s/" REC_LIB_NAME, exe) < len &&
	    !access(buf, R_OK))
		return 0;
	if ((size_t)snprintf(buf, len, "%s/../lib/" REC_LIB_NAME, exe) < len &&
	    !access(buf, R_OK))
		return 0;
	return -1;
}

/* The command while it runs, and the signal we forwarded to it (0 none). */
static volatile pid_t child_pid;
static volatile sig_atomic_t forwarded;

/* TERM or HUP to us: to CMD, which ends as it would on its own; we write
 * the trace of what it did when it has. Its pid only, not our process
 * group, which may hold our parent shell; `timeout` signals the group
 * itself, so CMD gets it either way. */
static void forward_signal(int sig)
{
	int e = errno;

	forwarded = sig;
	if (child_pid > 0)
		kill(child_pid, sig);
	errno = e;
}

/* The raw folder, for removal from a fatal signal's handler. */
static char raw_dir[PATH_MAX];

static void remove_raw_dir_fatal(void)
{
	record_remove_dir(raw_dir);
}

static int run_child(char **argv, const char *lib, const char *dir, unsigned int stacks_wanted,
		     bool out_stdout, pid_t *pidp)
{
	pid_t parent = getpid();
	sigset_t hold, old_mask;
	const char *old = getenv("LD_PRELOAD");
	char *preload;
	pid_t pid;

	if (asprintf(&preload, "%s%s%s", lib, old && *old ? ":" : "",
		     old ? old : "") < 0)
		return -ENOMEM;
	/* TERM and HUP held until child_pid is known: none is lost between */
	sigemptyset(&hold);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGHUP);
	sigprocmask(SIG_BLOCK, &hold, &old_mask);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		free(preload);
		return -e;
	}
	if (!pid) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		/* We killed (SIGKILL): CMD gets TERM, ends as it does on any
		 * kill, rather than run on unrecorded with nobody to collect.
		 * Not KILL: its own cleanup (temp files, children) still runs. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(128 + SIGTERM);
		/* the trace owns our stdout: CMD's output goes to stderr */
		if (out_stdout && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		setenv("LD_PRELOAD", preload, 1);
		setenv(REC_ENV_DIR, dir, 1);
		if (stacks_wanted) {
			char depth[16];

			snprintf(depth, sizeof(depth), "%u", stacks_wanted);
			setenv(REC_ENV_STACKS, depth, 1);
		}
		else
			unsetenv(REC_ENV_STACKS);
		execvp(argv[0], argv);
		fprintf(stderr, "uslab record: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	free(preload);
	*pidp = pid;
	child_pid = pid;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return 0;
}

/* Pids of the processes still running under us (reparented to this
 * subreaper, and their descendants), from /proc. */
static size_t still_running(pid_t self, unsigned int *pids, size_t max)
{
	unsigned int all[4096][2];
	size_t nall = 0, n = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");
	bool grew = true;

	if (!d)
		return 0;
	while ((de = readdir(d)) && nall < ARRAY_SIZE(all)) {
		char path[64], buf[512], *rp;
		unsigned int pid, ppid;
		char state;
		FILE *f;

		if (sscanf(de->d_name, "%u", &pid) != 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/stat", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(buf, sizeof(buf), f)) {
			fclose(f);
			continue;
		}
		fclose(f);
		rp = strrchr(buf, ')');
		if (!rp || sscanf(rp + 1, " %c %u", &state, &ppid) != 2 || state == 'Z')
			continue;
		all[nall][0] = pid;
		all[nall++][1] = ppid;
	}
	closedir(d);
	while (grew) {
		grew = false;
		for (size_t i = 0; i < nall && n < max; i++) {
			bool ours = all[i][1] == (unsigned int)self, seen = false;

			for (size_t j = 0; j < n && !ours; j++)
				ours = all[i][1] == pids[j];
			for (size_t j = 0; j < n; j++)
				seen |= pids[j] == all[i][0];
			if (ours && !seen) {
				pids[n++] = all[i][0];
				grew = true;
			}
		}
	}
	return n;
}

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* CMD resolved as execvp will: for the static-binary warning. */
static bool cmd_is_static(const char *file)
{
	char buf[PATH_MAX];
	const char *path = getenv("PATH");
	int fd, st = 0;

	if (strchr(file, '/')) {
		snprintf(buf, sizeof(buf), "%s", file);
	} else {
		const char *p = path ? path : "/bin:/usr/bin", *colon;
		bool found = false;

		for (; *p && !found; p = *colon ? colon + 1 : colon) {
			colon = strchrnul(p, ':');
			if ((size_t)(colon - p) + strlen(file) + 3 > sizeof(buf))
				continue;
			if (colon == p)
				strcpy(buf, ".");
			else
				memcpy(buf, p, (size_t)(colon - p)), buf[colon - p] = 0;
			strcat(buf, "/");
			strcat(buf, file);
			found = !access(buf, X_OK);
		}
		if (!found)
			return false;
	}
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		st = rec_elf_is_static(fd);
		close(fd);
	}
	return st;
}

static const char record_usage[] =
	"uslab record [-g [--max-stack N]] [-o FILE] [-l LEVEL] [-q] -- CMD [ARGS]\n"
	"       uslab record -p PID [--duration TIME] [-g [--max-stack N]] [-o FILE] [-l LEVEL] [-q]\n"
	"  runs CMD with the recorder preloaded and writes one trace of every\n"
	"  process it runs (forked, vforked, spawned or exec'd), with a process table\n"
	"  report, script, replay, sim and tune read the program CMD ran as (the\n"
	"  last image CMD's own process exec'd into, past any wrapper scripts);\n"
	"  the process with the most allocations only when that one made none or\n"
	"  was not recorded; --pid/--comm choose another\n"
	"  exit status: CMD's (128+signal when killed), 1 when writing failed";

/*
 * The folder of the raw files: beside a regular output (same file system,
 * usually not RAM); beside a FIFO, a device or stdout, in $TMPDIR.
 * Return: 0, or 1 with the reason said.
 */
static int record_make_dir(const char *out, char *dir, size_t len)
{
	struct stat sb;

	if (!strcmp(out, "-") || (stat(out, &sb) == 0 && !S_ISREG(sb.st_mode))) {
		const char *tmpdir = getenv("TMPDIR");

		snprintf(dir, len, "%s/uslab-record.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	} else {
		snprintf(dir, len, "%s.rec.XXXXXX", out);
	}
	if (!mkdtemp(dir)) {
		fprintf(stderr, "uslab record: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	/* named to the processes by absolute path: a process started after
	 * its parent changed directory (make -C, a script's cd) finds it */
	if (dir[0] != '/') {
		char abs[PATH_MAX];

		int e = !realpath(dir, abs) ? errno : strlen(abs) >= len ? ENAMETOOLONG : 0;

		if (e) {
			fprintf(stderr, "uslab record: %s: %s\n", dir, strerror(e));
			rmdir(dir);
			return 1;
		}
		strcpy(dir, abs);
	}
	return 0;
}

/* Processes of @cmd's that outlived it: recorded up to now. */
static void warn_running(const char *cmd, const unsigned int *running, size_t n)
{
	char list[512];
	size_t o = 0;

	for (size_t k = 0; k < n && o + 40 < sizeof(list); k++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%u", k ? ", " : "", running[k]);
	fprintf(stderr, "uslab record: warning: %zu process%s still running when %s exited "
		"(pid %s%s): recorded up to now\n", n, n == 1 ? "" : "es",
		cmd, list, o + 40 >= sizeof(list) ? ", ..." : "");
}

static void print_summary(const char *out, const struct record_result *res,
			  bool stacks, double ran_s, double write_s)
{
	fprintf(stderr, "uslab record: %s: %" PRIu64 " events, %zu process%s, %u threads"
		" (%" PRIu64 " unmatched frees dropped, %" PRIu64 " lost frees added)\n",
		out, res->events, res->nprocs, res->nprocs == 1 ? "" : "es", res->threads,
		res->dropped, res->fixups);
	if (stacks)
		fprintf(stderr, "uslab record: %u distinct call stacks, %" PRIu64
			" frames, %u mapped objects\n", res->nstacks, res->nframes, res->nobjects);
	if (res->nprocs > 1 && res->chosen[0])
		fprintf(stderr, "uslab record: the tools will read %s; 'uslab report %s' lists every process\n",
			res->chosen, out);
	fprintf(stderr, "uslab record: command ran %.3f s, trace written in %.3f s\n",
		ran_s, write_s);
}

int cmd_record(int argc, char **argv)
{
	const char *out = "uslab.ustr";
	char lib[PATH_MAX], dir[PATH_MAX];
	struct record_result res;
	unsigned int running[256];
	size_t nrunning;
	int first, level = 0, status = 0, rc, ret;
	bool quiet = false, root_static, stacks_wanted = false;
	unsigned int max_stack = REC_STACK_DEPTH;
	int attach_pid = 0;
	double duration = 0;
	pid_t pid = -1;
	struct timespec t_start, t_ran, t_end;
	const struct cli_opt opts[] = {
		OPT_BOOLEAN('g', NULL, &stacks_wanted,
			    "record each allocation's call stack (libunwind), for\n"
			    "'uslab report --sort callsite'"),
		OPT_UINT(0, "max-stack", &max_stack, "N",
			 "with -g: frames kept per stack, 1..255 (default 64);\n"
			 "a deeper stack is kept cut and marked so", 1, REC_STACK_MAX - 1),
		OPT_STRING('o', "output", &out, "FILE",
			   "the trace (default uslab.ustr; - for standard output)",
			   .flags = OPT_OUTPUT),
		OPT_INTEGER('l', NULL, &level, "LEVEL", "zstd level 1..22 (default 3)", 1, 22),
		OPT_BOOLEAN('q', NULL, &quiet, "no summary on stderr (warnings are still printed)"),
		OPT_INTEGER('p', "pid", &attach_pid, "PID",
			    "record the running process PID instead of a command\n"
			    "(gdb loads the recorder into it), until --duration,\n"
			    "Ctrl-C or its exit; it runs on afterwards", 1, 0x3fffffff),
		OPT_CALLBACK(0, "duration", &duration, "TIME",
			     "with -p: stop after TIME (5, 5s, 500ms, 2m, 1h)",
			     record_opt_duration),
		OPT_END(),
	};

	first = parse_options(argc, argv, opts, record_usage, PARSE_OPT_STOP_AT_NON_OPTION);
	if (first <= 0)
		return -first;
	if (duration > 0 && !attach_pid)
		return usage_error(opts, record_usage, "--duration goes with -p");
	if (attach_pid && first < argc)
		return usage_error(opts, record_usage, "-p PID takes no command");
	if (first >= argc && !attach_pid)
		return usage_error(opts, record_usage, "no command given");
	if (max_stack != REC_STACK_DEPTH && !stacks_wanted)
		return usage_error(opts, record_usage, "--max-stack goes with -g");
	if (strlen(out) > PATH_MAX - 64) {
		fprintf(stderr, "uslab record: %s: name too long\n", out);
		return 1;
	}
	if (find_lib(lib, sizeof(lib))) {
		fprintf(stderr, "uslab record: " REC_LIB_NAME " not found next to uslab (set USLAB_RECORD_LIB)\n");
		return 1;
	}
	/* LD_PRELOAD splits its list at spaces and colons: such a path
	 * would name pieces that do not exist, ld.so would say so in every
	 * process and record nothing */
	if (!attach_pid && strpbrk(lib, " :")) {
		fprintf(stderr, "uslab record: %s: LD_PRELOAD cannot name a library "
			"whose path has a space or a colon; install uslab elsewhere "
			"or set USLAB_RECORD_LIB to a copy without them\n", lib);
		return 1;
	}
	if (record_make_dir(out, dir, sizeof(dir)))
		return 1;
	if (attach_pid) {
		struct record_attach_opts ao = {
			.pid = attach_pid, .duration = duration,
			.depth = stacks_wanted ? max_stack : 0, .out = out, .dir = dir,
			.lib = lib, .level = level, .quiet = quiet,
		};

		snprintf(raw_dir, sizeof(raw_dir), "%s", dir);
		out_catch_fatal(remove_raw_dir_fatal);
		rc = record_attach(&ao);
		record_remove_dir(dir);
		return rc;
	}
	root_static = cmd_is_static(argv[first]);
	if (root_static)
		fprintf(stderr, "uslab record: warning: %s is statically linked: LD_PRELOAD "
			"cannot reach it, its allocations are not recorded\n", argv[first]);
	/* Orphans of CMD become our children: we can tell who is still running. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	{
		struct sigaction sa = { .sa_handler = forward_signal };

		sigemptyset(&sa.sa_mask);
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	snprintf(raw_dir, sizeof(raw_dir), "%s", dir);
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	rc = run_child(argv + first, lib, dir, stacks_wanted ? max_stack : 0, !strcmp(out, "-"), &pid);
	if (rc) {
		fprintf(stderr, "uslab record: fork: %s\n", strerror(-rc));
		record_remove_dir(dir);
		return 1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	child_pid = 0;	/* reaped: its pid may be anyone's now */
	clock_gettime(CLOCK_MONOTONIC, &t_ran);
	/* A second TERM (timeout -k, an impatient user) while we write: die
	 * of it, leaving neither the raw folder nor half a trace. */
	{
		sigset_t hold, old_mask;

		/* held across the switch: none finds SIG_DFL without our hook */
		sigemptyset(&hold);
		sigaddset(&hold, SIGINT);
		sigaddset(&hold, SIGQUIT);
		sigaddset(&hold, SIGTERM);
		sigaddset(&hold, SIGHUP);
		sigprocmask(SIG_BLOCK, &hold, &old_mask);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		out_catch_fatal(remove_raw_dir_fatal);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
	}
	ret = WIFEXITED(status) ? WEXITSTATUS(status) :
	      WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
	/* the recorder's fatal_flush keeps the rest; KILL cannot be caught */
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		fprintf(stderr, "uslab record: warning: %s was killed by SIGKILL: its last "
			"events (up to %u KiB per thread) were not written\n",
			argv[first], REC_BLOCK_BYTES >> 10);
	if (forwarded)
		fprintf(stderr, "uslab record: %s received: forwarded to %s (pid %d), "
			"which %s %d; writing the trace of what was recorded\n",
			forwarded == SIGHUP ? "SIGHUP" : "SIGTERM", argv[first], (int)pid,
			WIFSIGNALED(status) ? "died of signal" : "exited with status",
			WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	nrunning = still_running(getpid(), running, ARRAY_SIZE(running));

	{
		struct record_opts ro = {
			.dir = dir, .out = out, .argv = argv + first, .root = pid,
			.root_start = (uint64_t)t_start.tv_sec * 1000000000u +
				      (uint64_t)t_start.tv_nsec,
			.root_static = root_static, .run = ret != 127, .level = level,
			.running = running, .nrunning = nrunning,
		};

		if (nrunning)
			warn_running(argv[first], running, nrunning);
		rc = record_collect(&ro, &res);
	}
	clock_gettime(CLOCK_MONOTONIC, &t_end);
	if (!rc && ret != 127 && !quiet)
		print_summary(out, &res, stacks_wanted, secs(&t_start, &t_ran),
			      secs(&t_ran, &t_end));
	record_remove_dir(dir);
	if (rc && rc != -ENOENT)
		return ret ? ret : 1;
	return ret;
}
