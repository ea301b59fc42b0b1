/* tracefmt.h - copies a tracepoint's format file from tracefs into the run
 * (run/tracepoints/NAME.format), so its records decode offline with
 * libtraceevent even where the fields differ between kernels. Mounts tracefs
 * on /sys/kernel/tracing if neither it nor debugfs's tracing is there.
 *   tracefmt_save(&rd, "sched", "sched_switch");    // rd: rundir_open(&rd, "run", ...)
 */
#ifndef XP_CAPTURE_TRACEFMT_H
#define XP_CAPTURE_TRACEFMT_H

struct rundir;

/* 0, or -errno: -ENOENT when no tracefs has the event. */
int tracefmt_save(struct rundir *rd, const char *system, const char *event);

#endif
