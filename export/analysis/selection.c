/* selection.c - whether a --pid/--tid names anything in a run (selection.h).
 *   xp_selection_matches(db, 99999, -1) == 0: "no such process"
 * Asks the small tables first; the samples (no index by tid alone) only
 * when those do not know the task, which is the mistaken case. */
#include "export/analysis/selection.h"

#include <stddef.h>

#include "src/gtid.h"

/* ?1 pid, ?2 tid, each < 0 for any; globalTid is pid << 24 | tid; a merged
 * job's pids carry their run above bit 22 (gtid.h): a pid matches as given
 * or as its local part */
#define PID_IS(p) "(" p " = ?1 OR " XP_SQL_PID_LOCAL(p) " = ?1)"
static const char *const queries[] = {
	"SELECT 1 FROM PROCESSES WHERE ?2 < 0 AND " PID_IS("pid"),
	"SELECT 1 FROM xp_tasks WHERE (?1 < 0 OR " PID_IS("pid") ") AND (?2 < 0 OR tid = ?2)",
	"SELECT 1 FROM ThreadNames WHERE (?1 < 0 OR " PID_IS("(globalTid >> 24)") ")"
	" AND (?2 < 0 OR globalTid & 16777215 = ?2)",
	"SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE (?1 < 0 OR " PID_IS("(globalTid >> 24)") ")"
	" AND (?2 < 0 OR globalTid & 16777215 = ?2)",
	"SELECT 1 FROM xp_samples WHERE (?1 < 0 OR " PID_IS("pid") ") AND (?2 < 0 OR tid = ?2)",
};

int xp_selection_matches(sqlite3 *db, int64_t pid, int64_t tid)
{
	int asked = 0;

	if (pid < 0 && tid < 0)
		return 1;
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		sqlite3_stmt *st;
		int found;

		if (sqlite3_prepare_v2(db, queries[i], -1, &st, NULL) != SQLITE_OK)
			continue;       /* a database without this table: ask the next */
		asked = 1;
		sqlite3_bind_int64(st, 1, pid);
		sqlite3_bind_int64(st, 2, tid);
		found = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
		if (found)
			return 1;
	}
	return !asked;
}

/* Every table that names processes, each asked for the stored pids whose
 * local part (or whole value) is ?1. */
static const char *const stored_queries[] = {
	"SELECT DISTINCT pid FROM xp_tasks WHERE " PID_IS("pid"),
	"SELECT DISTINCT pid FROM xp_gpu_processes WHERE " PID_IS("pid"),
	"SELECT DISTINCT pid FROM PROCESSES WHERE " PID_IS("pid"),
};

int xp_selection_stored_pid(sqlite3 *db, int64_t pid, int64_t stored[2])
{
	int n = 0;

	for (size_t i = 0; i < sizeof(stored_queries) / sizeof(stored_queries[0]); i++) {
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(db, stored_queries[i], -1, &st, NULL) != SQLITE_OK)
			continue;
		sqlite3_bind_int64(st, 1, pid);
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t p = sqlite3_column_int64(st, 0);

			if (n > 0 && (p == stored[0] || (n == 2 && p == stored[1])))
				continue;
			if (p == pid && n > 0) {        /* as given comes first */
				stored[1] = stored[0];
				stored[0] = p;
				n = 2;
			} else if (n < 2) {
				stored[n++] = p;
			}
		}
		sqlite3_finalize(st);
	}
	return n;
}
