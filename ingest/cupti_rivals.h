/* cupti_rivals.h - a warning when the program ran its own CUPTI client
 * (torch.profiler) while xpcap held CUPTI. */
#ifndef XP_INGEST_CUPTI_RIVALS_H
#define XP_INGEST_CUPTI_RIVALS_H

#include <errno.h>
#include <sqlite3.h>

/* Adds the warning to xp_warnings when a run recorded with GPU capture
 * armed has frames of a started torch.profiler. 0 or -EIO (read
 * sqlite3_errmsg). */
int xp_note_cupti_rivals(sqlite3 *db);

#endif
