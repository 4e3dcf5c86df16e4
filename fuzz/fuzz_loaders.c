// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the loaders of `uslab tune` (sim_trace_load), `uslab
 * sim` (sim_trace_open + sim_trace_read) and `uslab replay` (rp_load, from
 * tools/uslab/builtin-replay.c included here for its static loader) on forged traces. What
 * they build must be in bounds: dense ids below the id space, CPUs below
 * the CPU count, replay slots below its slot count, threads as met.
 */
#include "fuzz/forge.h"
#include "tools/uslab/builtin-replay.c"

/* uslab.c's, for replay --timeline's PNG script: no binary folder here
 * (the fuzzer draws no PNG). */
int cmd_exe_dir(char *dir, size_t len)
{
	(void)dir;
	(void)len;
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_events(const struct sim_trace *t, const struct trace_dense_ev *ev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ev[i].id >= (t->dec.id_space ? t->dec.id_space : 1) ||
		    (ev[i].op == TRACE_OP_CACHE_ALLOC ? ev[i].cache > t->nr_named ||
		     t->nr_named > SIM_MAX_NAMED :
		     ev[i].old_id >= (t->dec.id_space ? t->dec.id_space : 1)) ||
		    ev[i].cpu >= t->cpus || t->cpus > TRACE_MAX_CPUS)
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct trace_dense_ev buf[1024];
	struct forge_buf o;
	struct sim_trace t;
	struct replay rp = { 0 };
	struct trace_reader *r;
	const char *path;
	long n;

	if (forge_trace(data, size, &o))
		goto out;
	path = forge_path(&o);
	r = cmd_open_trace_as("fuzz tune", path);
	if (r) {
		if (!sim_trace_load(&t, r, 0, "fuzz tune"))
			check_events(&t, t.ev, t.n);
		sim_trace_free(&t);
		trace_reader_close(r);
	}
	r = cmd_open_trace_as("fuzz sim", path);
	if (r) {
		if (!sim_trace_open(&t, r, path, 0))
			while ((n = sim_trace_read(&t, buf, 1024)) > 0)
				check_events(&t, buf, (size_t)n);
		sim_trace_free(&t);	/* the reader with it */
	}
	if (!rp_load(&rp, path, size & 1 ? 0 : (unsigned int)(size % 7) + 1)) {
		for (unsigned int i = 0; i < rp.nthreads; i++)
			for (size_t k = 0; k < rp.t[i].n; k++)
				if (rp.t[i].ev[k].id > rp.nslots || rp.t[i].ev[k].old_id > rp.nslots)
					__builtin_trap();
	}
	if (rp.nthreads > RP_MAX_THREADS)
		__builtin_trap();
	rp_free(&rp);	/* the replayer's own memory is mmap'd */
out:
	free(o.b);
	return 0;
}
