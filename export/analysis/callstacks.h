/* callstacks.h - the launch stack of each CUDA call: xp_launches joined to
 * the calls by (pid, tid, correlation id) in memory, as
 * `CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN xp_launches l ON l.pid =
 * (r.globalTid >> 24) AND l.correlation_id = r.correlationId AND l.tid =
 * (r.globalTid & 16777215)` would, where that join looked each call up in
 * an index (two b-tree searches a call: 1 s of op's 3 s at 1M calls).
 * Correlation ids count up per process, so each process's are an array
 * where they are dense (a map where they are not).
 *
 *   struct xp_callstacks *c;
 *   if (xp_callstacks_load(db, &c) == 0) {
 *           for (size_t k = xp_callstacks_find(c, gtid, corr, 0); k;
 *                k = xp_callstacks_find(c, gtid, corr, k))
 *                   use(xp_callstacks_stack(c, k));          // stack id, or -1
 *           xp_callstacks_free(c);
 *   }
 */
#ifndef XP_CALLSTACKS_H
#define XP_CALLSTACKS_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

struct xp_callstacks;

/* 0, -EIO or -ENOMEM. */
int xp_callstacks_load(sqlite3 *db, struct xp_callstacks **out);
/* The launch record of the call (globalTid, correlationId) after the one
 * numbered after (0: the first): its number (1...), or 0 when there is no
 * more. A key recorded twice is found twice, as the join would. */
size_t xp_callstacks_find(const struct xp_callstacks *c, int64_t gtid, int64_t corr, size_t after);
/* The stack id of launch record k, or -1 (none). */
int64_t xp_callstacks_stack(const struct xp_callstacks *c, size_t k);
void xp_callstacks_free(struct xp_callstacks *c);

#endif
