// SPDX-License-Identifier: MIT
/*
 * Address -> dense object id for the importers: a keyed hash table
 * (hmap, trace_common.c), and freed ids reused last-in first-out so that
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
	struct hmap addr;	/* address -> id of the live object there */
	uint64_t *free_ids;
	uint64_t nfree, free_cap;
	uint64_t next_id;
};

/*
 * The table is keyed (trace_common.c): addresses chosen to collide, such as
 * (j << 50) | (i << 4), cost what random ones do. An earlier version
 * grouped neighbouring addresses for locality with an unkeyed hash, and
 * 120,000 such mtrace lines took 15 s instead of 0.1 s.
 */
struct idmap *idmap_new(void)
{
	struct idmap *m = calloc(1, sizeof(*m));

	if (m) {
		m->next_id = 1;
		hmap_init(&m->addr);
	}
	return m;
}

void idmap_free(struct idmap *m)
{
	if (!m)
		return;
	hmap_destroy(&m->addr);
	free(m->free_ids);
	free(m);
}

int idmap_insert(struct idmap *m, uint64_t addr, uint64_t *id)
{
	return idmap_insert_hashed(m, addr, hmap_hash(&m->addr, addr), id);
}

int idmap_insert_hashed(struct idmap *m, uint64_t addr, uint64_t hash, uint64_t *id)
{
	uint64_t new = m->nfree ? m->free_ids[m->nfree - 1] : m->next_id;
	int rc = hmap_insert_hashed(&m->addr, addr, hash, new);

	if (rc)
		return rc;
	if (m->nfree)
		m->nfree--;
	else
		m->next_id++;
	*id = new;
	return 0;
}

int idmap_attach(struct idmap *m, uint64_t addr, uint64_t id)
{
	return hmap_insert(&m->addr, addr, id);
}

int idmap_lookup(const struct idmap *m, uint64_t addr, uint64_t *id)
{
	const uint64_t *v = hmap_find(&m->addr, addr);

	if (!v)
		return -ENOENT;
	*id = *v;
	return 0;
}

uint64_t idmap_hash(const struct idmap *m, uint64_t addr)
{
	return hmap_hash(&m->addr, addr);
}

void idmap_prefetch(const struct idmap *m, uint64_t hash)
{
	hmap_prefetch(&m->addr, hash);
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

int idmap_detach_hashed(struct idmap *m, uint64_t addr, uint64_t hash, uint64_t *id)
{
	return hmap_remove_hashed(&m->addr, addr, hash, id);
}

int idmap_detach(struct idmap *m, uint64_t addr, uint64_t *id)
{
	return hmap_remove(&m->addr, addr, id);
}

int idmap_remove_hashed(struct idmap *m, uint64_t addr, uint64_t hash, uint64_t *id)
{
	int rc = idmap_detach_hashed(m, addr, hash, id);

	return rc ? rc : idmap_release_id(m, *id);
}

int idmap_remove(struct idmap *m, uint64_t addr, uint64_t *id)
{
	return idmap_remove_hashed(m, addr, hmap_hash(&m->addr, addr), id);
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
static int import_read_line(FILE *in, char *buf, size_t cap, size_t *lenp)
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
int import_err(struct import_result *res, const char *name, uint64_t line,
	       const char *fmt, ...)
{
	int n = snprintf(res->err, sizeof(res->err), "%s:%" PRIu64 ": ", name, line);
	va_list ap;

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(res->err))
		vsnprintf(res->err + n, sizeof(res->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EPROTO;
}

int import_lines(FILE *in, const char *name, struct import_result *res,
		 const struct import_format *fmt, void *state, uint64_t *nlines)
{
	char *buf = malloc(fmt->cap);
	uint64_t line = 0;
	int rc;

	memset(res, 0, sizeof(*res));
	*nlines = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		size_t len;

		rc = import_read_line(in, buf, fmt->cap, &len);
		if (rc == 0)
			break;
		line++;
		if (rc < 0) {
			rc = import_err(res, name, line, "%s", rc == -E2BIG ? fmt->too_long :
					rc == -EILSEQ ? fmt->not_text : "read error");
			break;
		}
		if (!len)
			continue;	/* blank lines carry nothing in any format */
		rc = fmt->parse(state, buf, line);
		if (rc) {
			if (rc != -EPROTO)
				import_err(res, name, line, "%s", strerror(-rc));
			break;
		}
	}
	*nlines = line;
	free(buf);
	return rc;
}

int import_run(struct importer *im, FILE *in, const struct import_format *fmt,
	       uint64_t *nlines)
{
	int rc;

	*nlines = 0;
	im->ids = idmap_new();
	if (!im->ids)
		return -ENOMEM;
	rc = import_lines(in, im->name, im->res, fmt, im, nlines);
	idmap_free(im->ids);
	im->ids = NULL;
	return rc;
}

int import_new_object(struct importer *im, uint64_t addr, uint64_t *id,
		      struct trace_event *lost)
{
	int rc = idmap_insert(im->ids, addr, id);

	if (rc != -EEXIST)
		return rc;
	rc = idmap_remove(im->ids, addr, &lost->id);
	if (!rc)
		rc = import_emit(im, lost);
	return rc ? rc : idmap_insert(im->ids, addr, id);
}

int import_emit(struct importer *im, const struct trace_event *ev)
{
	im->res->events++;
	if (ev->cpu != TRACE_CPU_UNKNOWN && ev->cpu + 1 > im->res->cpus)
		im->res->cpus = ev->cpu + 1;
	return im->emit(im->ctx, ev);
}

const char *import_hex(const char *s, uint64_t *v)
{
	uint64_t r = 0;
	int digits = 0;

	for (;; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (digits == 16)
			return NULL;
		r = r << 4 | (uint64_t)d;
	}
	if (!digits)
		return NULL;
	*v = r;
	return s;
}
