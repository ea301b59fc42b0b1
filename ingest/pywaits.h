/* pywaits.h - the calls a normal user's threads were blocked in
 * (XP_REC_PYWAIT of xpcap's frame reader, pyframes.xpr), for the off-CPU
 * intervals that perf's switch records give without a stack, and the
 * counts that say where the waits' frames came from (xp.waits.* in
 * META_DATA_EXPORT, xpcorr-db(5)).
 *   struct xp_pywaits *pw = xp_pywaits_new();
 *   xp_pywaits_record(pw, h);                       // pass 1, every record
 *   if (xp_pywaits_in(pw, pid, tid, ts, ts + dur, &pc) == 1) ... pc: its leaf
 *   xp_pywaits_count(pw, blocked, native, python, call);   // pass 2, each interval
 *   xp_pywaits_save(db, pw);
 */
#ifndef XP_PYWAITS_H
#define XP_PYWAITS_H

#include <sqlite3.h>
#include <stdint.h>

#include "src/runfile.h"

struct xp_pywaits;

struct xp_pywaits *xp_pywaits_new(void);
void xp_pywaits_free(struct xp_pywaits *w);
/* 1 taken (an XP_REC_PYWAIT), 0 another type, -EBADMSG malformed or out
 * of time order within its thread, -ENOMEM. */
int xp_pywaits_record(struct xp_pywaits *w, const struct xp_record_header *h);
/* The pc of the first read of thread (pid, tid) blocked within [from,
 * until]: 1 and *pc, 0 none. */
int xp_pywaits_in(const struct xp_pywaits *w, uint32_t pid, uint32_t tid, uint64_t from,
		  uint64_t until, uint64_t *pc);
/* Counts an off-CPU interval: blocked (not preempted), with the
 * recorder's native stack (the BPF sched_switch program), with Python
 * frames, with the call it blocked in from the frame reader. */
void xp_pywaits_count(struct xp_pywaits *w, int blocked, int native, int python, int call);
/* xp.waits.intervals, .blocked, .native_stacks, .python_frames,
 * .blocked_call: 0 or -EIO; nothing for a run without off-CPU intervals. */
int xp_pywaits_save(sqlite3 *db, const struct xp_pywaits *w);

#endif
