// SPDX-License-Identifier: MIT
/*
 * A forged statistics segment, for test_statseg_foreign_file.sh: what
 * another local user (or a broken process) could put at
 * /dev/shm/uslab.<pid>, served by a fake agent so that a reader that takes
 * it prints what it says.
 *
 *	statseg_forge PATH PID [--uid UID] [--mode OCTAL] [--text STR]
 *		      [--name STR] [--truncate] [--hold-readers]
 *
 * The file gets a version-correct header for process PID (its start time
 * from /proc), STR as the slabinfo text and as the name of cache 0, and
 * the alive lock (lib/shmseg.h) and an flock, as a serving process holds.
 * Then it answers every request (done = request, the -w reported applied)
 * until killed; --truncate cuts the file to one page at the first request,
 * then answers it (and no more); --hold-readers takes the readers' lock (byte 1, and an flock)
 * and never answers. --uid: created as that user (run as root).
 * Prints "ready" once the file is in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "uslab/statseg.h"

static unsigned long long start_time(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		return 0;
	fclose(f);
	/* field 22; the fields after the name's ")" start at 3 */
	p = strrchr(buf, ')');
	if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			"%*d %*d %*d %*d %llu", &v) != 1)
		v = 0;
	return v;
}

int main(int argc, char **argv)
{
	const char *path, *text = "slabinfo - version: 2.1\nforged 1 1 1 1 1\n", *name = "forged";
	int pid, mode = 0600, truncate_it = 0, hold = 0, uid = -1, fd;
	struct uslab_statseg *s;
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };

	if (argc < 3) {
		fprintf(stderr, "usage: statseg_forge PATH PID [options]\n");
		return 2;
	}
	path = argv[1];
	pid = atoi(argv[2]);
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--uid") && i + 1 < argc)
			uid = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			mode = (int)strtol(argv[++i], NULL, 8);
		else if (!strcmp(argv[i], "--text") && i + 1 < argc)
			text = argv[++i];
		else if (!strcmp(argv[i], "--name") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--truncate"))
			truncate_it = 1;
		else if (!strcmp(argv[i], "--hold-readers"))
			hold = 1;
		else {
			fprintf(stderr, "statseg_forge: unknown %s\n", argv[i]);
			return 2;
		}
	}
	if (uid >= 0 && (setgid((gid_t)uid) || setuid((uid_t)uid))) {
		perror("statseg_forge: setuid");
		return 1;
	}
	umask(0);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
	if (fd < 0 || ftruncate(fd, sizeof(*s))) {
		fprintf(stderr, "statseg_forge: %s: %s\n", path, strerror(errno));
		return 1;
	}
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED)
		return 1;
	s->version = USLAB_STATSEG_VERSION;
	s->size = sizeof(*s);
	s->pid = pid;
	s->start_time = start_time(pid);
	snprintf(s->mode, sizeof(s->mode), "%s", name);
	snprintf(s->text, sizeof(s->text), "%s", text);
	s->text_len = (uint32_t)strlen(s->text);
	s->nr_caches = s->total_caches = 1;
	snprintf(s->caches[0].name, sizeof(s->caches[0].name), "%s", name);
	s->caches[0].num_objs = s->caches[0].active_objs = 1;
	s->caches[0].size = s->caches[0].object_size = 64;
	s->magic = USLAB_STATSEG_MAGIC;
	/* as a live process holds it: the alive lock, and an flock */
	fcntl(fd, F_OFD_SETLK, &fl);
	if (hold) {
		fl.l_type = F_WRLCK;
		fl.l_start = 1;
		fcntl(fd, F_OFD_SETLK, &fl);
		flock(fd, LOCK_EX);
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		uint32_t req = __atomic_load_n(&s->request, __ATOMIC_ACQUIRE);

		if (!hold && req != s->done) {
			if (truncate_it) {	/* cut, then answer: the reader copies */
				if (ftruncate(fd, 4096))
					return 1;
				__atomic_store_n(&s->done, req, __ATOMIC_RELEASE);
				pause();
			}
			s->cmd_result = 0;
			s->snaps++;
			__atomic_store_n(&s->done, req, __ATOMIC_RELEASE);
		}
		usleep(1000);
	}
}
