// SPDX-License-Identifier: MIT
/*
 * Pieces of the trace format shared by the reader, the writer and the tools:
 * CRC32C, the op table, and small CLI helpers. No locks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "trace/internal.h"

static const struct {
	const char *name;
	bool alloc, free, size, align;
} ops[TRACE_OP_NR] = {
	[TRACE_OP_MALLOC]		= { "malloc",		true,  false, true,  false },
	[TRACE_OP_FREE]			= { "free",		false, true,  false, false },
	[TRACE_OP_CALLOC]		= { "calloc",		true,  false, true,  false },
	[TRACE_OP_REALLOC]		= { "realloc",		false, false, true,  false },
	[TRACE_OP_MEMALIGN]		= { "memalign",		true,  false, true,  true },
	[TRACE_OP_POSIX_MEMALIGN]	= { "posix_memalign",	true,  false, true,  true },
	[TRACE_OP_ALIGNED_ALLOC]	= { "aligned_alloc",	true,  false, true,  true },
	[TRACE_OP_VALLOC]		= { "valloc",		true,  false, true,  true },
	[TRACE_OP_PVALLOC]		= { "pvalloc",		true,  false, true,  true },
	[TRACE_OP_FREE_SIZED]		= { "free_sized",	false, true,  true,  false },
	[TRACE_OP_FREE_ALIGNED_SIZED]	= { "free_aligned_sized", false, true, true, true },
	[TRACE_OP_KMALLOC]		= { "kmalloc",		true,  false, true,  false },
	[TRACE_OP_KFREE]		= { "kfree",		false, true,  false, false },
	[TRACE_OP_CACHE_ALLOC]		= { "kmem_cache_alloc",	true,  false, true,  false },
	[TRACE_OP_CACHE_FREE]		= { "kmem_cache_free",	false, true,  false, false },
};

const char *trace_op_name(unsigned int op)
{
	return op < TRACE_OP_NR ? ops[op].name : "?";
}

int trace_op_from_name(const char *name)
{
	for (unsigned int i = 0; i < TRACE_OP_NR; i++)
		if (!strcmp(ops[i].name, name))
			return (int)i;
	return -1;
}

bool trace_op_is_alloc(unsigned int op)
{
	return op < TRACE_OP_NR && ops[op].alloc;
}

bool trace_op_is_free(unsigned int op)
{
	return op < TRACE_OP_NR && ops[op].free;
}

bool trace_op_has_size(unsigned int op)
{
	return op < TRACE_OP_NR && ops[op].size;
}

bool trace_op_has_align(unsigned int op)
{
	return op < TRACE_OP_NR && ops[op].align;
}

/* CRC32C (Castagnoli), reflected, byte table; SSE4.2 instruction when present. */
static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & -(c & 1));
		crc_table[i] = c;
	}
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	for (; len; len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

uint32_t trace_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static int mode;	/* 0 unknown, 1 table, 2 hardware */
	const uint8_t *p = buf;

	crc = ~crc;
	if (unlikely(!mode)) {
		crc_init();
#if defined(__x86_64__)
		__builtin_cpu_init();
		mode = __builtin_cpu_supports("sse4.2") ? 2 : 1;
#else
		mode = 1;
#endif
	}
#if defined(__x86_64__)
	if (mode == 2)
		return ~crc32c_hw(crc, p, len);
#endif
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/*
 * Command lines and task names are whatever the recorded programs had: a
 * newline in an argument (python3 -c 'two\nlines') must not break a table
 * row or a "# command:" line, nor a terminal's state.
 */
static size_t put_printable(char *out, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";

	if (c >= 0x20 && c != 0x7f && c != '\\') {
		out[0] = (char)c;
		return 1;
	}
	out[0] = '\\';
	switch (c) {
	case '\n': out[1] = 'n'; return 2;
	case '\t': out[1] = 't'; return 2;
	case '\r': out[1] = 'r'; return 2;
	case '\\': out[1] = '\\'; return 2;
	}
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
	return 4;
}

void trace_fput_printable(FILE *f, const char *s)
{
	char e[4];

	for (; s && *s; s++)
		fwrite(e, 1, put_printable(e, (unsigned char)*s), f);
}

const char *trace_printable(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; s && *s && o + 5 <= len; s++)
		o += put_printable(buf + o, (unsigned char)*s);
	if (len)
		buf[o < len ? o : len - 1] = 0;
	return buf;
}

/* ---- Process table payload (format 1.1) ---------------------------------- */

static uint8_t *put_str_field(uint8_t *p, const char *s, size_t max)
{
	size_t n = s ? strnlen(s, max) : 0;

	p = put_varint(p, n);
	memcpy(p, s ? s : "", n);
	return p + n;
}

int trace_procs_encode(const struct trace_proc *procs, uint32_t n,
		       uint8_t **bufp, size_t *lenp)
{
	size_t cap = 0;
	uint8_t *buf, *p;

	if (n > TRACE_PROCS_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		cap += 10 * 12 + 16 +
		       (procs[i].exe ? strnlen(procs[i].exe, TRACE_PROC_STR_MAX) : 0) +
		       (procs[i].cmdline ? strnlen(procs[i].cmdline, TRACE_PROC_STR_MAX) : 0);
	buf = malloc(cap ? cap : 1);
	if (!buf)
		return -ENOMEM;
	p = buf;
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_proc *t = &procs[i];

		p = put_varint(p, t->pid);
		p = put_varint(p, t->ppid);
		p = put_varint(p, (uint64_t)(t->parent + 1));
		p = put_varint(p, (uint64_t)(t->exec_from + 1));
		p = put_varint(p, t->first_tid);
		p = put_varint(p, t->nthreads);
		p = put_varint(p, t->flags);
		p = put_varint(p, t->start_ns);
		p = put_varint(p, t->events);
		p = put_varint(p, t->allocs);
		p = put_str_field(p, t->comm, 16);
		p = put_str_field(p, t->exe, TRACE_PROC_STR_MAX);
		p = put_str_field(p, t->cmdline, TRACE_PROC_STR_MAX);
	}
	*bufp = buf;
	*lenp = (size_t)(p - buf);
	return 0;
}

void trace_procs_free(struct trace_proc *procs, uint32_t n)
{
	if (!procs)
		return;
	for (uint32_t i = 0; i < n; i++) {
		free(procs[i].exe);
		free(procs[i].cmdline);
	}
	free(procs);
}

static int get_str_field(const uint8_t **pp, const uint8_t *end, size_t max,
			 char *fixed, char **out)
{
	uint64_t n;

	if (get_varint(pp, end, &n) || n > max || n > (uint64_t)(end - *pp))
		return -1;
	if (!fixed) {
		*out = malloc(n + 1);
		if (!*out)
			return -1;
		fixed = *out;
	}
	memcpy(fixed, *pp, n);
	fixed[n] = 0;
	*pp += n;
	return 0;
}

int trace_procs_decode(const uint8_t *buf, size_t len, uint32_t n,
		       struct trace_proc **procsp, char *err, size_t errlen)
{
	static const char *const field[] = {
		"pid", "ppid", "parent", "exec_from", "first_tid", "nthreads",
		"flags", "start_ns", "events", "allocs",
	};
	const uint8_t *p = buf, *end = buf + len;
	struct trace_proc *procs;
	uint64_t v[ARRAY_SIZE(field)], tid_end = 0;
	uint32_t i = 0;
	const char *what = NULL;

	*procsp = NULL;
	/* Each entry takes at least 13 bytes: bounds n before allocating. */
	if (n == 0 || n > TRACE_PROCS_MAX || n > len / 13) {
		snprintf(err, errlen, "process table of %u entries in %zu bytes", n, len);
		return -EINVAL;
	}
	procs = calloc(n, sizeof(*procs));
	if (!procs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct trace_proc *t = &procs[i];

		for (size_t f = 0; f < ARRAY_SIZE(field); f++)
			if (get_varint(&p, end, &v[f])) {
				what = field[f];
				goto bad;
			}
		what = v[0] > UINT32_MAX ? "pid" : v[1] > UINT32_MAX ? "ppid" :
		       v[2] > i ? "parent (an earlier entry)" :
		       v[3] > i ? "exec_from (an earlier entry)" :
		       (v[5] && v[4] < tid_end) ? "first_tid (after the previous entry's threads)" :
		       v[4] > TRACE_THREADS_MAX ? "first_tid" :
		       /* first_tid + nthreads must not wrap: bounded apart */
		       v[5] > TRACE_THREADS_MAX - v[4] ? "nthreads" :
		       (v[6] & ~(uint64_t)TRACE_PROC_FLAGS) ? "flags" :
		       v[9] > v[8] ? "allocs (at most events)" : NULL;
		if (what)
			goto bad;
		t->pid = (uint32_t)v[0];
		t->ppid = (uint32_t)v[1];
		t->parent = (int32_t)v[2] - 1;
		t->exec_from = (int32_t)v[3] - 1;
		t->first_tid = (uint32_t)v[4];
		t->nthreads = (uint32_t)v[5];
		t->flags = (uint32_t)v[6];
		t->start_ns = v[7];
		t->events = v[8];
		t->allocs = v[9];
		if (t->nthreads)
			tid_end = v[4] + v[5];
		if (get_str_field(&p, end, 16, t->comm, NULL)) {
			what = "comm";
			goto bad;
		}
		if (get_str_field(&p, end, TRACE_PROC_STR_MAX, NULL, &t->exe)) {
			what = "exe";
			goto bad;
		}
		if (get_str_field(&p, end, TRACE_PROC_STR_MAX, NULL, &t->cmdline)) {
			what = "cmdline";
			goto bad;
		}
	}
	if (p != end) {
		snprintf(err, errlen, "process table: %td bytes left over after %u entries",
			 end - p, n);
		trace_procs_free(procs, n);
		return -EINVAL;
	}
	*procsp = procs;
	return 0;
bad:
	snprintf(err, errlen, "process table entry %u, decoded byte %td: expected a valid %s",
		 i, p - buf, what);
	trace_procs_free(procs, n);
	return -EINVAL;
}

static const char *base_name(const char *s)
{
	const char *b = s ? strrchr(s, '/') : NULL;

	return b ? b + 1 : s ? s : "";
}

static bool proc_matches(const struct trace_proc *t, uint32_t pid, const char *comm)
{
	char arg0[256];
	size_t n;

	if (pid && t->pid != pid)
		return false;
	if (!comm)
		return true;
	if (!strcmp(t->comm, comm) || !strcmp(base_name(t->exe), comm))
		return true;
	n = strcspn(t->cmdline ? t->cmdline : "", " ");
	if (n >= sizeof(arg0))
		return false;
	memcpy(arg0, t->cmdline ? t->cmdline : "", n);
	arg0[n] = 0;
	return !strcmp(base_name(arg0), comm);
}

/*
 * The image the recorded command's own process ended in: the header's pid
 * names it; its first image is the earliest entry of that pid that no exec
 * led to, and each exec_from link leads to the next (always a later entry,
 * the reader checks it). -1 when the table has no image of that pid.
 */
static int command_image(const struct trace_meta *m)
{
	int cur = -1;

	if (!m->pid)
		return -1;
	for (uint32_t i = 0; i < m->nprocs; i++) {
		if (cur < 0) {
			if (m->procs[i].pid == m->pid && m->procs[i].exec_from < 0)
				cur = (int)i;
		} else if (m->procs[i].exec_from == cur) {
			cur = (int)i;
		}
	}
	return cur;
}

int trace_pick_proc(const struct trace_meta *m, uint32_t pid, const char *comm,
		    char *why, size_t len)
{
	int best = -1, matches = 0, cmd;
	uint64_t total = 0;
	char c1[4 * 16 + 1], c2[4 * 16 + 1];

	why[0] = 0;
	if (!m->nprocs) {
		/* one process, its name only in the command line, when recorded */
		struct trace_proc one = { .pid = m->pid, .comm = "", .exe = "",
					  .cmdline = m->cmdline };

		if (pid && m->pid && pid != m->pid) {
			snprintf(why, len, "the trace holds only pid %u", m->pid);
			return -ENOENT;
		}
		if (comm && m->cmdline && !proc_matches(&one, 0, comm)) {
			snprintf(why, len, "no process named %s in the trace: it holds one process, "
				 "'%.200s'", comm, trace_printable(m->cmdline, c1, sizeof(c1)));
			return -ENOENT;
		}
		return -1;
	}
	for (uint32_t i = 0; i < m->nprocs; i++) {
		total += m->procs[i].allocs;
		if (!proc_matches(&m->procs[i], pid, comm))
			continue;
		matches++;
		/* Several images match (a pid that exec'd): the busiest. */
		if (best < 0 || m->procs[i].allocs > m->procs[best].allocs)
			best = (int)i;
	}
	if (best < 0) {
		if (pid && comm)
			snprintf(why, len, "no process named %s with pid %u in the trace (see the process table of 'uslab report')",
				 comm, pid);
		else if (pid)
			snprintf(why, len, "no process with pid %u in the trace (see the process table of 'uslab report')",
				 pid);
		else
			snprintf(why, len, "no process named %s in the trace (see the process table of 'uslab report')",
				 comm);
		return -ENOENT;
	}
	if (!pid && !comm && (m->flags & TRACE_HDR_ONE_HEAP)) {
		snprintf(why, len, "every event: the %u processes share one heap (a kernel trace: "
			 "one task frees what another allocated); --pid or --comm reads one's",
			 m->nprocs);
		return -1;
	}
	if (pid || comm) {
		snprintf(why, len, "process %u (%s), %" PRIu64 " allocations%s",
			 m->procs[best].pid, trace_printable(m->procs[best].comm, c1, sizeof(c1)),
			 m->procs[best].allocs,
			 matches > 1 ? " (the busiest of the images that match)" : "");
		return best;
	}
	/*
	 * The default (docs/trace-format.md, "Which process"): the program the
	 * command finally ran as, whatever its wrappers allocated on the way;
	 * the busiest image only when that one recorded no allocation.
	 */
	cmd = command_image(m);
	if (cmd >= 0 && m->procs[cmd].allocs && !(m->procs[cmd].flags & TRACE_PROC_UNRECORDED)) {
		int n = snprintf(why, len, "process %u (%s): the program the command ran as (its last exec), %"
				 PRIu64 " of %" PRIu64 " allocations in %u processes; --pid or --comm chooses another",
				 m->procs[cmd].pid, trace_printable(m->procs[cmd].comm, c1, sizeof(c1)),
				 m->procs[cmd].allocs, total, m->nprocs);

		/* A driver (gcc, a shell) that holds little: say who does. */
		if (n > 0 && (size_t)n < len && best >= 0 && best != cmd &&
		    m->procs[cmd].allocs * 20 < total)
			snprintf(why + n, len - (size_t)n, ". It holds under 5%% of the trace's "
				 "allocations; process %u (%s) holds %" PRIu64 " (%.0f%%): pick it with "
				 "--pid %u or --comm %s", m->procs[best].pid,
				 trace_printable(m->procs[best].comm, c2, sizeof(c2)), m->procs[best].allocs,
				 100.0 * (double)m->procs[best].allocs / (double)total,
				 m->procs[best].pid, c2);
		return cmd;
	}
	trace_printable(m->procs[best].comm, c1, sizeof(c1));
	if (cmd >= 0)
		snprintf(why, len, "process %u (%s): the one with the most allocations, %" PRIu64
			 " of %" PRIu64 " in %u processes (the command ran as %s, which %s); "
			 "--pid or --comm chooses another",
			 m->procs[best].pid, c1, m->procs[best].allocs, total, m->nprocs,
			 trace_printable(m->procs[cmd].comm, c2, sizeof(c2)),
			 m->procs[cmd].flags & TRACE_PROC_UNRECORDED ? "was not recorded" :
			 "made no allocation");
	else
		snprintf(why, len, "process %u (%s): the one with the most allocations, %" PRIu64
			 " of %" PRIu64 " in %u processes; --pid or --comm chooses another",
			 m->procs[best].pid, c1, m->procs[best].allocs, total, m->nprocs);
	return best;
}
