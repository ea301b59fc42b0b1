/* runfacts.h - two small facts of a run's database the commands look up
 * before they read it: when the run started (for --since/--until +OFFSET)
 * and which process had a launcher's rank (for --rank).
 *
 *   int rc = xp_db_run_start_ns(db, &t0);  // -ENOENT: meta.json did not say
 *   if (xp_db_pid_of_rank(db, 3, &pid) == 1) ...
 */
#ifndef XP_DB_RUNFACTS_H
#define XP_DB_RUNFACTS_H

#include <stdint.h>
#include <sqlite3.h>

/* The run's start (meta.json's, CLOCK_MONOTONIC ns, >= 0) into *t0: 0,
 * -ENOENT when meta.json did not say, or -EIO (sqlite3_errmsg). */
int xp_db_run_start_ns(sqlite3 *db, int64_t *t0);
/* The process the launcher gave that rank (xp_ranks): 1 with *pid set,
 * 0 when none had it (or the table is not there). */
int xp_db_pid_of_rank(sqlite3 *db, int64_t rank, uint32_t *pid);

#endif
