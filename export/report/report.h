/* report.h - `xpcorr report`: GPU time summaries in the manner of
 * `nsys stats` (cuda_gpu_kern_sum and friends), each kernel with the CPU
 * stacks that launched it, and a footer on attribution coverage, losses and
 * clock skew.
 *
 *   struct xp_report_opts o = XP_REPORT_DEFAULTS;
 *   o.format = XP_FMT_CSV;
 *   if (xp_report(db, &o, stdout, NULL) < 0) ... sqlite3_errmsg(db) ...
 *
 * Reads the database only (after xc_correlate_db); writes only to out and
 * o->notes, never to stderr by itself.
 */
#ifndef XP_REPORT_H
#define XP_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

enum xp_report_by {
	XP_BY_KERNEL,               /* per kernel name, with its launching stacks */
	XP_BY_STACK,                /* GPU time (kernels, copies, sets) by launching CPU stack */
	XP_BY_API,                  /* CUDA API calls by name (CPU time in the call) */
	XP_BY_MEMOP,                /* memcpy by kind, memset */
	XP_BY_THREAD,               /* GPU time by the CPU thread that made the call */
	XP_BY_GRAPH,                /* kernel time by CUDA graph */
	XP_BY_NVTX,                 /* GPU time by the NVTX range around the launching call */
	XP_BY_SOURCE,               /* GPU time by the innermost Python line of the launch stack */
	XP_BY_RANK,                 /* the ranks of a distributed job side by side */
	XP_BY_OP,                   /* per operator (aten::), GPU time of what it launched */
	XP_BY_IDLE,                 /* per device and step: busy, idle and what the host did */
	XP_BY_LAUNCH,               /* launch-to-start delay and queue depth per stream, kernel */
	XP_BY_OVERLAP,              /* communication overlapped with compute, exposed collectives */
	XP_BY_CPU,                  /* CPU samples by function and Python line, self and total */
	XP_BY_WAIT,                 /* collective waits charged to the late rank's causes */
	XP_BY_STREAM,               /* GPU time per CUDA stream of each device */
	XP_BY_COUNT                 /* views.c lists them all, with their names */
};

enum xp_report_format { XP_FMT_TEXT, XP_FMT_CSV, XP_FMT_JSON };
enum xp_report_sort { XP_SORT_TOTAL, XP_SORT_AVG, XP_SORT_INSTANCES, XP_SORT_NAME };

struct xp_report_opts {
	enum xp_report_by by;
	enum xp_report_format format;
	enum xp_report_sort sort;
	unsigned top;               /* rows shown; 0 = all */
	int mangled;                /* kernel names as CUPTI gave them */
	uint32_t pid;               /* 0 = every process */
	int64_t since, until;       /* ns, CLOCK_MONOTONIC, on start; until 0 = no end */
	unsigned stacks;            /* launching stacks under each kernel */
	unsigned frames;            /* user frames shown per stack */
	unsigned width;             /* text: table rows and stacks cut to this many columns; 0: whole */
	int full_names;             /* text: C++ names as demangled (--names full); else short */
	int64_t step;               /* --by idle: the step of that number only; -1 every step */
	int cpu;                    /* --by source: CPU samples, not GPU time (--weight cpu;
				     * the command's default for a run without GPU work) */
	int64_t skip_steps;         /* --by idle: the first N steps left out (steady state only) */
	FILE *notes;                /* csv: where the footer goes, so stdout stays one table
				     * (the command passes stderr); NULL: dropped */
};

#define XP_REPORT_DEFAULTS { .by = XP_BY_KERNEL, .format = XP_FMT_TEXT, \
	.sort = XP_SORT_TOTAL, .top = 30, .stacks = 3, .frames = 4, .step = -1 }

/* 0, -EIO (SQLite: see sqlite3_errmsg) or -ENOMEM. */
/* groups: where the number of rows found goes (before --top), or NULL */
int xp_report(sqlite3 *db, const struct xp_report_opts *o, FILE *out, size_t *groups);

/* Each replayed CUDA graph exec for xpcorr diff: key = where its graph was
 * captured ("train.py:40 capture [2 of 4]" when one site captured several,
 * numbered in capture order), its replays' GPU span and count. fn's
 * non-zero return stops; 0, -EIO or -ENOMEM. */
int xp_graph_sites(sqlite3 *db, int (*fn)(void *ctx, const char *key, int64_t ns, uint64_t replays),
		   void *ctx);

#endif
