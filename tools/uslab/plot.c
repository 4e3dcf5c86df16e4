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
#include <string.h>
#include <unistd.h>
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

/* Data to pixels: [x0, x1] x [y0, y1] onto the plot area. */
struct plot_frame {
	double x0, x1, y0, y1;
	double sx, sy;
};

static double px_x(const struct plot_frame *fr, double x)
{
	return ML + (x - fr->x0) * fr->sx;
}

static double px_y(const struct plot_frame *fr, double y)
{
	return H - MB - (y - fr->y0) * fr->sy;
}

static void plot_scale(struct plot_frame *fr, const struct plot_point *pts, size_t n)
{
	fr->x0 = fr->y0 = INFINITY;
	fr->x1 = fr->y1 = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		fr->x0 = fmin(fr->x0, pts[i].x);
		fr->x1 = fmax(fr->x1, pts[i].x);
		fr->y0 = fmin(fr->y0, pts[i].y);
		fr->y1 = fmax(fr->y1, pts[i].y);
	}
	if (!n) {
		fr->x0 = fr->y0 = 0;
		fr->x1 = fr->y1 = 1;
	}
	/* Start both axes at zero unless the data sit far from it. */
	if (fr->x0 > 0 && fr->x0 < (fr->x1 - fr->x0) * 2)
		fr->x0 = 0;
	if (fr->y0 > 0 && fr->y0 < (fr->y1 - fr->y0) * 2)
		fr->y0 = 0;
	if (fr->x1 - fr->x0 <= 0)
		fr->x1 = fr->x0 + 1;
	if (fr->y1 - fr->y0 <= 0)
		fr->y1 = fr->y0 + 1;
	fr->x1 += (fr->x1 - fr->x0) * 0.05;
	fr->y1 += (fr->y1 - fr->y0) * 0.05;
	fr->sx = (W - ML - MR) / (fr->x1 - fr->x0);
	fr->sy = (H - MT - MB) / (fr->y1 - fr->y0);
}

/* Title, grid, ticks, frame and axis labels. */
static void plot_axes(FILE *f, const struct plot_frame *fr, const char *title,
		      const char *xlabel, const char *ylabel)
{
	double step, v;

	fprintf(f, "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">", W / 2);
	xml_text(f, title);
	fprintf(f, "</text>\n");
	step = nice_step(fr->x1 - fr->x0);
	for (v = ceil(fr->x0 / step) * step; v <= fr->x1; v += step)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
			px_x(fr, v), MT, px_x(fr, v), H - MB, px_x(fr, v), H - MB + 18, v);
	step = nice_step(fr->y1 - fr->y0);
	for (v = ceil(fr->y0 / step) * step; v <= fr->y1; v += step)
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			ML, px_y(fr, v), W - MR, px_y(fr, v), ML - 6, px_y(fr, v) + 4, v);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n",
		ML, MT, W - ML - MR, H - MT - MB);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (ML + W - MR) / 2, H - 25);
	xml_text(f, xlabel);
	fprintf(f, "</text>\n<text transform=\"translate(22,%d) rotate(-90)\" text-anchor=\"middle\">",
		(MT + H - MB) / 2);
	xml_text(f, ylabel);
	fprintf(f, "</text>\n");
}

/* The frontier as a line, left to right. Return: 0 or -ENOMEM. */
static int plot_frontier_line(FILE *f, const struct plot_frame *fr,
			      const struct plot_point *pts, size_t n)
{
	struct plot_point *line = malloc((n ? n : 1) * sizeof(*line));
	size_t i, nl = 0;

	if (!line)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (pts[i].kind == PLOT_FRONTIER || pts[i].kind == PLOT_RECOMMENDED)
			line[nl++] = pts[i];
	qsort(line, nl, sizeof(*line), cmp_x);
	if (nl > 1) {
		fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"");
		for (i = 0; i < nl; i++)
			fprintf(f, "%.1f,%.1f ", px_x(fr, line[i].x), px_y(fr, line[i].y));
		fprintf(f, "\"/>\n");
	}
	free(line);
	return 0;
}

/* A mark per point, coloured by kind; the defaults as a diamond. */
static void plot_marks(FILE *f, const struct plot_frame *fr,
		       const struct plot_point *pts, size_t n)
{
	static const char *const fill[] = {
		[PLOT_SWEPT] = "#aaa", [PLOT_FRONTIER] = "#1f77b4",
		[PLOT_RECOMMENDED] = "#d62728", [PLOT_DEFAULTS] = "#2ca02c",
	};

	for (size_t i = 0; i < n; i++) {
		int k = pts[i].kind < PLOT_SWEPT || pts[i].kind > PLOT_DEFAULTS ?
			PLOT_SWEPT : pts[i].kind;
		double cx = px_x(fr, pts[i].x), cy = px_y(fr, pts[i].y);

		if (k == PLOT_DEFAULTS)
			fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>\n",
				cx, cy - 8, cx + 8, cy, cx, cy + 8, cx - 8, cy, fill[k]);
		else
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\" fill-opacity=\"0.8\"/>\n",
				cx, cy, k == PLOT_RECOMMENDED ? 7 : 4, fill[k]);
	}
}

int plot_svg(const char *path, const char *title, const char *xlabel,
	     const char *ylabel, const struct plot_point *pts, size_t n)
{
	struct plot_frame fr;
	struct out_file o;
	char err[4200];
	FILE *f;
	int rc;

	plot_scale(&fr, pts, n);
	/* never clobbers (trace/outfile.c): a temporary renamed at the end */
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
	plot_axes(f, &fr, title, xlabel, ylabel);
	rc = plot_frontier_line(f, &fr, pts, n);
	plot_marks(f, &fr, pts, n);
	fprintf(f, "<g transform=\"translate(%d,%d)\">\n"
		"<circle cx=\"0\" cy=\"0\" r=\"4\" fill=\"#aaa\"/><text x=\"10\" y=\"4\">configuration swept</text>\n"
		"<circle cx=\"0\" cy=\"18\" r=\"4\" fill=\"#1f77b4\"/><text x=\"10\" y=\"22\">frontier (no other point is better on both axes)</text>\n"
		"<circle cx=\"0\" cy=\"36\" r=\"7\" fill=\"#d62728\"/><text x=\"10\" y=\"40\">recommended</text>\n"
		"<polygon points=\"0,46 8,54 0,62 -8,54\" fill=\"#2ca02c\"/><text x=\"10\" y=\"58\">library defaults</text>\n"
		"</g>\n</svg>\n", W - MR - 330, MT + 16);
	if (fclose(f) && !rc)
		rc = -errno;
	if (rc) {
		out_abort(&o);
		return rc;
	}
	return out_commit(&o, err, sizeof(err));
}
