/* snapshot.h - state that exists outside the event streams, copied into
 * the run: the executable mappings processes had before capture started
 * (as XP_MMAP_FROM_PROC records) and JIT perf maps (/tmp/perf-PID.map).
 *   snapshot_existing_maps(drain, pids, n, now);    // NULL pids: every process
 *   snapshot_perf_maps(drain, pids, n, &rd);       // at the end
 */
#ifndef XP_CAPTURE_SNAPSHOT_H
#define XP_CAPTURE_SNAPSHOT_H

#include <stdint.h>
#include <sys/types.h>

struct drain;
struct rundir;

/* Through drain_append_path, so before drain_start. Returns processes read.
 * Under sudo a process the invoking user could not trace is not read: its
 * mappings are counted as lost (drain_task_allowed); so is its perf map. */
unsigned snapshot_existing_maps(struct drain *d, const pid_t *pids, unsigned n, uint64_t ts);
/* Copies the perf map of every process seen in the run and of pids into
 * the run; returns how many were copied. A map is copied only when it is a
 * regular file owned by rd->uid (the invoking user) or by its process's
 * owner: xpcap runs as root, and /tmp is anyone's to plant a link in. */
unsigned snapshot_perf_maps(struct drain *d, const pid_t *pids, unsigned n,
			    struct rundir *rd);

#endif
