/* jobview_priv.h - what jobview.c gathers from the summaries and
 * jobview_print.c prints: totals per rank, kernel, site and idle cause,
 * and each collective instance's last entry. */
#ifndef XP_JOBVIEW_PRIV_H
#define XP_JOBVIEW_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export/job/jobsum.h"
#include <sqlite3.h>

#include "src/u64map.h"

struct jv_names {
	char **v;                   /* interned strings, by id */
	size_t n, cap;
	struct xp_u64map at;        /* (hash, probe) -> id + 1 */
};

struct jv_rank {
	int64_t rank, world, pid;
	size_t run;                 /* its run's index */
	char host[64];
	int64_t gpu, kernels, coll, sync;
	int64_t wait;               /* in collectives before the last rank entered them */
	int64_t waited_on;          /* the others' wait for it */
	int slowest;                /* the slowest rank of some kernel: its sites are read */
};

struct jv_kernel {                  /* by name id */
	int64_t ns, n, nranks;
	int coll, host;             /* a collective; one the hosts waited in (xs_host) */
	int64_t min, max, max_rank; /* the ranks' totals: the least, the most and whose */
	int64_t wait, unsure;       /* collectives: the others' wait, within the clock error */
	int64_t late_rank, late_ns; /* the rank they waited for most */
	int64_t site, site_ns;      /* where the slowest rank launched most of it (name id, -1) */
	int64_t *late_by;           /* per rank index: wait charged to it (its own - unsure) */
	int64_t *unsure_by;
	int64_t nlo, nhi;           /* host-side: the ranks' fewest and most waits in it, */
	int64_t nlo_rank, nhi_rank; /* and whose (rank index); unequal: nothing matched */
};

struct jv_pair {                    /* a (site, kernel) or (cause, where): ids and totals */
	int64_t a, b, ns, n, ranks;
};

struct jv_dev {
	size_t rank;                /* index in ranks */
	int64_t device, steps, window, compute, comm, mem, idle;
};

struct jv_inst {                    /* one collective instance across the ranks */
	int64_t name;               /* its kernel's name id */
	int64_t last, second, base, sumoff;
	uint32_t cnt;
	uint32_t late;              /* rank index of the last to enter */
};

struct jsonw;
struct jv_wait;                     /* --by wait's (jobwait.c) */

struct jv {
	const struct xp_jobview_opts *o;
	struct jv_names names;
	struct jv_rank *ranks;
	size_t nranks, rank_cap;
	struct jv_kernel *kern;     /* by name id; nkern of them */
	size_t nkern, kern_cap;
	struct jv_pair *sites, *causes;
	size_t nsites, site_cap, ncauses, cause_cap;
	struct xp_u64map site_at, cause_at, inst_at;
	struct xp_u64map rank_at;   /* rank number -> the run it is in */
	struct jv_dev *devs;
	size_t ndevs, dev_cap;
	struct jv_inst *inst;
	size_t ninst, inst_cap;
	int64_t clock_err;          /* the runs' largest alignment spread */
	size_t complete;            /* instances every rank entered */
	struct jv_wait *wait;
	struct jsonw *json;         /* json output, else NULL */
	char *err;
	size_t errlen;
};

/* A run's local ids (its StringIds) and pids onto the job's. */
struct jv_run {
	sqlite3 *db;
	const struct xp_jobrun *r;
	size_t index, first, nranks;   /* its ranks: J->ranks[first..first + nranks) */
	struct xp_u64map name_of;      /* local name id -> job name id + 1 */
	struct xp_u64map pid_of, num_of; /* its pid, its rank number -> rank index + 1 */
};

/* The line in J->err; err returned. */
int jv_fail(struct jv *J, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* sql prepared on a run's summary, else the line said. */
int jv_prep(struct jv *J, sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **st);
/* st finalized after its last step (step: what that returned): 0 when the
 * query ran to its end, else -EIO with the line said, or -ETIME with the
 * work limit's line when it stopped the query (a view of half the rows is
 * never printed). */
int jv_end(struct jv *J, const struct jv_run *R, sqlite3_stmt *st, int step);
/* steps of work outside SQLite on the summaries' rows (pairs of them)
 * charged to their budget (db/dbcheck.h): 0, or -ETIME with the line said,
 * naming path (the summary whose rows took it), once it is spent. */
int jv_spend(struct jv *J, const char *path, uint64_t steps);
/* The job's name id of a run's, -1 unknown; the rank index of a run's pid, -1 none. */
int64_t jv_job_name(const struct jv_run *R, int64_t local);
int64_t jv_rank_of_pid(const struct jv *J, const struct jv_run *R, int64_t pid);

/* 0 or -ENOMEM; *id the string's. */
int jv_intern(struct jv_names *t, const char *s, int64_t *id);
int jv_print(struct jv *J, FILE *out);

/* --by wait (jobwait.c), two passes over the runs after the first: the
 * stretches of each instance's late rank kept, then every wait shared
 * among its late rank's causes; printed as report --by wait prints. */
int jv_wait_late(struct jv *J, struct jv_run *R);
int jv_wait_charge(struct jv *J, struct jv_run *R);
/* After the passes: the host-side collectives' waits, each shared by the
 * stretches of its (waiting, late rank) pair summed over their waits. */
int jv_wait_share_host(struct jv *J);
int jv_wait_print(struct jv *J, FILE *out);
void jv_wait_free(struct jv *J);

#endif
