/* idle_sync.c - the calls that blocked a thread on the GPU (idle_sync.h). */
#include "export/idle/idle_sync.h"

#include <errno.h>
#include <stdlib.h>

#include "src/array.h"

/* The names of the calls that block: every synchronize, every copy call
 * that is not asynchronous (blocks 0), every asynchronous copy (blocks 1:
 * when it copies to pageable memory). Picked from the strings first: a
 * LIKE on each CUDA call's name would cost a scan with a join per call. */
#define BLOCKING_NAMES \
	"WITH names(id, async) AS (SELECT id, value NOT LIKE '%Synchronize%' AND value LIKE '%Async%'" \
	" FROM StringIds WHERE value LIKE '%Synchronize%' OR value LIKE 'cudaMemcpy%' OR" \
	" value LIKE 'cuMemcpy%')"

static const char any_sql[] = BLOCKING_NAMES " SELECT count(*) FROM names";

/* CUPTI's memcpy kinds: copyKind 2 device to host, dstKind 1 pageable
 * memory; the copy is named by the API record's correlation id */
static const char calls_sql[] =
	BLOCKING_NAMES
	" SELECT r.globalTid, r.start, r.end, ifnull(l.stack_id, -1)"
	" FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN names n ON n.id = r.nameId"
	" LEFT JOIN xp_launches l ON l.pid = (r.globalTid >> 24) AND"
	" l.correlation_id = r.correlationId AND +l.tid = (r.globalTid & 16777215)"
	" LEFT JOIN (SELECT DISTINCT correlationId AS corr, globalPid >> 24 AS pid"
	" FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 2 AND dstKind = 1) m"
	" ON n.async AND m.corr = r.correlationId AND m.pid = (r.globalTid >> 24)"
	" WHERE (r.globalTid >> 24) = (?1 >> 24) AND (NOT n.async OR m.corr IS NOT NULL)"
	" ORDER BY 1, 2";

/* Whether the run has any call of those names: 1, 0 or -EIO. */
static int any_blocking(sqlite3 *db)
{
	sqlite3_stmt *s;
	int rc = -EIO;

	if (sqlite3_prepare_v2(db, any_sql, -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_step(s) == SQLITE_ROW)
		rc = sqlite3_column_int64(s, 0) > 0;
	sqlite3_finalize(s);
	return rc;
}

/* the thread's launch record nearest the call: the latest before, else
 * the first after */
static const char near_sql[] =
	"SELECT stack_id, ?3 - ts FROM (SELECT stack_id, ts FROM xp_launches WHERE pid = ?1 AND"
	" tid = ?2 AND ts <= ?3 AND stack_id IS NOT NULL ORDER BY ts DESC LIMIT 1)"
	" UNION ALL SELECT stack_id, ts - ?3 FROM (SELECT stack_id, ts FROM xp_launches"
	" WHERE pid = ?1 AND tid = ?2 AND ts > ?3 AND stack_id IS NOT NULL ORDER BY ts LIMIT 1)"
	" ORDER BY 2 LIMIT 1";

static int nearest_stacks(sqlite3 *db, struct xp_sync_call *c, size_t n)
{
	sqlite3_stmt *s;
	int rc = 0;

	if (sqlite3_prepare_v2(db, near_sql, -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; i < n && !rc; i++) {
		int step;

		if (c[i].stack > 0)
			continue;
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, c[i].gtid >> 24);
		sqlite3_bind_int64(s, 2, c[i].gtid & 16777215);
		sqlite3_bind_int64(s, 3, c[i].start);
		if ((step = sqlite3_step(s)) == SQLITE_ROW)
			c[i].stack = sqlite3_column_int64(s, 0);
		else if (step != SQLITE_DONE)
			rc = -EIO;
	}
	sqlite3_finalize(s);
	return rc;
}

int xp_idle_syncs_load(sqlite3 *db, int64_t gpid, struct xp_sync_call **out, size_t *n)
{
	struct xp_sync_call *c = NULL;
	size_t cap = 0;
	sqlite3_stmt *s;
	int step, rc;

	*out = NULL;
	*n = 0;
	if ((rc = any_blocking(db)) <= 0)
		return rc;
	if (sqlite3_prepare_v2(db, calls_sql, -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(s, 1, gpid);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (xp_array__reserve((void **)&c, &cap, *n + 1, sizeof(*c), 64)) {
			sqlite3_finalize(s);
			free(c);
			*n = 0;
			return -ENOMEM;
		}
		c[(*n)++] = (struct xp_sync_call){ sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
						   sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3) };
	}
	sqlite3_finalize(s);
	rc = step == SQLITE_DONE ? nearest_stacks(db, c, *n) : -EIO;
	if (rc) {
		free(c);
		c = NULL;
		*n = 0;
	}
	*out = c;
	return rc;
}
