/* idle_waits.c - see idle_waits.h. */
#include "export/idle/idle_waits.h"

#include <errno.h>
#include <stdlib.h>

#include "src/array.h"
#include "src/gtid.h"

static const char waits_sql[] =
	"SELECT " XP_SQL_GTID("pid", "tid") ", ts, ts + duration, stack_id,"
	" prev_state = 0 FROM xp_switches"
	" WHERE pid = ?1 AND duration > 0 ORDER BY tid, ts";

int xp_idle_waits_load(sqlite3 *db, int64_t gpid, struct xp_wait **out, size_t *n)
{
	struct xp_wait *w = NULL;
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, waits_sql, -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(s, 1, (int64_t)xp_gtid_pid(gpid));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (xp_array__reserve((void **)&w, &cap, *n + 1, sizeof(*w), 64)) {
			rc = -ENOMEM;
			break;
		}
		w[(*n)++] = (struct xp_wait){ sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
					      sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3),
					      sqlite3_column_int(s, 4) };
	}
	sqlite3_finalize(s);
	rc = rc == SQLITE_DONE ? 0 : rc < 0 ? rc : -EIO;
	if (rc) {
		free(w);
		*n = 0;
		return rc;
	}
	*out = w;
	return 0;
}

size_t xp_idle_wait_first(const struct xp_wait *w, size_t n, int64_t gtid, int64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w[mid].gtid < gtid || (w[mid].gtid == gtid && w[mid].end <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
