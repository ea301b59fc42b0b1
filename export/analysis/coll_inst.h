/* coll_inst.h - a job's collectives as instances across its ranks (the
 * k-th launch of one collective kernel name on every rank is one instance,
 * as timeline.h matches them), with each rank's op in each, for --by wait
 * (view_wait.c) and the Chrome trace's blame flows (chrome_idle.c): who
 * entered an instance last, whether that is within the clocks' error, and
 * where two ranks were last in step before it (the end of the latest
 * instance both had finished). Collectives the ranks waited for on their
 * hosts (host_coll.h) are ops of the timelines once added, numbered the
 * same way: the k-th host op of every rank is one instance.
 *
 *   struct xp_coll_job J;
 *   if (xp_coll_job_load(db, &set, &J) == 0) { ...; xp_coll_job_free(&J); }
 */
#ifndef XP_COLL_INST_H
#define XP_COLL_INST_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "export/analysis/timeline.h"

struct xp_coll_job {
	size_t nslots;              /* ranks: one device of each rank's process */
	const struct xp_tl **tl;    /* per slot: the device with its collectives */
	int64_t *rank, *pid;        /* per slot: its rank (xp_ranks) and pid */
	int32_t **inst;             /* per slot, per op of its device: the instance, or -1 */
	int32_t **coll;             /* per slot: its collective ops' indices, in start order */
	size_t *ncoll;
	size_t ninst;
	int32_t *op;                /* [inst * nslots + slot]: the op's index in that slot's
				     * device, -1 where the rank lacks it */
	int64_t t0;                 /* the earliest work of any rank: in step before anything */
	int64_t clock_err;          /* xp_tl_clock_error */
};

/* The instances of the job of set (every device of a process in xp_ranks).
 * 0, -EIO or -ENOMEM; a run without ranks gives no slots. */
int xp_coll_job_load(sqlite3 *db, const struct xp_tl_set *set, struct xp_coll_job *J);
void xp_coll_job_free(struct xp_coll_job *J);
/* The slot of a pid (xp_ranks' pid), or -1. */
int xp_coll_slot(const struct xp_coll_job *J, int64_t pid);
/* The op of slot in instance inst, or NULL. */
const struct xp_tl_op *xp_coll_op(const struct xp_coll_job *J, size_t inst, size_t slot);
/* 1 if the last two ranks to enter inst did so within the clocks' error. */
int xp_coll_too_close(const struct xp_coll_job *J, size_t inst);
/* Where slots w and l were last in step before w's op at index i: the end
 * of the latest instance w had finished by that op's start, on each (*pw,
 * *pl); the job's t0 for both where there is none. */
void xp_coll_in_step(const struct xp_coll_job *J, size_t w, size_t i, size_t l, int64_t *pw,
		     int64_t *pl);

#endif
