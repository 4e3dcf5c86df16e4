#!/usr/bin/env bash
# Real programs preloaded with libuslab.so, each compared with the same run on
# glibc: same output, same exit status. python3 (PYTHONMALLOC=malloc, a
# json/re/dict workload), git (init, commit 300 files, log, gc, fsck), gcc
# (compile a C file; the objects must be identical), sqlite3 and perl.
set -u
O=${O:-build}
lib=$(realpath "$O/libuslab.so") || { echo "missing $O/libuslab.so"; exit 1; }
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/uslab-programs.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset USLAB_OPTIONS
export PYTHONHASHSEED=0 LC_ALL=C src

fail=0
# compare NAME CMD...: runs CMD in $work/glibc and $work/uslab (cwd), stores
# stdout+stderr and status, and compares them.
compare() {
	local name=$1; shift
	local st_g st_u
	mkdir -p "$work/glibc/$name" "$work/uslab/$name"
	(cd "$work/glibc/$name" && timeout -k 5 120 bash -c "$(declare -f "$1"); $1") >"$work/$name.glibc" 2>&1; st_g=$?
	(export LD_PRELOAD="$lib"; cd "$work/uslab/$name" &&
	 timeout -k 5 120 bash -c "$(declare -f "$1"); $1") >"$work/$name.uslab" 2>&1; st_u=$?
	if [ "$st_g" -ne "$st_u" ]; then
		echo "FAIL $name: exit status $st_u with uslab, $st_g with glibc"
		tail -5 "$work/$name.uslab"
		fail=1
	elif ! cmp -s "$work/$name.glibc" "$work/$name.uslab"; then
		echo "FAIL $name: output differs"
		diff "$work/$name.glibc" "$work/$name.uslab" | head -10
		fail=1
	elif [ "$st_g" -ne 0 ]; then
		echo "FAIL $name: exit status $st_g on both"
		tail -5 "$work/$name.glibc"
		fail=1
	else
		echo "ok   $name ($(wc -l <"$work/$name.glibc") lines, status 0)"
	fi
}

py_job() {
	PYTHONMALLOC=malloc /usr/bin/python3 "$src/tests/malloc/workload.py"
}

git_job() {
	export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com \
	       GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com \
	       GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' \
	       GIT_COMMITTER_DATE='2024-01-01T00:00:00Z' \
	       GIT_CONFIG_NOSYSTEM=1 HOME=$PWD
	git init -q -b main repo && cd repo || return 1
	for i in $(seq 1 300); do
		mkdir -p "d$((i % 17))"
		seq "$i" $((i * 3)) | sed "s/^/file $i line /" >"d$((i % 17))/f$i.txt"
	done
	git add -A && git commit -q -m "300 files" || return 1
	for i in $(seq 1 300 | awk 'NR % 7 == 0'); do
		echo "change $i" >>"d$((i % 17))/f$i.txt"
	done
	git commit -q -am "change some" || return 1
	git log --stat --format='%H %s' | head -400
	git gc -q --aggressive || return 1
	git fsck --no-progress 2>&1
	git count-objects -v | grep -E '^(count|in-pack|packs)'
	git rev-parse HEAD HEAD^{tree}
}

gcc_job() {
	gcc -O2 -std=gnu11 -I "$src" -c -o conform.o "$src/tests/malloc/conform.c" || return 1
	gcc -O2 -std=gnu11 -pthread -o conform conform.o || return 1
	objdump -d conform.o | tail -n +3 | sha256sum
}

sqlite_job() {
	sqlite3 db.sqlite <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000)
INSERT INTO t SELECT x, 'name' || (x * 7919 % 50000), (x * 104729) % 1000 FROM c;
CREATE INDEX t_name ON t(name);
CREATE INDEX t_v ON t(v);
SELECT count(*), sum(v), min(name), max(name) FROM t;
SELECT v, count(*) FROM t GROUP BY v ORDER BY count(*) DESC, v LIMIT 5;
SELECT group_concat(name, ',') FROM (SELECT name FROM t ORDER BY name LIMIT 20);
DELETE FROM t WHERE v % 3 = 0;
VACUUM;
SELECT count(*), sum(length(name)) FROM t;
SQL
}

perl_job() {
	perl -e '
		my %h; my @a;
		for my $i (1 .. 200000) {
			my $k = "key" . ($i * 7919 % 100003);
			$h{$k} .= chr(65 + $i % 26);
			push @a, join("-", $i, $k) if $i % 3 == 0;
		}
		my $n = 0; for (@a) { $n++ if /-key(\d+)7$/ }
		my @s = sort { length($h{$b}) <=> length($h{$a}) || $a cmp $b } keys %h;
		print scalar(keys %h), " ", scalar(@a), " $n @s[0..4]\n";
		my $t = join("", map { $h{$_} } @s[0 .. 999]); $t =~ s/([A-M])/lc $1/ge;
		print length($t), " ", substr($t, 0, 40), "\n";'
}

# The preload must take: the library has to be in the programs' maps.
LD_PRELOAD="$lib" cat /proc/self/maps | grep -q libuslab.so ||
	{ echo "FAIL: LD_PRELOAD=$lib did not load"; exit 1; }
compare python3 py_job
compare git git_job
compare gcc gcc_job
compare sqlite3 sqlite_job
compare perl perl_job
exit $fail
