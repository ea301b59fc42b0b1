/* pyreach.h - Python frames in launch stacks: whether the stack of a launch
 * reaches the Python code that made it. CPython 3.12+ names its functions
 * in the perf map "py::NAME:FILE" (ingested as JIT frames).
 *   struct xp_python_reach r;
 *   if (xp_python_reach(db, rows, &r) == 0)   // rows: (stack_id, gpu_ns)
 *           printf("%.1f%%", 100.0 * r.python_ns / r.exact_ns);
 */
#ifndef XP_PYREACH_H
#define XP_PYREACH_H

#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "db_schema.h"

static inline int xp_is_python_frame(int kind, const char *sym)
{
	return kind == XP_FRAME_JIT && sym && !strncmp(sym, "py::", 4);
}

struct xp_python_reach {
	int64_t gpu_ns;         /* over the rows given */
	int64_t python_ns;      /* of which the stack holds a py:: frame */
};

/* Sums the rows' GPU ns, and those under a Python frame. rows is a
 * prepared statement (bound, not stepped) yielding (stack_id, gpu_ns); it is
 * stepped to the end, not finalized. 1: the database has no Python frames
 * (nothing computed), 0 done, -EIO, -ENOMEM. */
int xp_python_reach(sqlite3 *db, sqlite3_stmt *rows, struct xp_python_reach *out);

#endif
