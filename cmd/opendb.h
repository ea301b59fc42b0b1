/* opendb.h - how the commands get a database: ingest, then correlate (the
 * command layer runs the stages; ingest never calls correlate), or an
 * existing database opened read-only. Prints, as cmd/ alone may.
 *
 *   struct xp_load_opts o;
 *   xp_cmd_load_opts(&o, "run");           // ingest + correlation step
 *   err = xp_ingest(&o, &res);
 *   xp_print_load_warnings(&res);
 *
 *   sqlite3 *db;
 *   if ((rc = xp_cmd_open_db("xpcorr report", argv[optind], &db))) return rc;
 */
#ifndef XP_CMD_OPENDB_H
#define XP_CMD_OPENDB_H

#include <sqlite3.h>

#include "ingest/ingest.h"

/* Default load options for run_dir, with the correlation as the load's
 * after_load step (in the same transaction, before the rename). */
void xp_cmd_load_opts(struct xp_load_opts *o, const char *run_dir);
/* The warnings of a load on stderr, "xpcorr: warning: ...", the first few
 * and a count. */
void xp_print_load_warnings(const struct xp_load_result *res);
/* The database of a run directory, ingested and correlated first when
 * missing or stale (warnings and errors printed), or an existing .db file
 * opened read-only. XP_EXIT_OK, or after printing why XP_EXIT_USAGE (no such
 * path: "xpcorr report: /x: no such run directory"; who names the command)
 * or XP_EXIT_FAIL. */
int xp_cmd_open_db(const char *who, const char *target, sqlite3 **db);
/* The same, for a database this command opened before: its warnings (a
 * stale read-only run's) were said then, errors are said again. */
int xp_cmd_reopen_db(const char *who, const char *target, sqlite3 **db);

#endif
