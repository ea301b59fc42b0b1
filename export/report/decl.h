/* decl.h - where each declared table (table.h) lands in `xpcorr report
 * --format json`, so that a test reads the declarations without running a
 * view and checks them against tests/report-schema.json both ways
 * (tests/check-report-decls.py). A file that declares tables lists them in
 * an array of its own, ended by an entry without columns; decl.c gathers
 * those arrays. A table added to a view without its entry here is a table
 * the schema check cannot see: declare it where its columns are.
 *
 *   const struct xp_decl xp_decl_stream[] = {
 *       XP_DECL("stream", "streams[]", cols),
 *       { 0 },
 *   };
 */
#ifndef XP_DECL_H
#define XP_DECL_H

#include <stddef.h>

#include "export/report/table.h"

struct xp_decl {
	const char *view;           /* views.c's name of the view whose json holds it;
				     * NULL: every report's (the document, the footer) */
	/* the json object its columns are keys of, keys and [] (each row of
	 * an array) joined by '.': "" the document, "coverage" a keyed row,
	 * "devices[]" the rows of "devices", "devices[].causes[]" theirs */
	const char *at;
	const struct xp_col *cols;
	size_t n;
	const unsigned char *json_order; /* the table's json_order; NULL: every json column */
	size_t json_n;
};

#define XP_DECL_N(c) (sizeof(c) / sizeof((c)[0]))
#define XP_DECL(view, at, cols) { view, at, cols, XP_DECL_N(cols), NULL, 0 }
#define XP_DECL_ORDER(view, at, cols, order) { view, at, cols, XP_DECL_N(cols), order, sizeof(order) }

/* Each file's entries, NULL-ended. */
extern const struct xp_decl *const xp_decls[];

/* The files' arrays (decl.c lists them). */
extern const struct xp_decl xp_decl_report[], xp_decl_footer[], xp_decl_cost[],
	xp_decl_groups[], xp_decl_stream[], xp_decl_cpu[], xp_decl_source_cpu[],
	xp_decl_source[], xp_decl_graph[], xp_decl_rank[], xp_decl_idle[], xp_decl_launch[],
	xp_decl_op[], xp_decl_overlap[], xp_decl_wait[], xp_decl_rank_host[];

#endif
