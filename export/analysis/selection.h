/* selection.h - whether a --pid/--tid names anything in a run: a filter that
 * matches nothing is a mistake to report, not an empty table.
 *   if (xp_selection_matches(db, 1234, -1) == 0) usage error
 */
#ifndef XP_SELECTION_H
#define XP_SELECTION_H
#include <stdint.h>
#include <sqlite3.h>

/* 1 when the run has the process pid (< 0: any) with the thread tid (< 0:
 * any) among its processes, tasks, threads, samples or API calls, 0 when
 * not; 1 too when the database has none of those tables to ask. */
int xp_selection_matches(sqlite3 *db, int64_t pid, int64_t tid);

/* The pids a database stores for a --pid as given: in a merged job
 * (gtid.h) a process's pid carries its run above the local pid a person
 * sees (run 0's is the pid itself). Returns how many stored pids match it,
 * as given or as their local part (2: two or more), the first two in
 * stored, the one stored as given first. */
int xp_selection_stored_pid(sqlite3 *db, int64_t pid, int64_t stored[2]);

#endif
