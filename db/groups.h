/* groups.h - the precomputed report groups (xp_report_groups and friends,
 * xpcorr-gpu-db(5)) as correlate writes them and export reads them: what
 * they were computed from, so that a report notices GPU or API rows added
 * or deleted since and computes from the rows instead.
 *
 *   xp_groups_fingerprint_write(db);       // correlate, with the groups
 *   if (xp_groups_fresh(db)) ... read xp_report_groups ...
 */
#ifndef XP_DB_GROUPS_H
#define XP_DB_GROUPS_H

#include <sqlite3.h>

/* Records the row counts and last rowids of the tables the groups read.
 * 0 or -EIO (message in sqlite3_errmsg). */
int xp_groups_fingerprint_write(sqlite3 *db);
/* 1 when the database has groups computed from its current GPU and API rows
 * (same row counts and last rowids); 0 when absent or stale. */
int xp_groups_fresh(sqlite3 *db);

#endif
