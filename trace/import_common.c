// SPDX-License-Identifier: MIT
/*
 * Address -> dense object id for the importers: open addressing with
 * backward-shift deletion, and freed ids reused last-in first-out so that
 * the id space stays near the peak number of live objects, as the recorder
 * does. Single-threaded, no locks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/internal.h"

struct idmap {
	uint64_t *slots;	/* pairs: key + 1 (0 = empty), id */
	uint64_t mask;
	uint64_t count;
	uint64_t *free_ids;
	uint64_t nfree, free_cap;
	uint64_t next_id;
};

/*
 * Home slot: objects in the same 1 KiB of address space share a group of 64
 * neighbouring slots (their low address bits pick the slot in the group),
 * and groups are spread by a multiplicative hash. Allocators hand out
 * nearby addresses close in time, so this keeps a large table's accesses
 * in cache where a plain hash would miss on nearly every lookup.
 */
static uint64_t hash(uint64_t k)
{
	return ((k >> 10) * 0x9e3779b97f4a7c15ull >> 20) << 6 | ((k >> 4) & 63);
}

struct idmap *idmap_new(void)
{
	struct idmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->mask = 1023;
	m->slots = calloc(m->mask + 1, 16);
	m->next_id = 1;
	if (!m->slots) {
		free(m);
		return NULL;
	}
	return m;
}

void idmap_free(struct idmap *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m->free_ids);
	free(m);
}

static int grow(struct idmap *m)
{
	uint64_t cap = (m->mask + 1) * 2, *s = calloc(cap, 16);

	if (!s)
		return -ENOMEM;
	for (uint64_t i = 0; i <= m->mask; i++) {
		uint64_t k = m->slots[2 * i], j;

		if (!k)
			continue;
		for (j = hash(k - 1) & (cap - 1); s[2 * j]; j = (j + 1) & (cap - 1))
			;
		s[2 * j] = k;
		s[2 * j + 1] = m->slots[2 * i + 1];
	}
	free(m->slots);
	m->slots = s;
	m->mask = cap - 1;
	return 0;
}

static uint64_t *find(const struct idmap *m, uint64_t addr)
{
	for (uint64_t i = hash(addr) & m->mask; m->slots[2 * i]; i = (i + 1) & m->mask)
		if (m->slots[2 * i] == addr + 1)
			return &m->slots[2 * i];
	return NULL;
}

int idmap_insert(struct idmap *m, uint64_t addr, uint64_t *id)
{
	uint64_t i;

	if (addr == UINT64_MAX)		/* key + 1 would be the empty mark */
		return -EINVAL;
	if (find(m, addr))
		return -EEXIST;
	if ((m->count + 1) * 4 > (m->mask + 1) * 3 && grow(m))
		return -ENOMEM;
	*id = m->nfree ? m->free_ids[--m->nfree] : m->next_id++;
	for (i = hash(addr) & m->mask; m->slots[2 * i]; i = (i + 1) & m->mask)
		;
	m->slots[2 * i] = addr + 1;
	m->slots[2 * i + 1] = *id;
	m->count++;
	return 0;
}

int idmap_attach(struct idmap *m, uint64_t addr, uint64_t id)
{
	uint64_t i;

	if (addr == UINT64_MAX)
		return -EINVAL;
	if (find(m, addr))
		return -EEXIST;
	if ((m->count + 1) * 4 > (m->mask + 1) * 3 && grow(m))
		return -ENOMEM;
	for (i = hash(addr) & m->mask; m->slots[2 * i]; i = (i + 1) & m->mask)
		;
	m->slots[2 * i] = addr + 1;
	m->slots[2 * i + 1] = id;
	m->count++;
	return 0;
}

int idmap_lookup(const struct idmap *m, uint64_t addr, uint64_t *id)
{
	const uint64_t *s = addr == UINT64_MAX ? NULL : find(m, addr);

	if (!s)
		return -ENOENT;
	*id = s[1];
	return 0;
}

int idmap_release_id(struct idmap *m, uint64_t id)
{
	if (m->nfree == m->free_cap) {
		uint64_t cap = m->free_cap ? m->free_cap * 2 : 256;
		uint64_t *f = realloc(m->free_ids, cap * 8);

		if (!f)
			return -ENOMEM;
		m->free_ids = f;
		m->free_cap = cap;
	}
	m->free_ids[m->nfree++] = id;
	return 0;
}

int idmap_detach(struct idmap *m, uint64_t addr, uint64_t *id)
{
	uint64_t *s = addr == UINT64_MAX ? NULL : find(m, addr), i, j;

	if (!s)
		return -ENOENT;
	*id = s[1];
	i = (uint64_t)(s - m->slots) / 2;
	for (j = (i + 1) & m->mask; m->slots[2 * j]; j = (j + 1) & m->mask) {
		uint64_t home = hash(m->slots[2 * j] - 1) & m->mask;

		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slots[2 * i] = m->slots[2 * j];
			m->slots[2 * i + 1] = m->slots[2 * j + 1];
			i = j;
		}
	}
	m->slots[2 * i] = 0;
	m->count--;
	return 0;
}

int idmap_remove(struct idmap *m, uint64_t addr, uint64_t *id)
{
	int rc = idmap_detach(m, addr, id);

	return rc ? rc : idmap_release_id(m, *id);
}

uint64_t idmap_id_space(const struct idmap *m)
{
	return m->next_id;
}

/*
 * One line of text into @buf (without the newline, NUL-terminated), never
 * more than @cap - 1 bytes, so a hostile file cannot make us allocate.
 * Return: 1 for a line, 0 at end of file, -E2BIG for a longer line,
 * -EILSEQ for a NUL byte (not text), -EIO for a read error.
 */
int import_read_line(FILE *in, char *buf, size_t cap, size_t *lenp)
{
	size_t len = 0;
	int c;

	while ((c = getc_unlocked(in)) != EOF) {
		if (c == '\n')
			break;
		if (!c)
			return -EILSEQ;
		if (len == cap - 1)
			return -E2BIG;
		buf[len++] = (char)c;
	}
	if (c == EOF && ferror(in))
		return -EIO;
	if (c == EOF && !len)
		return 0;
	if (len && buf[len - 1] == '\r')
		len--;
	buf[len] = 0;
	*lenp = len;
	return 1;
}

/* Both importers report errors as "NAME:LINE: what was expected". */
int import_verr(struct import_result *res, const char *name, uint64_t line,
		const char *fmt, va_list ap)
{
	int n = snprintf(res->err, sizeof(res->err), "%s:%" PRIu64 ": ", name, line);

	if (n > 0 && (size_t)n < sizeof(res->err))
		vsnprintf(res->err + n, sizeof(res->err) - (size_t)n, fmt, ap);
	return -EPROTO;
}
