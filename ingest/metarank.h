/* metarank.h - the ranks xpcap found in launchers' variables (RANK,
 * SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK) as rows of xp_ranks, for
 * processes that recorded none (a CPU-only rank: gloo on the CPU, a data
 * worker), so that jobs name their ranks all the same: meta.json's
 * "job_rank" (xpcap's own environment) as the command's row, where no
 * process recorded its own; "process_ranks" (each exec'd process's
 * environment) for the ranks no row holds then.
 *
 *   if (xp_meta_rank_save(db) < 0) ... sqlite3_errmsg(db) ...
 */
#ifndef XP_METARANK_H
#define XP_METARANK_H

#include <sqlite3.h>

/* After meta.json and the GPU streams are loaded. 0 or -EIO. */
int xp_meta_rank_save(sqlite3 *db);

#endif
