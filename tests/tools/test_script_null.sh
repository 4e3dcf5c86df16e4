#!/usr/bin/env bash
# uslab script prints NULL as such: free(NULL) is "free id=NULL" (it was
# "free id=0", which reads as an object), realloc(NULL, n) is
# "realloc id=N old=NULL size=n", and an object's free keeps its number.
. "$(dirname "$0")/../lib.sh"
cat > "$T/n.c" <<'C'
#include <stdlib.h>
int main(void)
{
	void *p = malloc(10);
	free(NULL);
	p = realloc(p, 20);
	void *q = realloc(NULL, 30);
	free(p);
	free(q);
	return 0;
}
C
gcc -O0 -fno-builtin -o "$T/n" "$T/n.c"
"$U" record -q -o "$T/n.ustr" -- "$T/n" || fail "record"
"$U" script "$T/n.ustr" | awk '{ $1 = ""; $3 = ""; print }' | sed 's/^ *//; s/  */ /g' > "$T/s"
cat "$T/s"
grep -qx '0 free id=NULL' "$T/s" || fail "free(NULL) not printed as free id=NULL"
grep -Eqx '0 realloc id=[1-9][0-9]* old=NULL size=30' "$T/s" || fail "realloc(NULL, 30) not printed with old=NULL"
grep -Eqx '0 realloc id=[1-9][0-9]* old=[1-9][0-9]* size=20' "$T/s" || fail "realloc of an object"
[ "$(grep -Ec '^0 free id=[1-9]' "$T/s")" -ge 2 ] || fail "frees of objects"
! grep -q 'id=0\b' "$T/s" || fail "id=0 printed"
echo ok
