/* stackwalk.h - a launch or sample stack read from its leaf: one prepared
 * statement for everyone who names stacks (report, its views, the trace's
 * launch sites, who-launched-it), the cycle guard a corrupt tree needs, and
 * nvcc's host stubs recognised (the host-side function of a kernel has the
 * kernel's own name: a frame so named is not the caller's code).
 *
 *   struct xp_stackwalk *w;
 *   struct xp_frame_row f;
 *   if (xp_stackwalk_open(db, &w) == 0) {
 *           for (int64_t id = stack_id; xp_stackwalk_next(w, &id, &f); )
 *                   puts(f.sym ? f.sym : "?");     // f.py: a Python line's data
 *           xp_stackwalk_done(w);                   // before the next stack
 *           xp_stackwalk_close(w);
 *   }
 */
#ifndef XP_STACKWALK_H
#define XP_STACKWALK_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "db/pyframe.h"

struct xp_stackwalk;

/* One frame, valid until the next call. */
struct xp_frame_row {
	const char *sym;            /* the frame's name (a Python line's made by
				     * pyframe.h: "train.py:42 forward"), NULL if none */
	const char *module;         /* module path (for a Python line, the file), or NULL */
	int kind;                   /* enum xp_frame_kind */
	int host_stub;              /* named like one of the run's kernels */
	const struct xp_pyline *py; /* a Python line's file, line and name, else NULL */
};

/* 0, -EIO (no stack tables: not a database of the main loader) or -ENOMEM. */
int xp_stackwalk_open(sqlite3 *db, struct xp_stackwalk **out);
/* Reads node *id into f and moves *id to its parent: 1, or 0 at the root, at
 * a node that is not there, or after XP_STACKWALK_MAX_DEPTH frames (a cycle). */
int xp_stackwalk_next(struct xp_stackwalk *w, int64_t *id, struct xp_frame_row *f);
/* Ends a walk: the next xp_stackwalk_next may start another stack. */
void xp_stackwalk_done(struct xp_stackwalk *w);
void xp_stackwalk_close(struct xp_stackwalk *w);

#define XP_STACKWALK_MAX_DEPTH 4096

#endif
