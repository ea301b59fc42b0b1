/* stopsig.h - while a run is ingested, the signals that end a process by
 * default (SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1,
 * SIGUSR2) only set a flag: the load stops at its next record and the
 * temporary database is removed, where dying at once would leave it behind
 * (SIGKILL still does: the next reader removes it). A signal ignored when
 * the catch begins (nohup's SIGHUP) stays ignored.
 *
 *   struct xp_stopsig s;
 *   xp_stopsig_catch(&s);
 *   o.cancel = xp_stopsig_flag();
 *   err = xp_ingest(&o, &res);
 *   xp_stopsig_restore(&s);             // the handlers as they were
 *   if (xp_stopsig_caught()) ...        // which signal, or 0
 */
#ifndef XP_CMD_STOPSIG_H
#define XP_CMD_STOPSIG_H

#include <signal.h>

#define XP_STOPSIG_COUNT 8

struct xp_stopsig {
	struct sigaction old[XP_STOPSIG_COUNT];
};

void xp_stopsig_catch(struct xp_stopsig *s);
void xp_stopsig_restore(const struct xp_stopsig *s);
/* Set non-zero by a caught signal: xp_load_opts.cancel. */
const volatile int *xp_stopsig_flag(void);
/* The signal caught since xp_stopsig_catch, or 0. */
int xp_stopsig_caught(void);
/* After xp_stopsig_restore: ends the process by the caught signal as it
 * would have ended without us (its handler as it was), if one came. */
void xp_stopsig_reraise(void);

#endif
