/* view_stream.c - `xpcorr report --by stream`: GPU time per CUDA stream of
 * each device (kernels, copies and sets), busiest first. A stream that
 * holds most of a device's time while others sit idle is work that could
 * overlap and does not.
 *
 *   xpcorr report --by stream --format csv run/
 */
#include <errno.h>
#include <stdlib.h>

#include "src/array.h"
#include "src/gtid.h"
#include "src/satmath.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"

struct stream_row {
	int64_t pid, device, stream, kernels, copies, ns;
};

static const struct xp_col cols[] = {
	{ .head = "Time (%)", .json = "share_pct", .kind = XP_COL_FIXED, .width = 8, .rule = 8,
	  .prec = 1 },
	{ .head = "Total Time (ns)", .json = "gpu_ns", .kind = XP_COL_INT, .width = 15, .rule = 15 },
	{ .head = "Kernels", .json = "kernels", .kind = XP_COL_INT, .width = 9, .rule = 9 },
	{ .head = "Copies", .json = "copies", .kind = XP_COL_INT, .width = 9, .rule = 9 },
	{ .head = "Device", .json = "device", .kind = XP_COL_INT, .width = 6, .rule = 6 },
	{ .head = "Stream", .json = "stream", .kind = XP_COL_INT, .width = 6, .rule = 6 },
	{ .head = "Pid", .json = "pid", .kind = XP_COL_INT, .width = 0, .rule = 3 },
};

/* Copies count memcpy and memset rows; a process's streams are its own. */
#define STREAM_SQL "SELECT " XP_SQL_PID_LOCAL(XP_SQL_GTID_PID("gp")) ", dev, stream," \
	" sum(t = 'K'), sum(t != 'K'), sum(end - start) FROM" \
	" (SELECT 'K' AS t, start, end, globalPid AS gp, deviceId AS dev, streamId AS stream" \
	" FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT 'C', start, end, globalPid, deviceId," \
	" streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT 'S', start, end, globalPid," \
	" deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMSET) WHERE %s" \
	" GROUP BY gp, dev, stream ORDER BY 6 DESC, 2, 3, 1"

static int read_streams(struct rep *R, struct stream_row **v, size_t *n, int64_t *all)
{
	char sql[1024], f[256];
	size_t cap = 0;
	sqlite3_stmt *s;
	int rc;

	xp_rep_filter(R->o, "gp", "start", f, sizeof(f));
	snprintf(sql, sizeof(sql), STREAM_SQL, f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (xp_array__reserve((void **)v, &cap, *n + 1, sizeof(**v), 16)) {
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		(*v)[*n] = (struct stream_row){ sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
			sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3),
			sqlite3_column_int64(s, 4), sqlite3_column_int64(s, 5) };
		*all = xp_sat_add(*all, (*v)[(*n)++].ns);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int xp_view_stream(struct rep *R, size_t *rows)
{
	const struct xp_report_opts *o = R->o;
	struct xp_table t = { .cols = cols, .n = sizeof(cols) / sizeof(cols[0]), .fmt = o->format,
			      .out = R->out, .json = &R->json, .width = o->width, .key = "streams" };
	struct stream_row *v = NULL;
	size_t n = 0, shown;
	int64_t all = 0;
	char title[256];
	int rc;

	if ((rc = read_streams(R, &v, &n, &all)) == 0) {
		shown = o->top && o->top < n ? o->top : n;
		snprintf(title, sizeof(title), "** %s:", xp_rep_title(o->by));
		xp_table_begin(&t, title);
		for (size_t i = 0; i < shown && rc == 0; i++) {
			struct xp_cell c[] = { { .d = all ? 100.0 * (double)v[i].ns / (double)all : 0 },
				{ .i = v[i].ns }, { .i = v[i].kernels }, { .i = v[i].copies },
				{ .i = v[i].device }, { .i = v[i].stream }, { .i = v[i].pid } };

			rc = xp_table_row(&t, c);
		}
		xp_table_end(&t, shown, n);
		*rows = n;
	}
	free(v);
	return rc;
}

/* Where the view's table lands in json (report/decl.h). */
const struct xp_decl xp_decl_stream[] = {
	XP_DECL("stream", "streams[]", cols),
	{ 0 },
};
