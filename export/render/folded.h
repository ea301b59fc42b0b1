/* folded.h - collapse a run database into folded stacks,
 * "root;caller;...;leaf weight" per line, sorted: the input of flamegraph.pl,
 * inferno, speedscope and of svg.h. Collapsing is separate from rendering.
 * The weight is CPU samples, GPU ns under the launching stack (the kernel
 * or "[memcpy HtoD]" as leaf frame), off-CPU ns, or ns in CUDA API calls
 * (the API name as leaf frame).
 *
 *   struct xp_folded_opts o = { .root = XP_ROOT_COMM, .pid = -1, .tid = -1,
 *                               .weight = XP_WEIGHT_GPU };
 *   xp_folded_write(db, &o, stdout);   // "python;main;run;k_alpha 1500"
 */
#ifndef XP_FOLDED_H
#define XP_FOLDED_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

#include "export/render/wtab.h"

enum xp_folded_root {
	XP_ROOT_NONE = 0,           /* stacks start at the outermost frame */
	XP_ROOT_COMM = 1,           /* thread name first, as stackcollapse-perf.pl */
	XP_ROOT_PID = 2,            /* "comm-PID" */
	XP_ROOT_TID = 3,            /* "comm-PID/TID" */
	XP_ROOT_PYTHON = 4,         /* from the outermost Python frame; the interpreter's
				     * frames between Python frames left out (unless
				     * native); stacks with none under "[no Python frame]" */
};

enum xp_weight {
	XP_WEIGHT_CPU = 0,          /* CPU samples */
	XP_WEIGHT_GPU = 1,          /* GPU ns by launching stack, kernel as leaf */
	XP_WEIGHT_OFFCPU = 2,       /* ns off CPU (needs xpcap record --off-cpu) */
	XP_WEIGHT_API = 3,          /* ns inside CUDA API calls, API name as leaf */
};
#define XP_WEIGHT_COUNT 4
/* --weight's names, by enum xp_weight */
extern const char *const xp_weight_names[XP_WEIGHT_COUNT];

struct xp_folded_opts {
	enum xp_folded_root root;
	int64_t pid;                /* only this process, or -1 */
	int64_t tid;                /* only this thread, or -1 */
	const char *comm;           /* only threads of this name, or NULL */
	int no_kernel;              /* drop kernel frames (then merge equal stacks) */
	enum xp_weight weight;
	int exact_only;             /* gpu, api: drop inferred and unattributed time */
	int no_leaf;                /* gpu, api: no kernel/API leaf frame (per-stack diff) */
	int native;                 /* XP_ROOT_PYTHON: keep the native frames between
				     * Python frames */
};

/* "cpu" -> XP_WEIGHT_CPU ...; -EINVAL for an unknown name. */
int xp_weight_parse(const char *name, enum xp_weight *w);
const char *xp_weight_name(enum xp_weight w);
/* "samples" or "ns": what a line's number counts. */
const char *xp_weight_unit(enum xp_weight w);
/* A flame graph title: "GPU time by launching CPU stack", ... */
const char *xp_weight_title(enum xp_weight w);

/* Adds every folded line of the database to side `side` of t (weight and
 * instances), unsorted and merged by text. Errors as xp_folded_write. */
int xp_folded_collect(sqlite3 *db, const struct xp_folded_opts *o,
		      struct xp_wtab *t, int side);

/* 0, -EIO (database; message in sqlite3_errmsg), -ENOMEM, or the errno of
 * a failed write to out (ferror(out) tells it from the database's -EIO). */
int xp_folded_write(sqlite3 *db, const struct xp_folded_opts *o, FILE *out);

#endif
