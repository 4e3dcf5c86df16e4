/* SPDX-License-Identifier: MIT */
/*
 * Allocation traces: the event record and a streaming reader and writer for
 * the uslab trace format (docs/trace-format.md). A trace is a header, then
 * zstd-compressed chunks of delta-encoded events, then a trailer. The writer
 * holds one chunk in memory, the reader one chunk: a trace never has to fit
 * in memory.
 *
 * Object ids are dense: the recorder hands out the smallest ids it can and
 * reuses an id once its object is freed, so a replayer can keep its objects
 * in a flat array of trace_meta.id_space pointers instead of an address map.
 * Id 0 is NULL (a failed allocation, free(NULL), realloc(NULL, n)).
 *
 * Events are in time order. An id is always allocated (by an event for which
 * trace_op_is_alloc() is true, or as the new id of a realloc) before it is
 * freed, and freed before it is handed out again, across all threads.
 *
 * Concurrency: a reader or writer is used by one thread at a time; different
 * readers and writers are independent.
 */
#ifndef USLAB_TRACE_H
#define USLAB_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRACE_FORMAT_MAJOR	1
#define TRACE_FORMAT_MINOR	2

/*
 * Operations. The numbers are part of the file format: append only.
 * Fields that an op carries (the rest read back as 0):
 *   id      every op (the object allocated or freed; 0 = NULL)
 *   old_id  TRACE_OP_REALLOC (the pointer passed in, 0 = NULL)
 *   size    alloc ops, realloc, free_sized, free_aligned_sized
 *           (calloc: nmemb * size, the bytes requested)
 *   align   memalign, posix_memalign, aligned_alloc, valloc, pvalloc,
 *           free_aligned_sized
 */
/* Explicit values, one row each on purpose: they are the file format. */
enum trace_op {
	TRACE_OP_MALLOC		= 0,
	TRACE_OP_FREE		= 1,
	TRACE_OP_CALLOC		= 2,
	TRACE_OP_REALLOC	= 3,
	TRACE_OP_MEMALIGN	= 4,
	TRACE_OP_POSIX_MEMALIGN	= 5,
	TRACE_OP_ALIGNED_ALLOC	= 6,
	TRACE_OP_VALLOC		= 7,
	TRACE_OP_PVALLOC	= 8,
	TRACE_OP_FREE_SIZED	= 9,
	TRACE_OP_FREE_ALIGNED_SIZED = 10,
	/* The kernel's kmem tracepoints (uslab import perf). */
	TRACE_OP_KMALLOC	= 11,
	TRACE_OP_KFREE		= 12,
	TRACE_OP_CACHE_ALLOC	= 13,	/* kmem_cache_alloc: size = bytes_req */
	TRACE_OP_CACHE_FREE	= 14,
	TRACE_OP_NR
};

#define TRACE_CPU_UNKNOWN	UINT32_MAX
/* trace_meta.clock_id when the source had no clock (mtrace): time_ns is
 * then the event's index. */
#define TRACE_CLOCK_NONE	UINT32_MAX
/* Longest exe or cmdline string in a process table. */
#define TRACE_PROC_STR_MAX	65536u

/**
 * struct trace_event - one allocator call.
 * @time_ns: nanoseconds since the start of the trace (trace_meta.start_ns).
 * @id: object allocated or freed; for realloc, the object returned.
 * @old_id: realloc only: the object passed in.
 * @size: bytes requested.
 * @align: requested alignment, 0 when the op has none.
 * @tid: dense thread number within the trace, from 0.
 * @cpu: CPU the call ran on (rseq cpu_id), or TRACE_CPU_UNKNOWN.
 * @stack: call stack of an allocation (`record -g`, format 1.1): index + 1
 *         in trace_meta.stacks, 0 = none.
 * @cache: TRACE_OP_CACHE_ALLOC only (format 1.2): the named cache the
 *         object came from, index + 1 in trace_meta.caches; 0 = none named
 *         (the size's kmalloc class). A kmem_cache_free frees into the
 *         cache its object came from.
 * @op: enum trace_op.
 */
struct trace_event {
	uint64_t time_ns;
	uint64_t id;
	uint64_t old_id;
	uint64_t size;
	uint64_t align;
	uint32_t tid;
	uint32_t cpu;
	uint32_t stack;
	uint32_t cache;
	uint8_t op;
};

/**
 * struct trace_cache - a named kernel cache (format 1.2, `uslab import
 * perf`: kmem_cache_alloc's name=), as events name them in @cache.
 * @size: its object size (the bytes_req its allocations carry), >= 1.
 * @name: NUL-terminated, 1 to TRACE_CACHE_NAME_MAX bytes, no NUL inside.
 */
struct trace_cache {
	uint64_t size;
	const char *name;
};
#define TRACE_CACHE_NAME_MAX	255u
#define TRACE_CACHES_MAX	65536u

/**
 * struct trace_stack - one distinct call stack (format 1.1, `record -g`).
 * @proc: the process image (index in trace_meta.procs) it was taken in.
 * @nframes: return addresses in @frames, innermost (the allocator's caller)
 *           first; at most TRACE_STACK_MAX.
 * @cut: the recorder stopped at its depth (`record -g --max-stack`): the
 *       outermost frames are missing. In the file, a last frame of
 *       TRACE_FRAME_CUT; readers drop it from @frames and set @cut.
 */
struct trace_stack {
	uint32_t proc;
	uint32_t nframes;
	const uint64_t *frames;
	bool cut;
};
#define TRACE_STACK_MAX		256u
#define TRACE_FRAME_CUT		UINT64_MAX

/**
 * struct trace_object - an executable mapping of a file in a process image,
 * for symbolizing stack frames: addresses [@start, @end) map file offset
 * @offset onwards of @path.
 */
struct trace_object {
	uint32_t proc;
	uint64_t start, end, offset;
	const char *path;
};

/**
 * struct trace_meta - what the header (and the trailer, when read) says.
 * @version_major: format version of the file; readers refuse other majors.
 * @version_minor: minor version (additions a reader may ignore).
 * @cpus: CPUs online on the recording machine (or simulated, for imports: 0
 *        when unknown).
 * @clock_id: clockid_t of the timestamps (CLOCK_MONOTONIC for recordings
 *            and perf imports), or TRACE_CLOCK_NONE.
 * @pid: process id of the recorded process (0 when unknown).
 * @flags: TRACE_HDR_* (format 1.2; 0 in older files).
 * @start_ns: wall-clock time (CLOCK_REALTIME, ns since the epoch) of
 *            time_ns == 0.
 * @tool: what produced the trace ("uslab record", "import mtrace", ...).
 * @cmdline: the recorded command line, arguments separated by spaces.
 * @has_summary: the trailer was read (writers always write one; a reader
 *               finds it at open on a seekable file and at the end otherwise)
 * @nevents: trailer: number of events.
 * @id_space: trailer: every id in the trace is below this.
 * @nthreads: trailer: every tid in the trace is below this.
 * @duration_ns: trailer: time_ns of the last event.
 * @nprocs: process images in the process table (format 1.1; 0 when the
 *          trace has none, as every 1.0 trace).
 * @procs: the process table, @nprocs entries, ordered by start time.
 * @selected: index in @procs of the process trace_reader_select() chose,
 *            -1 for all events. While one is selected, @pid, @cmdline and
 *            @nevents describe that process.
 * @nstacks, @stacks: the call stacks events refer to (`record -g`).
 * @ncaches, @caches: the named caches events name (format 1.2): the
 *     table grows as the reader meets its records (each before the first
 *     event naming its entries), so read both again after
 *     trace_reader_next(); entries never change once there.
 * @nobjects, @objects: the mapped files the stacks' frames fall in.
 *     The counts are known at open (the tables are checked there); @stacks
 *     and @objects stay NULL until trace_reader_load_stacks() decodes them,
 *     which only a reader that symbolizes needs to pay for.
 */
struct trace_meta {
	uint16_t version_major;
	uint16_t version_minor;
	uint32_t cpus;
	uint32_t clock_id;
	uint32_t pid;
	uint32_t flags;
	uint64_t start_ns;
	char tool[32];
	char *cmdline;
	bool has_summary;
	uint64_t nevents;
	uint64_t id_space;
	uint32_t nthreads;
	uint64_t duration_ns;
	uint32_t nprocs;
	const struct trace_proc *procs;
	int32_t selected;
	uint32_t nstacks;
	const struct trace_stack *stacks;
	uint32_t nobjects;
	const struct trace_object *objects;
	uint32_t ncaches;
	const struct trace_cache *caches;
};

/* trace_meta.flags (the header's flags field) */
#define TRACE_HDR_ONE_HEAP	0x1u	/* the processes of the table share one
					 * heap (a kernel trace: one task frees
					 * what another allocated): tools read
					 * every event unless --pid/--comm */

/* trace_proc.flags */
#define TRACE_PROC_RUNNING	0x1u	/* still running when the command exited:
					 * recorded up to then */
#define TRACE_PROC_UNRECORDED	0x2u	/* ran, but the recorder could not run in
					 * it (static program, LD_PRELOAD cleared) */
#define TRACE_PROC_FLAGS	0x3u	/* every flag a reader accepts */

/**
 * struct trace_proc - one process image of a recording (format 1.1): a
 * process between its start (or an exec) and its exit (or next exec).
 * @pid: its process id; @ppid: its parent's.
 * @parent: index of the image that forked it, -1 when none was recorded.
 * @exec_from: index of the image of the same pid that exec'd into this one,
 *             -1 when it is the first image of its pid.
 * @first_tid: its threads are trace tids [first_tid, first_tid + nthreads).
 * @nthreads: threads that made at least one call (0: none at all).
 * @flags: TRACE_PROC_*.
 * @start_ns: when it started, on the trace's time axis (0 when earlier).
 * @events: events of its threads in the trace; @allocs: of which allocate
 *          (alloc ops and reallocs).
 * @comm: the kernel's name of the task (/proc/PID/comm), NUL-terminated.
 * @exe: the executable (/proc/PID/exe); @cmdline: arguments separated by
 *       spaces.
 */
struct trace_proc {
	uint32_t pid, ppid;
	int32_t parent, exec_from;
	uint32_t first_tid, nthreads;
	uint32_t flags;
	uint64_t start_ns;
	uint64_t events, allocs;
	char comm[17];
	char *exe;
	char *cmdline;
};

struct trace_writer;
struct trace_reader;

/* Op properties, for consumers that switch on families rather than ops. */
const char *trace_op_name(unsigned int op);
/* Lookup by name as trace_op_name() prints it; -1 when unknown. */
int trace_op_from_name(const char *name);
bool trace_op_is_alloc(unsigned int op);	/* returns a new object in id */
bool trace_op_is_free(unsigned int op);		/* frees id */
bool trace_op_has_size(unsigned int op);
bool trace_op_has_align(unsigned int op);

/**
 * trace_writer_open - start writing a trace to @path.
 * @wp: receives the writer.
 * @path: the output, "-" for standard output. A regular file (or a new
 *        name) is written as a temporary beside it and renamed over it by
 *        trace_writer_close(), so a failed run leaves no half-written trace
 *        and never replaces what was there; a symlink is followed; a FIFO,
 *        device or socket is written in place (the stream as it comes); a
 *        directory is an error. Messages go to stderr.
 * @meta: header fields; the summary fields are ignored (computed).
 * @level: zstd compression level (0 = default 3).
 * Context: allocates about 2 MiB; not async-signal-safe.
 * Return: 0, or -errno (the file could not be created: errno from open;
 *         -ENOMEM). trace_writer_error() is not available on failure.
 */
int trace_writer_open(struct trace_writer **wp, const char *path,
		      const struct trace_meta *meta, int level);

/**
 * trace_writer_set_procs - the process table (format 1.1).
 * @w: the writer, before its first event.
 * @procs: @n entries; tid ranges must not overlap, parent and exec_from
 *         index this table, strings are at most TRACE_PROC_STR_MAX bytes.
 * Return: 0, -EINVAL (events already written, bad entry), -errno of write.
 */
int trace_writer_set_procs(struct trace_writer *w, const struct trace_proc *procs,
			   uint32_t n);

/**
 * trace_writer_set_stacks - the call stack table (format 1.1), after the
 * process table and before the first event; events name them in @stack.
 * Return: 0, -EINVAL (events written, bad entry), -errno of write.
 */
int trace_writer_set_stacks(struct trace_writer *w, const struct trace_stack *stacks,
			    uint32_t n);

/**
 * trace_writer_set_objects - the mapped files the stacks' frames fall in.
 * Return: as trace_writer_set_stacks().
 */
int trace_writer_set_objects(struct trace_writer *w, const struct trace_object *objs,
			     uint32_t n);

/**
 * trace_writer_add_cache - a named cache (format 1.2) events may name from
 * now on in trace_event.cache (kmem_cache_alloc only). Any time: new
 * entries are written before the next chunk.
 * @w: the writer.
 * @name: 1 to TRACE_CACHE_NAME_MAX bytes; @size: object size, >= 1.
 * @id: receives the cache id (index + 1), the first free one.
 * Return: 0, -EINVAL (bad name or size, TRACE_CACHES_MAX reached), -ENOMEM.
 */
int trace_writer_add_cache(struct trace_writer *w, const char *name, uint64_t size,
			   uint32_t *id);

/**
 * trace_writer_add - append one event.
 * @w: the writer.
 * @ev: the event; time_ns must not decrease, op < TRACE_OP_NR, id and
 *      old_id < 2^63.
 * Context: compresses and writes a chunk when the buffer is full.
 * Return: 0, -EINVAL for a bad event (the writer stays usable), or -errno
 *         from write(2) (the writer is then failed: close() aborts it).
 */
int trace_writer_add(struct trace_writer *w, const struct trace_event *ev);

/**
 * trace_writer_close - flush, write the trailer, fsync-free rename into place.
 * @w: the writer, freed in every case.
 * Return: 0, or -errno (the temporary file is removed and @path untouched).
 */
int trace_writer_close(struct trace_writer *w);

/**
 * trace_writer_abort - drop the trace: remove the temporary file, free @w.
 */
void trace_writer_abort(struct trace_writer *w);

/* The last error of @w as text (file, what went wrong). */
const char *trace_writer_error(const struct trace_writer *w);

/**
 * trace_reader_open - open a trace for streaming.
 * @rp: receives the reader (also on failure, so the message can be read;
 *      close it in every case).
 * @path: the file.
 * Context: allocates up to ~40 MiB for the largest chunk the format
 *          allows, only when such a chunk is met.
 * Return: 0, or -errno: -ENOENT etc. from open, -EPROTO for a file that is
 *         not a trace or is damaged (the message names the byte offset).
 */
int trace_reader_open(struct trace_reader **rp, const char *path);

/**
 * trace_reader_open_file - like trace_reader_open() on an open stream.
 * @rp: receives the reader.
 * @f: the stream, read from its current position; not closed by the reader.
 *     When seekable, the trailer is read at open (trace_meta.has_summary).
 * @name: used in messages.
 * Return: as trace_reader_open().
 */
int trace_reader_open_file(struct trace_reader **rp, FILE *f,
			   const char *name);

/* Header (and, once read, trailer) fields. Valid until close. */
const struct trace_meta *trace_reader_meta(const struct trace_reader *r);

/**
 * trace_reader_next - read the next event.
 * @r: the reader.
 * @ev: filled in when 1 is returned.
 * Return: 1 for an event, 0 at the clean end of the trace (trailer read and
 *         consistent), -EPROTO for damage or truncation (the message says
 *         at which byte offset, and what was expected there), -EIO or
 *         -ENOMEM. After an error every later call returns the same error.
 */
int trace_reader_next(struct trace_reader *r, struct trace_event *ev);

/**
 * trace_reader_load_stacks - decode the stack and object tables (checked at
 * open) into trace_meta.stacks and trace_meta.objects.
 * @r: the reader; any time after open. A second call does nothing.
 * Context: allocates 16 bytes a stack, 8 a frame, and the objects' paths:
 *          up to ~600 MiB for the largest table the format allows. A
 *          reader that looks stacks up one at a time uses
 *          trace_reader_stack() instead.
 * Return: 0, -ENOMEM (trace_reader_error() says so), or a reader's error.
 */
int trace_reader_load_stacks(struct trace_reader *r);

/**
 * trace_reader_load_objects - the object table alone into
 * trace_meta.objects (as trace_reader_load_stacks() does).
 */
int trace_reader_load_objects(struct trace_reader *r);

/**
 * trace_reader_stack - one call stack, decoded on demand.
 * @r: the reader.
 * @id: the stack id, 1 to trace_meta.nstacks.
 * @out: filled; out->frames points at @frames.
 * @frames: room for TRACE_STACK_MAX frames.
 * Context: the first call keeps the table's decoded bytes (at least one a
 *          frame) and 4 bytes a stack; nothing more a call.
 * Return: 0, -EINVAL for a bad id, -ENOMEM or a reader's error.
 */
int trace_reader_stack(struct trace_reader *r, uint32_t id, struct trace_stack *out,
		       uint64_t *frames);

/**
 * trace_reader_select - return only the events of one process image.
 * @r: a reader whose trace has a process table, before its first event.
 * @proc: index in trace_meta.procs, or -1 for every event.
 * Return: 0, or -EINVAL.
 */
int trace_reader_select(struct trace_reader *r, int proc);

/**
 * trace_pick_proc - which process a tool works on.
 * @m: the trace's meta.
 * @pid: the process wanted (--pid), 0 for none.
 * @comm: its name (--comm: matches comm, or the executable's or argv[0]'s
 *        base name), NULL for none. With both, both must match.
 * @why: receives a one-line explanation (without newline) for stderr.
 * Return: the index in @m->procs; -1 when the trace has no process table
 *         (use every event); -ENOENT when nothing matches (@why says so).
 *         With neither @pid nor @comm: the image the recorded command's
 *         own process (the header's pid) ended in, following its execs;
 *         when the table has none, or it made no allocation or was not
 *         recorded, the image with the most allocation events (the earliest
 *         on a tie); -1 for a trace whose processes share one heap
 *         (TRACE_HDR_ONE_HEAP: every event, @why says so).
 *         docs/trace-format.md, "Which process", is the rule.
 */
int trace_pick_proc(const struct trace_meta *m, uint32_t pid, const char *comm,
		    char *why, size_t len);

/* Index of the next event trace_reader_next() returns (events read so far). */
uint64_t trace_reader_position(const struct trace_reader *r);

/**
 * enum trace_field - a field a consumer may refuse with trace_reader_reject():
 * the header's CPU count, or one field of the event trace_reader_next()
 * returned last.
 */
enum trace_field {
	TRACE_FIELD_HDR_CPUS,
	TRACE_FIELD_OP,
	TRACE_FIELD_TIME,
	TRACE_FIELD_TID,
	TRACE_FIELD_CPU,
	TRACE_FIELD_ID,
	TRACE_FIELD_OLD_ID,
	TRACE_FIELD_SIZE,
	TRACE_FIELD_ALIGN,
	TRACE_FIELD_NR
};

/**
 * trace_reader_reject - a consumer's limit refuses a field the format allows
 * (a thread number past the threads it can run, more distinct ids than it
 * can hold, ...). The message names the byte offset as the reader's own do:
 * "FILE: byte offset N: chunk event K (trace event M), decoded byte B
 * (FIELD): WHAT" for an event field, "FILE: byte offset N (FIELD): WHAT"
 * for a header field.
 * @r: the reader; the error becomes sticky, as a reader error.
 * @field: which field.
 * @fmt: what is wrong, printf-style.
 * Return: -EPROTO.
 */
int trace_reader_reject(struct trace_reader *r, enum trace_field field,
			const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The last error as "FILE: byte offset N: expected ..., found ..." text. */
const char *trace_reader_error(const struct trace_reader *r);

void trace_reader_close(struct trace_reader *r);

#ifdef __cplusplus
}
#endif

#endif /* USLAB_TRACE_H */
