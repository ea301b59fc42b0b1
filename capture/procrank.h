/* procrank.h - a process's place in a distributed job, read from the
 * environment it was started with (/proc/PID/environ), as jobrank.h reads
 * xpcap's own: what names the ranks of a CPU-only job, whose processes
 * have no injection library to record theirs. Only the launcher's rank
 * variables are taken from it; the caller decides whose environment may
 * be read at all (drain_task_allowed).
 *   struct xp_gpu_rank r;
 *   if (procrank_read(pid, &r) == 1) ... r.rank of r.world_size
 *   procranks_note(&ranks, pid);     // or kept with the others
 */
#ifndef XP_CAPTURE_PROCRANK_H
#define XP_CAPTURE_PROCRANK_H

#include <sys/types.h>

#include "src/runfmt_gpu.h"

/* The processes of a recording whose environment named a rank, in the
 * order first seen (a host runs a few ranks; helpers they exec inherit
 * the variables: the first 128 are kept, for meta.json). */
#define PROCRANKS_MAX 128
struct procranks {
	struct xp_gpu_rank v[PROCRANKS_MAX];
	unsigned n;
};

/* 1 with r filled (pid set, host left as it is) when pid's environment
 * names a rank; 0 when it names none; -errno when it cannot be read. */
int procrank_read(pid_t pid, struct xp_gpu_rank *r);
/* pid's rank into R where its environment names one; an exec of a pid
 * already there replaces its entry (the new image's). */
void procranks_note(struct procranks *R, pid_t pid);

#endif
