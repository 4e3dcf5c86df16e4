# Sourced by what runs the kv server (tests/examples/test_kv.sh, tests/tools/test_live_view.sh,
# examples/kv/bench.sh). kv_start OUT ERR CMD...: run CMD --port P (CMD is
# the server with its options, maybe behind env) on a free port P, its
# stdout in OUT and its stderr in ERR ("": in OUT too). A port someone else
# holds makes the server exit, so up to eight ports are tried. Sets $port,
# and $kvpid to the server's pid once it said "uslab-kv: port"; returns 1,
# $kvpid empty, when it never did.
kv_start() {
	local out=$1 err=$2 try
	shift 2
	for try in 1 2 3 4 5 6 7 8; do
		port=$((20000 + RANDOM % 20000))
		if [ -z "$err" ]; then
			"$@" --port $port >"$out" 2>&1 &
		else
			"$@" --port $port >"$out" 2>"$err" &
		fi
		kvpid=$!
		for _ in $(seq 50); do
			grep -q '^uslab-kv: port' "$out" && return 0
			kill -0 $kvpid 2>/dev/null || break
			sleep 0.1
		done
		kill $kvpid 2>/dev/null; wait $kvpid 2>/dev/null; kvpid=
	done
	return 1
}
