/* groups.c - what the precomputed report groups were computed from
 * (groups.h). */
#include "db/groups.h"

#include <errno.h>
#include <stdio.h>

/* What the groups were computed from: rows and last rowid of each table they
 * read, so that a report notices rows deleted or added since (count(*)
 * walks the b-tree pages without decoding rows: ~0.1 s for 1M kernels). */
static const char fingerprint_sql[] =
	"SELECT (SELECT count(*) || '/' || ifnull(max(rowid), 0) FROM CUPTI_ACTIVITY_KIND_KERNEL)"
	" || ' ' || (SELECT count(*) || '/' || ifnull(max(rowid), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY)"
	" || ' ' || (SELECT count(*) || '/' || ifnull(max(rowid), 0) FROM CUPTI_ACTIVITY_KIND_MEMSET)"
	" || ' ' || (SELECT count(*) || '/' || ifnull(max(rowid), 0) FROM CUPTI_ACTIVITY_KIND_RUNTIME)";

int xp_groups_fingerprint_write(sqlite3 *db)
{
	static const char sql[] = "INSERT INTO META_DATA_EXPORT(name, value) SELECT"
		" 'xp_report_groups_of', (%s)";
	char buf[sizeof(sql) + sizeof(fingerprint_sql)];

	snprintf(buf, sizeof(buf), sql, fingerprint_sql);
	return sqlite3_exec(db, buf, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

int xp_groups_fresh(sqlite3 *db)
{
	static const char sql[] = "SELECT value = (%s) FROM META_DATA_EXPORT"
		" WHERE name = 'xp_report_groups_of'";
	char buf[sizeof(sql) + sizeof(fingerprint_sql)];
	sqlite3_stmt *s;
	int fresh = 0;

	snprintf(buf, sizeof(buf), sql, fingerprint_sql);
	if (sqlite3_prepare_v2(db, buf, -1, &s, NULL) != SQLITE_OK)
		return 0;       /* a database without these tables */
	fresh = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) == 1;
	sqlite3_finalize(s);
	return fresh;
}
