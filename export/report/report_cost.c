/* report_cost.c - the footer's last lines: what recording cost the program
 * and what it saved. The injection library's own time per launch-class
 * call, from what each process said at exit (status code 8, timed on one
 * call in 64): the part of the cost that is our code, not CUPTI's; and the
 * launch stacks that took an earlier copy's native frames instead of
 * copying (cupti/stackreuse.h), with the checks ingest made of
 * them. Whole-run figures; runs recorded before either existed print
 * nothing. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"

static const struct xp_col library_cols[] = {
	{ .json = "processes", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "median_ns_per_call", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "max_ns_per_call", .kind = XP_COL_INT, .json_only = 1 },
};

static int library_cost(struct rep *R)
{
	struct xp_table t = xp_rep_json_table(R, library_cols, 3, NULL);
	int64_t n = 0, median = 0, max = 0;
	sqlite3_stmt *s;

	if (xp_rep_prepare(R, "SELECT count(*), max(detail), (SELECT detail FROM xp_gpu_status"
		    " WHERE code = 8 ORDER BY detail LIMIT 1 OFFSET (SELECT (count(*) - 1) / 2"
		    " FROM xp_gpu_status WHERE code = 8)) FROM xp_gpu_status WHERE code = 8", &s) < 0)
		return -EIO;
	if (sqlite3_step(s) == SQLITE_ROW) {
		n = sqlite3_column_int64(s, 0);
		max = sqlite3_column_int64(s, 1);
		median = sqlite3_column_int64(s, 2);
	}
	sqlite3_finalize(s);
	if (!n)
		return 0;
	xp_table_row_key(&t, "library_cost", (struct xp_cell[]){ { .i = n }, { .i = median },
								 { .i = max } });
	if (n == 1) {
		xp_rep_foot_line(R, "Recording cost: xpcap's own code in the process took %lld ns a"
				 " launch call (timed on one in 64; CUPTI's share not included)",
				 (long long)median);
	} else {
		xp_rep_foot_line(R, "Recording cost: xpcap's own code took %lld ns a launch call,"
				 " median of %lld processes, max %lld (timed on one in 64; CUPTI's"
				 " share not included)", (long long)median, (long long)n, (long long)max);
	}
	return 0;
}

static const struct xp_col reuse_cols[] = {
	{ .json = "launches", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "borrowed", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "missing", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "checks", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "checks_differed", .kind = XP_COL_INT, .json_only = 1 },
};

static int stack_reuse(struct rep *R)
{
	static const char *const names[] = { "xp.launches_borrowed", "xp.borrowed_missing",
					     "xp.stack_checks", "xp.stack_checks_differed" };
	struct xp_table t = xp_rep_json_table(R, reuse_cols, 5, NULL);
	int64_t v[4] = { 0 }, launches = 0;
	char missing[96];
	sqlite3_stmt *s;

	if (xp_rep_prepare(R, "SELECT name, CAST(value AS INTEGER) FROM META_DATA_EXPORT WHERE name IN"
		    " ('xp.launches_borrowed', 'xp.borrowed_missing', 'xp.stack_checks',"
		    " 'xp.stack_checks_differed') UNION ALL SELECT '', count(*) FROM xp_launches", &s) < 0)
		return -EIO;
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);

		for (int i = 0; i < 4; i++)
			if (name && !strcmp(name, names[i]))
				v[i] = sqlite3_column_int64(s, 1);
		if (name && !*name)
			launches = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	if (!v[0] && !v[2])
		return 0;
	xp_table_row_key(&t, "stack_reuse", (struct xp_cell[]){ { .i = launches }, { .i = v[0] },
								{ .i = v[1] }, { .i = v[2] }, { .i = v[3] } });
	snprintf(missing, sizeof(missing), "; %lld found no copy (lost) and have none",
		 (long long)v[1]);
	xp_rep_foot_line(R, "Launch stacks: %lld of %lld launches took the native frames of an earlier"
			 " launch with the same Python stack, kernel and stack depth; %lld checks by a"
			 " full copy, %lld found other frames%s (xpcap record --reuse-stacks off copies"
			 " every one)", (long long)v[0], (long long)launches, (long long)v[2],
			 (long long)v[3], v[1] ? missing : "");
	return 0;
}

int xp_rep_recording_cost(struct rep *R)
{
	int rc = library_cost(R);

	return rc < 0 ? rc : stack_reuse(R);
}

/* Where the cost's tables land in json (decl.h). */
const struct xp_decl xp_decl_cost[] = {
	XP_DECL(NULL, "library_cost", library_cols),
	XP_DECL(NULL, "stack_reuse", reuse_cols),
	{ 0 },
};
