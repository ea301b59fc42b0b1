/* runfacts.c - a run's start and the pid of a rank; see runfacts.h. */
#include "db/runfacts.h"

#include <errno.h>
#include <stddef.h>

int xp_db_run_start_ns(sqlite3 *db, int64_t *t0)
{
	sqlite3_stmt *st;
	int64_t t = -1;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT"
			       " WHERE name = 'meta.start_monotonic_ns'", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		t = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -EIO;
	if (t < 0)
		return -ENOENT;
	*t0 = t;
	return 0;
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
