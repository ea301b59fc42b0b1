/* folded.h - collapse the samples of a run database into folded stacks,
 * "root;caller;...;leaf count" per line, sorted: the input of flamegraph.pl,
 * inferno, speedscope and of svg.h. Collapsing is separate from rendering.
 *
 *   struct xp_folded_opts o = { .root = XP_ROOT_COMM, .pid = -1, .tid = -1 };
 *   xp_folded_write(db, &o, stdout);   // "python;main;run;do_syscall_64_[k] 42"
 */
#ifndef XP_FOLDED_H
#define XP_FOLDED_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

enum xp_folded_root {
	XP_ROOT_NONE = 0,           /* stacks start at the outermost frame */
	XP_ROOT_COMM = 1,           /* thread name first, as stackcollapse-perf.pl */
	XP_ROOT_PID = 2,            /* "comm-PID" */
	XP_ROOT_TID = 3,            /* "comm-PID/TID" */
};

struct xp_folded_opts {
	enum xp_folded_root root;
	int64_t pid;                /* only this process, or -1 */
	int64_t tid;                /* only this thread, or -1 */
	const char *comm;           /* only threads of this name, or NULL */
	int no_kernel;              /* drop kernel frames (then merge equal stacks) */
};

/* 0, -EIO (database; message in sqlite3_errmsg), -ENOMEM, or -errno of a
 * failed write to out. */
int xp_folded_write(sqlite3 *db, const struct xp_folded_opts *o, FILE *out);

#endif
