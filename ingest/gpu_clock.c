/* gpu_clock.c - what a GPU stream's rows need after its last record: NVTX
 * ranges closed by END edges that may come before their START, and the
 * times of CUPTI's clock converted to CLOCK_MONOTONIC (clock_method
 * CALIBRATED, the rule in gpu_load.c's header) from the clock pairs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ingest/gpu_loader.h"

/* NVTX ranges: their END edges may come before their START. */
int xp_gpuload_finish_nvtx(struct gpu_loader *L)
{
	static const char sql[] =
		"UPDATE NVTX_EVENTS SET end = (SELECT min(e.ts) FROM temp.xp_nvtx_end e"
		" WHERE e.rangeId = NVTX_EVENTS.rangeId"
		"  AND e.globalPid = " XP_SQL_GPID(XP_SQL_GTID_PID("NVTX_EVENTS.globalTid")) ")"
		" WHERE end IS NULL AND eventType = 60;"
		"DELETE FROM temp.xp_nvtx_end;";

	return sqlite3_exec(L->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Tables whose times come from CUPTI's clock, and which of their rows. */
static const char *const cupti_timed[6][2] = {
	{ "CUPTI_ACTIVITY_KIND_KERNEL", "1" }, { "CUPTI_ACTIVITY_KIND_MEMCPY", "1" },
	{ "CUPTI_ACTIVITY_KIND_MEMSET", "1" }, { "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "1" },
	{ "CUPTI_ACTIVITY_KIND_RUNTIME", "xp_flags & 1" },   /* XP_GPU_API_FROM_ACTIVITY */
	{ "NVTX_EVENTS", "1" },
};

int xp_gpuload_first_rowids(struct gpu_loader *L)
{
	for (int i = 0; i < 6; i++) {
		char sql[128];
		sqlite3_stmt *s;

		snprintf(sql, sizeof(sql), "SELECT ifnull(max(rowid), 0) FROM %s", cupti_timed[i][0]);
		if (sqlite3_prepare_v2(L->db, sql, -1, &s, NULL) != SQLITE_OK)
			return -EIO;
		L->first_rowid[i] = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
		sqlite3_finalize(s);
	}
	return 0;
}

/* clock_method CALIBRATED: CUPTI's clock to CLOCK_MONOTONIC, after the
 * stream (the exit pair comes last). The offset is the midpoint of each
 * pair's two monotonic reads minus the CUPTI reading; with a start and an
 * exit pair it is interpolated linearly in CUPTI time (drift), with one it
 * is constant. Without any pair the times stay CUPTI's, and a warning row
 * in xp_gpu_status says so. */
int xp_gpuload_calibrate(struct gpu_loader *L)
{
	int64_t off[2], c[2], doff = 0, dc = 1;
	int first = L->have_clk[0] ? 0 : 1;

	if (L->clock_method != XP_GPU_CLOCK_CALIBRATED)
		return 0;
	if (!L->have_clk[0] && !L->have_clk[1]) {
		static const char text[] = "CUPTI clock without clock pairs: GPU times left uncalibrated";
		struct {
			struct xp_gpu_status st;
			char text[sizeof(text)];
		} w = { .st = { .severity = XP_GPU_STATUS_WARN, .text_len = sizeof(text) - 1 } };

		memcpy(w.text, text, sizeof(text));
		return xp_gpuload_status(L, &w.st);
	}
	for (int w = 0; w < 2; w++) {
		const struct xp_gpu_clock *k = &L->clk[L->have_clk[w] ? w : first];

		c[w] = (int64_t)k->cupti_ts;
		off[w] = (int64_t)(k->mono_before + (k->mono_after - k->mono_before) / 2) - c[w];
	}
	if (c[1] > c[0]) {
		doff = off[1] - off[0];
		dc = c[1] - c[0];
	}
	for (int i = 0; i < 6; i++) {
		char sql[600];
		sqlite3_stmt *s;
		int rc;

#define XP_CAL(x) "(" x " + :off + (:doff * (" x " - :c0)) / :dc)"
		snprintf(sql, sizeof(sql), "UPDATE %s SET start = " XP_CAL("start") ","
			 " end = CASE WHEN end IS NULL OR end = 0 THEN end ELSE " XP_CAL("end") " END"
			 " WHERE rowid > :first AND start != 0 AND %s", cupti_timed[i][0],
			 cupti_timed[i][1]);
#undef XP_CAL
		if (sqlite3_prepare_v2(L->db, sql, -1, &s, NULL) != SQLITE_OK)
			return -EIO;
		sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":off"), off[0]);
		sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":doff"), doff);
		sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":c0"), c[0]);
		sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":dc"), dc);
		sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":first"), L->first_rowid[i]);
		rc = sqlite3_step(s);
		sqlite3_finalize(s);
		if (rc != SQLITE_DONE)
			return -EIO;
	}
	return 0;
}
