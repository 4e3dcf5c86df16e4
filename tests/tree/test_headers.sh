#!/usr/bin/env bash
# Every header compiles on its own (shared/STYLE.md): public headers, lib/
# and each folder's internal.h, with the project's warnings as errors.
set -u
cd "$(dirname "$0")/../.."
O=${O:-build}
conf=$O/include/generated/autoconf.h
[ -f "$conf" ] || { echo "no $conf: build first"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for h in include/uslab/*.h include/uslab/kernel/linux/*.h lib/*.h */internal.h; do
	[ -f "$h" ] || continue
	printf '#include "%s"\n' "$h" > "$tmp/one.c"
	# Public headers compile both as the library sees them (USLAB_INTERNAL)
	# and as a user does; the installed copies are checked from a real
	# install by test_malloc_install.sh.
	case "$h" in include/*) defs="-DUSLAB_INTERNAL -UUSLAB_INTERNAL" ;; *) defs=-DUSLAB_INTERNAL ;; esac
	ok=1
	for d in $defs; do
		gcc -std=gnu11 -D_GNU_SOURCE "$d" -Iinclude -I. -I"$O/include" -include "$conf" \
		    -Wall -Wextra -Werror -fsyntax-only "$tmp/one.c" 2>"$tmp/err" || { ok=0; break; }
	done
	if [ "$ok" = 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL: $h does not compile on its own:"; head -5 "$tmp/err"
	fi
done
# Installed headers that must stand alone (issue 12, item 3): only the
# installed include/ tree on the path, no lib/, no generated config.
mkdir -p "$tmp/prefix"
cp -r include/uslab "$tmp/prefix/"
for h in uslab/percpu.h uslab/mm_types.h uslab/types.h; do
	printf '#include <%s>\n' "$h" > "$tmp/one.c"
	if gcc -std=gnu11 -I"$tmp/prefix" -Wall -Wextra -Werror -fsyntax-only \
	       "$tmp/one.c" 2>"$tmp/err"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL: $h needs more than the installed headers:"; head -5 "$tmp/err"
	fi
done
echo "headers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
