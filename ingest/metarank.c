/* metarank.c - a run's rank from its meta.json (metarank.h). */
#include "ingest/metarank.h"

#include <errno.h>
#include <stddef.h>

/* One row for the command's process, read from the flattened meta.json
 * (META_DATA_EXPORT), only where no process of the run recorded its own. */
static const char sql[] =
	"INSERT INTO xp_ranks(pid, host, rank, local_rank, world_size, local_world_size, source)"
	" SELECT (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT WHERE name = 'meta.target_pids.0'),"
	" (SELECT value FROM META_DATA_EXPORT WHERE name = 'meta.hostname'), CAST(r.value AS INTEGER),"
	" (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT WHERE name = 'meta.job_rank.local_rank'),"
	" (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT WHERE name = 'meta.job_rank.world_size'),"
	" (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT"
	"  WHERE name = 'meta.job_rank.local_world_size'),"
	" (SELECT value FROM META_DATA_EXPORT WHERE name = 'meta.job_rank.source')"
	" FROM META_DATA_EXPORT r WHERE r.name = 'meta.job_rank.rank'"
	" AND CAST(r.value AS INTEGER) >= 0 AND NOT EXISTS (SELECT 1 FROM xp_ranks)"
	" AND EXISTS (SELECT 1 FROM META_DATA_EXPORT WHERE name = 'meta.target_pids.0'"
	"  AND CAST(value AS INTEGER) > 0)";

/* meta.process_ranks (procrank.h): for each rank no row holds yet, of the
 * processes started with it in their environment (a rank's helpers
 * exec'd later inherit it) the one most seen on CPU, samples and waits. */
static const char process_sql[] =
	"WITH p AS (SELECT substr(name, 1, length(name) - 4) AS k, CAST(value AS INTEGER) AS pid"
	"  FROM META_DATA_EXPORT WHERE name GLOB 'meta.process_ranks.[0-9]*.pid'),"
	" seen AS (SELECT pid, count(*) AS n FROM (SELECT pid FROM xp_samples"
	"  UNION ALL SELECT pid FROM xp_switches) GROUP BY pid),"
	" r AS (SELECT p.pid,"
	"  (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT WHERE name = p.k || '.rank') AS rank,"
	"  (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT WHERE name = p.k || '.local_rank') AS lr,"
	"  (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT WHERE name = p.k || '.world_size') AS ws,"
	"  (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT"
	"   WHERE name = p.k || '.local_world_size') AS lws,"
	"  (SELECT value FROM META_DATA_EXPORT WHERE name = p.k || '.source') AS src,"
	"  coalesce((SELECT n FROM seen WHERE seen.pid = p.pid), 0) AS n FROM p WHERE p.pid > 0)"
	" INSERT INTO xp_ranks(pid, host, rank, local_rank, world_size, local_world_size, source)"
	" SELECT pid, (SELECT value FROM META_DATA_EXPORT WHERE name = 'meta.hostname'), rank,"
	"  lr, ws, lws, src FROM r"
	" WHERE rank >= 0 AND NOT EXISTS (SELECT 1 FROM xp_ranks x WHERE x.rank = r.rank OR x.pid = r.pid)"
	"  AND pid = (SELECT pid FROM r r2 WHERE r2.rank = r.rank ORDER BY n DESC, pid LIMIT 1)";

int xp_meta_rank_save(sqlite3 *db)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	return sqlite3_exec(db, process_sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}
