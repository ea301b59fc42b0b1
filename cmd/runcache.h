/* runcache.h - where a reader keeps the database of a run it cannot write
 * (a run root recorded, a read-only mount): a per-user cache,
 * $XDG_CACHE_HOME/xpcorr/ or ~/.cache/xpcorr/, one file per run named by
 * the run's identity (its directory's device and inode, and the name,
 * size and time of each input file), so a run recorded again into the
 * same directory gets a new one.
 *   char db[PATH_MAX], err[256];
 *   if (xp_run_cache_path("run", db, sizeof(db), err, sizeof(err))) fail(err);
 */
#ifndef XP_CMD_RUNCACHE_H
#define XP_CMD_RUNCACHE_H

#include <stddef.h>

/* The cache file's path (the directory made 0700 if missing, and checked
 * to be the user's alone); 0, or a negative errno with err set. */
int xp_run_cache_path(const char *run_dir, char *out, size_t len, char *err, size_t errlen);

#endif
