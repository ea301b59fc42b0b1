/* pyreach.h - Python frames in launch stacks: whether the stack of a launch
 * reaches the Python code that made it. Two kinds of frames are Python: the
 * lines ingest takes from the Python stacks recorded at launches
 * (XP_FRAME_PYTHON, "train.py:42 forward") and the functions CPython 3.12+
 * names in its perf map, "py::NAME:FILE" (JIT frames, no line).
 *   struct xp_python_reach r;
 *   if (xp_python_reach(db, rows, &r) == 0)   // rows: (stack_id, gpu_ns)
 *           printf("%.1f%%", 100.0 * r.python_ns / r.gpu_ns);
 */
#ifndef XP_PYREACH_H
#define XP_PYREACH_H

#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "db/db_schema.h"

static inline int xp_is_python_frame(int kind, const char *sym)
{
	return kind == XP_FRAME_PYTHON || (kind == XP_FRAME_JIT && sym && !strncmp(sym, "py::", 4));
}

/* The same from a frame's text alone (folded stacks): "py::NAME:FILE", or a
 * Python line "FILE:LINE QUALNAME" (LINE digits or ?; FILE may hold spaces,
 * "<frozen runpy>:88 _run_code"). A C++ name has its '(' before any such
 * ":LINE " ("f(unsigned int)"), and "a::b" is no line. */
static inline int xp_is_python_text(const char *s, size_t n)
{
	if (n >= 4 && !strncmp(s, "py::", 4))
		return 1;
	for (size_t sp = 1; sp < n && s[sp - 1] != '('; sp++) {
		size_t d = sp;

		if (s[sp] != ' ')
			continue;
		while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
			d--;
		if (d == sp && s[d - 1] == '?')
			d--;
		if (d < sp && d >= 2 && s[d - 1] == ':' && s[d - 2] != ':')
			return 1;
	}
	return 0;
}

struct xp_python_reach {
	int64_t gpu_ns;         /* over the rows given */
	int64_t python_ns;      /* of which the stack holds a Python frame */
	int64_t line_ns;        /* of which a Python line (XP_FRAME_PYTHON) */
	int64_t waited_ns;      /* at the line its Python thread waited in, launched by a
				 * runtime thread (ingest/waitlines.h): in neither of
				 * the two above, its stack was not taken in Python */
	int has_lines;          /* the database has Python lines at all */
};

/* Sums the rows' GPU ns, and those under a Python frame. rows is a
 * prepared statement (bound, not stepped) yielding (stack_id, gpu_ns); it is
 * stepped to the end, not finalized. 1: the database has no Python frames
 * (nothing computed), 0 done, -EIO, -ENOMEM. */
int xp_python_reach(sqlite3 *db, sqlite3_stmt *rows, struct xp_python_reach *out);

#endif
