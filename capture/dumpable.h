/* dumpable.h - which processes the unprivileged (perf) sampler must leave
 * out because their memory is not dumpable (prctl PR_SET_DUMPABLE 0, or
 * mixed ids): the BPF sampler's privileged() rule, applied when the drain
 * reads a record instead of when the kernel takes it. The kernel keeps
 * sampling such a task through inherited events, so the drain looks at
 * /proc (taskowner.h) at most once per pass per process, and a process
 * once seen not dumpable stays out until it executes a new image (which
 * replaces its memory) or its pid is given to a new process: samples it
 * took before being seen, but read after, are dropped too, even if it made
 * itself dumpable again meanwhile. A child forked by a process seen not
 * dumpable starts out (fork copies the mode). What a look cannot catch: a
 * process not dumpable only between two looks (the drain passes at least
 * every 20 ms), or that exits before its first look.
 *   struct dumpable *t = dumpable_new(look, ctx);
 *   dumpable_pass(t);                        // each drain pass
 *   if (!dumpable_keeps(t, pid, sample_ts)) drop it
 *   dumpable_exec(t, pid, ts);               // at an exec's COMM record
 *   dumpable_fork(t, child, parent, ts);     // at a new process's FORK
 */
#ifndef XP_CAPTURE_DUMPABLE_H
#define XP_CAPTURE_DUMPABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct dumpable;

/* 1: pid is dumpable as its user now; 0: it is not; < 0: it is gone. */
typedef int (*dumpable_look_fn)(void *ctx, pid_t pid);
/* now: the clock of the records' timestamps (CLOCK_MONOTONIC), for tests. */
typedef uint64_t (*dumpable_now_fn)(void);

struct dumpable *dumpable_new(dumpable_look_fn look, void *ctx, dumpable_now_fn now);
void dumpable_free(struct dumpable *t);
/* A new drain pass: the next record of each process looks again. */
void dumpable_pass(struct dumpable *t);
/* Whether a record of pid's memory (a sample, a mapping) taken at ts may
 * be written. */
bool dumpable_keeps(struct dumpable *t, pid_t pid, uint64_t ts);
/* Whether pid may be read now (its perf map, its /proc maps): false once
 * seen not dumpable (until an exec) or not dumpable now. */
bool dumpable_allowed(struct dumpable *t, pid_t pid);
/* pid executed a new image at ts: its records from ts on are judged anew. */
void dumpable_exec(struct dumpable *t, pid_t pid, uint64_t ts);
/* A new process child of parent at ts: out from the start if parent was
 * out then; else judged anew (a pid seen before belonged to another). */
void dumpable_fork(struct dumpable *t, pid_t child, pid_t parent, uint64_t ts);

#endif
