/* jobrank.h - a process's place in a distributed job, from the variables its
 * launcher set (torchrun, Slurm, Open MPI, PMI), read through a getenv-like
 * function: xpcap reads its own environment for -o's %r, the injection
 * library each traced process's own.
 *
 *   struct xp_gpu_rank r;
 *   if (xp_job_rank(getenv, &r)) printf("rank %d of %d\n", r.rank, r.world_size);
 */
#ifndef XP_JOBRANK_H
#define XP_JOBRANK_H

#include "src/runfmt_gpu.h"

/* Fills r (pid and host left as they are); 1 when a launcher's rank was
 * found, 0 when none (r->source XP_RANK_NONE, the numbers -1). */
int xp_job_rank(char *(*get)(const char *), struct xp_gpu_rank *r);
/* "torchrun", "slurm", "mpi", "pmi" or "none". */
const char *xp_job_rank_source(uint32_t source);

#endif
