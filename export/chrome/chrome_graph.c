/* chrome_graph.c - CUDA graph replays in the Chrome trace: each replay a
 * slice "graph: SITE" (cat cuda_graph) on its stream's track, around its
 * kernels, named for where the graph was captured, with a flow arrow from
 * the call that began the capture (cat and name "graph_capture"). The
 * kernels keep their own slices and their arrows from the cudaGraphLaunch.
 * Links as in report_graph.c: exec -> EXEC_CREATED -> graph ->
 * GRAPH_CREATED -> the capture call's correlation id. */
#include "src/gtid.h"
#include "export/chrome/chrome_priv.h"
#include "src/satmath.h"

#include <errno.h>
#include <string.h>

/* the capture of a (process, exec): its call's stack, start and thread */
struct capture {
	int64_t gpid, exec;
	int64_t stack, start, gtid;     /* -1 when not recorded */
};

static void find_capture(struct xp_chrome *c, sqlite3_stmt *q, struct capture *cap)
{
	cap->stack = cap->start = cap->gtid = -1;
	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, cap->exec);
	sqlite3_bind_int64(q, 2, xp_gtid_pid(cap->gpid));
	if (sqlite3_step(q) == SQLITE_ROW) {
		cap->stack = sqlite3_column_type(q, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 0);
		if (sqlite3_column_type(q, 1) != SQLITE_NULL) {
			cap->start = sqlite3_column_int64(q, 1);
			cap->gtid = sqlite3_column_int64(q, 2);
		}
	}
	sqlite3_reset(q);
	(void)c;
}

static int replay_slice(struct xp_chrome *c, sqlite3_stmt *st, const struct capture *cap)
{
	struct jsonw *w = &c->w;
	int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1), pid, tid;
	const char *site = cap->stack > 0 ? xp_sites_get(c->capture_sites, cap->stack) : NULL;
	char name[600];
	int err;

	if ((err = xp_chrome_gpu_track(c, st, &pid, &tid)))
		return err;
	snprintf(name, sizeof(name), "graph: %s", site ? site : "(capture not recorded)");
	xp_chrome_event_begin(c, "X", "cuda_graph", name, pid, tid, start);
	jsonw_key_lit(w, "dur"); jsonw_ns_as_us(w, end > start ? xp_sat_sub(end, start) : 0);
	jsonw_key_lit(w, "args");
	jsonw_obj_begin(w);
	jsonw_key_lit(w, "graph exec id"); jsonw_int(w, sqlite3_column_int64(st, 7));
	jsonw_key_lit(w, "correlation"); jsonw_int(w, sqlite3_column_int64(st, 5));
	jsonw_key_lit(w, "kernels"); jsonw_int(w, sqlite3_column_int64(st, 8));
	if (site) {
		jsonw_key_lit(w, "capture_site"); jsonw_str(w, site);
	}
	jsonw_obj_end(w);
	jsonw_obj_end(w);
	/* from the call that began the capture, when it is in the window */
	if (cap->start >= 0 && xp_chrome_in_window(c, cap->start)) {
		uint64_t id = c->next_flow_id++;

		xp_chrome_event_begin(c, "s", "graph_capture", "graph_capture", xp_gtid_pid(cap->gtid),
				      xp_gtid_tid(cap->gtid), cap->start);
		jsonw_key_lit(w, "id"); jsonw_uint(w, id);
		jsonw_obj_end(w);
		xp_chrome_event_begin(c, "f", "graph_capture", "graph_capture", pid, tid, start);
		jsonw_key_lit(w, "id"); jsonw_uint(w, id);
		jsonw_key_lit(w, "bp"); jsonw_str_lit(w, "e");
		jsonw_obj_end(w);
		c->st.flows++;
	}
	return 0;
}

int xp_chrome_graph_replays(struct xp_chrome *c)
{
	sqlite3_stmt *st, *q = NULL;
	struct capture cap = { .gpid = -1, .exec = -1 };
	int rc, err = 0;

	/* columns as the GPU rows' (chrome_gpu.c) where the track needs them */
	if (xp_chrome_prepare(c, &st, "SELECT g.start, g.end, g.deviceId, g.contextId, g.streamId,"
			      " g.correlationId, g.globalPid, g.graphId, g.n FROM (SELECT min(start) AS start,"
			      " max(end) AS end, deviceId, contextId, streamId, correlationId, globalPid, graphId,"
			      " count(*) AS n FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0 AND"
			      " (xp_flags & 1) = 0 GROUP BY globalPid, graphId, correlationId) g",
			      NULL, "g.start", XP_SQL_GTID_PID("g.globalPid"), "g.globalPid, g.graphId, g.start"))
		return -EIO;
	if (sqlite3_prepare_v2(c->db, "SELECT l.stack_id, r.start, r.globalTid FROM xp_graph_events x"
			       " JOIN xp_graph_events m ON m.event = 1 AND m.graphId = x.graphId"
			       "  AND " XP_SQL_GTID_PID("m.globalTid") " = " XP_SQL_GTID_PID("x.globalTid")
			       " LEFT JOIN xp_launches l ON l.pid = " XP_SQL_GTID_PID("m.globalTid")
			       "  AND l.correlation_id = m.correlationId"
			       " LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = m.correlationId"
			       "  AND " XP_SQL_GTID_PID("r.globalTid") " = " XP_SQL_GTID_PID("m.globalTid")
			       " WHERE x.event = 7 AND x.execId = ? AND " XP_SQL_GTID_PID("x.globalTid") " = ?"
			       " ORDER BY x.ts LIMIT 1", -1, &q, NULL) != SQLITE_OK)
		q = NULL;       /* a database without graph events: replays unnamed */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t gpid = sqlite3_column_int64(st, 6), exec = sqlite3_column_int64(st, 7);

		if (gpid != cap.gpid || exec != cap.exec) {
			cap.gpid = gpid;
			cap.exec = exec;
			if (q)
				find_capture(c, q, &cap);
			else
				cap.stack = cap.start = cap.gtid = -1;
		}
		if ((err = replay_slice(c, st, &cap)))
			break;
	}
	sqlite3_finalize(q);
	sqlite3_finalize(st);
	if (err)
		return err;
	return rc == SQLITE_DONE ? 0 : -EIO;
}
