// SPDX-License-Identifier: MIT
/*
 * libFuzzer targets for the importers: built twice, with -DFUZZ_MTRACE or
 * -DFUZZ_PERF. Every event handed out must respect the trace's promises
 * (a freed id was allocated and is live; time never goes back).
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trace/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct check {
	uint8_t live[4096];
	uint64_t last;
	uint64_t events;
	uint32_t ntasks;
	uint32_t ncaches;
};

static int check_event(void *ctx, const struct trace_event *ev)
{
	struct check *c = ctx;

	if (ev->op >= TRACE_OP_NR || ev->time_ns < c->last ||
	    (ev->cache && ev->op != TRACE_OP_CACHE_ALLOC))
		__builtin_trap();
	c->last = ev->time_ns;
	c->events++;
	if (ev->cache > c->ncaches)
		__builtin_trap();
	if (ev->id >= sizeof(c->live) || ev->old_id >= sizeof(c->live))
		return 0;	/* only small id spaces are tracked */
	if (trace_op_is_free(ev->op) && ev->id) {
		if (!c->live[ev->id])
			__builtin_trap();
		c->live[ev->id] = 0;
	}
	if (ev->op == TRACE_OP_REALLOC && ev->old_id && (ev->id || !ev->size)) {
		if (!c->live[ev->old_id])
			__builtin_trap();
		c->live[ev->old_id] = 0;
	}
	if ((trace_op_is_alloc(ev->op) || ev->op == TRACE_OP_REALLOC) && ev->id) {
		if (c->live[ev->id])
			__builtin_trap();
		c->live[ev->id] = 1;
	}
	return 0;
}

/* Named caches: each new one valid, ids handed out in order. */
static int check_cache(void *ctx, const char *name, uint64_t size, uint32_t *id)
{
	struct check *c = ctx;
	size_t l = strlen(name);

	if (!l || l > TRACE_CACHE_NAME_MAX || !size)
		__builtin_trap();
	*id = ++c->ncaches;
	return 0;
}

/* A free names an earlier kmem_cache_alloc's cache: an event emitted, a
 * cache handed out. */
static int check_cache_of(void *ctx, uint64_t event, uint32_t cache)
{
	struct check *c = ctx;

	if (event >= c->events || !cache || cache > c->ncaches)
		__builtin_trap();
	return 0;
}

/* Tasks come dense, in order, once each. */
static int check_task(void *ctx, uint32_t tid, uint64_t pid, uint64_t task, const char *comm)
{
	struct check *c = ctx;

	if (tid != c->ntasks++ || strlen(comm) > 16)
		__builtin_trap();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct import_result res;
	struct import_sink sink = { .emit = check_event, .cache = check_cache,
				    .cache_of = check_cache_of, .task = check_task };
	struct check *c;
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "rb");
	c = calloc(1, sizeof(*c));
	if (!f || !c)
		goto out;
	sink.ctx = c;
#ifdef FUZZ_MTRACE
	import_mtrace(f, "fuzz", &sink, &res);
#else
	import_perf(f, "fuzz", &sink, &res);
#endif
out:
	free(c);
	if (f)
		fclose(f);
	return 0;
}
