// SPDX-License-Identifier: MIT
/* libFuzzer target: the trace reader on arbitrary bytes, to the end. */
#include <stdio.h>
#include <stdint.h>
#include "trace/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_reader *r;
	struct trace_event ev;
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "rb");
	if (!f)
		return 0;
	if (!trace_reader_open_file(&r, f, "fuzz")) {
		const struct trace_meta *m = trace_reader_meta(r);

		while (trace_reader_next(r, &ev) > 0) {
			/* What the reader returns must satisfy its own contract. */
			if (ev.op >= TRACE_OP_NR || ev.id >= TRACE_ID_LIMIT ||
			    ev.old_id >= TRACE_ID_LIMIT)
				__builtin_trap();
		}
		(void)m;
	}
	trace_reader_close(r);
	fclose(f);
	return 0;
}
