/* ddpbuckets.h - DDP's gradient all-reduces named by their bucket.
 *
 * PyTorch's DistributedDataParallel all-reduces gradients in buckets, one
 * NCCL collective a bucket, from autograd's thread during backward: the
 * reducer (c10d::Reducer) launches them in bucket order, bucket 0 first
 * (it starts bucket k + 1 only after bucket k), and no frame says which
 * bucket a launch was for. So within one backward pass, the k-th collective
 * that a reducer thread launches is bucket k; a launch of the same process
 * from another thread (the next forward, the optimizer) ends the pass.
 * Each such launch's stack gets a note frame, "[DDP bucket K]"
 * (XP_FRAME_NOTE), under its leaf, so reports name the site "NCCL: DDP
 * reducer, bucket K" and keep the buckets apart.
 *
 *   n = xp_ddp_buckets(db);    // after the launches are loaded: launches named, or -errno
 */
#ifndef XP_DDPBUCKETS_H
#define XP_DDPBUCKETS_H

#include <sqlite3.h>

/* Notes the bucket of every reducer collective launch in xp_launches; how
 * many launches were noted (0 in a run without DDP), or a negative errno. */
int xp_ddp_buckets(sqlite3 *db);

#endif
