#!/usr/bin/env bash
# Kernel-style code builds unchanged against uslab's <linux/slab.h>,
# <linux/gfp.h> and <linux/rcupdate.h> shims, and runs.
set -eu
O=${O:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/kcode.c" <<'C'
#include <linux/slab.h>
#include <linux/gfp.h>
#include <linux/rcupdate.h>
#include <stdio.h>
#include <string.h>

struct foo {
	int a;
	struct rcu_head rcu;
	char name[20];
};

static struct kmem_cache *foo_cache;

static void foo_ctor(void *p)
{
	memset(p, 0, sizeof(struct foo));
}

int main(void)
{
	struct foo *f, *g;
	char *buf;

	foo_cache = kmem_cache_create("foo", sizeof(struct foo), 0,
				      SLAB_HWCACHE_ALIGN | SLAB_TYPESAFE_BY_RCU,
				      foo_ctor);
	if (!foo_cache)
		return 1;
	f = kmem_cache_zalloc(foo_cache, GFP_KERNEL);
	g = kzalloc(sizeof(*g), GFP_ATOMIC | __GFP_NOWARN);
	buf = kmalloc_array(16, 8, GFP_NOWAIT);
	if (!f || !g || !buf || kmalloc(0, GFP_KERNEL) != ZERO_SIZE_PTR)
		return 2;
	rcu_register_thread();
	rcu_read_lock();
	f->a = 1;
	rcu_read_unlock();
	rcu_unregister_thread();
	kfree_rcu(g, rcu);
	kfree_rcu_barrier();
	kfree(buf);
	kmem_cache_free(foo_cache, f);
	kmem_cache_destroy(foo_cache);
	puts("kernel-style code ok");
	return 0;
}
C
gcc -std=gnu11 -Wall -Werror -D_GNU_SOURCE -Iinclude -Iinclude/uslab/kernel -I"$O/include" \
	-include "$O/include/generated/autoconf.h" -o "$tmp/kcode" "$tmp/kcode.c" \
	"$O/libuslab-core.a" -lurcu-memb -lurcu-common -lpthread -lrt -lm
out=$("$tmp/kcode")
[ "$out" = "kernel-style code ok" ] || { echo "unexpected output: $out"; exit 1; }
echo "test_slab_linux_headers: ok"
