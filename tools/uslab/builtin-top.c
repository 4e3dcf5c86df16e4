// SPDX-License-Identifier: MIT
/*
 * uslab top -p PID [-d SECONDS] [-o] [-n FRAMES] [-s KEY]
 *
 * slabtop for a running process on libuslab (USLAB_OPTIONS=stats_shm): per
 * cache, objects, active objects, use, object size, magazine size, the
 * magazine hit rate and the refills and flushes per second over the last
 * interval, the memory the cache holds. Sort keys as slabtop's where they
 * exist: o objects, a active, s object size, c cache size, n name; and
 * h hit rate, r refills/s, f flushes/s. On a terminal the same letters
 * re-sort and q quits; otherwise frames follow one another (batch mode).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "tools/uslab/builtin.h"

struct top_row {
	const struct kmem_cache_stats *st;
	double hit, refills, flushes;	/* hit: 0..100, or NAN without operations */
	uint64_t cache_bytes;
};

static char top_sort = 'c';
static volatile sig_atomic_t top_stop;

static void top_on_signal(int sig)
{
	(void)sig;
	top_stop = 1;
}

static const struct kmem_cache_stats *top_prev_of(const struct uslab_statseg *prev,
						  const struct uslab_statseg *cur, uint32_t i)
{
	const char *name = cur->caches[i].name;

	if (!prev)
		return NULL;
	if (i < prev->nr_caches && !strcmp(prev->caches[i].name, name))
		return &prev->caches[i];
	for (uint32_t j = 0; j < prev->nr_caches; j++)
		if (!strcmp(prev->caches[j].name, name))
			return &prev->caches[j];
	return NULL;
}

static uint64_t top_delta(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : now;	/* a cache made anew: from zero */
}

static int top_cmp(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	double dx = 0, dy = 0;

	switch (top_sort) {
	case 'n':
		return strcmp(x->st->name, y->st->name);
	case 'o': dx = (double)x->st->num_objs; dy = (double)y->st->num_objs; break;
	case 'a': dx = (double)x->st->active_objs; dy = (double)y->st->active_objs; break;
	case 's': dx = x->st->object_size; dy = y->st->object_size; break;
	case 'h': dx = isnan(x->hit) ? -1 : x->hit; dy = isnan(y->hit) ? -1 : y->hit; break;
	case 'r': dx = x->refills; dy = y->refills; break;
	case 'f': dx = x->flushes; dy = y->flushes; break;
	default: dx = (double)x->cache_bytes; dy = (double)y->cache_bytes; break;
	}
	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->st->name, y->st->name);
}

static void top_size(char *buf, size_t len, double bytes)
{
	const char *u = "KMGT";
	int i = -1;

	bytes /= 1024;
	while (bytes >= 10000 && i < 3)
		bytes /= 1024, i++;
	snprintf(buf, len, "%.1f%c", bytes, i < 0 ? 'K' : u[i + 1]);
}

static int top_frame(FILE *out, pid_t pid, const struct uslab_statseg *prev,
		     const struct uslab_statseg *cur, struct top_row *rows, int max_rows)
{
	double dt = prev ? (double)(cur->snap_ns - prev->snap_ns) / 1e9 : 0;
	uint64_t act_objs = 0, objs = 0, act_bytes = 0, bytes = 0, slabs = 0;
	uint64_t hits = 0, ops = 0, grows = 0, shrinks = 0;
	bool counted = cur->flags & USLAB_STATSEG_F_COUNTED, any = false;
	bool adaptive = false;
	char s1[32], s2[32], mode[sizeof(cur->mode) * 4 + 1];
	uint32_t n = cur->nr_caches;

	for (uint32_t i = 0; i < n; i++) {
		const struct kmem_cache_stats *st = &cur->caches[i], *p = top_prev_of(prev, cur, i);
		uint64_t h = st->alloc_hits + st->free_hits, o = st->allocs + st->frees;
		uint64_t r = st->refills, f = st->flushes;

		if (p) {
			h = top_delta(h, p->alloc_hits + p->free_hits);
			o = top_delta(o, p->allocs + p->frees);
			r = top_delta(r, p->refills);
			f = top_delta(f, p->flushes);
		}
		rows[i].st = st;
		/* rseq-mode hits are counted only with CONFIG_PERCPU_HIT_STATS */
		if (!(st->flags & KMEM_CACHE_STATS_COUNTED))
			h = o = 0;
		else
			any = true;
		rows[i].hit = counted && o ? 100.0 * (double)h / (double)o : NAN;
		rows[i].refills = p && dt > 0 ? (double)r / dt : 0;
		rows[i].flushes = p && dt > 0 ? (double)f / dt : 0;
		rows[i].cache_bytes = st->num_objs * st->size;
		act_objs += st->active_objs;
		objs += st->num_objs;
		act_bytes += st->active_objs * st->size;
		bytes += rows[i].cache_bytes;
		slabs += st->nr_slabs;
		hits += h;
		ops += o;
		if (st->flags & KMEM_CACHE_STATS_ADAPTIVE) {
			adaptive = true;
			grows += st->grows;
			shrinks += st->shrinks;
		}
	}
	qsort(rows, n, sizeof(rows[0]), top_cmp);

	fprintf(out, " uslab top - pid %d, per-CPU mode %s, %u caches%s, %s\n", (int)pid,
		statseg_printable(cur->mode, mode, sizeof(mode)), cur->total_caches,
		cur->total_caches > n ? " (first shown)" : "",
		prev ? "rates over the last interval" : "counts since the process started");
	fprintf(out, " Active / Total Objects (%% used)    : %llu / %llu (%.1f%%)\n",
		(unsigned long long)act_objs, (unsigned long long)objs,
		objs ? 100.0 * (double)act_objs / (double)objs : 0.0);
	fprintf(out, " Slabs                              : %llu\n", (unsigned long long)slabs);
	top_size(s1, sizeof(s1), (double)act_bytes);
	top_size(s2, sizeof(s2), (double)bytes);
	fprintf(out, " Active / Total Size (%% used)       : %s / %s (%.1f%%)\n", s1, s2,
		bytes ? 100.0 * (double)act_bytes / (double)bytes : 0.0);
	if (counted && any && ops)
		fprintf(out, " Magazine hit rate                  : %.2f%% of %llu operations\n",
			100.0 * (double)hits / (double)ops, (unsigned long long)ops);
	else
		fprintf(out, " Magazine hit rate                  : %s\n",
			!counted ? "- (counters not compiled in: CONFIG_PERCPU_STATS)" :
			!any ? "- (rseq-mode hits not counted: CONFIG_PERCPU_HIT_STATS)" :
			"- (no operations)");
	if (adaptive)
		fprintf(out, " Adaptive magazines (since start)   : %llu grown, %llu shrunk; MAG = sizes in force, lo-hi over CPUs\n",
			(unsigned long long)grows, (unsigned long long)shrinks);
	fprintf(out, "\n%9s %9s %4s %8s %7s %7s %10s %10s %10s %s\n", "OBJS", "ACTIVE", "USE",
		"OBJ SIZE", "MAG", "HIT%", "REFILL/s", "FLUSH/s", "CACHE SIZE", "NAME");
	if (adaptive && max_rows > 1)
		max_rows--;	/* the adaptive line took one of the window's */
	for (uint32_t i = 0; i < n && (max_rows <= 0 || (int)i < max_rows); i++) {
		const struct kmem_cache_stats *st = rows[i].st;
		char hit[16], cs[32], mag[24], name[sizeof(st->name) * 4 + 1];

		if (isnan(rows[i].hit))
			snprintf(hit, sizeof(hit), "-");
		else
			snprintf(hit, sizeof(hit), "%.1f", rows[i].hit);
		top_size(cs, sizeof(cs), (double)rows[i].cache_bytes);
		if ((st->flags & KMEM_CACHE_STATS_ADAPTIVE) && st->mag_lo != st->mag_hi)
			snprintf(mag, sizeof(mag), "%u-%u", st->mag_lo, st->mag_hi);
		else
			snprintf(mag, sizeof(mag), "%u", (st->flags & KMEM_CACHE_STATS_ADAPTIVE) ?
				 st->mag_hi : st->limit);
		fprintf(out, "%9llu %9llu %3.0f%% %7.2fK %7s %7s %10.0f %10.0f %10s %s\n",
			(unsigned long long)st->num_objs, (unsigned long long)st->active_objs,
			st->num_objs ? 100.0 * (double)st->active_objs / (double)st->num_objs : 0.0,
			st->object_size / 1024.0, mag, hit, rows[i].refills,
			rows[i].flushes, cs, statseg_printable(st->name, name, sizeof(name)));
	}
	return fflush(out) ? -1 : 0;
}

/*
 * The cache rows that fit the terminal with the frame's other lines (the
 * title, four or five summary lines, a blank, the column header, and the
 * key line with its blank: 10; the adaptive magazines' line takes one more,
 * off the rows, in top_frame), as slabtop trims to the window; read each
 * frame, so a resize counts. At least one row.
 */
#define TOP_OTHER_LINES	10

static int top_window_rows(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_row)
		return 40;	/* a terminal that says no size: as before */
	return ws.ws_row > TOP_OTHER_LINES + 1 ? ws.ws_row - TOP_OTHER_LINES : 1;
}

static const char top_usage[] =
	"uslab top -p PID [-d SECONDS] [-o] [-n FRAMES] [-s KEY]\n"
	"  slabtop for a running process on uslab (started with USLAB_OPTIONS=stats_shm)\n"
	"  keys on a terminal: the sort letters, q quits";

static bool top_sort_key(int c)
{
	return c && strchr("coashrfn", c);
}

/* -s KEY: into top_sort. */
static const char *top_sort_opt(const struct cli_opt *opt, const char *arg)
{
	if (strlen(arg) != 1 || !top_sort_key(arg[0]))
		return "one of c o a s h r f n";
	top_sort = arg[0];
	return NULL;
}

/* The terminal unbuffered and silent, for keys; @saved to restore.
 * Return: whether stdin and stdout are a terminal that took it. */
static bool top_tty_raw(struct termios *saved)
{
	struct termios raw;

	if (!isatty(0) || !isatty(1) || tcgetattr(0, saved))
		return false;
	raw = *saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	tcsetattr(0, TCSANOW, &raw);
	return true;
}

static void top_sleep(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

/* Keys until the next refresh, @ms from now: q quits, a sort key
 * re-sorts and redraws at once. */
static void top_keys(int ms)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };

	while (ms > 0 && !top_stop) {
		struct timespec t0, t1;
		char k;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (poll(&pfd, 1, ms) > 0 && read(0, &k, 1) == 1) {
			if (k == 'q' || k == 'Q') {
				top_stop = 1;
				return;
			}
			if (top_sort_key(k)) {
				top_sort = k;
				return;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms -= (int)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	}
}

int cmd_top(int argc, char **argv)
{
	const char *cmd = "uslab top";
	struct uslab_statseg *snap[2] = { NULL, NULL };
	struct statseg_handle h;
	struct termios saved;
	struct top_row *rows = NULL;
	bool once = false, tty, have_prev = false;
	double delay = 2;
	unsigned long frames = 0, shown = 0;
	pid_t pid = 0;
	int first, ret = 1, cur = 0;
	const struct cli_opt opts[] = {
		OPT_STATSEG_PID(&pid, .flags = OPT_REQUIRED),
		OPT_DOUBLE('d', "delay", &delay, "SECONDS",
			   "refresh interval (default 2; -o waits one interval for the rates)",
			   0.05, 3600),
		OPT_BOOLEAN('o', "once", &once, "print one frame and exit"),
		OPT_ULONG('n', NULL, &frames, "FRAMES", "stop after FRAMES frames", 1, ULONG_MAX),
		OPT_CALLBACK('s', "sort", NULL, "KEY",
			     "sort: c cache size (default), o objects, a active, s object size,\n"
			     "h hit rate, r refills/s, f flushes/s, n name", top_sort_opt),
		OPT_END(),
	};

	first = parse_options(argc, argv, opts, top_usage,
			      PARSE_OPT_STOP_AT_NON_OPTION | PARSE_OPT_NO_OPERAND);
	if (first <= 0)
		return -first;
	if (once)
		frames = 1;
	snap[0] = malloc(sizeof(*snap[0]));
	snap[1] = malloc(sizeof(*snap[1]));
	rows = calloc(USLAB_STATSEG_CACHES, sizeof(*rows));
	if (!snap[0] || !snap[1] || !rows) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		goto out_free;
	}
	signal(SIGINT, top_on_signal);
	signal(SIGTERM, top_on_signal);
	if (statseg_open(cmd, pid, &h))
		goto out_free;
	h.stop = &top_stop;	/* SIGINT, SIGTERM during a wait: a normal end */
	tty = !once && top_tty_raw(&saved);

	/* -o: the first snapshot is only the base of the rates */
	if (once) {
		if (statseg_snapshot(&h, NULL, NULL, snap[0])) {
			ret = top_stop ? 0 : 1;
			goto out_close;
		}
		have_prev = true;
		cur = 1;
		top_sleep(delay);
	}
	while (!top_stop) {
		if (statseg_snapshot(&h, NULL, NULL, snap[cur])) {
			ret = top_stop ? 0 : 1;
			goto out_close;
		}
		if (tty)
			fputs("\033[H\033[2J", stdout);
		else if (shown)
			fputc('\n', stdout);
		if (top_frame(stdout, pid, have_prev ? snap[cur ^ 1] : NULL, snap[cur], rows,
			      tty ? top_window_rows() : 0)) {
			fprintf(stderr, "%s: write: %s\n", cmd, strerror(errno));
			goto out_close;
		}
		if (tty)
			fputs("\n (sort: c o a s h r f n; q quits)", stdout), fflush(stdout);
		have_prev = true;
		cur ^= 1;
		if (frames && ++shown >= frames)
			break;
		if (tty)
			top_keys((int)(delay * 1000));
		else
			top_sleep(delay);
	}
	ret = 0;
out_close:
	if (tty) {
		tcsetattr(0, TCSANOW, &saved);
		fputc('\n', stdout);
	}
	statseg_close(&h);
out_free:
	free(rows);
	free(snap[0]);
	free(snap[1]);
	return ret;
}
