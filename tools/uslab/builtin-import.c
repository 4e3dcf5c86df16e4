// SPDX-License-Identifier: MIT
/*
 * `uslab import FORMAT INPUT -o TRACE`: text logs of other tools to a trace.
 * The trace is written to TRACE.tmp and renamed only when the whole input
 * parsed; on any error nothing is left behind. No locks.
 *
 * perf: each task is known only at its first event, and a process table
 * wants each process's threads numbered together, so the events go to a
 * scratch trace first (thread numbers in order of appearance) and are then
 * copied into the trace behind the process table, renumbered; the named
 * caches are added in the order the importer met them, so their ids stay.
 * The header says the processes share one heap (TRACE_HDR_ONE_HEAP).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tools/uslab/builtin.h"

static const struct {
	const char *name;
	int (*fn)(FILE *in, const char *name, const struct import_sink *sink,
		  struct import_result *res);
	const char *what;
} formats[] = {
	{ "mtrace", import_mtrace, "glibc mtrace log (MALLOC_TRACE)" },
	{ "perf", import_perf, "perf script output of kmem:* tracepoints" },
};

/* What the perf import keeps beside the events: each task (by dense
 * thread number) and each named cache, in the order met. */
struct imp_task {
	uint64_t pid, task;
	uint64_t events, allocs;
	char comm[17];
	uint32_t proc;		/* its process's entry */
	uint32_t new_tid;	/* its number in the final trace */
};
struct imp {
	struct trace_writer *w;
	struct imp_task *tasks;
	uint32_t ntasks;
	uint64_t tasks_cap;
	struct { char *name; uint64_t size; } *caches;
	uint32_t ncaches;
	uint64_t caches_cap;
	struct hmap named;	/* event index -> cache, named by its free */
};

static int imp_cache_of(void *ctx, uint64_t event, uint32_t cache)
{
	struct imp *im = ctx;

	return hmap_insert(&im->named, event, cache);
}

static int imp_emit(void *ctx, const struct trace_event *ev)
{
	struct imp *im = ctx;

	if (ev->tid < im->ntasks) {
		im->tasks[ev->tid].events++;
		im->tasks[ev->tid].allocs += trace_op_is_alloc(ev->op) || ev->op == TRACE_OP_REALLOC;
	}
	return trace_writer_add(im->w, ev);
}

static int imp_cache(void *ctx, const char *name, uint64_t size, uint32_t *id)
{
	struct imp *im = ctx;
	int rc;

	rc = grow_array((void **)&im->caches, &im->caches_cap, im->ncaches + 1,
			sizeof(*im->caches), TRACE_CACHES_MAX);
	if (rc)
		return rc == -E2BIG ? -EINVAL : rc;
	rc = trace_writer_add_cache(im->w, name, size, id);
	if (rc)
		return rc;
	im->caches[im->ncaches].name = strdup(name);
	im->caches[im->ncaches].size = size;
	return im->caches[im->ncaches++].name ? 0 : -ENOMEM;
}

static int imp_task(void *ctx, uint32_t tid, uint64_t pid, uint64_t task, const char *comm)
{
	struct imp *im = ctx;

	if (tid != im->ntasks)		/* dense, in order: the importer's promise */
		return -EINVAL;
	if (grow_array((void **)&im->tasks, &im->tasks_cap, (uint64_t)tid + 1,
		       sizeof(*im->tasks), UINT32_MAX))
		return -ENOMEM;
	im->tasks[tid] = (struct imp_task){ .pid = pid ? pid : task, .task = task };
	snprintf(im->tasks[tid].comm, sizeof(im->tasks[tid].comm), "%s", comm);
	im->ntasks++;
	return 0;
}

static void imp_free(struct imp *im)
{
	hmap_destroy(&im->named);
	for (uint32_t i = 0; i < im->ncaches; i++)
		free(im->caches[i].name);
	free(im->caches);
	free(im->tasks);
}

/*
 * The process table of the tasks met: one process per pid, in order of
 * first appearance, its threads numbered together (tasks[].new_tid).
 * Return: the entries (free them), NULL with *@n = 0 when there are more
 * processes than a table holds (said), or NULL for no memory (*@n = 1).
 */
static struct trace_proc *imp_procs(struct imp *im, uint32_t *n)
{
	struct trace_proc *procs;
	struct hmap by_pid;
	uint32_t np = 0, next = 0;

	*n = 1;
	hmap_init(&by_pid);
	procs = calloc(im->ntasks ? im->ntasks : 1, sizeof(*procs));
	if (!procs)
		goto out;
	for (uint32_t t = 0; t < im->ntasks; t++) {
		struct imp_task *k = &im->tasks[t];
		uint64_t *v = hmap_find(&by_pid, k->pid);

		if (!v) {
			if (np == TRACE_PROCS_MAX || hmap_insert(&by_pid, k->pid, np)) {
				*n = np == TRACE_PROCS_MAX ? 0 : 1;
				free(procs);
				procs = NULL;
				goto out;
			}
			procs[np] = (struct trace_proc){ .pid = (uint32_t)k->pid,
				.parent = -1, .exec_from = -1 };
			snprintf(procs[np].comm, sizeof(procs[np].comm), "%s", k->comm);
			k->proc = np++;
		} else {
			k->proc = (uint32_t)*v;
		}
		procs[k->proc].nthreads++;
		procs[k->proc].events += k->events;
		procs[k->proc].allocs += k->allocs;
		if (k->task == k->pid)	/* the main thread's name is the process's */
			snprintf(procs[k->proc].comm, sizeof(procs[k->proc].comm), "%s", k->comm);
	}
	for (uint32_t i = 0; i < np; i++) {
		procs[i].first_tid = next;
		next += procs[i].nthreads;
		procs[i].nthreads = 0;	/* counted again below as tids are given */
	}
	for (uint32_t t = 0; t < im->ntasks; t++) {
		struct trace_proc *pr = &procs[im->tasks[t].proc];

		im->tasks[t].new_tid = pr->first_tid + pr->nthreads++;
	}
	*n = np;
out:
	hmap_destroy(&by_pid);
	return procs;
}

/*
 * The scratch trace at @scratch copied to @w behind the process table and
 * the caches, each event's thread renumbered. Return: 0, or 1 (said).
 */
static int imp_copy(struct imp *im, struct trace_writer *w, const char *scratch,
		    const struct trace_proc *procs, uint32_t np)
{
	struct trace_reader *r = NULL;
	struct trace_event ev;
	uint32_t id;
	int rc;

	rc = np ? trace_writer_set_procs(w, procs, np) : 0;
	for (uint32_t i = 0; !rc && i < im->ncaches; i++)
		rc = trace_writer_add_cache(w, im->caches[i].name, im->caches[i].size, &id);
	if (rc) {
		fprintf(stderr, "uslab import: %s\n", rc == -ENOMEM ? "out of memory" :
			trace_writer_error(w));
		return 1;
	}
	rc = trace_reader_open(&r, scratch);
	while (!rc && (rc = trace_reader_next(r, &ev)) == 1) {
		if (np && ev.tid < im->ntasks)
			ev.tid = im->tasks[ev.tid].new_tid;
		if (ev.op == TRACE_OP_CACHE_ALLOC && !ev.cache) {
			const uint64_t *c = hmap_find(&im->named, trace_reader_position(r) - 1);

			ev.cache = c ? (uint32_t)*c : 0;
		}
		rc = trace_writer_add(w, &ev);
	}
	if (rc < 0) {
		fprintf(stderr, "uslab import: %s\n", rc == -EINVAL ? trace_writer_error(w) :
			r ? trace_reader_error(r) : strerror(-rc));
		trace_reader_close(r);
		return 1;
	}
	trace_reader_close(r);
	return 0;
}

static const char import_usage[] =
	"uslab import FORMAT INPUT -o TRACE   (TRACE - : standard output)\n"
	"  FORMAT  mtrace: glibc mtrace log (MALLOC_TRACE=FILE with libc_malloc_debug.so)\n"
	"          perf:   'perf script' text of kmem:kmalloc, kmem:kfree,\n"
	"                  kmem:kmem_cache_alloc, kmem:kmem_cache_free\n"
	"  INPUT   a file, or - for standard input";

int cmd_import(int argc, char **argv)
{
	struct trace_meta meta = { .cpus = 0, .clock_id = 0 };
	struct import_result res;
	struct trace_writer *w;
	const char *out = NULL, *in_name;
	char cmdline[1024];
	FILE *in;
	int first, rc, fmt = -1;
	bool quiet = false;
	struct imp im = { 0 };
	const struct import_sink sink = { .emit = imp_emit, .cache = imp_cache,
					  .cache_of = imp_cache_of, .task = imp_task,
					  .ctx = &im };
	char scratch[4096];
	uint32_t np = 0, nprocs = 0;
	const struct cli_opt opts[] = {
		OPT_STRING('o', "output", &out, "TRACE", "the trace to write", .flags = OPT_REQUIRED),
		OPT_BOOLEAN('q', NULL, &quiet, "no summary on stderr"),
		OPT_END(),
	};

	first = parse_options(argc, argv, opts, import_usage, 0);
	if (first <= 0)
		return -first;
	if (first + 2 != argc)
		return usage_error(opts, import_usage, "expected FORMAT and INPUT");
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (!strcmp(argv[first], formats[i].name))
			fmt = (int)i;
	if (fmt < 0)
		return usage_error(opts, import_usage, "unknown format '%s' (mtrace, perf)",
				   argv[first]);
	in_name = argv[first + 1];
	hmap_init(&im.named);
	in = strcmp(in_name, "-") ? fopen(in_name, "re") : stdin;
	if (!in) {
		fprintf(stderr, "uslab import: %s: %s\n", in_name, strerror(errno));
		return 1;
	}
	snprintf(meta.tool, sizeof(meta.tool), "import %s", formats[fmt].name);
	meta.clock_id = formats[fmt].fn == import_mtrace ? TRACE_CLOCK_NONE : CLOCK_MONOTONIC;
	snprintf(cmdline, sizeof(cmdline), "%s", in_name);
	meta.cmdline = cmdline;
	if (formats[fmt].fn == import_perf) {
		const char *tmp = getenv("TMPDIR");
		char err[512];

		if (out_check(out, err, sizeof(err))) {	/* before the whole input is read */
			fprintf(stderr, "uslab import: %s\n", err);
			if (in != stdin)
				fclose(in);
			return 1;
		}

		/* the scratch trace: events in order of appearance (see top) */
		snprintf(scratch, sizeof(scratch), "%s/uslab-import-%d.ustr",
			 tmp && *tmp ? tmp : "/tmp", (int)getpid());
		rc = trace_writer_open(&w, scratch, &meta, 1);
	} else {
		rc = trace_writer_open(&w, out, &meta, 0);
	}
	if (rc) {		/* the writer said why */
		if (in != stdin)
			fclose(in);
		return 1;
	}
	im.w = w;
	rc = formats[fmt].fn(in, in_name, &sink, &res);
	if (in != stdin)
		fclose(in);
	if (rc) {
		fprintf(stderr, "uslab import: %s\n", rc == -EINVAL ? trace_writer_error(w) :
			rc == -EPROTO ? res.err : strerror(-rc));
		trace_writer_abort(w);
		imp_free(&im);
		return 1;
	}
	trace_writer_set_cpus_pid(w, res.cpus, res.pid);
	rc = trace_writer_close(w);
	if (rc) {
		imp_free(&im);
		return 1;
	}
	if (formats[fmt].fn == import_perf) {
		struct trace_proc *procs = imp_procs(&im, &np);

		if (!procs && np) {
			fprintf(stderr, "uslab import: out of memory\n");
			unlink(scratch);
			imp_free(&im);
			return 1;
		}
		if (!procs)
			fprintf(stderr, "uslab import: warning: more than %u processes: "
				"no process table (every event one process)\n", TRACE_PROCS_MAX);
		meta.flags = procs ? TRACE_HDR_ONE_HEAP : 0;
		meta.pid = res.pid;
		meta.cpus = res.cpus;
		rc = trace_writer_open(&w, out, &meta, 0);
		if (!rc) {
			rc = imp_copy(&im, w, scratch, procs, np);
			if (rc)
				trace_writer_abort(w);
			else
				rc = trace_writer_close(w) ? 1 : 0;
		}
		unlink(scratch);
		free(procs);
		nprocs = procs ? np : 0;
		if (rc) {
			imp_free(&im);
			return 1;
		}
	}
	if (!quiet) {
		fprintf(stderr, "uslab import: %s: %" PRIu64 " lines, %" PRIu64
			" events, %" PRIu64 " lines skipped -> %s\n", in_name,
			res.lines, res.events, res.skipped, out);
		if (formats[fmt].fn == import_perf)
			fprintf(stderr, "uslab import:   %u processes (%u tasks), one heap; "
				"%u named caches\n", nprocs, im.ntasks, im.ncaches);
		/* which and why (a skipped line is never an error) */
		if (res.skipped_early)
			fprintf(stderr, "uslab import:   %" PRIu64 " frees of objects allocated "
				"before the input began (no allocation to match), the first "
				"at line %" PRIu64 "\n", res.skipped_early, res.first_early);
		for (uint32_t k = 0; k < res.nskipped_kinds; k++)
			fprintf(stderr, "uslab import:   %" PRIu64 " %s events (not an "
				"allocator event), the first at line %" PRIu64 "\n",
				res.skipped_kinds[k].n, res.skipped_kinds[k].name,
				res.skipped_kinds[k].first_line);
		if (res.skipped_kinds_more)
			fprintf(stderr, "uslab import:   %" PRIu64 " events of other kinds "
				"(not allocator events)\n", res.skipped_kinds_more);
	}
	imp_free(&im);
	return 0;
}
