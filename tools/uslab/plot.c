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

static bool plot_in_view(const struct plot_point *p)
{
	return p->kind != PLOT_SWEPT;
}

/*
 * plot_view_of - the view: the frontier, the defaults, the recommendation
 * and the measured points with their intervals, 8% of room around them.
 * Swept points far off (an outlier stretched the old axes until the
 * frontier, the defaults and the pick overlapped in one corner) are left
 * out of the view and counted. plot-frontier.py draws in the same view.
 */
void plot_view_of(struct plot_view *v, const struct plot_point *pts, size_t n)
{
	double dx, dy;

	v->x0 = v->y0 = INFINITY;
	v->x1 = v->y1 = -INFINITY;
	v->outside = 0;
	for (size_t i = 0; i < n; i++) {
		const struct plot_point *p = &pts[i];

		if (!plot_in_view(p))
			continue;
		v->x0 = fmin(v->x0, p->kind == PLOT_MEASURED ? fmin(p->x, p->xlo) : p->x);
		v->x1 = fmax(v->x1, p->kind == PLOT_MEASURED ? fmax(p->x, p->xhi) : p->x);
		v->y0 = fmin(v->y0, p->kind == PLOT_MEASURED ? fmin(p->y, p->ylo) : p->y);
		v->y1 = fmax(v->y1, p->kind == PLOT_MEASURED ? fmax(p->y, p->yhi) : p->y);
	}
	if (v->x0 > v->x1) {
		v->x0 = v->y0 = 0;
		v->x1 = v->y1 = 1;
	}
	dx = v->x1 - v->x0 > 0 ? v->x1 - v->x0 : fmax(fabs(v->x0), 1) * 0.1;
	dy = v->y1 - v->y0 > 0 ? v->y1 - v->y0 : fmax(fabs(v->y0), 1) * 0.1;
	v->x0 -= dx * 0.08;
	v->x1 += dx * 0.08;
	v->y0 -= dy * 0.08;
	v->y1 += dy * 0.08;
	for (size_t i = 0; i < n; i++)
		if (pts[i].x < v->x0 || pts[i].x > v->x1 || pts[i].y < v->y0 || pts[i].y > v->y1)
			v->outside++;
}

static void plot_scale(struct plot_frame *fr, const struct plot_view *v)
{
	fr->x0 = v->x0;
	fr->x1 = v->x1;
	fr->y0 = v->y0;
	fr->y1 = v->y1;
	fr->sx = (W - ML - MR) / (fr->x1 - fr->x0);
	fr->sy = (H - MT - MB) / (fr->y1 - fr->y0);
}

static bool plot_visible(const struct plot_frame *fr, const struct plot_point *p)
{
	return p->x >= fr->x0 && p->x <= fr->x1 && p->y >= fr->y0 && p->y <= fr->y1;
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
		if (pts[i].kind == PLOT_FRONTIER && plot_visible(fr, &pts[i]))
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
		[PLOT_MEASURED] = "#ff7f0e", [PLOT_ADAPTIVE] = "#9467bd",
	};

	/* the swept points underneath, the marks that matter on top */
	static const int order[] = {
		PLOT_SWEPT, PLOT_FRONTIER, PLOT_MEASURED, PLOT_DEFAULTS, PLOT_ADAPTIVE,
		PLOT_RECOMMENDED,
	};

	for (size_t o = 0; o < ARRAY_SIZE(order); o++)
	for (size_t i = 0; i < n; i++) {
		int k = pts[i].kind < PLOT_SWEPT || pts[i].kind > PLOT_ADAPTIVE ?
			PLOT_SWEPT : pts[i].kind;
		double cx = px_x(fr, pts[i].x), cy = px_y(fr, pts[i].y);

		if (k != order[o] || !plot_visible(fr, &pts[i]))
			continue;
		if (k == PLOT_MEASURED) {
			fprintf(f, "<path d=\"M%.1f,%.1fH%.1fM%.1f,%.1fV%.1f\" stroke=\"%s\" "
				"stroke-width=\"1.5\"/>\n", px_x(fr, pts[i].xlo), cy,
				px_x(fr, pts[i].xhi), cx, px_y(fr, pts[i].ylo), px_y(fr, pts[i].yhi),
				fill[k]);
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" "
				"fill=\"%s\"/>\n", cx - 4, cy - 4, fill[k]);
		} else if (k == PLOT_RECOMMENDED)
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"9\" fill=\"none\" "
				"stroke=\"%s\" stroke-width=\"3\"/>\n", cx, cy, fill[k]);
		else if (k == PLOT_ADAPTIVE)	/* a triangle */
			fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>\n",
				cx, cy - 8, cx + 8, cy + 6, cx - 8, cy + 6, fill[k]);
		else if (k == PLOT_DEFAULTS)
			fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>\n",
				cx, cy - 8, cx + 8, cy, cx, cy + 8, cx - 8, cy, fill[k]);
		else
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\" fill-opacity=\"0.8\"/>\n",
				cx, cy, k == PLOT_RECOMMENDED ? 7 : 4, fill[k]);
	}
}

#define LEGEND_W	340
#define LEGEND_H	108

/* The corner of the plot area whose legend box hides the fewest points
 * (the defaults sat under it, top right, on a trace where they are the
 * costliest and the largest). Return: the box's top left in @x, @y. */
static void plot_legend_place(const struct plot_frame *fr, const struct plot_point *pts,
			      size_t n, int *x, int *y)
{
	const int xs[2] = { ML + 16, W - MR - LEGEND_W }, ys[2] = { MT + 8, H - MB - LEGEND_H - 8 };
	size_t best = SIZE_MAX;

	for (int c = 0; c < 4; c++) {
		int bx = xs[c & 1], by = ys[c >> 1];
		size_t hidden = 0;

		for (size_t i = 0; i < n; i++) {
			double px = px_x(fr, pts[i].x), py = px_y(fr, pts[i].y);

			if (plot_visible(fr, &pts[i]) && px >= bx - 10 && px <= bx + LEGEND_W &&
			    py >= by - 10 && py <= by + LEGEND_H)
				hidden += pts[i].kind == PLOT_SWEPT ? 1 : 100;
		}
		if (hidden < best) {
			best = hidden;
			*x = bx + 10;
			*y = by + 8;
		}
	}
}

int plot_svg(const char *path, const char *title, const char *xlabel,
	     const char *ylabel, const struct plot_point *pts, size_t n)
{
	int lx = ML + 26, ly = MT + 16;
	struct plot_frame fr;
	struct out_file o;
	char err[4200];
	FILE *f;
	int rc;

	struct plot_view v;

	plot_view_of(&v, pts, n);
	plot_scale(&fr, &v);
	/* never clobbers (trace/outfile.c): a temporary renamed at the end */
	rc = cmd_out_fopen(&o, path, &f, err, sizeof(err));
	if (rc)
		return rc;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H, W, H);
	plot_axes(f, &fr, title, xlabel, ylabel);
	plot_legend_place(&fr, pts, n, &lx, &ly);
	rc = plot_frontier_line(f, &fr, pts, n);
	plot_marks(f, &fr, pts, n);
	fprintf(f, "<g transform=\"translate(%d,%d)\">\n"
		"<circle cx=\"0\" cy=\"0\" r=\"4\" fill=\"#aaa\"/><text x=\"10\" y=\"4\">configuration swept</text>\n"
		"<circle cx=\"0\" cy=\"18\" r=\"4\" fill=\"#1f77b4\"/><text x=\"10\" y=\"22\">frontier (no other point is better on both axes)</text>\n"
		"<circle cx=\"0\" cy=\"36\" r=\"9\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"3\"/><text x=\"14\" y=\"40\">recommended (the verdict)</text>\n"
		"<polygon points=\"0,46 8,54 0,62 -8,54\" fill=\"#2ca02c\"/><text x=\"10\" y=\"58\">library defaults</text>\n"
		"<rect x=\"-4\" y=\"68\" width=\"8\" height=\"8\" fill=\"#ff7f0e\"/><text x=\"10\" y=\"76\">replayed: measured change, 95%% CI</text>\n"
		"<polygon points=\"0,82 8,96 -8,96\" fill=\"#9467bd\"/><text x=\"10\" y=\"94\">adaptive magazines, default bounds (adapt=1)</text>\n"
		"</g>\n", lx, ly);
	if (v.outside)
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#666\">"
			"zoomed to the frontier: %zu swept configurations lie outside</text>\n",
			W - MR, H - 8, v.outside);
	fprintf(f, "</svg>\n");
	if (rc) {
		fclose(f);
		out_abort(&o);
		return rc;
	}
	return cmd_out_fclose(&o, f, err, sizeof(err));
}
