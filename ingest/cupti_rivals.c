/* cupti_rivals.c - whether the program ran a CUPTI client of its own while
 * xpcap held CUPTI. A process has one CUPTI subscription; with ours in
 * place torch.profiler's Kineto is refused (it logs
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) and gets no GPU events, so
 * the program's own profile changes because it is profiled. CUPTI tells the
 * holder nothing, but the stacks do: Kineto's start is slow (hundreds of ms)
 * and leaves CPU samples, waits or launches in its frames. The run then says
 * so among its warnings, where info and the reports show them. */
#include "ingest/cupti_rivals.h"

#include <stdio.h>

/* Frames only a started profiler runs: torch.profiler's and the legacy
 * autograd profiler's trace start, and Kineto's own native code. */
static const char rival_sql[] =
	"SELECT s.value, ifnull(m.value, '') FROM xp_frames f"
	" JOIN StringIds s ON s.id = f.symbol LEFT JOIN StringIds m ON m.id = f.module"
	" WHERE (m.value LIKE '%torch/profiler/profiler.py'"
	"        AND s.value IN ('_KinetoProfile.prepare_trace', '_KinetoProfile.start_trace'))"
	"    OR (m.value LIKE '%torch/autograd/profiler.py'"
	"        AND s.value IN ('profile._prepare_trace', 'profile._start_trace'))"
	"    OR s.value LIKE 'libkineto::%'"
	" ORDER BY f.line IS NULL, f.id LIMIT 1";

/* 1 when the run recorded with GPU capture armed, 0 if not, -EIO. */
static int gpu_armed(sqlite3 *db)
{
	sqlite3_stmt *s;
	int armed, rc;

	if (sqlite3_prepare_v2(db, "SELECT value FROM META_DATA_EXPORT"
			       " WHERE name = 'meta.gpu_capture_armed'", -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	rc = sqlite3_step(s);
	armed = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) == 1 : rc == SQLITE_DONE ? 0 : -EIO;
	sqlite3_finalize(s);
	return armed;
}

int xp_note_cupti_rivals(sqlite3 *db)
{
	char msg[1024];
	sqlite3_stmt *s;
	int armed = gpu_armed(db), rc;

	if (armed <= 0)
		return armed;
	if (sqlite3_prepare_v2(db, rival_sql, -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		snprintf(msg, sizeof(msg), "the program started torch.profiler (Kineto) while xpcap"
			 " held CUPTI (seen in %s%s%s): it got no GPU events of its own, Kineto"
			 " was refused (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED); xpcap's GPU"
			 " capture is complete; to let torch.profiler have CUPTI, record with --no-gpu",
			 (const char *)sqlite3_column_text(s, 0),
			 *(const char *)sqlite3_column_text(s, 1) ? " of " : "",
			 (const char *)sqlite3_column_text(s, 1));
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? 0 : -EIO;
	if (sqlite3_prepare_v2(db, "INSERT INTO xp_warnings(file, offset, message)"
			       " VALUES ('gpu', NULL, ?)", -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(s, 1, msg, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}
