/* pystacks_db.h - the Python-stack counts of a run into its database:
 * one row of xp_python_processes per process, sums as xp.python.* in
 * META_DATA_EXPORT (xpcorr-db(5)); nothing for a run without Python records.
 *
 *   if (xp_pystore_save(db, store) < 0) ... sqlite3_errmsg(db)
 */
#ifndef XP_PYSTACKS_DB_H
#define XP_PYSTACKS_DB_H

#include <sqlite3.h>

#include "ingest/pystacks.h"

/* 0 or -EIO. */
int xp_pystore_save(sqlite3 *db, const struct xp_pystore *s);

#endif
