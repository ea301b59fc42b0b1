/* runfacts.c - a run's start and the pid of a rank; see runfacts.h. */
#include "db/runfacts.h"

#include <stddef.h>

int64_t xp_db_run_start_ns(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t t = -1;

	if (sqlite3_prepare_v2(db, "SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT"
			       " WHERE name = 'meta.start_monotonic_ns'", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		t = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return t;
}

int xp_db_pid_of_rank(sqlite3 *db, int64_t rank, uint32_t *pid)
{
	sqlite3_stmt *s;
	int found = 0;

	if (sqlite3_prepare_v2(db, "SELECT pid FROM xp_ranks WHERE rank = ? LIMIT 1", -1, &s,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(s, 1, rank);
	if (sqlite3_step(s) == SQLITE_ROW) {
		*pid = (uint32_t)sqlite3_column_int64(s, 0);
		found = 1;
	}
	sqlite3_finalize(s);
	return found;
}
