/* idle_waits.h - when a process's threads were off CPU (xp_switches: the
 * waits xpcap records by default where GPU capture is armed, or with
 * --off-cpu), with the stack where each went off, for `xpcorr report --by
 * idle` (view_idle.c): a gap whose launching thread slept, waited on a
 * lock or read a file is named by where it blocked, not by "no sample".
 *
 *   struct xp_wait *w; size_t n;
 *   if (xp_idle_waits_load(db, gpid, &w, &n) == 0) { ...; free(w); }
 */
#ifndef XP_IDLE_WAITS_H
#define XP_IDLE_WAITS_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

struct xp_wait {
	int64_t gtid, start, end;   /* the thread (globalTid) and its time off CPU */
	int64_t stack;              /* xp_stacks id where it went off; <= 0: none taken
				     * (a normal user's waits at perf_event_paranoid 2) */
	int preempted;              /* runnable all along: the CPU was taken from it */
};

/* The process's (of globalTid gpid) off-CPU intervals, by thread then
 * start, into *out (malloc'd, NULL when none): 0, -EIO or -ENOMEM. */
int xp_idle_waits_load(sqlite3 *db, int64_t gpid, struct xp_wait **out, size_t *n);
/* The first of w[0..n) (by thread then start) of thread gtid that ends
 * after t: n if none. One thread's intervals do not overlap. */
size_t xp_idle_wait_first(const struct xp_wait *w, size_t n, int64_t gtid, int64_t t);

#endif
