/* writeerr.h - the code of a failed write to a caller's FILE *.
 *   if (fprintf(out, ...) < 0) return xp_write_errno();
 * The write's errno; -ENOSPC when stdio left errno unset (a write that
 * stored less and gave no reason: what a full device does). So -EIO
 * comes only from an errno that said EIO, and otherwise keeps its one
 * meaning, "read sqlite3_errmsg" (CONTRIBUTING.md); the caller, which
 * owns the FILE *, tells the two apart with ferror(). */
#ifndef XP_WRITEERR_H
#define XP_WRITEERR_H

#include <errno.h>

static inline int xp_write_errno(void)
{
	return errno > 0 ? -errno : -ENOSPC;
}

#endif
