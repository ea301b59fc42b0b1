/* timearg.h - --since/--until as the commands take them: CLOCK_MONOTONIC ns
 * as in the database, or "+1.5s" counted from the run's start.
 *   int64_t off;
 *   if (arg[0] == '+' && xp_cmd_parse_offset(arg, &off) == 0 &&
 *       xp_db_run_start_ns(db, &t0) == 0 && xp_cmd_offset_time(t0, off, &since) == 0)
 */
#ifndef XP_CMD_TIMEARG_H
#define XP_CMD_TIMEARG_H

#include <stdint.h>

/* "+1.5s", "+200ms", "+50us", "+1000ns" (or "+1500000000"): an offset from
 * the run's start, in ns; 0 or -EINVAL (also for NaN, infinities and more
 * than XP_OFFSET_MAX_NS, 31 years). */
#define XP_OFFSET_MAX_NS 1e18
int xp_cmd_parse_offset(const char *s, int64_t *ns);
/* The run's start t0 (from its database: any value) plus off into *t:
 * 0, or -ERANGE when the sum does not fit in 63 bits. */
int xp_cmd_offset_time(int64_t t0, int64_t off, int64_t *t);

#endif
