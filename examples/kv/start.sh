# Sourced by the tests that run examples/uslab-kv (test_kv.sh,
# test_live_view.sh). kv_start KV OPTIONS OUT [ERR]: start the server KV on a
# free port with USLAB_OPTIONS=OPTIONS, two threads, its stdout in OUT (its
# stderr in ERR, else in OUT too); a port taken by someone else makes it
# exit, so up to eight ports are tried. Sets $port, and $kvpid to the
# server's pid (empty when it never said "uslab-kv: port").
kv_start() {
	local kv=$1 opts=$2 out=$3 err=${4:-$3} try
	for try in 1 2 3 4 5 6 7 8; do
		port=$((20000 + RANDOM % 20000))
		if [ "$err" = "$out" ]; then
			USLAB_OPTIONS=$opts "$kv" --port $port --threads 2 >"$out" 2>&1 &
		else
			USLAB_OPTIONS=$opts "$kv" --port $port --threads 2 >"$out" 2>"$err" &
		fi
		kvpid=$!
		for _ in $(seq 50); do
			grep -q '^uslab-kv: port' "$out" && return 0
			kill -0 $kvpid 2>/dev/null || break
			sleep 0.1
		done
		grep -q '^uslab-kv: port' "$out" && return 0
		wait $kvpid 2>/dev/null; kvpid=
	done
	return 0
}
