// SPDX-License-Identifier: MIT
/*
 * timeline_draw(): a chart of memory over time (struct timeline_plot,
 * builtin.h) as the path's extension says: .svg drawn here, .png by
 * plot-timeline.py with matplotlib; any other is refused. One drawing for
 * `report --timeline`, `sim --timeline` and `replay --timeline`.
 * No locks.
 */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tools/uslab/builtin.h"

#define TL_SCRIPT	"plot-timeline.py"

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		default: fputc(*s, f);
		}
}

static double nice_step(double range)
{
	double raw = range / 6, mag = 1, f;

	if (raw <= 0)
		return 1;
	while (mag * 10 <= raw)
		mag *= 10;
	while (mag > raw)
		mag /= 10;
	f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static const char *const colours[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b" };

#define SW 1000
#define SH 560
#define SL 90
#define SR 20
#define ST 50
#define SB 60

static int write_svg(const struct timeline_plot *p, const char *path)
{
	double unit = p->peak_y >= (10ull << 20) ? 1 << 20 : p->peak_y >= (10ull << 10) ? 1 << 10 : 1;
	const char *uname = unit == 1 << 20 ? "MiB" : unit == 1 << 10 ? "KiB" : "bytes";
	double ymax = 0, xmax = p->npts ? p->x[p->npts - 1] : 0, step;
	double pw = SW - SL - SR, ph = SH - ST - SB;
	struct out_file o;
	char err[4200];
	FILE *f;
	int rc;

	for (uint32_t k = 0; k < p->nseries; k++)
		for (uint32_t i = 0; i < p->npts; i++)
			if ((double)p->y[k][i] / unit > ymax)
				ymax = (double)p->y[k][i] / unit;
	if (ymax <= 0)
		ymax = 1;
	if (xmax <= 0)
		xmax = 1e-9;
	rc = cmd_out_fopen(&o, path, &f, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "%s: %s\n", p->who, err);
		return 1;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">",
		SW, SH, SW, SH, SW / 2);
	xml_text(f, p->title);
	fputs("</text>\n", f);
	/* axes and ticks */
	step = nice_step(ymax);
	for (double y = 0; y <= ymax * 1.0001; y += step) {
		double py = ST + ph - y / ymax * ph;

		fprintf(f, "<line x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			SL, SL + pw, py, py, SL - 6, py + 4, y);
	}
	step = nice_step(xmax);
	for (double x = 0; x <= xmax * 1.0001; x += step) {
		double px = SL + x / xmax * pw;

		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
			px, px, ST, ST + ph, px, ST + ph + 16, x);
	}
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#333\"/>\n"
		"<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">",
		SL, ST, pw, ph, SL + pw / 2, SH - 16);
	xml_text(f, p->xlabel);
	fprintf(f, "</text>\n<text transform=\"translate(22,%.0f) rotate(-90)\" text-anchor=\"middle\">",
		ST + ph / 2);
	xml_text(f, p->ylabel);
	fprintf(f, " %s</text>\n", uname);
	for (uint32_t k = 0; k < p->nseries; k++) {
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" points=\"",
			colours[k % 6], k ? "1.3" : "2");
		for (uint32_t i = 0; i < p->npts; i++)
			fprintf(f, "%.1f,%.1f ", SL + p->x[i] / xmax * pw,
				ST + ph - (double)p->y[k][i] / unit / ymax * ph);
		fputs("\"/>\n", f);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" font-size=\"11\">", SL + 12, ST + 14 + 15 * k,
			colours[k % 6], SL + 30, ST + 18 + 15 * k);
		xml_text(f, p->names[k]);
		fputs("</text>\n", f);
	}
	{
		double px = SL + p->peak_x / xmax * pw;
		double py = ST + ph - (double)p->peak_y / unit / ymax * ph;

		/* the mark on the peak's series; its label above it */
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.1f\" stroke=\"#d62728\" "
			"stroke-dasharray=\"4,3\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#d62728\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" fill=\"#d62728\" text-anchor=\"%s\">peak %.1f %s at %.3f %s</text>\n",
			px, px, ST, ST + ph, px, py, px + (px > SL + pw * 0.7 ? -6 : 6), py - 6,
			px > SL + pw * 0.7 ? "end" : "start", (double)p->peak_y / unit, uname,
			p->peak_x, p->xunit);
	}
	fputs("</svg>\n", f);
	if (cmd_out_fclose(&o, f, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", p->who, err);
		return 1;
	}
	return 0;
}

/**
 * cmd_find_script - the python script @name (plot-timeline.py,
 * plot-frontier.py) where `make install` puts it beside this binary
 * (share/uslab/), else beside the source (the build tree), into @buf.
 * Return: 0 or -ENOENT.
 */
int cmd_find_script(const char *name, char *buf, size_t len)
{
	char exe[PATH_MAX];

	if (!cmd_exe_dir(exe, sizeof(exe)) &&
	    (size_t)snprintf(buf, len, "%s/../share/uslab/%s", exe, name) < len &&
	    !access(buf, R_OK))
		return 0;
#ifdef USLAB_SRCDIR
	if ((size_t)snprintf(buf, len, "%s/tools/uslab/%s", USLAB_SRCDIR, name) < len &&
	    !access(buf, R_OK))
		return 0;
#endif
	return -ENOENT;
}

/* The series as CSV for plot-timeline.py: a header of names, a #peak
 * line, then "x,series..." per point; it writes the PNG. */
static int write_png(const struct timeline_plot *p, const char *png)
{
	char csv[] = "/tmp/uslab-timeline-XXXXXX", script[PATH_MAX + 64];
	int fd, rc, status;
	pid_t pid;
	FILE *f;

	if (cmd_find_script(TL_SCRIPT, script, sizeof(script))) {
		fprintf(stderr, "%s: %s not found (installed in share/uslab/)\n", p->who, TL_SCRIPT);
		return 1;
	}
	fd = mkstemp(csv);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "%s: %s: %s\n", p->who, csv, strerror(errno));
		return 1;
	}
	fprintf(f, "x");
	for (uint32_t k = 0; k < p->nseries; k++) {
		fputs(",\"", f);
		for (const char *c = p->names[k]; *c; c++)
			fputc(*c == '"' ? '\'' : *c, f);
		fputc('"', f);
	}
	fprintf(f, "\n#peak,%.9f,%" PRIu64 "\n", p->peak_x, p->peak_y);
	for (uint32_t i = 0; i < p->npts; i++) {
		fprintf(f, "%.9f", p->x[i]);
		for (uint32_t k = 0; k < p->nseries; k++)
			fprintf(f, ",%" PRIu64, p->y[k][i]);
		fputc('\n', f);
	}
	if (fclose(f)) {
		unlink(csv);
		return 1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		unlink(csv);
		return 1;
	}
	if (!pid) {
		execl("/usr/bin/python3", "python3", script, csv, png, p->title, p->xlabel,
		      p->ylabel, p->xunit, (char *)NULL);
		fprintf(stderr, "%s: /usr/bin/python3: %s\n", p->who, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	unlink(csv);
	rc = WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
	if (rc)
		fprintf(stderr, "%s: %s: the PNG was not drawn (python3-matplotlib: "
			"scripts/deps.sh plot)\n", p->who, png);
	return rc;
}

int timeline_draw(const struct timeline_plot *p, const char *path)
{
	int rc;

	if (!strcmp(output_format(path, "svg,png"), "svg"))
		rc = write_svg(p, path);
	else
		rc = write_png(p, path);
	if (rc < 0) {
		fprintf(stderr, "%s: %s: %s\n", p->who, path, strerror(-rc));
		rc = 1;
	}
	return rc;
}
