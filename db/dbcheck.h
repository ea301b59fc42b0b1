/* dbcheck.h - a database we did not just write (a run's xpcorr.db, a .db
 * named on the command line, a merged job's) is hostile input: before any
 * query it must have our schema, and every query it runs is bounded.
 *   - schema: an object with one of our names is our kind of object (a
 *     view in place of xp_samples recurses forever), our tables have our
 *     keys (a table rebuilt without them makes every lookup a scan), and
 *     each of our indexes is there, as ours, when its table is; planner
 *     statistics (sqlite_stat*), which no ingest writes, are refused.
 *     Tables and columns an older ingest did not make may be missing
 *     (readers ask); other objects are never read and stay allowed (a
 *     user's own views).
 *     No column of our tables is generated or hidden, and each of ours is
 *     declared with our type; no table of ours is virtual.
 *   - limits: SQLite's own (a string's length, a statement's, columns,
 *     expression depth, ...) are set far below its defaults, the schema's
 *     SQL is untrusted (trusted_schema off), views and triggers are off.
 *   - work: a progress handler stops every statement of the process once
 *     the databases opened so far have taken more virtual-machine steps than
 *     their size allows (XP_DB_WORK_PER_PAGE per page, XP_DB_WORK_MIN at
 *     least; XPCORR_MAX_DB_WORK sets it); the statement fails with
 *     SQLITE_INTERRUPT (nothing else interrupts a received connection),
 *     and xp_db_work_why() says why.
 *
 *   xp_db_limit_received(db);            // before the first statement
 *   if (xp_db_check_schema(db, err, sizeof(err)) == -EBADMSG) refuse(err);
 *   xp_db_limit_work(db, st.st_size);     // the file's size, not its header's
 *   ... a query fails:
 *   if (sqlite3_errcode(db) == SQLITE_INTERRUPT) xp_db_work_why(msg, sizeof(msg));
 */
#ifndef XP_DBCHECK_H
#define XP_DBCHECK_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* The heaviest command on the H100 fixtures (a Chrome trace) takes ~3,000
 * steps per page: 300 times that, and seconds of work for a small one. */
#define XP_DB_WORK_PER_PAGE 1000000ull  /* VM steps per 4 KiB page opened */
#define XP_DB_WORK_MIN 1000000000ull    /* whatever the size */

/* 0 when db has our schema; -EPROTO (another schema version) or -EBADMSG
 * with err saying the first difference ("table xp_samples is a view");
 * -EIO when the schema cannot be read (err has SQLite's message). */
int xp_db_check_schema(sqlite3 *db, char *err, size_t len);
/* SQLite's limits (the length of a string, of a statement, columns,
 * expression depth, ...) and trusted_schema off, views and triggers off, on
 * a connection to a received database: before its schema is read. */
void xp_db_limit_received(sqlite3 *db);
/* Adds a database file of that many bytes to the process's budget and
 * bounds db's statements by it (0: another connection to a file counted
 * already, xp_db_open_again's). */
void xp_db_limit_work(sqlite3 *db, uint64_t file_bytes);
/* Work done outside SQLite on what a bounded database gave (a loop over
 * pairs of its rows): steps added to the same budget. 1 once it is spent
 * (statements fail from then on; xp_db_work_why says why), else 0. */
int xp_db_work_spend(uint64_t steps);
/* The work limit's line (no program name): what a caller whose statement
 * failed with SQLITE_INTERRUPT, or whose xp_db_work_spend said 1, puts in
 * its message. */
void xp_db_work_why(char *msg, size_t len);
/* For xpcorr's closing line only (bin/xpcorr.c): 1 with msg set once the
 * budget is spent, else 0. A command that made the best of a failed query
 * (info shows what it could read) still fails, with the reason, once. */
int xp_db_work_exhausted(char *msg, size_t len);
/* cmd/ put the work limit's line in its own, naming the file it was
 * reading: xpcorr's closing line does not say it again. */
void xp_db_work_said(void);
int xp_db_work_was_said(void);
/* Nothing spent, no database counted: a process that reads one input
 * after another (a fuzzer) starts each afresh. */
void xp_db_work_reset(void);

#endif
