/* rangecut.h - --capture-range without the uprobe: CPU records outside the
 * program's windows cut at ingest (rangecut.c).
 *
 *   struct xp_range_cut c;
 *   if (xp_range_cut(db, &c) < 0) ... sqlite3_errmsg(db) ...
 *   c.samples, c.switches: rows removed; c.windows: windows opened
 */
#ifndef XP_RANGECUT_H
#define XP_RANGECUT_H

#include <sqlite3.h>
#include <stdint.h>

struct xp_range_cut {
	int done;                   /* the run asked for a range xpcap did not bound */
	uint64_t windows;           /* windows opened, over all processes */
	uint64_t samples;           /* xp_samples rows removed */
	uint64_t switches;          /* xp_switches rows removed */
};

/* After meta.json, cpu.xpr and the GPU streams are loaded, before the
 * indexes; writes its counts as META_DATA_EXPORT xp.range_*. 0, -ENOMEM
 * or -EIO. */
int xp_range_cut(sqlite3 *db, struct xp_range_cut *out);

#endif
