/* metarank.h - the rank xpcap found in its launcher's variables (meta.json
 * "job_rank": RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK) as the
 * command's row of xp_ranks, for runs whose processes recorded none (a
 * CPU-only rank: gloo on the CPU, a data worker), so that merged jobs name
 * their ranks all the same.
 *
 *   if (xp_meta_rank_save(db) < 0) ... sqlite3_errmsg(db) ...
 */
#ifndef XP_METARANK_H
#define XP_METARANK_H

#include <sqlite3.h>

/* After meta.json and the GPU streams are loaded. 0 or -EIO. */
int xp_meta_rank_save(sqlite3 *db);

#endif
