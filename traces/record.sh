#!/usr/bin/env bash
# Re-records the bundled traces with `uslab record` (run from the top of the
# tree after `make`): O=build-x bash traces/record.sh
set -eu
O=${O:-build}
U=$O/uslab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# python3: every allocation goes to malloc (PYTHONMALLOC=malloc), four threads.
PYTHONMALLOC=malloc "$U" record -l 19 -o traces/python3-json-threads.ustr -- \
	/usr/bin/python3 traces/python3-json-threads.py

# gcc -O2 compiling tools/uslab/builtin-replay.c: one trace of the driver, cc1 and as (format
# 1.1 process table); the tools pick cc1, the process with the most
# allocations, unless told otherwise (--pid, --comm).
"$U" record -l 19 -o traces/gcc-O2-cc1.ustr -- gcc -O2 -D_GNU_SOURCE -I. -Iinclude \
	-I"$O/include" -include "$O/include/generated/autoconf.h" \
	-c tools/uslab/builtin-replay.c -o "$tmp/replay.o"
ln -sf python3-json-threads.ustr traces/default.ustr
ls -l traces/*.ustr
