/* weights.h - the SQL behind each flame-graph weight (folded.h): rows of
 * (pid, tid, thread name, stack id, leaf, attribution, weight, instances).
 *
 *   sqlite3_prepare_v2(db, xp_weight_sql(XP_WEIGHT_GPU), -1, &st, NULL);
 */
#ifndef XP_WEIGHTS_H
#define XP_WEIGHTS_H

#include "export/render/folded.h"

const char *xp_weight_sql(enum xp_weight w);
/* 1 when the weight's source table has rows, 0 when empty, -EIO. */
int xp_weight_has_rows(sqlite3 *db, enum xp_weight w);
/* Why such an export is empty, for a warning. */
const char *xp_weight_empty_hint(enum xp_weight w);

#endif
