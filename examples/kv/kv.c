// SPDX-License-Identifier: MIT
/*
 * uslab-kv: a multi-threaded TCP key-value server speaking enough of the
 * Redis protocol (RESP) for redis-benchmark and redis-cli: PING, ECHO, SET,
 * GET, DEL, EXISTS, INCR, DBSIZE, FLUSHALL, CONFIG GET, COMMAND, QUIT, and
 * pipelining (every complete command in a read is answered in one write).
 *
 * Built twice from this file:
 *   uslab-kv         (KV_USLAB) objects from named kmem_caches, as a kernel
 *                    service would: "kv_conn" (with a constructor), "kv_req",
 *                    "kv_item"; keys and values from kmalloc; items and
 *                    values freed with kfree_rcu() after readers are done.
 *   uslab-kv-malloc  the same server on plain malloc/free and call_rcu(),
 *                    for the comparison on glibc and on preloaded peers.
 *
 * Threads: T workers, each with its own listening socket on the same port
 * (SO_REUSEPORT: the kernel spreads connections) and its own epoll.
 *
 * Hostile clients: a request's length fields are parsed within the bytes
 * received (never as C strings); replies waiting to be sent are bounded
 * per client (--client-output-limit) and for all clients together
 * (--output-limit), as redis's client-output-buffer-limit and
 * maxmemory-clients do: a client whose reply would pass either is
 * disconnected; and when accept4() finds no descriptor left (EMFILE), a
 * reserved one is given up to accept and close the waiting connection, so
 * the listening socket does not stay readable and spin the worker.
 *
 * The table: a fixed array of buckets, singly linked chains. Readers (GET,
 * EXISTS) walk a chain under rcu_read_lock() with no lock; writers (SET,
 * DEL, INCR, FLUSHALL) take the bucket's stripe lock, publish with
 * rcu_assign_pointer(), and free what they unlink after a grace period.
 * An item's key and value live in one immutable blob; SET on an existing
 * key swaps the item's blob pointer, so a reader sees either the old or the
 * new value, whole.
 */
#define _GNU_SOURCE		/* accept4, strncasecmp */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifdef KV_USLAB
#include <linux/slab.h>
#include <linux/rcupdate.h>
#else
#define RCU_MEMBARRIER
#include <urcu.h>
#endif

#define KV_RBUF_INIT	16384		/* a connection's first read buffer */
#define KV_WBUF_KEEP	16384		/* write buffer kept across connections */
#define KV_MAX_QUERY	(64u << 20)	/* one request's bytes, at most */
#define KV_MAX_ARGS	1024		/* arguments of one command */
#define KV_WBUF_HIGH	(1u << 20)	/* stop parsing while this much is unsent */
/* Reply buffers: one client's (a GET of the largest value fits), and all
 * clients' together; --client-output-limit and --output-limit. */
static size_t client_out_limit = KV_MAX_QUERY + (8u << 20);
static size_t out_limit = 256u << 20;
static size_t out_total;		/* atomic: every client's wcap */

/* ------------------------------------------------------------------------ */
/* Objects                                                                  */

/* Key and value, immutable once published. */
struct kv_blob {
	struct rcu_head rcu;
	uint32_t klen, vlen;
	char data[];			/* key, then value */
};

struct kv_item {
	struct kv_item *next;		/* chain, RCU-published */
	uint64_t hash;
	struct kv_blob *blob;		/* RCU-published */
	struct rcu_head rcu;
};

/* One parsed command: arguments point into the connection's read buffer. */
struct kv_req {
	int argc;
	const char *argv[KV_MAX_ARGS];
	size_t argl[KV_MAX_ARGS];
};

struct kv_conn {
	int fd;
	bool want_out, closing;
	bool dropped;			/* over an output limit: nothing more sent */
	char *rbuf;			/* kmalloc, grows to the largest request */
	size_t rcap, rlen, rpos;
	char *wbuf;			/* kept across connections (constructor) */
	size_t wcap, wlen, wpos;
	unsigned long nr_cmds;
};

#ifdef KV_USLAB
static struct kmem_cache *conn_cache, *req_cache, *item_cache;

/*
 * The constructor runs once per object when its slab is made, never on
 * reuse: the write buffer a freed connection keeps (up to KV_WBUF_KEEP)
 * survives into the next connection that gets the object, as type-stable
 * state does in the kernel.
 */
static void conn_ctor(void *p)
{
	struct kv_conn *c = p;

	c->wbuf = NULL;
	c->wcap = 0;
}

static struct kv_conn *conn_new(void)
{
	return kmem_cache_alloc(conn_cache, GFP_KERNEL);
}
static void conn_put(struct kv_conn *c)
{
	kmem_cache_free(conn_cache, c);
}
static struct kv_req *req_new(void)
{
	return kmem_cache_alloc(req_cache, GFP_KERNEL);
}
static void req_put(struct kv_req *r)
{
	kmem_cache_free(req_cache, r);
}
static struct kv_item *item_new(void)
{
	return kmem_cache_alloc(item_cache, GFP_KERNEL);
}
static void item_put_rcu(struct kv_item *it)
{
	kfree_rcu(it, rcu);
}
static void *buf_alloc(size_t n)
{
	return kmalloc(n, GFP_KERNEL);
}
static void *buf_realloc(void *p, size_t n)
{
	return krealloc(p, n, GFP_KERNEL);
}
static void buf_free(void *p)
{
	kfree(p);
}
static void blob_put_rcu(struct kv_blob *b)
{
	kfree_rcu(b, rcu);
}
static int kv_alloc_init(void)
{
	conn_cache = kmem_cache_create("kv_conn", sizeof(struct kv_conn), 0,
				       SLAB_HWCACHE_ALIGN, conn_ctor);
	req_cache = kmem_cache_create("kv_req", sizeof(struct kv_req), 0, 0, NULL);
	item_cache = kmem_cache_create("kv_item", sizeof(struct kv_item), 0, 0, NULL);
	return conn_cache && req_cache && item_cache ? 0 : -1;
}
#define KV_ALLOCATOR "kmem_cache"
#else
static struct kv_conn *conn_new(void)
{
	return calloc(1, sizeof(struct kv_conn));
}
static void conn_put(struct kv_conn *c)
{
	free(c->wbuf);
	free(c);
}
static struct kv_req *req_new(void)
{
	return malloc(sizeof(struct kv_req));
}
static void req_put(struct kv_req *r)
{
	free(r);
}
static struct kv_item *item_new(void)
{
	return malloc(sizeof(struct kv_item));
}
static void item_free_cb(struct rcu_head *h)
{
	free((char *)h - offsetof(struct kv_item, rcu));
}
static void item_put_rcu(struct kv_item *it)
{
	call_rcu(&it->rcu, item_free_cb);
}
static void *buf_alloc(size_t n)
{
	return malloc(n);
}
static void *buf_realloc(void *p, size_t n)
{
	return realloc(p, n);
}
static void buf_free(void *p)
{
	free(p);
}
static void blob_free_cb(struct rcu_head *h)
{
	free((char *)h - offsetof(struct kv_blob, rcu));
}
static void blob_put_rcu(struct kv_blob *b)
{
	call_rcu(&b->rcu, blob_free_cb);
}
static int kv_alloc_init(void)
{
	return 0;
}
#define KV_ALLOCATOR "malloc"
#endif

/* ------------------------------------------------------------------------ */
/* The table                                                                */

#define KV_STRIPES	1024		/* writer locks, a power of two */

static struct kv_item **table;
static size_t table_mask;
static pthread_mutex_t stripes[KV_STRIPES];
static long nr_keys;			/* atomic */

static uint64_t kv_hash(const char *k, size_t n)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	while (n--)
		h = (h ^ (unsigned char)*k++) * 1099511628211ull;
	return h;
}

static bool blob_is(const struct kv_blob *b, const char *k, size_t n)
{
	return b->klen == n && !memcmp(b->data, k, n);
}

static struct kv_blob *blob_new(const char *k, size_t kl, const char *v, size_t vl)
{
	struct kv_blob *b;

	if (kl > UINT32_MAX || vl > UINT32_MAX)
		return NULL;
	b = buf_alloc(sizeof(*b) + kl + vl);
	if (!b)
		return NULL;
	b->klen = (uint32_t)kl;
	b->vlen = (uint32_t)vl;
	memcpy(b->data, k, kl);
	memcpy(b->data + kl, v, vl);
	return b;
}

/* Under rcu_read_lock() or the bucket's stripe lock. */
static struct kv_item *kv_find(struct kv_item *head, uint64_t h, const char *k, size_t n)
{
	struct kv_item *it;

	for (it = rcu_dereference(head); it; it = rcu_dereference(it->next))
		if (it->hash == h && blob_is(rcu_dereference(it->blob), k, n))
			return it;
	return NULL;
}

static pthread_mutex_t *stripe_of(uint64_t h)
{
	return &stripes[h & (KV_STRIPES - 1)];
}

/*
 * Insert or replace. @v may be NULL with @incr: INCR's read-modify-write
 * under the stripe lock. Return: 0, -ENOMEM, or -EINVAL (INCR of a value
 * that is not an integer, or overflow); *@out gets INCR's result.
 */
static int kv_set(const char *k, size_t kl, const char *v, size_t vl,
		  bool incr, long long *out)
{
	uint64_t h = kv_hash(k, kl);
	struct kv_item **head = &table[h & table_mask], *it;
	pthread_mutex_t *lock = stripe_of(h);
	struct kv_blob *nb, *old = NULL;
	char num[32];
	int ret = 0;

	pthread_mutex_lock(lock);
	it = kv_find(*head, h, k, kl);
	if (incr) {
		long long n = 0;

		if (it) {
			struct kv_blob *b = it->blob;
			char tmp[32], *end;

			if (b->vlen == 0 || b->vlen >= sizeof(tmp)) {
				ret = -EINVAL;
				goto out;
			}
			memcpy(tmp, b->data + b->klen, b->vlen);
			tmp[b->vlen] = '\0';
			errno = 0;
			n = strtoll(tmp, &end, 10);
			if (errno || *end || (tmp[0] == '0' && b->vlen > 1) || tmp[0] == '+' ||
			    tmp[0] == ' ') {
				ret = -EINVAL;
				goto out;
			}
		}
		if (n == LLONG_MAX) {
			ret = -EINVAL;
			goto out;
		}
		*out = ++n;
		vl = (size_t)snprintf(num, sizeof(num), "%lld", n);
		v = num;
	}
	nb = blob_new(k, kl, v, vl);
	if (!nb) {
		ret = -ENOMEM;
		goto out;
	}
	if (it) {
		old = it->blob;
		rcu_assign_pointer(it->blob, nb);
	} else {
		it = item_new();
		if (!it) {
			buf_free(nb);
			ret = -ENOMEM;
			goto out;
		}
		it->hash = h;
		it->blob = nb;
		it->next = *head;
		rcu_assign_pointer(*head, it);
		__atomic_fetch_add(&nr_keys, 1, __ATOMIC_RELAXED);
	}
out:
	pthread_mutex_unlock(lock);
	if (old)
		blob_put_rcu(old);
	return ret;
}

static int kv_del(const char *k, size_t kl)
{
	uint64_t h = kv_hash(k, kl);
	struct kv_item **pp = &table[h & table_mask], *it;
	pthread_mutex_t *lock = stripe_of(h);

	pthread_mutex_lock(lock);
	for (; (it = *pp); pp = &it->next)
		if (it->hash == h && blob_is(it->blob, k, kl))
			break;
	if (it)
		rcu_assign_pointer(*pp, it->next);
	pthread_mutex_unlock(lock);
	if (!it)
		return 0;
	__atomic_fetch_sub(&nr_keys, 1, __ATOMIC_RELAXED);
	blob_put_rcu(it->blob);
	item_put_rcu(it);
	return 1;
}

static void kv_flush(void)
{
	for (size_t i = 0; i <= table_mask; i++) {
		pthread_mutex_t *lock = &stripes[i & (KV_STRIPES - 1)];
		struct kv_item *it, *next;

		pthread_mutex_lock(lock);
		it = table[i];
		rcu_assign_pointer(table[i], NULL);
		pthread_mutex_unlock(lock);
		for (; it; it = next) {
			next = it->next;
			__atomic_fetch_sub(&nr_keys, 1, __ATOMIC_RELAXED);
			blob_put_rcu(it->blob);
			item_put_rcu(it);
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Replies                                                                  */

/* Room for @n more reply bytes: within the client's and the total limit.
 * Return: 0, or -1 (the client is then dropped: over a limit, or memory). */
static int wreserve(struct kv_conn *c, size_t n)
{
	size_t need = c->wlen + n, cap = c->wcap ? c->wcap : 4096, total;
	char *p;

	if (need <= c->wcap)
		return 0;
	if (n > client_out_limit || need > client_out_limit)
		return -1;
	while (cap < need)
		cap *= 2;
	if (cap > client_out_limit)	/* the last doubling: just what it needs */
		cap = client_out_limit;
	total = __atomic_add_fetch(&out_total, cap - c->wcap, __ATOMIC_RELAXED);
	if (total > out_limit) {
		__atomic_sub_fetch(&out_total, cap - c->wcap, __ATOMIC_RELAXED);
		return -1;
	}
	p = buf_realloc(c->wbuf, cap);
	if (!p) {
		__atomic_sub_fetch(&out_total, cap - c->wcap, __ATOMIC_RELAXED);
		return -1;
	}
	c->wbuf = p;
	c->wcap = cap;
	return 0;
}

/* A drained reply buffer larger than KV_WBUF_KEEP is given back. */
static void wshrink(struct kv_conn *c)
{
	if (c->wcap <= KV_WBUF_KEEP || c->wlen)
		return;
	__atomic_sub_fetch(&out_total, c->wcap, __ATOMIC_RELAXED);
	buf_free(c->wbuf);
	c->wbuf = NULL;
	c->wcap = 0;
}

static void wput(struct kv_conn *c, const void *s, size_t n)
{
	if (c->dropped)
		return;
	if (wreserve(c, n)) {
		/* over its output limit, or out of memory: drop the client
		 * without the rest of its replies (a cut reply would read as
		 * another) */
		c->closing = c->dropped = true;
		return;
	}
	memcpy(c->wbuf + c->wlen, s, n);
	c->wlen += n;
}

static void wstr(struct kv_conn *c, const char *s)
{
	wput(c, s, strlen(s));
}

static void wfmt(struct kv_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wfmt(struct kv_conn *c, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	wput(c, tmp, n < (int)sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void wbulk(struct kv_conn *c, const char *s, size_t n)
{
	wfmt(c, "$%zu\r\n", n);
	wput(c, s, n);
	wput(c, "\r\n", 2);
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                 */

static bool argis(const struct kv_req *r, int i, const char *name)
{
	return r->argl[i] == strlen(name) && !strncasecmp(r->argv[i], name, r->argl[i]);
}

static void wrong_args(struct kv_conn *c, const struct kv_req *r)
{
	wfmt(c, "-ERR wrong number of arguments for '%.*s' command\r\n",
	     (int)(r->argl[0] > 64 ? 64 : r->argl[0]), r->argv[0]);
}

static void cmd_get(struct kv_conn *c, const struct kv_req *r)
{
	uint64_t h = kv_hash(r->argv[1], r->argl[1]);
	struct kv_item *it;

	rcu_read_lock();
	it = kv_find(table[h & table_mask], h, r->argv[1], r->argl[1]);
	if (it) {
		struct kv_blob *b = rcu_dereference(it->blob);

		wbulk(c, b->data + b->klen, b->vlen);	/* copied before unlock */
	} else {
		wstr(c, "$-1\r\n");
	}
	rcu_read_unlock();
}

static void cmd_config(struct kv_conn *c, const struct kv_req *r)
{
	/* redis-benchmark asks for "save" and "appendonly" before it starts. */
	static const char *const known[][2] = {
		{ "save", "" }, { "appendonly", "no" },
	};
	int n = 0;

	if (r->argc != 3 || !argis(r, 1, "get")) {
		wstr(c, "-ERR CONFIG: only CONFIG GET <parameter> is supported\r\n");
		return;
	}
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		n += argis(r, 2, known[i][0]) || (r->argl[2] == 1 && r->argv[2][0] == '*');
	wfmt(c, "*%d\r\n", 2 * n);
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (argis(r, 2, known[i][0]) || (r->argl[2] == 1 && r->argv[2][0] == '*')) {
			wbulk(c, known[i][0], strlen(known[i][0]));
			wbulk(c, known[i][1], strlen(known[i][1]));
		}
}

static void execute(struct kv_conn *c, const struct kv_req *r)
{
	long long n;
	int ret;

	c->nr_cmds++;
	if (argis(r, 0, "get")) {
		if (r->argc != 2)
			return wrong_args(c, r);
		cmd_get(c, r);
	} else if (argis(r, 0, "set")) {
		if (r->argc != 3) {
			if (r->argc < 3)
				return wrong_args(c, r);
			wstr(c, "-ERR SET options (EX, PX, NX, XX, ...) are not supported\r\n");
			return;
		}
		ret = kv_set(r->argv[1], r->argl[1], r->argv[2], r->argl[2], false, NULL);
		wstr(c, ret ? "-OOM out of memory\r\n" : "+OK\r\n");
	} else if (argis(r, 0, "incr")) {
		if (r->argc != 2)
			return wrong_args(c, r);
		ret = kv_set(r->argv[1], r->argl[1], NULL, 0, true, &n);
		if (ret == -EINVAL)
			wstr(c, "-ERR value is not an integer or out of range\r\n");
		else if (ret)
			wstr(c, "-OOM out of memory\r\n");
		else
			wfmt(c, ":%lld\r\n", n);
	} else if (argis(r, 0, "del")) {
		if (r->argc < 2)
			return wrong_args(c, r);
		n = 0;
		for (int i = 1; i < r->argc; i++)
			n += kv_del(r->argv[i], r->argl[i]);
		wfmt(c, ":%lld\r\n", n);
	} else if (argis(r, 0, "exists")) {
		if (r->argc < 2)
			return wrong_args(c, r);
		n = 0;
		rcu_read_lock();
		for (int i = 1; i < r->argc; i++) {
			uint64_t h = kv_hash(r->argv[i], r->argl[i]);

			n += kv_find(table[h & table_mask], h, r->argv[i], r->argl[i]) != NULL;
		}
		rcu_read_unlock();
		wfmt(c, ":%lld\r\n", n);
	} else if (argis(r, 0, "ping")) {
		if (r->argc > 2)
			return wrong_args(c, r);
		if (r->argc == 2)
			wbulk(c, r->argv[1], r->argl[1]);
		else
			wstr(c, "+PONG\r\n");
	} else if (argis(r, 0, "echo")) {
		if (r->argc != 2)
			return wrong_args(c, r);
		wbulk(c, r->argv[1], r->argl[1]);
	} else if (argis(r, 0, "dbsize")) {
		wfmt(c, ":%ld\r\n", __atomic_load_n(&nr_keys, __ATOMIC_RELAXED));
	} else if (argis(r, 0, "flushall") || argis(r, 0, "flushdb")) {
		kv_flush();
		wstr(c, "+OK\r\n");
	} else if (argis(r, 0, "config")) {
		cmd_config(c, r);
	} else if (argis(r, 0, "command")) {
		wstr(c, "*0\r\n");	/* redis-cli's hints: none */
	} else if (argis(r, 0, "quit")) {
		wstr(c, "+OK\r\n");
		c->closing = true;
	} else {
		wfmt(c, "-ERR unknown command '%.*s'\r\n",
		     (int)(r->argl[0] > 64 ? 64 : r->argl[0]), r->argv[0]);
	}
}

/* ------------------------------------------------------------------------ */
/* Parsing (RESP arrays of bulk strings, and inline commands)               */

/*
 * The decimal length of a "*N" or "$N" line: the digits between @p and
 * @nl (the line's '\n', an optional '\r' before it), read within those
 * bytes (the buffer is what was received: no terminating NUL). Return: 0
 * with *@v at most @max, or -1 (empty, a non-digit, or past @max).
 */
static int parse_len(const char *p, const char *nl, long long max, long long *v)
{
	const char *e = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
	long long n = 0;

	if (p == e)
		return -1;
	for (; p < e; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		n = n * 10 + (*p - '0');
		if (n > max)
			return -1;
	}
	*v = n;
	return 0;
}

/* Return: bytes of one complete request at @p, 0 if incomplete, -1 if bad. */
static long parse_one(const char *p, size_t len, struct kv_req *r)
{
	const char *end = p + len, *q, *nl;
	long long n;

	r->argc = 0;
	if (*p != '*') {				/* inline: words, \n ends */
		nl = memchr(p, '\n', len);
		if (!nl)
			return len > 65536 ? -1 : 0;
		for (q = p; q < nl;) {
			while (q < nl && (*q == ' ' || *q == '\r' || *q == '\t'))
				q++;
			if (q == nl)
				break;
			if (r->argc == KV_MAX_ARGS)
				return -1;
			r->argv[r->argc] = q;
			while (q < nl && *q != ' ' && *q != '\r' && *q != '\t')
				q++;
			r->argl[r->argc] = (size_t)(q - r->argv[r->argc]);
			r->argc++;
		}
		return nl + 1 - p;
	}
	nl = memchr(p, '\n', len);
	if (!nl)
		return len > 64 ? -1 : 0;
	if (parse_len(p + 1, nl, KV_MAX_ARGS, &n))
		return -1;
	q = nl + 1;
	for (long long i = 0; i < n; i++) {
		long long bl;

		if (q >= end)
			return 0;
		if (*q != '$')
			return -1;
		nl = memchr(q, '\n', (size_t)(end - q));
		if (!nl)
			return end - q > 64 ? -1 : 0;
		if (parse_len(q + 1, nl, KV_MAX_QUERY, &bl))
			return -1;
		q = nl + 1;
		if ((size_t)(end - q) < (size_t)bl + 2)
			return 0;
		r->argv[r->argc] = q;
		r->argl[r->argc] = (size_t)bl;
		r->argc++;
		q += bl + 2;
	}
	return q - p;
}

/*
 * Every complete request in the read buffer, answered in order.
 * Return: 1 when it stopped at the write high-water mark with requests
 * left, 0 when it consumed all it could, -1 when out of memory.
 */
static int process(struct kv_conn *c)
{
	struct kv_req *r = req_new();
	int more = 0;

	if (!r)
		return -1;
	while (c->rpos < c->rlen && !c->closing) {
		if (c->wlen - c->wpos >= KV_WBUF_HIGH) {
			more = 1;
			break;
		}
		long used = parse_one(c->rbuf + c->rpos, c->rlen - c->rpos, r);

		if (used < 0) {
			wstr(c, "-ERR Protocol error\r\n");
			c->closing = true;
			break;
		}
		if (used == 0)
			break;
		c->rpos += (size_t)used;
		if (r->argc > 0)
			execute(c, r);
	}
	req_put(r);
	if (c->rpos == c->rlen)
		c->rpos = c->rlen = 0;
	return more;
}

/* ------------------------------------------------------------------------ */
/* Connections and workers                                                  */

static struct kv_conn *conn_open(int fd)
{
	struct kv_conn *c = conn_new();

	if (!c)
		return NULL;
	c->rbuf = buf_alloc(KV_RBUF_INIT);
	if (!c->rbuf) {
		conn_put(c);
		return NULL;
	}
	c->fd = fd;
	c->want_out = c->closing = c->dropped = false;
	c->rcap = KV_RBUF_INIT;
	c->rlen = c->rpos = c->wlen = c->wpos = 0;
	c->nr_cmds = 0;
	return c;
}

static void conn_close(int ep, struct kv_conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	buf_free(c->rbuf);
	c->wlen = c->wpos = 0;
	wshrink(c);		/* a small one is kept for the next user */
#ifndef KV_USLAB
	__atomic_sub_fetch(&out_total, c->wcap, __ATOMIC_RELAXED);	/* conn_put frees it */
#endif
	conn_put(c);
}

/* Return: -1 when the connection is to be closed. */
static int conn_flush(int ep, struct kv_conn *c)
{
	if (c->dropped)		/* over a limit: not even the replies before */
		return -1;
	while (c->wpos < c->wlen) {
		ssize_t n = send(c->fd, c->wbuf + c->wpos, c->wlen - c->wpos, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0)
			return -1;
		c->wpos += (size_t)n;
	}
	if (c->wpos == c->wlen) {
		c->wpos = c->wlen = 0;
		wshrink(c);
	}
	if ((c->wlen > 0) != c->want_out) {
		struct epoll_event ev = {
			.events = EPOLLIN | (c->wlen ? EPOLLOUT : 0), .data.ptr = c,
		};

		c->want_out = c->wlen > 0;
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
	}
	return c->closing && !c->wlen ? -1 : 0;
}

static int conn_read(struct kv_conn *c)
{
	for (;;) {
		ssize_t n;

		if (c->rlen == c->rcap) {
			char *p;

			if (c->rpos) {		/* move the partial request down */
				memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
				c->rlen -= c->rpos;
				c->rpos = 0;
				continue;
			}
			if (c->rcap >= KV_MAX_QUERY + 4096)
				return -1;
			p = buf_realloc(c->rbuf, c->rcap * 2);
			if (!p)
				return -1;
			c->rbuf = p;
			c->rcap *= 2;
		}
		n = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return -1;
		c->rlen += (size_t)n;
		if (c->rlen < c->rcap)
			return 0;
	}
}

static int port = 6380, nr_threads = 2;
static volatile sig_atomic_t stopping;

static int listen_socket(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (getenv("KV_BIND_ANY"))
		a.sin_addr.s_addr = htonl(INADDR_ANY);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1024)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * accept4() found no descriptor (EMFILE, ENFILE): the waiting connection
 * stays in the backlog and the listening socket readable, so the worker
 * would spin. Give the reserved descriptor up to accept it and close it
 * (the client sees the connection closed), then take the reserve back.
 * One reserve for all workers, and accept_lock held around every accept4():
 * a worker whose accept took the slot another had just freed left both
 * without a reserve, and the waiting connections hung (seen under load).
 * Return: true when one was shed.
 */
static pthread_mutex_t accept_lock = PTHREAD_MUTEX_INITIALIZER;
static int accept_reserve = -1;		/* under accept_lock */

static bool shed_one(int lfd)
{
	int fd;

	if (accept_reserve < 0)
		accept_reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);	/* freed since */
	if (accept_reserve < 0)
		return false;
	close(accept_reserve);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0)
		close(fd);
	accept_reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd >= 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Every connection waiting on @lfd accepted, under accept_lock. Return:
 * false when out of descriptors with no reserve to shed one: the caller
 * stops listening a while. */
static bool accept_all_locked(int ep, int lfd)
{
	static bool said;
	int fd, one = 1;

	for (;;) {
		struct epoll_event cev = { .events = EPOLLIN };
		struct kv_conn *c;

		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EMFILE && errno != ENFILE)
				return true;	/* EAGAIN: none left */
			if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
				fprintf(stderr, "uslab-kv: out of file descriptors (%s): new connections are closed until some are\n",
					strerror(errno));
			if (!shed_one(lfd))
				return false;
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c = conn_open(fd);
		if (!c) {
			close(fd);
			continue;
		}
		cev.data.ptr = c;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev))
			conn_close(ep, c);
	}
}

static bool accept_all(int ep, int lfd)
{
	bool ok;

	pthread_mutex_lock(&accept_lock);
	ok = accept_all_locked(ep, lfd);
	pthread_mutex_unlock(&accept_lock);
	return ok;
}

static void *worker(void *arg)
{
	int lfd = (int)(intptr_t)arg, ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL }, evs[256];
	uint64_t paused_until = 0;	/* listening again at (ms), 0: listening */

	rcu_register_thread();
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev)) {
		perror("uslab-kv: epoll");
		exit(1);
	}
	while (!stopping) {
		int n = epoll_wait(ep, evs, 256, paused_until ? 50 : 200);

		if (paused_until && now_ms() >= paused_until) {
			if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) == 0)
				paused_until = 0;
		}
		for (int i = 0; i < n; i++) {
			struct kv_conn *c = evs[i].data.ptr;

			if (!c) {
				/* no descriptor and no reserve: stop listening 100 ms */
				if (!accept_all(ep, lfd) &&
				    !epoll_ctl(ep, EPOLL_CTL_DEL, lfd, NULL))
					paused_until = now_ms() + 100;
				continue;
			}
			if (evs[i].events & (EPOLLERR | EPOLLHUP) && !(evs[i].events & EPOLLIN)) {
				conn_close(ep, c);
				continue;
			}
			if ((evs[i].events & EPOLLIN) && conn_read(c))
				c->closing = true;
			/* Parse, answer, send; again while the buffer holds requests
			 * that waited for the write side to drain. */
			bool drop;
			int more;

			do {
				more = process(c);
				drop = more < 0 || conn_flush(ep, c);
			} while (!drop && more > 0 && !c->wlen);
			if (drop || c->closing)
				conn_close(ep, c);	/* a last reply was sent above */
		}
	}
	rcu_unregister_thread();
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: uslab-kv [--port N] [--threads T] [--buckets N]\n"
		   "                [--client-output-limit BYTES] [--output-limit BYTES]\n"
		   "  a Redis-protocol key-value server on 127.0.0.1 (KV_BIND_ANY=1: all addresses)\n"
		   "  objects from %s; SIGINT/SIGTERM stop it\n"
		   "  replies waiting to be sent: at most --client-output-limit a client\n"
		   "  (default %zu) and --output-limit for all (default %zu); a client\n"
		   "  whose reply would pass either is disconnected\n",
		KV_ALLOCATOR, client_out_limit, out_limit);
}

static long arg_num(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s ? s : "", &end, 10);
	if (!s || errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "uslab-kv: %s: expected an integer in %ld..%ld, got '%s'\n",
			opt, lo, hi, s ? s : "");
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long buckets = 1 << 20;
	pthread_t *tids;
	int *lfds;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port") || !strcmp(argv[i], "-p"))
			port = (int)arg_num(argv[i], argv[i + 1], 1, 65535), i++;
		else if (!strcmp(argv[i], "--threads") || !strcmp(argv[i], "-t"))
			nr_threads = (int)arg_num(argv[i], argv[i + 1], 1, 1024), i++;
		else if (!strcmp(argv[i], "--buckets"))
			buckets = arg_num(argv[i], argv[i + 1], 1, 1L << 30), i++;
		else if (!strcmp(argv[i], "--client-output-limit"))
			client_out_limit = (size_t)arg_num(argv[i], argv[i + 1], 4096, 1L << 40), i++;
		else if (!strcmp(argv[i], "--output-limit"))
			out_limit = (size_t)arg_num(argv[i], argv[i + 1], 4096, 1L << 40), i++;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return usage(stdout), 0;
		else
			return fprintf(stderr, "uslab-kv: unknown option '%s'\n", argv[i]), usage(stderr), 2;
	}
	while (buckets & (buckets - 1))		/* round up to a power of two */
		buckets += buckets & -buckets;
	table_mask = (size_t)buckets - 1;
	table = calloc((size_t)buckets, sizeof(*table));
	if (!table || kv_alloc_init()) {
		fprintf(stderr, "uslab-kv: out of memory at start\n");
		return 1;
	}
	for (int i = 0; i < KV_STRIPES; i++)
		pthread_mutex_init(&stripes[i], NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	tids = calloc((size_t)nr_threads, sizeof(*tids));
	lfds = calloc((size_t)nr_threads, sizeof(*lfds));
	if (!tids || !lfds)
		return 1;
	for (int i = 0; i < nr_threads; i++) {
		lfds[i] = listen_socket();
		if (lfds[i] < 0) {
			fprintf(stderr, "uslab-kv: cannot listen on port %d: %s\n", port, strerror(errno));
			return 1;
		}
	}
	/* the descriptor shed_one() gives up when none is left (taken now) */
	accept_reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
	for (int i = 0; i < nr_threads; i++)
		if (pthread_create(&tids[i], NULL, worker, (void *)(intptr_t)lfds[i])) {
			fprintf(stderr, "uslab-kv: cannot start thread %d\n", i);
			return 1;
		}
	printf("uslab-kv: port %d, %d threads, %ld buckets, objects from %s, pid %d\n",
	       port, nr_threads, buckets, KV_ALLOCATOR, (int)getpid());
	fflush(stdout);
	for (int i = 0; i < nr_threads; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
