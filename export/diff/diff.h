/* diff.h - `xpcorr diff`: what changed between two runs. Per GPU work item
 * (kernel, "[memcpy HtoD]", "[memset]"), per launching CPU stack and per
 * CUDA API: base and new totals, absolute and relative change, instances,
 * sorted by absolute change; a header that warns when the runs differ in
 * GPU model, driver or sampling frequency; as text, CSV or JSON. Launching
 * stacks are named as the report names them (diffname.h). Or the differential folded
 * stacks "stack base new" of one weight (difffolded.pl's format), or their
 * differential flame graph.
 *
 *   struct xp_diff_opts o = XP_DIFF_DEFAULTS;
 *   o.normalize = XP_NORM_DURATION;
 *   struct xp_diff_side a = { "runA/", dba }, b = { "runB/", dbb };
 *   if (xp_diff(&a, &b, &o, stdout, err, sizeof(err)) < 0) fprintf(stderr, "%s\n", err);
 */
#ifndef XP_DIFF_H
#define XP_DIFF_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

#include "export/render/folded.h"

enum xp_diff_format { XP_DIFF_TEXT, XP_DIFF_CSV, XP_DIFF_FOLDED, XP_DIFF_SVG, XP_DIFF_JSON };
enum xp_diff_norm {
	XP_NORM_NONE,
	XP_NORM_DURATION,           /* new values x base duration / new duration */
	XP_NORM_KERNEL,             /* new values x base / new instances of a kernel */
};

struct xp_diff_opts {
	enum xp_diff_format format;
	enum xp_diff_norm normalize;
	const char *norm_kernel;    /* XP_NORM_KERNEL: exact name, or a unique substring */
	unsigned top;               /* rows per table; 0 = all */
	unsigned frames;            /* frames shown per launching stack */
	unsigned width;             /* text: rows cut to this many columns; 0: whole */
	enum xp_weight weight;      /* folded, svg; cpu: also the tables are of CPU
				     * samples (the command's default when neither run
				     * has GPU work) */
	int exact_only;             /* drop inferred and unattributed GPU time */
	const char *title;          /* svg */
	FILE *warnings;             /* csv, folded, svg, json: where the header's
	                             * warnings go (text has them on top, json
	                             * also in "warnings"); or NULL */
};

#define XP_DIFF_DEFAULTS { .format = XP_DIFF_TEXT, .top = 20, .frames = 4, \
	.weight = XP_WEIGHT_GPU }

struct xp_diff_side {
	const char *name;           /* as the user named the run */
	sqlite3 *db;
};

/* 0; -EIO (message names the run and SQLite's error); -ENOENT (the
 * --normalize kernel is in neither run, or in the new run 0 times); -EINVAL
 * (substring matches several kernels); -ENOMEM. err gets one line. */
int xp_diff(const struct xp_diff_side *a, const struct xp_diff_side *b,
	    const struct xp_diff_opts *o, FILE *out, char *err, size_t errlen);

/* diff_cpu.c: db's CPU samples by function into side `side` of self and
 * total, by Python line (self) into lines, keyed as xp_cpu_row_name names
 * them for a diff. 0, -EIO or -ENOMEM. */
struct xp_wtab;
int xp_diff_cpu_collect(sqlite3 *db, int side, struct xp_wtab *self, struct xp_wtab *total,
			struct xp_wtab *lines);

#endif
