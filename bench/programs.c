// SPDX-License-Identifier: MIT
/*
 * Two "real program" workloads of mimalloc-bench's shapes, written here:
 *
 *   cfrac STEPS     mirrors cfrac (continued-fraction factoring with its
 *                   own bignums): the continued-fraction expansion of
 *                   sqrt(N) for a 38-digit N, every bignum result a new
 *                   small heap block, every temporary freed at once.
 *   espresso ROUNDS mirrors espresso (two-level logic minimisation over
 *                   covers of cubes): covers of bit-vector cubes grown with
 *                   realloc, pairwise intersections and containment
 *                   removal, each cube its own block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

/* ------------------------------------------------------------------ */
/* cfrac: immutable bignums of 32-bit limbs, one malloc per result */

struct bn {
	int n;			/* limbs in use; 0 is zero */
	uint32_t d[];
};

static struct bn *bn_new(int n)
{
	struct bn *b = malloc(sizeof(*b) + (size_t)(n ? n : 1) * sizeof(uint32_t));

	if (!b)
		exit(1);
	b->n = n;
	memset(b->d, 0, (size_t)(n ? n : 1) * sizeof(uint32_t));
	return b;
}

static struct bn *bn_trim(struct bn *b)
{
	while (b->n && !b->d[b->n - 1])
		b->n--;
	return b;
}

static struct bn *bn_u64(uint64_t v)
{
	struct bn *b = bn_new(2);

	b->d[0] = (uint32_t)v;
	b->d[1] = (uint32_t)(v >> 32);
	return bn_trim(b);
}

static int bn_cmp(const struct bn *a, const struct bn *b)
{
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	for (int i = a->n - 1; i >= 0; i--)
		if (a->d[i] != b->d[i])
			return a->d[i] < b->d[i] ? -1 : 1;
	return 0;
}

static struct bn *bn_add(const struct bn *a, const struct bn *b)
{
	int n = (a->n > b->n ? a->n : b->n) + 1;
	struct bn *r = bn_new(n);
	uint64_t c = 0;

	for (int i = 0; i < n; i++) {
		c += (uint64_t)(i < a->n ? a->d[i] : 0) + (i < b->n ? b->d[i] : 0);
		r->d[i] = (uint32_t)c;
		c >>= 32;
	}
	return bn_trim(r);
}

/* a - b, a >= b */
static struct bn *bn_sub(const struct bn *a, const struct bn *b)
{
	struct bn *r = bn_new(a->n);
	int64_t c = 0;

	for (int i = 0; i < a->n; i++) {
		c += (int64_t)a->d[i] - (i < b->n ? b->d[i] : 0);
		r->d[i] = (uint32_t)c;
		c = c < 0 ? -1 : 0;
	}
	return bn_trim(r);
}

static struct bn *bn_mul(const struct bn *a, const struct bn *b)
{
	struct bn *r = bn_new(a->n + b->n);

	for (int i = 0; i < a->n; i++) {
		uint64_t c = 0;

		for (int j = 0; j < b->n; j++) {
			c += (uint64_t)a->d[i] * b->d[j] + r->d[i + j];
			r->d[i + j] = (uint32_t)c;
			c >>= 32;
		}
		r->d[i + b->n] = (uint32_t)c;
	}
	return bn_trim(r);
}

/* a << 1 | bit */
static struct bn *bn_shl1(const struct bn *a, unsigned int bit)
{
	struct bn *r = bn_new(a->n + 1);
	uint32_t c = bit;

	for (int i = 0; i < a->n; i++) {
		r->d[i] = a->d[i] << 1 | c;
		c = a->d[i] >> 31;
	}
	r->d[a->n] = c;
	return bn_trim(r);
}

/* q = a / b, r = a % b, by shift and subtract: a new remainder per bit */
static void bn_divmod(const struct bn *a, const struct bn *b, struct bn **q,
		      struct bn **r)
{
	struct bn *rem = bn_new(0), *quo = bn_new(a->n);

	for (int i = a->n * 32 - 1; i >= 0; i--) {
		struct bn *t = bn_shl1(rem, (a->d[i / 32] >> (i % 32)) & 1);

		free(rem);
		rem = t;
		if (bn_cmp(rem, b) >= 0) {
			t = bn_sub(rem, b);
			free(rem);
			rem = t;
			quo->d[i / 32] |= 1U << (i % 32);
		}
	}
	bn_trim(quo);
	if (q)
		*q = quo;
	else
		free(quo);
	if (r)
		*r = rem;
	else
		free(rem);
}

/* *@old gives way to @new: numbers are immutable, a step frees what it replaces. */
static void bn_replace(struct bn **old, struct bn *new)
{
	free(*old);
	*old = new;
}

static struct bn *bn_isqrt(const struct bn *n)
{
	struct bn *x = bn_shl1(n, 0), *y;	/* any start above the root */

	for (;;) {
		struct bn *q, *s;

		bn_divmod(n, x, &q, NULL);
		s = bn_add(x, q);
		free(q);
		y = bn_new(s->n);
		for (int i = 0; i < s->n; i++)	/* s >> 1 */
			y->d[i] = s->d[i] >> 1 | (i + 1 < s->n ? s->d[i + 1] << 31 : 0);
		bn_trim(y);
		free(s);
		if (bn_cmp(y, x) >= 0) {
			free(y);
			return x;
		}
		bn_replace(&x, y);
	}
}

int wl_cfrac(int argc, char **argv)
{
	long steps = bench_arg(argc, argv, 2, 20000);
	/* N = 12345678901234567890123456789012345679 (38 digits), built from limbs */
	struct bn *ten = bn_u64(10), *n = bn_u64(0);
	const char *digits = "12345678901234567890123456789012345679";
	struct bn *a0, *m, *d, *a, *p1, *p2;
	uint64_t check = 0;
	double t0, wall;

	t0 = bench_now();
	for (const char *c = digits; *c; c++) {
		struct bn *t = bn_mul(n, ten), *u = bn_u64((uint64_t)(*c - '0'));

		free(n);
		n = bn_add(t, u);
		free(t);
		free(u);
	}
	a0 = bn_isqrt(n);
	m = bn_u64(0);
	d = bn_u64(1);
	a = bn_add(a0, m);
	p2 = bn_u64(1);
	p1 = bn_add(a0, m);
	for (long k = 0; k < steps && d->n; k++) {
		struct bn *t, *m2, *sq, *num, *d2, *a2, *p;

		/* m' = d a - m; d' = (N - m'^2) / d; a' = (a0 + m') / d' */
		t = bn_mul(d, a);
		m2 = bn_cmp(t, m) >= 0 ? bn_sub(t, m) : bn_u64(0);
		free(t);
		sq = bn_mul(m2, m2);
		d2 = NULL;
		if (bn_cmp(n, sq) > 0) {
			num = bn_sub(n, sq);
			bn_divmod(num, d, &d2, NULL);
			free(num);
		}
		free(sq);
		/* N <= m'^2, or d' = 0: the expansion ends */
		if (!d2 || !d2->n) {
			free(d2);
			free(m2);
			break;
		}
		t = bn_add(a0, m2);
		bn_divmod(t, d2, &a2, NULL);
		free(t);
		/* p_k = a p_{k-1} + p_{k-2} mod N: the residues cfrac factors */
		t = bn_mul(a2, p1);
		num = bn_add(t, p2);
		free(t);
		bn_divmod(num, n, NULL, &p);
		free(num);
		check += p->n ? p->d[0] : 0;
		bn_replace(&p2, p1);
		p1 = p;
		bn_replace(&m, m2);
		bn_replace(&d, d2);
		bn_replace(&a, a2);
	}
	wall = bench_now() - t0;
	printf("cfrac_s=%.4f peak_rss_kb=%ld check=%lu\n", wall, bench_peak_rss_kb(),
	       (unsigned long)check);
	free(ten); free(n); free(a0); free(m); free(d); free(a); free(p1); free(p2);
	return 0;
}

/* ------------------------------------------------------------------ */
/* espresso: covers of cubes (two bits per variable), each cube a block */

struct cover {
	uint64_t **cube;
	int n, cap, words;
};

static void cover_add(struct cover *c, uint64_t *cube)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->cube = realloc(c->cube, (size_t)c->cap * sizeof(*c->cube));
		if (!c->cube)
			exit(1);
	}
	c->cube[c->n++] = cube;
}

static void cover_free(struct cover *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->cube[i]);
	free(c->cube);
	c->cube = NULL;
	c->n = c->cap = 0;
}

/* a cube is empty when some variable has neither literal (both bits 0) */
static int cube_empty(const uint64_t *q, int words)
{
	for (int w = 0; w < words; w++) {
		uint64_t x = q[w];

		if (((x | x >> 1) & 0x5555555555555555ULL) != 0x5555555555555555ULL)
			return 1;
	}
	return 0;
}

static int cube_contains(const uint64_t *a, const uint64_t *b, int words)
{
	for (int w = 0; w < words; w++)
		if ((a[w] & b[w]) != b[w])
			return 0;
	return 1;
}

int wl_espresso(int argc, char **argv)
{
	long rounds = bench_arg(argc, argv, 2, 400);
	uint64_t s = 2024, check = 0;
	double t0, wall;

	t0 = bench_now();
	for (long r = 0; r < rounds; r++) {
		int vars = 32 * (1 + (int)(r % 4));	/* 32..128 variables */
		int words = vars / 32;
		struct cover f = { .words = words }, g = { .words = words };

		/* a random cover: each variable 0, 1 or don't care (mostly) */
		for (int i = 0; i < 120; i++) {
			uint64_t *q = malloc((size_t)words * sizeof(uint64_t));

			for (int w = 0; w < words; w++) {
				uint64_t x = 0;

				for (int v = 0; v < 32; v++) {
					uint64_t k = bench_rng(&s) % 8;

					x |= (k == 0 ? 1ULL : k == 1 ? 2ULL : 3ULL) << (2 * v);
				}
				q[w] = x;
			}
			cover_add(&f, q);
		}
		/* pairwise intersections, kept when not empty */
		for (int i = 0; i < f.n; i++)
			for (int j = i + 1; j < f.n; j++) {
				uint64_t *q = malloc((size_t)words * sizeof(uint64_t));

				for (int w = 0; w < words; w++)
					q[w] = f.cube[i][w] & f.cube[j][w];
				if (cube_empty(q, words))
					free(q);
				else
					cover_add(&g, q);
			}
		/* single-cube containment: drop cubes inside another */
		for (int i = 0; i < g.n; i++) {
			if (!g.cube[i])
				continue;
			for (int j = 0; j < g.n; j++)
				if (i != j && g.cube[j] && cube_contains(g.cube[i], g.cube[j], words)) {
					free(g.cube[j]);
					g.cube[j] = NULL;
				}
		}
		for (int i = 0; i < g.n; i++)
			check += g.cube[i] != NULL;
		cover_free(&f);
		cover_free(&g);
	}
	wall = bench_now() - t0;
	printf("espresso_s=%.4f peak_rss_kb=%ld check=%lu\n", wall, bench_peak_rss_kb(),
	       (unsigned long)check);
	return 0;
}
