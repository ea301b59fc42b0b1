/* waitlines.h - GPU work of a runtime thread at the line its Python thread
 * waited in.
 *
 * Native runtimes launch from threads of their own that never run Python:
 * XLA, while jax.jit compiles (autotuning, redzone checks), launches from
 * its compile threads, so no line of the program is on those stacks.
 * Meanwhile the program's Python thread was blocked in the call that
 * handed the runtime the work (backend_compile_and_load under the line
 * that first called the jitted function). So a launch whose stack has no
 * Python frame, from a thread that shows none anywhere (its samples, waits
 * and launches), when exactly one thread of its process was in a
 * voluntary off-CPU wait with Python frames at that time (xp_switches:
 * prev_state != 0, ts <= launch < ts + duration), is re-stacked; where
 * some of the process's Python threads launch GPU work themselves, only
 * their waits count (a threading.Timer or tqdm's monitor sleeping
 * meanwhile handed nothing over). The new stack: the wait's stack from
 * its root down to its innermost Python frame (the native wait frames
 * below it dropped), a note "[launched by a runtime thread while this line
 * waited]" (db/waitnote.h; "by runtime thread NAME" when the thread's name
 * differs from the waiter's), then the launch's own frames, root to leaf. No waiting thread or several: left as it is and
 * counted. A stack with a note already (the backward join, DDP's buckets)
 * is left alone, as are processes with no Python wait at all.
 *
 *   struct xp_wait_lines n;
 *   if (xp_wait_lines(db, &n) == 0)    // after the backward join, before the correlation
 *           printf("%lld placed\n", (long long)n.placed);
 */
#ifndef XP_WAITLINES_H
#define XP_WAITLINES_H

#include <stdint.h>
#include <sqlite3.h>

struct xp_wait_lines {
	int64_t placed;             /* launches re-stacked at a waiting line */
	int64_t no_waiter;          /* left: no thread of the process in a Python wait */
	int64_t several;            /* left: two or more were */
};

/* Re-stacks the launches (xp_launches.stack_id) and, when any launch
 * qualified, writes the counts as META_DATA_EXPORT's xp.wait_lines.*
 * (xpcorr-db(5)). 0, -EIO or -ENOMEM. */
int xp_wait_lines(sqlite3 *db, struct xp_wait_lines *out);
/* What ingest --raw-launch-stacks leaves: xp.wait_lines.off, so that info
 * can say why no launch was placed. 0 or -EIO. */
int xp_wait_lines_off(sqlite3 *db);

#endif
