#!/usr/bin/env bash
# `make run`: the main job on the bundled default. Until the trace tools land
# this is the slab demo workload, which prints a slabinfo table.
set -eu
O=${O:-build}
if [ -x "$O/uslab" ] && [ -f traces/default.ustr ]; then
	exec "$O/uslab" run traces/default.ustr
fi
exec "$O/uslab-demo"
