/* jobmerge.h - the database of a distributed job (`xpcorr merge`): the job
 * directory, made when missing and checked; every run's rows through
 * db/dbmerge.c on the reference run's clock (clockalign.h); xp_job_runs; the
 * job's correlation. Written to a temporary file and renamed, as ingest
 * writes a run's. It never prints: the failure's line is left in job->err.
 *
 *   struct xc_job job = { .output = "job", .open_run = reopen, .ctx = &c };
 *   xc_job_describe(runs[i].db, &runs[i]);         // while each run is open
 *   err = xc_job_write(&job, runs, n, &rows);
 *   if (err < 0 && err != -ECANCELED) fprintf(stderr, "xpcorr merge: %s\n", job.err);
 */
#ifndef XP_CORRELATE_JOBMERGE_H
#define XP_CORRELATE_JOBMERGE_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <sqlite3.h>

#include "correlate/clockalign.h"

struct xc_job_run {
	const char *path;
	dev_t dev;                  /* its database file: the run whatever path names it */
	ino_t ino;
	sqlite3 *db;                /* its database while it is read, else NULL */
	char host[256];
	char ranks[64];             /* "0", "0-7", "0,2", "" */
	int min_rank;               /* -1: none recorded */
	int is_job;                 /* a merged job: its runs come with it */
	int slots;                  /* runs it holds: 1, or a job's xp_job_runs rows */
	int base;                   /* its first run's index in the new job */
	char **ids;                 /* each run's recording (XP_RUN_ID_SQL), slots of them;
				     * NULL: unknown (no meta.json) */
	struct xc_clock_run clock;
	struct xc_clock_shift shift;
};

struct xc_job {
	const char *output;         /* the job directory */
	int force;                  /* replace the job's database */
	/* opens a run's database again, one run at a time: 0, or non-zero
	 * after saying why (xc_job_write then returns -ECANCELED) */
	int (*open_run)(void *ctx, const char *path, sqlite3 **db);
	/* runs merged so far (done = -1: the copy is over); may be NULL */
	void (*progress)(void *ctx, int done, int n, uint64_t rows);
	void *ctx;
	char err[PATH_MAX + 512];   /* the failure's line */
	int refused;                /* the failure is -o's: a run's directory, or a job's
				     * database without force */
};

/* Host and ranks of a run, from its metadata and xp_ranks. */
void xc_job_describe(sqlite3 *db, struct xc_job_run *r);
/* The recordings r holds (r->ids, r->slots, r->is_job): a run's own from
 * its metadata, a merged job's from xp_job_runs. 0; -ENOMEM; -EINVAL with
 * the reason in err when a job's runs cannot be told (an older merge
 * wrote no run_id, or its runs are not numbered 0 to n-1). */
int xc_job_identify(sqlite3 *db, struct xc_job_run *r, char *err, size_t len);
/* The index in r of a recording that q holds too, or -1 (unknown ones
 * match nothing); *k is that recording's index in q. */
int xc_job_same_recording(const struct xc_job_run *r, const struct xc_job_run *q, int *k);
void xc_job_run_free(struct xc_job_run *r);
/* JOB_DIR/xpcorr.db from the runs (runs[0] the reference; base and slots
 * set: a merged job's runs keep apart, each shifted further by the job's
 * shift), correlated.
 * 0; -ECANCELED when open_run failed (it said why); another negative errno
 * with the line in job->err, and job->refused set when the directory is a
 * run's or already holds a job's database (without force). */
int xc_job_write(struct xc_job *job, const struct xc_job_run *runs, int n, uint64_t *rows);

#endif
