// SPDX-License-Identifier: MIT
/*
 * The cost model of the tuner: nanoseconds per magazine hit, per refill and
 * flush batch, per depot exchange and per page-allocator block operation.
 * `uslab calibrate` measures them on this machine and writes them to a small
 * text file (-o FILE, else $USLAB_CALIBRATION, $XDG_CACHE_HOME/uslab/
 * calibration or ~/.cache/uslab/calibration). A calibration is used only
 * where it is named (`--calibration FILE` of sim and tune): otherwise the
 * built-in default stands, and every output names the model in use.
 * Lines "key=value"; '#' starts a comment.
 *
 * No locks: read once per command.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sim/internal.h"

/*
 * Built-in default: `uslab calibrate` on the development VM (AMD EPYC, 2
 * vCPUs shared with other builds, load average 7), the median of nine runs
 * key by key, rounded. Only the ratios shape the frontier; absolute numbers
 * scale its time axis. The fault term is what makes memory cost time: a
 * page handed out fresh costs as much as 15-25 slow paths.
 */
static const struct sim_cost_model default_model = {
	.hit_ns = 4.6,
	.refill_ns = 60.0,
	.flush_ns = 110.0,
	.refill_obj_ns = 0.0,
	.flush_obj_ns = 0.0,
	.depot_ns = 56.0,
	.page_ns = 14.0,
	.fault_ns = 1500.0,
	.calibrated = false,
	.source = "built-in default (`uslab calibrate -o FILE`, then --calibration FILE, "
		  "models this machine)",
};

int sim_calibration_path(char *buf, size_t len)
{
	const char *p = getenv("USLAB_CALIBRATION");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (p && *p)
		n = snprintf(buf, len, "%s", p);
	else if (xdg && *xdg)
		n = snprintf(buf, len, "%s/uslab/calibration", xdg);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.cache/uslab/calibration", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * sim_cost_model_load - the model of the calibration file @path, or the
 * built-in default when @path is NULL. Return: 0, or -1 when the named file
 * cannot be read or is damaged (said in @err, naming the line): a model
 * the user named is never silently replaced.
 */
int sim_cost_model_load(struct sim_cost_model *m, const char *path, char *err, size_t errlen)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "hit_ns", offsetof(struct sim_cost_model, hit_ns) },
		{ "refill_ns", offsetof(struct sim_cost_model, refill_ns) },
		{ "flush_ns", offsetof(struct sim_cost_model, flush_ns) },
		{ "refill_obj_ns", offsetof(struct sim_cost_model, refill_obj_ns) },
		{ "flush_obj_ns", offsetof(struct sim_cost_model, flush_obj_ns) },
		{ "depot_ns", offsetof(struct sim_cost_model, depot_ns) },
		{ "page_ns", offsetof(struct sim_cost_model, page_ns) },
		{ "fault_ns", offsetof(struct sim_cost_model, fault_ns) },
	};
	struct sim_cost_model n = default_model;
	char line[512];
	unsigned int seen = 0, lineno = 0, i;
	FILE *f;

	*m = default_model;
	if (!path)
		return 0;
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "--calibration %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *eq, *end, *hash = strchr(line, '#');
		double v;

		lineno++;
		if (hash)
			*hash = '\0';
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[strspn(line, " \t")])
			continue;
		eq = strchr(line, '=');
		if (!eq)
			goto bad;
		*eq = '\0';
		v = strtod(eq + 1, &end);
		if (end == eq + 1 || *end || !(v >= 0) || v > 1e9)
			goto bad;
		for (i = 0; i < ARRAY_SIZE(keys); i++) {
			if (!strcmp(line, keys[i].key)) {
				*(double *)((char *)&n + keys[i].off) = v;
				seen |= 1u << i;
				break;
			}
		}
		/* unknown keys are for newer versions: ignored */
	}
	fclose(f);
	if (seen != (1u << ARRAY_SIZE(keys)) - 1) {
		snprintf(err, errlen, "--calibration %s: keys missing (a file of `uslab "
			 "calibrate` has all eight)", path);
		return -1;
	}
	n.calibrated = true;
	snprintf(n.source, sizeof(n.source), "calibration %.240s", path);
	*m = n;
	return 0;
bad:
	fclose(f);
	snprintf(err, errlen, "--calibration %s:%u: expected key=number", path, lineno);
	return -1;
}

double sim_class_cost(const struct sim_cost_model *m, const struct sim_cache_counts *c)
{
	return m->hit_ns * (double)(c->alloc_hits + c->free_hits) +
	       (m->refill_ns + m->refill_obj_ns * c->batch) * (double)c->refills +
	       (m->flush_ns + m->flush_obj_ns * c->batch) * (double)c->flushes +
	       m->depot_ns * (double)(c->depot_gets + c->depot_puts);
}

/*
 * Modelled allocator time of a whole run: every cache, page_alloc's block
 * operations, and the page faults of the memory it hands out fresh (first
 * touch of a page new from the OS or given back to it): the price of
 * holding more memory, which the slow-path terms alone do not see.
 */
double sim_cost(const struct sim_cost_model *m, const struct sim_result *res)
{
	/* the faults the run took (the pages it made resident), where they
	 * could be counted; else every page handed out fresh */
	double t = m->page_ns * (double)(res->page_allocs + res->page_frees) +
		   m->fault_ns * (double)(res->res_known ? res->faults : res->pages.pages_fresh);
	unsigned int c;

	for (c = 0; c < res->nr_cls; c++)
		t += sim_class_cost(m, &res->cls[c].c);
	for (c = 0; c < res->nr_named; c++)	/* named caches (import perf) */
		t += sim_class_cost(m, &res->named[c].c);
	return t;
}
