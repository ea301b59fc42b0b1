/* views.h - the views of `xpcorr report`, one row each, in the manner of
 * perf's sort_entry table: the one place that lists their names (--by),
 * titles, and what an empty view means. Adding a view is one row here and
 * its own file (export/view_*.c) that declares its columns (table.h),
 * where they land in json (decl.h), and fills rows, as view_stream.c;
 * report.c and cmd_report.c read the table.
 *
 *   int by = xp_view_find("idle");                  // XP_BY_IDLE, or -1
 *   puts(xp_views[by].title);
 */
#ifndef XP_VIEWS_H
#define XP_VIEWS_H

#include <stddef.h>

#include "export/report/report.h"

struct rep;

struct xp_view {
	const char *name;           /* --by NAME; json's "report" */
	const char *title;          /* the table's title line */
	const char *empty_why;      /* what an empty table means, for the user */
	/* the view's table in R's format, *rows its rows found (before --top);
	 * NULL: report.c's per-group table. 0 or a negative errno. */
	int (*run)(struct rep *R, size_t *rows);
};

/* Indexed by enum xp_report_by; XP_BY_COUNT rows. */
extern const struct xp_view xp_views[];

/* The view named name, or -1. */
int xp_view_find(const char *name);

#endif
