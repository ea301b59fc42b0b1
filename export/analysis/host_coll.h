/* host_coll.h - collectives a rank waits for on its host, not on its GPU
 * (gloo's, and any c10d work the host waits for): each rank's waits off
 * CPU (xp_switches, not preempted) in c10d::Work::wait or a
 * ProcessGroupGloo wait, on any of its threads, in the order they began;
 * where a wait's stack has no native frames but the blocked call (a
 * normal user's: perf's switch records have none; libc's frames of the
 * call, which DWARF unwinding adds, not counted), in a blocking
 * collective of torch.distributed (all_reduce, ...) as its innermost
 * Python frame.
 * The k-th wait of every rank is instance k, as coll_inst.h numbers NCCL
 * kernels; where the ranks' counts differ nothing is matched (mismatch).
 * A rank's entry is its wait's start; the rank that entered last is the
 * one the others waited for, each for (last entry - its entry), at most
 * its wait. The instances become ops of the ranks' timelines (host set in
 * timeline.h's op) so that --by idle, --by wait and coll_inst.h take them
 * as they take NCCL kernels.
 *
 *   struct xp_host_colls H;
 *   if (xp_host_colls_load(db, &H) == 0) {
 *           xp_host_colls_add(&H, &set);          // before xp_coll_job_load
 *           xp_host_colls_free(&H);
 *   }
 */
#ifndef XP_HOST_COLL_H
#define XP_HOST_COLL_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "export/analysis/timeline.h"

/* How reports name a host-side collective (%s: one of names). */
#define XP_HOST_COLL_LABEL "%s (host-side: c10d::Work::wait)"

/* One rank's wait in one instance. */
struct xp_host_wait {
	int64_t entry, end;         /* off CPU in the wait, ns */
	int64_t gtid;               /* the thread that waited */
	int64_t stack;              /* where it went off (xp_stacks id) */
	size_t name;                /* index into names */
};

struct xp_host_colls {
	size_t nranks;
	int64_t *rank, *pid;        /* per rank: xp_ranks' rank and pid, by rank */
	size_t *count;              /* per rank: its waits */
	struct xp_host_wait **each; /* per rank: its waits (count of them), matched or not */
	size_t ninst;               /* 0 when mismatch */
	struct xp_host_wait *w;     /* [inst * nranks + r] */
	size_t *late;               /* per instance: the rank that entered it last */
	unsigned char *close;       /* per instance: its last two entries within clock_err */
	char **names;               /* what the Python above the wait called ("all_reduce"),
				     * else the wait's frame ("c10d::Work::wait") */
	size_t nnames;
	int mismatch;               /* ranks waited a different number of times: no instance */
	int64_t clock_err;          /* xp_tl_clock_error */
};

/* The host collectives of the run's ranks (none without xp_ranks or
 * xp_switches). 0, -EIO or -ENOMEM. */
int xp_host_colls_load(sqlite3 *db, struct xp_host_colls *H);
void xp_host_colls_free(struct xp_host_colls *H);
/* Where the counts differ (mismatch): the first rank whose count is not
 * rank 0's (an index into rank, pid, count); 0 when they agree. */
size_t xp_host_colls_odd(const struct xp_host_colls *H);
/* Rank r's wait in instance inst. */
const struct xp_host_wait *xp_host_coll_at(const struct xp_host_colls *H, size_t inst, size_t r);
/* The rank that entered inst last (ties: the first by rank); *close 1 when
 * the last two entered within the clocks' error. */
size_t xp_host_coll_late(const struct xp_host_colls *H, size_t inst, int *close);
/* How long rank r waited in inst for the last to enter: 0 for that one. */
int64_t xp_host_coll_wait(const struct xp_host_colls *H, size_t inst, size_t r);
/* The instances added to every device timeline of their ranks' processes
 * as host ops (cls XP_TL_COMM, name -1, no launch, gtid the thread that
 * waited; wait and late_pid as
 * NCCL kernels have them). 0 or -ENOMEM. */
int xp_host_colls_add(const struct xp_host_colls *H, struct xp_tl_set *set);
/* The run's device timelines (xp_tl_load_all) into *set and its host
 * collectives into *H, added to them as xp_host_colls_add adds: what the
 * views that take gloo's waits as NCCL's kernels read. 0, -EIO or
 * -ENOMEM; *set and *H freed by the caller either way (both zeroed
 * before the call). */
int xp_host_colls_timelines(sqlite3 *db, struct xp_tl_set *set, struct xp_host_colls *H);
/* Each rank's own waits, matched or not, added as xp_host_colls_add adds
 * an instance, with no wait for another rank (late_pid its own): a rank
 * taken alone, as its job summary takes it. 0 or -ENOMEM. */
int xp_host_colls_add_each(const struct xp_host_colls *H, struct xp_tl_set *set);

#endif
