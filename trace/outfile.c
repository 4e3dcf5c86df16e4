// SPDX-License-Identifier: MIT
/*
 * Output files that never clobber what stands at the path (docs/sim.md,
 * "Output files"): a regular file or a new name is written to a temporary
 * file beside it and renamed over it only when complete; a symlink is
 * followed, so its target is replaced and the link stays; a FIFO, a device
 * or a socket is written in place (renaming over /dev/null would replace
 * the device node); a directory is an error; "-" is standard output.
 * A fatal signal (INT, TERM, HUP, ...) while a temporary is open unlinks it
 * before the process dies of the signal, so an interrupted writer leaves
 * no NAME.tmp.XXXXXX behind.
 * Locks: none; the slots of open temporaries are claimed with a
 * compare-and-swap, so writers on several threads do not collide.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "trace/internal.h"

static int seterr(char *err, size_t len, int e, const char *name, const char *what)
{
	snprintf(err, len, "%s: %s%s%s", name, what ? what : "", what ? ": " : "",
		 strerror(e));
	return -e;
}

/*
 * Temporaries open now, in static storage: the signal handler may touch no
 * heap (it calls only unlink, sigaction, sigprocmask and raise, all
 * async-signal-safe). A slot is 0 free, 1 being filled, 2 live.
 */
#define OUT_TMP_SLOTS	8
static char tmp_paths[OUT_TMP_SLOTS][PATH_MAX];
static volatile int tmp_state[OUT_TMP_SLOTS];

/* The signals whose default action ends the process and that a user or a
 * supervisor sends (timeout, a closed terminal, a full file size limit). */
static const int out_fatal_sigs[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM, SIGXCPU, SIGXFSZ,
	SIGUSR1, SIGUSR2,
};

/* The caller's own cleanup at a fatal signal (out_catch_fatal). */
static void (*volatile fatal_hook)(void);

/* Ends as preload.c's fatal_flush (which links nothing of uslab): SIG_DFL, raise, unblock. */
static void out_fatal(int sig)
{
	void (*hook)(void) = fatal_hook;
	int e = errno;
	sigset_t set;

	if (hook)
		hook();
	for (int i = 0; i < OUT_TMP_SLOTS; i++)
		if (__atomic_load_n(&tmp_state[i], __ATOMIC_ACQUIRE) == 2)
			unlink(tmp_paths[i]);
	/* die of @sig as the default action would (status, core) */
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	raise(sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	errno = e;	/* not reached for a fatal default action */
}

/* Our handler for every fatal signal left at its default action; one a
 * program set (ignored, or its own handler) is its to keep. */
static void catch_fatal(void)
{
	struct sigaction sa = { .sa_handler = out_fatal }, old;

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(out_fatal_sigs); i++) {
		if (sigaction(out_fatal_sigs[i], NULL, &old) || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		sigaction(out_fatal_sigs[i], &sa, NULL);
	}
}

/* Return: the slot now naming @path for the handler, or -1 (all taken:
 * that temporary is left by a signal, as before). */
static int tmp_register(const char *path)
{
	if (strlen(path) >= PATH_MAX)
		return -1;
	for (int i = 0; i < OUT_TMP_SLOTS; i++) {
		int want = 0;

		if (!__atomic_compare_exchange_n(&tmp_state[i], &want, 1, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		strcpy(tmp_paths[i], path);
		__atomic_store_n(&tmp_state[i], 2, __ATOMIC_RELEASE);
		return i;
	}
	return -1;
}

void out_catch_fatal(void (*hook)(void))
{
	fatal_hook = hook;
	catch_fatal();
}

/* After the rename or unlink: a late signal finds nothing to unlink. */
static void tmp_unregister(int slot)
{
	if (slot >= 0)
		__atomic_store_n(&tmp_state[slot], 0, __ATOMIC_RELEASE);
}

/* A socket is written in place, as the stream peer of a connection. */
static int open_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* The directory a new file at @path goes into must exist and be writable. */
static int check_dir(const char *path, char *err, size_t len)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return seterr(err, len, ENAMETOOLONG, path, NULL);
	if (access(dir, W_OK | X_OK))
		return seterr(err, len, errno, dir, "cannot create files in this directory");
	return 0;
}

int out_check(const char *path, char *err, size_t len)
{
	struct stat st;

	if (!strcmp(path, "-"))
		return 0;
	if (!*path)
		return seterr(err, len, ENOENT, "(empty file name)", NULL);
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return seterr(err, len, EISDIR, path, NULL);
		if (S_ISREG(st.st_mode)) {
			char real[PATH_MAX];

			if (!realpath(path, real))
				return seterr(err, len, errno, path, NULL);
			return check_dir(real, err, len);
		}
		return 0;	/* FIFO, device, socket: written in place */
	}
	if (errno != ENOENT)
		return seterr(err, len, errno, path, NULL);
	return check_dir(path, err, len);
}

/*
 * Where writing in place is the only way: a FIFO, character or block
 * device, or socket; or a dangling symlink, whose target is created
 * through it. Return: 1 when @o was opened so, 0 for a regular file or a
 * new name, or -errno with @err set.
 */
static int open_in_place(struct out_file *o, const char *path, char *err, size_t len)
{
	struct stat st, lst;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->in_place = true;
		o->fd = S_ISSOCK(st.st_mode) ? open_socket(path) :
			open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (o->fd < 0)
			return seterr(err, len, S_ISSOCK(st.st_mode) ? -o->fd : errno, path, NULL);
		o->seekable = lseek(o->fd, 0, SEEK_CUR) >= 0 && S_ISBLK(st.st_mode);
		return 1;
	}
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && stat(path, &st) < 0) {
		o->in_place = true;
		o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (o->fd < 0)
			return seterr(err, len, errno, path, NULL);
		o->seekable = true;
		return 1;
	}
	return 0;
}

/*
 * A regular file (through any symlinks) or a new name: a temporary beside
 * the final file, with the final file's mode, renamed over it at commit.
 * Return: 0, or -errno with @err set.
 */
static int open_temp(struct out_file *o, const char *path, char *err, size_t len)
{
	char real[PATH_MAX];
	sigset_t fatal, old_mask;
	struct stat st;
	int rc, e;

	if (stat(path, &st) == 0) {
		if (!realpath(path, real))
			return seterr(err, len, errno, path, NULL);
		o->mode = st.st_mode & 07777;
		o->keep_mode = true;
	} else {
		snprintf(real, sizeof(real), "%s", path);
	}
	o->final = strdup(real);
	if (!o->final || asprintf(&o->tmp, "%s.tmp.XXXXXX", real) < 0) {
		o->tmp = NULL;
		return seterr(err, len, ENOMEM, path, NULL);
	}
	/* the fatal signals held from the file's creation until the handler
	 * knows its name (mkostemp makes it): one arriving between is
	 * handled after, and finds it */
	catch_fatal();
	sigemptyset(&fatal);
	for (size_t i = 0; i < ARRAY_SIZE(out_fatal_sigs); i++)
		sigaddset(&fatal, out_fatal_sigs[i]);
	pthread_sigmask(SIG_BLOCK, &fatal, &old_mask);
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	o->tmp_slot = o->fd >= 0 ? tmp_register(o->tmp) : -1;
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	if (o->fd < 0)
		return seterr(err, len, e, o->tmp, NULL);
	if (!o->keep_mode) {
		mode_t um = umask(0);

		umask(um);
		o->mode = 0666 & ~um;
	}
	if (fchmod(o->fd, o->mode) < 0) {
		rc = seterr(err, len, errno, o->tmp, NULL);
		unlink(o->tmp);
		tmp_unregister(o->tmp_slot);
		o->tmp_slot = -1;
		close(o->fd);
		return rc;
	}
	o->seekable = true;
	return 0;
}

/* Everything but the descriptor; @o is left closed (fd -1, no slot). */
static void out_free(struct out_file *o)
{
	tmp_unregister(o->tmp_slot);
	free(o->tmp);
	free(o->final);
	free(o->name);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->tmp_slot = -1;
}

int out_open(struct out_file *o, const char *path, char *err, size_t len)
{
	int rc;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->tmp_slot = -1;
	o->name = strdup(path);
	if (!o->name)
		return seterr(err, len, ENOMEM, path, NULL);
	if (!strcmp(path, "-")) {
		o->fd = STDOUT_FILENO;
		o->in_place = true;
		o->is_stdout = true;
		o->seekable = lseek(o->fd, 0, SEEK_CUR) >= 0;
		return 0;
	}
	rc = out_check(path, err, len);
	if (!rc)
		rc = open_in_place(o, path, err, len);
	if (!rc)
		rc = open_temp(o, path, err, len);
	if (rc >= 0)
		return 0;
	out_free(o);
	return rc;
}

int out_commit(struct out_file *o, char *err, size_t len)
{
	int rc = 0;

	if (o->is_stdout) {
		out_free(o);
		return 0;
	}
	if (o->fd >= 0 && close(o->fd) < 0)
		rc = seterr(err, len, errno, o->tmp ? o->tmp : o->name, "close");
	o->fd = -1;
	if (!rc && o->tmp && rename(o->tmp, o->final) < 0)
		rc = seterr(err, len, errno, o->final, "rename");
	if (rc && o->tmp)
		unlink(o->tmp);
	out_free(o);
	return rc;
}

void out_abort(struct out_file *o)
{
	if (!o->is_stdout && o->fd >= 0)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	out_free(o);
}

int out_write(struct out_file *o, const void *buf, size_t n, char *err, size_t len)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(o->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return seterr(err, len, errno, o->name, "write");
		if (w == 0)
			return seterr(err, len, EIO, o->name, "write");
		p += w;
		n -= (size_t)w;
	}
	return 0;
}
