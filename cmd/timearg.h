/* timearg.h - --since/--until as the commands take them: CLOCK_MONOTONIC ns
 * as in the database, or "+1.5s" counted from the run's start.
 *   int64_t off;
 *   if (arg[0] == '+' && xp_cmd_parse_offset(arg, &off) == 0)
 *           since = xp_db_run_start_ns(db) + off;     (db/runfacts.h; check >= 0)
 */
#ifndef XP_CMD_TIMEARG_H
#define XP_CMD_TIMEARG_H

#include <stdint.h>

/* "+1.5s", "+200ms", "+50us", "+1000ns" (or "+1500000000"): an offset from
 * the run's start, in ns; 0 or -EINVAL. */
int xp_cmd_parse_offset(const char *s, int64_t *ns);

#endif
