#!/usr/bin/env bash
# <uslab/slab.h> alone is enough for kfree_rcu(), as the README says of the
# kernel API: a program with a struct rcu_head member, including nothing
# else of uslab or liburcu, compiles (it did not: "field has incomplete
# type"), links against libuslab.so and frees through kfree_rcu.
. "$(dirname "$0")/../lib.sh"
cat > "$T/r.c" <<'C'
#include <stdio.h>
#include <uslab/slab.h>
struct node { int key; struct rcu_head rcu; };
int main(void)
{
	for (int i = 0; i < 1000; i++) {
		struct node *n = kmalloc(sizeof(*n), GFP_KERNEL);
		if (!n)
			return 1;
		n->key = i;
		kfree_rcu(n, rcu);
	}
	kfree_rcu_barrier();
	puts("freed");
	return 0;
}
C
gcc -std=gnu11 -Wall -Werror -Iinclude -I"$O/include" -include "$O/include/generated/autoconf.h" \
	-o "$T/r" "$T/r.c" -L"$O" -luslab -Wl,-rpath,"$(realpath "$O")" 2>"$T/err" ||
	{ cat "$T/err"; fail "<uslab/slab.h> alone does not compile kfree_rcu"; }
[ "$("$T/r")" = freed ] || fail "kfree_rcu program"
echo ok
