// SPDX-License-Identifier: MIT
/*
 * A scatter plot with a frontier line, written as SVG by hand: no library,
 * output that any browser shows. Used by `uslab tune` for the memory
 * overhead against modelled time picture.
 *
 * No locks: single-threaded.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "tools/uslab/builtin.h"

#define W	800
#define H	560
#define ML	90	/* margins: left, right, top, bottom */
#define MR	30
#define MT	50
#define MB	70

/* A "nice" tick step (1, 2 or 5 times a power of ten) for about 6 ticks. */
static double nice_step(double range)
{
	double raw = range / 6.0, mag, f;

	if (raw <= 0)
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static int cmp_x(const void *a, const void *b)
{
	const struct plot_point *p = a, *q = b;

	return p->x < q->x ? -1 : p->x > q->x;
}

int plot_svg(const char *path, const char *title, const char *xlabel,
	     const char *ylabel, const struct plot_point *pts, size_t n)
{
	double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
	double sx, sy, step, v;
	struct plot_point *fr = NULL;
	size_t i, nf = 0;
	FILE *f;
	struct out_file o;
	char err[4200];
	int rc;

	for (i = 0; i < n; i++) {
		x0 = fmin(x0, pts[i].x);
		x1 = fmax(x1, pts[i].x);
		y0 = fmin(y0, pts[i].y);
		y1 = fmax(y1, pts[i].y);
	}
	if (!n) {
		x0 = y0 = 0;
		x1 = y1 = 1;
	}
	/* Start both axes at zero unless the data sit far from it. */
	if (x0 > 0 && x0 < (x1 - x0) * 2)
		x0 = 0;
	if (y0 > 0 && y0 < (y1 - y0) * 2)
		y0 = 0;
	if (x1 - x0 <= 0)
		x1 = x0 + 1;
	if (y1 - y0 <= 0)
		y1 = y0 + 1;
	x1 += (x1 - x0) * 0.05;
	y1 += (y1 - y0) * 0.05;
	sx = (W - ML - MR) / (x1 - x0);
	sy = (H - MT - MB) / (y1 - y0);

	/* never clobbers (sim/outfile.c): a temporary renamed at the end */
	rc = out_open(&o, path, err, sizeof(err));
	if (rc)
		return rc;
	f = fdopen(dup(o.fd), "w");
	if (!f) {
		rc = -errno;
		out_abort(&o);
		return rc;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H, W, H);
	fprintf(f, "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">", W / 2);
	xml_text(f, title);
	fprintf(f, "</text>\n");

	/* grid and ticks */
	step = nice_step(x1 - x0);
	for (v = ceil(x0 / step) * step; v <= x1; v += step) {
		double px = ML + (v - x0) * sx;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
			px, MT, px, H - MB, px, H - MB + 18, v);
	}
	step = nice_step(y1 - y0);
	for (v = ceil(y0 / step) * step; v <= y1; v += step) {
		double py = H - MB - (v - y0) * sy;

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			ML, py, W - MR, py, ML - 6, py + 4, v);
	}
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n",
		ML, MT, W - ML - MR, H - MT - MB);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (ML + W - MR) / 2, H - 25);
	xml_text(f, xlabel);
	fprintf(f, "</text>\n<text transform=\"translate(22,%d) rotate(-90)\" text-anchor=\"middle\">",
		(MT + H - MB) / 2);
	xml_text(f, ylabel);
	fprintf(f, "</text>\n");

	/* the frontier as a line, left to right */
	fr = malloc((n ? n : 1) * sizeof(*fr));
	if (fr) {
		for (i = 0; i < n; i++)
			if (pts[i].kind == 1 || pts[i].kind == 2)
				fr[nf++] = pts[i];
		qsort(fr, nf, sizeof(*fr), cmp_x);
		if (nf > 1) {
			fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"");
			for (i = 0; i < nf; i++)
				fprintf(f, "%.1f,%.1f ", ML + (fr[i].x - x0) * sx,
					H - MB - (fr[i].y - y0) * sy);
			fprintf(f, "\"/>\n");
		}
		free(fr);
	}
	for (i = 0; i < n; i++) {
		static const char *const fill[] = { "#aaa", "#1f77b4", "#d62728", "#2ca02c" };
		int k = pts[i].kind < 0 || pts[i].kind > 3 ? 0 : pts[i].kind;
		double cx = ML + (pts[i].x - x0) * sx, cy = H - MB - (pts[i].y - y0) * sy;

		if (k == 3)	/* a diamond */
			fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>\n",
				cx, cy - 8, cx + 8, cy, cx, cy + 8, cx - 8, cy, fill[k]);
		else
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\" fill-opacity=\"0.8\"/>\n",
				cx, cy, k == 2 ? 7 : 4, fill[k]);
	}
	/* legend */
	fprintf(f, "<g transform=\"translate(%d,%d)\">\n"
		"<circle cx=\"0\" cy=\"0\" r=\"4\" fill=\"#aaa\"/><text x=\"10\" y=\"4\">configuration swept</text>\n"
		"<circle cx=\"0\" cy=\"18\" r=\"4\" fill=\"#1f77b4\"/><text x=\"10\" y=\"22\">frontier (no other point is better on both axes)</text>\n"
		"<circle cx=\"0\" cy=\"36\" r=\"7\" fill=\"#d62728\"/><text x=\"10\" y=\"40\">recommended</text>\n"
		"<polygon points=\"0,46 8,54 0,62 -8,54\" fill=\"#2ca02c\"/><text x=\"10\" y=\"58\">library defaults</text>\n"
		"</g>\n</svg>\n", W - MR - 330, MT + 16);
	if (fclose(f)) {
		rc = -errno;
		out_abort(&o);
		return rc;
	}
	return out_commit(&o, err, sizeof(err));
}
