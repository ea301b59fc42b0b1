/* pyframe.h - a Python line of a launch stack as data, and the one place
 * its name is made. Ingest stores the line's frame (xp_frames, kind
 * XP_FRAME_PYTHON) as symbol = the code's qualified name, module = its file
 * as recorded, line = the line (-1: the code's line table has none for the
 * instruction); the placeholder of a code object that was not recorded has
 * no line (NULL). Every reader names a line at display time, as
 * "linear.py:134 Linear.forward" (the file as xp_pypath_base shows it, "?"
 * for no line), and takes file and line from the columns, never from text.
 *
 * A database ingested before xp_frames.line had that name in symbol (the
 * committed fixtures are such databases): xp_pyline_of reads such a row
 * back, here only, anchored on the file's own name (so a file named
 * "train step.py" keeps its line).
 *
 *   struct xp_pyline p;
 *   char name[XP_PYLINE_NAME_MAX];
 *   if (xp_pyline_of(kind, symbol, module, line_is_null ? NULL : &line, &p))
 *           puts(xp_pyline_name(&p, name, sizeof(name)));
 */
#ifndef XP_PYFRAME_H
#define XP_PYFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

struct xp_pyline {
	const char *file;           /* as recorded (xp_frames.module) */
	const char *qualname;       /* the code's qualified name */
	int line;                   /* -1: not known */
};

/* Holds the name of any line the injection library records (file and
 * qualified name of at most 4096 bytes each); longer ones are cut at a
 * whole UTF-8 character. */
#define XP_PYLINE_NAME_MAX (2 * 4096 + 64)

/* 1 and *out when the frame (an xp_frames row; line NULL when the column is
 * NULL or missing) is a Python line with its file, line and name; else 0.
 * out points into symbol and module. */
int xp_pyline_of(int kind, const char *symbol, const char *module, const int64_t *line,
		 struct xp_pyline *out);
/* "train.py:42 forward" into buf (len > 0); returns buf. */
const char *xp_pyline_name(const struct xp_pyline *p, char *buf, size_t len);
/* The name a frame shows: a Python line's made into buf, any other frame's
 * symbol as stored (NULL stays NULL). */
const char *xp_frame_display(int kind, const char *symbol, const char *module,
			     const int64_t *line, char *buf, size_t len);
/* The SQL of xp_frames f's line in db's queries: "f.line", or "NULL" in a
 * database ingested before the column. */
const char *xp_sql_frame_line(sqlite3 *db);
/* Defines xp_frame_name(kind, symbol, module, line) on db for SQL readers
 * (xp_frame_display's text): an SQLite result code. */
int xp_frame_name_sql(sqlite3 *db);

#endif
