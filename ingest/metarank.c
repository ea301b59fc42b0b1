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

int xp_meta_rank_save(sqlite3 *db)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}
