#!/usr/bin/env bash
# Kernel code that includes <linux/slab.h> before <linux/rcupdate.h> (the
# usual order) gets real declarations of call_rcu() and rcu_barrier(), in C
# and in C++ (README: the headers are C11 and C++11 alike), in either order
# of the two headers, and with <uslab/slab.h> alone before <urcu.h>.
# slab.h once took <urcu/call-rcu.h> outside liburcu's flavour mapping: it
# declared the unmapped names, the include guard then kept the memb
# flavour's (urcu_memb_call_rcu, urcu_memb_barrier) undeclared, so C got
# implicit declarations (hidden by gcc, as the names come from a system
# header's macro) and C++ did not compile.
. "$(dirname "$0")/../lib.sh"

body='
#include <stdio.h>

struct foo {
	int a;
	struct rcu_head rcu;
};

static int called;

static void foo_cb(struct rcu_head *head)
{
	struct foo *f = (struct foo *)((char *)head - offsetof(struct foo, rcu));

	called += f->a;
	kfree(f);
}

int main(void)
{
	struct foo *f = (struct foo *)kzalloc(sizeof(*f), GFP_KERNEL);
	struct foo *g = (struct foo *)kzalloc(sizeof(*g), GFP_KERNEL);

	if (!f || !g)
		return 2;
	f->a = 1;
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	rcu_unregister_thread();
	synchronize_rcu();
	call_rcu(&f->rcu, foo_cb);
	kfree_rcu(g, rcu);
	rcu_barrier();
	kfree_rcu_barrier();
	printf("called %d\n", called);
	return called == 1 ? 0 : 3;
}
'
n=0
for order in 'linux/slab.h linux/rcupdate.h' 'linux/rcupdate.h linux/slab.h' \
	     'uslab/slab.h urcu.h'; do
	n=$((n + 1))
	src=$T/k$n
	: > "$src.c"
	for h in $order; do
		echo "#include <$h>" >> "$src.c"
	done
	echo "$body" >> "$src.c"
	echo "headers: $order"
	kernel_c_and_cxx "$src.c" "called 1" -Wsystem-headers -Wno-error=cpp
done
echo "test_slab_linux_rcupdate_declares_call_rcu: ok"
