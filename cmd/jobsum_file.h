/* jobsum_file.h - RUN/xpsum.db, a run's job summary (export/job/jobsum.h), made
 * beside its database: at `xpcorr ingest` of a run with a rank, and by
 * `xpcorr job` for a run whose summary is missing or older than its
 * database. Prints, as cmd/ alone may.
 *
 *   if (xp_cmd_write_summary("xpcorr ingest", "run/", db, 0)) return XP_EXIT_FAIL;
 */
#ifndef XP_CMD_JOBSUM_FILE_H
#define XP_CMD_JOBSUM_FILE_H

#include <stddef.h>
#include <sqlite3.h>

/* RUN_DIR/xpsum.db from db, written as ingest writes xpcorr.db (rundb.h:
 * as the directory's owner, aside, renamed; trust: --trust-run-dir).
 * XP_EXIT_OK, or XP_EXIT_FAIL after saying why. */
int xp_cmd_write_summary(const char *who, const char *run_dir, sqlite3 *db, int trust);
/* The summary of db in a new in-memory database *mem (closed by the
 * caller either way): ingest makes it on its own connection, inside the
 * load, where the views' helper threads need no second connection.
 * 0 or -errno with the line in err. */
int xp_cmd_make_summary(sqlite3 *db, sqlite3 **mem, char *err, size_t len);
/* mem (xp_cmd_make_summary's) as RUN_DIR/xpsum.db, written as
 * xp_cmd_write_summary writes it. XP_EXIT_OK or XP_EXIT_FAIL after saying why. */
int xp_cmd_save_summary(const char *who, const char *run_dir, sqlite3 *mem, int trust);
/* Whether db holds a process with a rank (a job's rank: worth a summary). */
int xp_cmd_has_rank(sqlite3 *db);
/* RUN_DIR/xpsum.db into path. */
void xp_cmd_summary_path(const char *run_dir, char *path, size_t len);

#endif
