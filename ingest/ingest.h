/* ingest.h - build run/xpcorr.db from a run directory, atomically: the
 * database is written to run/xpcorr.db.tmp-PID-RANDOM (made and locked by
 * us, rundb.h) and renamed over the old one only when complete, so an
 * interrupted or failed ingest leaves the previous database (or none),
 * never half of one.
 *
 *   struct xp_load_opts o = { .run_dir = "run", .after_load = correlate };
 *   struct xp_load_result res;
 *   if (!xp_ingest_is_fresh("run") && xp_ingest(&o, &res) < 0)
 *       fprintf(stderr, "xpcorr: %s\n", res.error);
 */
#ifndef XP_INGEST_H
#define XP_INGEST_H

#include <stddef.h>

#include <sqlite3.h>

#include "ingest/load.h"
#include "db/rundb.h"

/* 0 or a negative errno with res->error set (see xp_load_run); as root,
 * -EPERM for a directory others may write into unless o->trust_run_dir.
 * With o->out_db the run is only read and that file is written instead
 * (atomically, in its directory, as run/xpcorr.db is). */
int xp_ingest(const struct xp_load_opts *o, struct xp_load_result *res);
/* 1 when run/xpcorr.db is a regular file, has this schema version and is
 * newer than every input file of the run; else 0. */
int xp_ingest_is_fresh(const char *run_dir);
/* Opens o->run_dir/xpcorr.db read-only, ingesting first (with o) when it
 * is missing, not a regular file, or older than the run; removes the
 * temporary files of killed ingests. *ingested tells whether it did.
 * res holds warnings: the ingest's, or that a stale database of a run that
 * cannot be written is read as it is. 0 or a negative errno with
 * res->error. */
int xp_ingest_open(const struct xp_load_opts *o, sqlite3 **db, int *ingested,
		   struct xp_load_result *res);

#endif
