// SPDX-License-Identifier: MIT
/*
 * Trace format: writer -> reader round trips (random events against the
 * array they came from, several chunks), the trailer summary, and damage:
 * truncation and flipped bytes must give -EPROTO with the offset named.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "trace/internal.h"
#include "tests/suite.h"
#include "tests/testutil.h"

static char path[256];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/check_trace.%d.ustr", getpid());
}

static void teardown(void)
{
	unlink(path);
}

static uint64_t rnd_state;

static uint64_t xrnd(void)
{
	return xorshift64(&rnd_state);
}

static struct trace_event *make_events(size_t n, uint64_t seed)
{
	struct trace_event *ev = calloc(n, sizeof(*ev));
	uint64_t t = 0;

	rnd_state = seed;
	for (size_t i = 0; i < n; i++) {
		unsigned int op = xrnd() % TRACE_OP_NR;

		t += xrnd() % 3 ? xrnd() % 1000 : 0;
		ev[i].op = (uint8_t)op;
		ev[i].time_ns = t;
		ev[i].tid = xrnd() % 4 ? (uint32_t)(xrnd() % 8) : (uint32_t)(xrnd() % 100000);
		ev[i].cpu = xrnd() % 10 ? (uint32_t)(xrnd() % 4) : TRACE_CPU_UNKNOWN;
		ev[i].id = xrnd() % 5 ? xrnd() % 5000 : xrnd() >> 2;
		if (op == TRACE_OP_REALLOC)
			ev[i].old_id = xrnd() % 5000;
		if (trace_op_has_size(op))
			ev[i].size = xrnd() % 7 ? xrnd() % 4096 : xrnd();
		if (trace_op_has_align(op))
			ev[i].align = 1ull << (xrnd() % 16);
	}
	return ev;
}

static void write_trace(const struct trace_event *ev, size_t n)
{
	struct trace_meta m = { .cpus = 4, .clock_id = 1, .pid = 42,
				.start_ns = 123456789, .cmdline = "prog --arg" };
	struct trace_writer *w;

	strcpy(m.tool, "check_trace");
	ck_assert_int_eq(trace_writer_open(&w, path, &m, 1), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(trace_writer_add(w, &ev[i]), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
}

TEST_LOOP(format, roundtrip, 0, 2)
{
	/* Enough events for several 1 MiB chunks. */
	size_t n = 600000;
	struct trace_event *ev = make_events(n, 0x9e3779b97f4a7c15ull + (uint64_t)_i);
	struct trace_reader *r;
	struct trace_event got;
	const struct trace_meta *m;
	uint64_t maxid = 0;
	uint32_t maxtid = 0;
	size_t i;

	write_trace(ev, n);
	ck_assert_int_eq(trace_reader_open(&r, path), 0);
	m = trace_reader_meta(r);
	ck_assert_str_eq(m->cmdline, "prog --arg");
	ck_assert_str_eq(m->tool, "check_trace");
	ck_assert_uint_eq(m->pid, 42);
	ck_assert_uint_eq(m->cpus, 4);
	ck_assert(m->has_summary);
	ck_assert_uint_eq(m->nevents, n);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(trace_reader_next(r, &got), 1);
		/* One comparison per field; ck_assert per field is slow here. */
		if (got.op != ev[i].op || got.time_ns != ev[i].time_ns ||
		    got.tid != ev[i].tid || got.cpu != ev[i].cpu ||
		    got.id != ev[i].id || got.old_id != ev[i].old_id ||
		    got.size != ev[i].size || got.align != ev[i].align)
			ck_abort_msg("event %zu differs: op %u/%u time %llu/%llu id %llu/%llu",
				     i, got.op, ev[i].op,
				     (unsigned long long)got.time_ns,
				     (unsigned long long)ev[i].time_ns,
				     (unsigned long long)got.id,
				     (unsigned long long)ev[i].id);
		maxid = ev[i].id > maxid ? ev[i].id : maxid;
		maxid = ev[i].old_id > maxid ? ev[i].old_id : maxid;
		maxtid = ev[i].tid > maxtid ? ev[i].tid : maxtid;
	}
	ck_assert_int_eq(trace_reader_next(r, &got), 0);
	ck_assert_int_eq(trace_reader_next(r, &got), 0);
	ck_assert_uint_eq(m->id_space, maxid + 1);
	ck_assert_uint_eq(m->nthreads, maxtid + 1);
	ck_assert_uint_eq(m->duration_ns, ev[n - 1].time_ns);
	trace_reader_close(r);
	free(ev);
}
END_TEST

TEST(format, empty_trace)
{
	struct trace_reader *r;
	struct trace_event got;

	write_trace(NULL, 0);
	ck_assert_int_eq(trace_reader_open(&r, path), 0);
	ck_assert_int_eq(trace_reader_next(r, &got), 0);
	ck_assert_uint_eq(trace_reader_meta(r)->nevents, 0);
	trace_reader_close(r);
}
END_TEST

TEST(format, writer_rejects_bad_events)
{
	struct trace_meta m = { 0 };
	struct trace_writer *w;
	struct trace_event ev = { .op = TRACE_OP_MALLOC, .time_ns = 10, .id = 1 };
	struct stat st;

	ck_assert_int_eq(trace_writer_open(&w, path, &m, 0), 0);
	ck_assert_int_eq(trace_writer_add(w, &ev), 0);
	ev.time_ns = 5;
	ck_assert_int_eq(trace_writer_add(w, &ev), -EINVAL);
	ev.time_ns = 10;
	ev.op = TRACE_OP_NR;
	ck_assert_int_eq(trace_writer_add(w, &ev), -EINVAL);
	ev.op = TRACE_OP_FREE;
	ev.id = TRACE_ID_LIMIT;
	ck_assert_int_eq(trace_writer_add(w, &ev), -EINVAL);
	trace_writer_abort(w);
	/* Neither the trace nor its temporary file is left behind. */
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_int_eq(access("/tmp/check_trace.tmp", F_OK), -1);
}
END_TEST

static size_t file_size(void)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (size_t)st.st_size;
}

/* Reads the whole trace; returns the first error (or 0) and the message. */
static int read_all(FILE *f, char *msg, size_t len)
{
	struct trace_reader *r;
	struct trace_event ev;
	int rc = trace_reader_open_file(&r, f, "t");

	while (!rc) {
		rc = trace_reader_next(r, &ev);
		if (rc == 1)
			rc = 0;
		else
			break;
	}
	snprintf(msg, len, "%s", trace_reader_error(r));
	trace_reader_close(r);
	return rc;
}

static uint8_t *load(size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;

	*len = file_size();
	buf = malloc(*len);
	ck_assert_uint_eq(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

/* @n events (generator seed @seed) written as a trace, its bytes in memory. */
static uint8_t *trace_bytes(size_t n, uint64_t seed, size_t *len)
{
	struct trace_event *ev = make_events(n, seed);

	write_trace(ev, n);
	free(ev);
	return load(len);
}

TEST(format, truncated_everywhere)
{
	char msg[1024];
	size_t len, step;
	uint8_t *buf = trace_bytes(300000, 7, &len);

	step = len / 150 + 1;
	/* Every cut point in the header and trailer, a spread elsewhere. */
	for (size_t cut = 0; cut < len; cut += cut < 200 || cut > len - 100 ? 1 : step) {
		FILE *f = fmemopen(buf, cut, "rb");
		int rc;

		if (!cut) {
			f = fopen("/dev/null", "rb");
		}
		rc = read_all(f, msg, sizeof(msg));
		fclose(f);
		ck_assert_msg(rc == -EPROTO, "cut at %zu: rc %d (%s)", cut, rc, msg);
		ck_assert_msg(strstr(msg, "byte offset "), "cut %zu: %s", cut, msg);
	}
	free(buf);
}
END_TEST

/* Byte @at of the trace in @buf flipped (its lowest and highest bit, in
 * turn): the reader must refuse it, naming a byte offset. */
static void expect_flips_caught(uint8_t *buf, size_t len, size_t at)
{
	char msg[1024];

	for (int bit = 0; bit < 8; bit += 7) {
		FILE *f;
		int rc;

		buf[at] ^= (uint8_t)(1u << bit);
		f = fmemopen(buf, len, "rb");
		rc = read_all(f, msg, sizeof(msg));
		fclose(f);
		buf[at] ^= (uint8_t)(1u << bit);
		ck_assert_msg(rc == -EPROTO, "flip %zu.%d: rc %d (%s)", at, bit, rc, msg);
		ck_assert_msg(strstr(msg, "byte offset "), "flip %zu: %s", at, msg);
	}
}

TEST(format, flipped_bytes_everywhere)
{
	size_t len;
	uint8_t *buf = trace_bytes(200000, 11, &len);
	size_t step = len / 150 + 1;

	for (size_t at = 0; at < len; at += at < 200 || at > len - 100 ? 1 : step)
		expect_flips_caught(buf, len, at);
	free(buf);
}
END_TEST

TEST(format, foreign_files)
{
	static const char *const junk[] = {
		"hello world, this is not a trace at all\n",
		"USLABTRC",			/* magic only */
		"\x7f" "ELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00",
		"",
	};
	char msg[1024];

	for (size_t i = 0; i < ARRAY_SIZE(junk); i++) {
		size_t n = strlen(junk[i]);
		FILE *f = n ? fmemopen((void *)junk[i], n, "rb") : fopen("/dev/null", "rb");
		int rc = read_all(f, msg, sizeof(msg));

		fclose(f);
		ck_assert_int_eq(rc, -EPROTO);
		ck_assert_msg(strstr(msg, "byte offset 0") || strstr(msg, "byte offset 8"),
			      "%zu: %s", i, msg);
	}
}
END_TEST

TEST(format, varint_limits)
{
	uint8_t buf[16], *e;
	const uint8_t *p;
	uint64_t v;
	static const uint64_t vals[] = { 0, 1, 127, 128, 16383, 16384,
					 UINT32_MAX, UINT64_MAX - 1, UINT64_MAX };

	for (size_t i = 0; i < ARRAY_SIZE(vals); i++) {
		e = put_varint(buf, vals[i]);
		p = buf;
		ck_assert_int_eq(get_varint(&p, e, &v), 0);
		ck_assert_uint_eq(v, vals[i]);
		ck_assert_ptr_eq(p, e);
		p = buf;	/* one byte short */
		ck_assert_int_eq(get_varint(&p, e - 1, &v), -1);
	}
	/* 11 continuation bytes, and a 10th byte overflowing 64 bits. */
	memset(buf, 0xff, sizeof(buf));
	p = buf;
	ck_assert_int_eq(get_varint(&p, buf + 16, &v), -1);
	buf[9] = 0x02;
	p = buf;
	ck_assert_int_eq(get_varint(&p, buf + 16, &v), -1);
	ck_assert_int_eq(unzigzag(zigzag(INT64_MIN)), INT64_MIN);
	ck_assert_int_eq(unzigzag(zigzag(-5)), -5);
}
END_TEST

/* Format 1.1: a process table, a stack table and an object map round-trip;
 * selecting a process returns its events alone, its tids from 0; every
 * flipped byte in the records is caught with its offset. */
static void write_procs_trace(void)
{
	static const uint64_t f0[] = { 0x401000, 0x401200, 0x7f0000001000 };
	static const uint64_t f1[] = { 0x555500001234 };
	struct trace_proc procs[3] = {
		{ .pid = 100, .ppid = 1, .parent = -1, .exec_from = -1, .first_tid = 0,
		  .nthreads = 2, .events = 0, .comm = "sh", .exe = (char *)"/bin/sh",
		  .cmdline = (char *)"sh -c x" },
		{ .pid = 100, .ppid = 1, .parent = -1, .exec_from = 0, .first_tid = 2,
		  .nthreads = 1, .comm = "prog", .exe = (char *)"/usr/bin/prog",
		  .cmdline = (char *)"prog" },
		{ .pid = 101, .ppid = 100, .parent = 1, .exec_from = -1, .nthreads = 0,
		  .flags = TRACE_PROC_UNRECORDED, .comm = "static", .exe = (char *)"/s",
		  .cmdline = (char *)"/s" },
	};
	struct trace_stack st[2] = {
		{ .proc = 0, .nframes = 3, .frames = f0 },
		{ .proc = 1, .nframes = 1, .frames = f1 },
	};
	struct trace_object obj[1] = {
		{ .proc = 1, .start = 0x555500000000, .end = 0x555500010000, .offset = 0x1000,
		  .path = "/usr/bin/prog" },
	};
	struct trace_meta m = { .clock_id = 1, .cmdline = (char *)"sh -c x" };
	struct trace_writer *w;
	struct trace_event ev = { .op = TRACE_OP_MALLOC, .size = 8 };

	/* events: tid 0,1 (sh) and 2 (prog), counted into the table */
	procs[0].events = 40;
	procs[0].allocs = 40;
	procs[1].events = 60;
	procs[1].allocs = 60;
	ck_assert_int_eq(trace_writer_open(&w, path, &m, 0), 0);
	ck_assert_int_eq(trace_writer_set_procs(w, procs, 3), 0);
	ck_assert_int_eq(trace_writer_set_stacks(w, st, 2), 0);
	ck_assert_int_eq(trace_writer_set_objects(w, obj, 1), 0);
	for (int i = 0; i < 100; i++) {
		ev.time_ns = (uint64_t)i;
		ev.id = (uint64_t)i + 1;
		ev.tid = i < 40 ? (uint32_t)(i % 2) : 2;
		ev.stack = i < 40 ? 1 : 2;
		ck_assert_int_eq(trace_writer_add(w, &ev), 0);
	}
	/* a stack id beyond the table is refused */
	ev.stack = 3;
	ck_assert_int_eq(trace_writer_add(w, &ev), -EINVAL);
	ck_assert_int_eq(trace_writer_close(w), 0);
}

/*
 * Named caches (format 1.2): entries added while events are written (a
 * table record before the chunk that first names them), the cache ids of
 * every chunk's kmem_cache_alloc events back as written over many chunks,
 * and the writer's bounds.
 */
TEST(format, named_caches_roundtrip)
{
	struct trace_meta m = { 0 };
	struct trace_writer *w;
	struct trace_reader *r;
	const struct trace_meta *rm;
	struct trace_event ev = { 0 }, got;
	const size_t n = 700000;	/* about five chunks */
	uint32_t id1, id2, id3;
	char big[TRACE_CACHE_NAME_MAX + 2];
	size_t i;
	int rc;

	ck_assert_int_eq(trace_writer_open(&w, path, &m, 1), 0);
	ck_assert_int_eq(trace_writer_add_cache(w, "filp", 232, &id1), 0);
	ck_assert_int_eq(trace_writer_add_cache(w, "dentry", 192, &id2), 0);
	ck_assert_uint_eq(id1, 1);
	ck_assert_uint_eq(id2, 2);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	ck_assert_int_eq(trace_writer_add_cache(w, big, 8, &id3), -EINVAL);
	ck_assert_int_eq(trace_writer_add_cache(w, "", 8, &id3), -EINVAL);
	ck_assert_int_eq(trace_writer_add_cache(w, "zero", 0, &id3), -EINVAL);
	for (i = 0; i < n; i++) {
		ev.time_ns = i;
		ev.id = i % 1000 + 1;
		ev.op = i % 3 ? TRACE_OP_CACHE_ALLOC : TRACE_OP_KMALLOC;
		ev.size = 100;
		ev.cache = ev.op == TRACE_OP_CACHE_ALLOC ? (uint32_t)(i % (i < n / 2 ? 3 : 4)) : 0;
		if (i == n / 2)		/* a third cache, met halfway */
			ck_assert_int_eq(trace_writer_add_cache(w, "names_cache", 4096, &id3), 0);
		ck_assert_int_eq(trace_writer_add(w, &ev), 0);
	}
	/* a cache id on another op, or beyond the table, is refused */
	ev.op = TRACE_OP_KMALLOC;
	ev.cache = 1;
	ck_assert_int_eq(trace_writer_add(w, &ev), -EINVAL);
	ev.op = TRACE_OP_CACHE_ALLOC;
	ev.cache = 4;
	ck_assert_int_eq(trace_writer_add(w, &ev), -EINVAL);
	ck_assert_int_eq(trace_writer_close(w), 0);

	ck_assert_int_eq(trace_reader_open(&r, path), 0);
	rm = trace_reader_meta(r);
	ck_assert_uint_eq(rm->ncaches, 2);	/* the third comes later */
	ck_assert_str_eq(rm->caches[0].name, "filp");
	ck_assert_uint_eq(rm->caches[1].size, 192);
	for (i = 0; (rc = trace_reader_next(r, &got)) == 1; i++) {
		uint32_t want = got.op == TRACE_OP_CACHE_ALLOC ?
			(uint32_t)(i % (i < n / 2 ? 3 : 4)) : 0;

		if (got.cache != want)
			ck_abort_msg("event %zu: cache %u, wrote %u", i, got.cache, want);
		ck_assert_uint_le(got.cache, rm->ncaches);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(i, n);
	ck_assert_uint_eq(rm->ncaches, 3);
	ck_assert_str_eq(rm->caches[2].name, "names_cache");
	ck_assert_uint_eq(rm->caches[2].size, 4096);
	trace_reader_close(r);
}

TEST(format, procs_stacks_roundtrip)
{
	struct trace_reader *r;
	const struct trace_meta *m;
	struct trace_event ev;
	char why[256];
	int n = 0, rc;

	write_procs_trace();
	ck_assert_int_eq(trace_reader_open(&r, path), 0);
	m = trace_reader_meta(r);
	ck_assert_uint_eq(m->version_minor, TRACE_FORMAT_MINOR);
	ck_assert_uint_eq(m->nprocs, 3);
	ck_assert_str_eq(m->procs[1].comm, "prog");
	ck_assert_str_eq(m->procs[1].exe, "/usr/bin/prog");
	ck_assert_int_eq(m->procs[1].exec_from, 0);
	ck_assert_int_eq(m->procs[2].parent, 1);
	ck_assert_uint_eq(m->procs[2].flags, TRACE_PROC_UNRECORDED);
	ck_assert_uint_eq(m->nstacks, 2);
	/* the tables are checked at open, decoded on demand */
	ck_assert_ptr_null(m->stacks);
	ck_assert_ptr_null(m->objects);
	{	/* one at a time, before and alike after the whole table */
		uint64_t frames[TRACE_STACK_MAX];
		struct trace_stack one;

		ck_assert_int_eq(trace_reader_stack(r, 1, &one, frames), 0);
		ck_assert_uint_eq(one.nframes, 3);
		ck_assert_uint_eq(one.frames[2], 0x7f0000001000);
		ck_assert_int_eq(trace_reader_stack(r, 0, &one, frames), -EINVAL);
		ck_assert_int_eq(trace_reader_stack(r, 3, &one, frames), -EINVAL);
		ck_assert_int_eq(trace_reader_load_stacks(r), 0);
		ck_assert_int_eq(trace_reader_stack(r, 2, &one, frames), 0);
		ck_assert_uint_eq(one.proc, m->stacks[1].proc);
		ck_assert_uint_eq(one.nframes, m->stacks[1].nframes);
		for (uint32_t k = 0; k < one.nframes; k++)
			ck_assert_uint_eq(one.frames[k], m->stacks[1].frames[k]);
	}
	ck_assert_uint_eq(m->stacks[0].nframes, 3);
	ck_assert_uint_eq(m->stacks[0].frames[2], 0x7f0000001000);
	ck_assert_uint_eq(m->nobjects, 1);
	ck_assert_str_eq(m->objects[0].path, "/usr/bin/prog");
	/* default: the header names no pid, so the most allocations (prog);
	 * by name; by pid (the busiest image) */
	ck_assert_int_eq(trace_pick_proc(m, 0, NULL, why, sizeof(why)), 1);
	ck_assert_int_eq(trace_pick_proc(m, 0, "sh", why, sizeof(why)), 0);
	ck_assert_int_eq(trace_pick_proc(m, 100, NULL, why, sizeof(why)), 1);
	ck_assert_int_eq(trace_pick_proc(m, 7, NULL, why, sizeof(why)), -ENOENT);
	ck_assert_int_eq(trace_reader_select(r, 1), 0);
	ck_assert_uint_eq(m->nevents, 60);
	ck_assert_uint_eq(m->pid, 100);
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		ck_assert_uint_eq(ev.tid, 0);
		ck_assert_uint_eq(ev.stack, 2);
		ck_assert_uint_ge(ev.id, 41);
		n++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(n, 60);
	trace_reader_close(r);
}
END_TEST

/*
 * The default process: the last exec of the command's own pid, however much
 * its wrappers or its children allocated; the busiest image only when that
 * one allocated nothing, was not recorded, or the table lacks the pid.
 */
TEST(format, pick_default_is_the_command)
{
	struct trace_proc procs[6] = {
		{ .pid = 100, .parent = -1, .exec_from = -1, .allocs = 5000, .comm = "wrapper" },
		{ .pid = 101, .parent = 0, .exec_from = -1, .allocs = 9000, .comm = "wrapper" },
		{ .pid = 101, .parent = -1, .exec_from = 1, .allocs = 7000, .comm = "seq" },
		{ .pid = 100, .parent = -1, .exec_from = 0, .allocs = 300, .comm = "env" },
		{ .pid = 102, .parent = 3, .exec_from = -1, .allocs = 8000, .comm = "env" },
		{ .pid = 100, .parent = -1, .exec_from = 3, .allocs = 40, .comm = "prog" },
	};
	struct trace_meta m = { .pid = 100, .nprocs = 6, .procs = procs };
	char why[512];

	ck_assert_int_eq(trace_pick_proc(&m, 0, NULL, why, sizeof(why)), 5);
	ck_assert_msg(strstr(why, "process 100 (prog): the program the command ran as"), "%s", why);
	ck_assert_msg(strstr(why, "40 of 29340 allocations in 6 processes"), "%s", why);
	/* --pid 100 still means the busiest image of that pid */
	ck_assert_int_eq(trace_pick_proc(&m, 100, NULL, why, sizeof(why)), 0);
	/* the program allocated nothing: the busiest, saying why */
	procs[5].allocs = 0;
	ck_assert_int_eq(trace_pick_proc(&m, 0, NULL, why, sizeof(why)), 1);
	ck_assert_msg(strstr(why, "the one with the most allocations, 9000 of 29300"), "%s", why);
	ck_assert_msg(strstr(why, "the command ran as prog, which made no allocation"), "%s", why);
	/* ... or it was not recorded (static) */
	procs[5].allocs = 40;
	procs[5].flags = TRACE_PROC_UNRECORDED;
	ck_assert_int_eq(trace_pick_proc(&m, 0, NULL, why, sizeof(why)), 1);
	ck_assert_msg(strstr(why, "prog, which was not recorded"), "%s", why);
	procs[5].flags = 0;
	/* an exec chain that stops early: its last link is the program */
	procs[5].exec_from = 2;
	ck_assert_int_eq(trace_pick_proc(&m, 0, NULL, why, sizeof(why)), 3);
	procs[5].exec_from = 3;
	/* the command's pid is not in the table, or unknown */
	m.pid = 4242;
	ck_assert_int_eq(trace_pick_proc(&m, 0, NULL, why, sizeof(why)), 1);
	ck_assert_msg(strstr(why, "the one with the most allocations") && !strstr(why, "ran as"),
		      "%s", why);
	m.pid = 0;
	ck_assert_int_eq(trace_pick_proc(&m, 0, NULL, why, sizeof(why)), 1);
	/* a reused pid later in the run is not the command's first image */
	m.pid = 100;
	procs[0].exec_from = -1;
	procs[4].pid = 100;
	ck_assert_int_eq(trace_pick_proc(&m, 0, NULL, why, sizeof(why)), 5);
}
END_TEST

TEST(format, procs_records_damaged)
{
	uint8_t *buf;
	size_t len, hdr;

	write_procs_trace();
	buf = load(&len);
	hdr = TRACE_HDR_FIXED + strlen("sh -c x") + 4;
	/* every byte of the records (and the first chunk header) */
	for (size_t at = hdr; at < len - TRACE_TRAILER; at++)
		expect_flips_caught(buf, len, at);
	free(buf);
}
END_TEST

/*
 * The one decoder (trace/decode.c) in both its modes, on a hand-written
 * trace whose id 7 lives twice (freed, then allocated again), is
 * reallocated in place and elsewhere, and frees an id never allocated.
 */
static const struct trace_event decode_ev[] = {
	{ .op = TRACE_OP_MALLOC, .time_ns = 1, .tid = 3, .cpu = 5, .id = 7, .size = 10 },
	{ .op = TRACE_OP_MEMALIGN, .time_ns = 2, .tid = 1, .cpu = TRACE_CPU_UNKNOWN,
	  .id = 9, .size = 64, .align = 48 },
	{ .op = TRACE_OP_FREE, .time_ns = 3, .tid = 3, .cpu = 1, .id = 7 },
	{ .op = TRACE_OP_MALLOC, .time_ns = 4, .tid = 3, .cpu = 1, .id = 7, .size = 20 },
	{ .op = TRACE_OP_REALLOC, .time_ns = 5, .tid = 3, .cpu = 1, .id = 7, .old_id = 7,
	  .size = 30 },
	{ .op = TRACE_OP_REALLOC, .time_ns = 6, .tid = 3, .cpu = 1, .id = 11, .old_id = 7,
	  .size = 40 },
	{ .op = TRACE_OP_FREE, .time_ns = 7, .tid = 2, .cpu = 0, .id = 1000 },
};
#define NDECODE	ARRAY_SIZE(decode_ev)

static void decode_all(enum trace_dense_ids mode, struct trace_dense_ev *out)
{
	struct trace_reader *r;
	struct trace_decoder d;

	ck_assert_int_eq(trace_reader_open(&r, path), 0);
	trace_decoder_init(&d, r, mode, 4);
	for (size_t i = 0; i < NDECODE; i++)
		ck_assert_int_eq(trace_decode_next(&d, &out[i]), 1);
	ck_assert_int_eq(trace_decode_next(&d, &out[0 + NDECODE]), 0);
	if (mode == TRACE_DENSE_BY_ID) {
		ck_assert_uint_eq(d.id_space, 4 + 1);	/* 7, 9, 11, 1000 */
		ck_assert_uint_eq(trace_decoder_trace_id(&d, out[5].id), 11);
		ck_assert_uint_eq(trace_decoder_trace_id(&d, out[6].id), 1000);
	} else {
		ck_assert_uint_eq(d.id_space, 4 + 1);	/* 7, 9, 7 again, 11 */
	}
	ck_assert_uint_eq(d.nthreads, 4);
	trace_decoder_destroy(&d);
	trace_reader_close(r);
}

/* What each mode makes of decode_ev's ids: {id, old_id} per event. */
static const uint32_t by_id[NDECODE][2] = {
	{ 1, 0 }, { 2, 0 }, { 1, 0 }, { 1, 0 },
	{ 1, 1 }, { 3, 1 },
	{ 4, 0 },			/* a free of an id never allocated */
};
static const uint32_t by_lifetime[NDECODE][2] = {
	{ 1, 0 }, { 2, 0 },
	{ 1, 0 },			/* the free names its object */
	{ 3, 0 },			/* id 7 again: a new lifetime */
	{ 3, 3 },			/* realloc in place: the same one */
	{ 4, 3 },
	{ 0, 0 },			/* never allocated: NULL */
};

TEST_LOOP(format, decoder_modes, 0, 2)
{
	enum trace_dense_ids mode = _i ? TRACE_DENSE_BY_LIFETIME : TRACE_DENSE_BY_ID;
	const uint32_t (*want)[2] = _i ? by_lifetime : by_id;
	struct trace_dense_ev e[NDECODE + 1];

	write_trace(decode_ev, NDECODE);
	decode_all(mode, e);
	for (size_t i = 0; i < NDECODE; i++)
		ck_assert_msg(e[i].id == want[i][0] && e[i].old_id == want[i][1],
			      "mode %d event %zu: id %u old %u, expected %u %u", _i, i,
			      e[i].id, e[i].old_id, want[i][0], want[i][1]);
	/* CPUs folded onto 4, an unknown one by the tid; the fields kept */
	ck_assert_uint_eq(e[0].cpu, 1);
	ck_assert_uint_eq(e[1].cpu, 1);
	ck_assert_uint_eq(e[0].tid, 3);
	ck_assert_uint_eq(e[0].time_ns, 1);
	ck_assert_uint_eq(e[0].size, 10);
	/* alignment 48 rounds up to 64, as glibc's memalign */
	ck_assert_uint_eq(e[1].align_shift, 6);
	ck_assert_uint_eq(e[0].align_shift, 0);
}
END_TEST

/* Past the budget the decode is refused with the byte offset, as the
 * reader's own errors: the consumer's words, the event named. */
TEST(format, decoder_budget_names_offset)
{
	struct trace_reader *r;
	struct trace_decoder d;
	struct trace_dense_ev e;

	write_trace(decode_ev, NDECODE);
	setenv("USLAB_EVENT_BUDGET", "2", 1);
	ck_assert_uint_eq(trace_event_budget(sizeof(e)), 2);
	unsetenv("USLAB_EVENT_BUDGET");
	ck_assert_uint_gt(trace_event_budget(sizeof(e)), 2);
	ck_assert_int_eq(trace_reader_open(&r, path), 0);
	trace_decoder_init(&d, r, TRACE_DENSE_BY_ID, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(trace_decode_next(&d, &e), 1);
	ck_assert_int_eq(trace_decoder_over_budget(&d, 2, "check"), -EPROTO);
	ck_assert_msg(strstr(trace_reader_error(r), "byte offset ") &&
		      strstr(trace_reader_error(r), "more than 2 events to hold: check decodes"),
		      "%s", trace_reader_error(r));
	ck_assert_int_lt(trace_decode_next(&d, &e), 0);	/* sticky */
	trace_decoder_destroy(&d);
	trace_reader_close(r);
}
END_TEST

static const struct test_case cases[] = {
	{ .name = "format", .timeout = 120, .setup = setup, .teardown = teardown },
};

int main(void)
{
	return test_run_suite(test_suite("trace", cases, ARRAY_SIZE(cases)));
}
