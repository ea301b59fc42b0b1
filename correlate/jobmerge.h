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
/* JOB_DIR/xpcorr.db from the runs (runs[0] the reference), correlated.
 * 0; -ECANCELED when open_run failed (it said why); another negative errno
 * with the line in job->err, and job->refused set when the directory is a
 * run's or already holds a job's database (without force). */
int xc_job_write(struct xc_job *job, const struct xc_job_run *runs, int n, uint64_t *rows);

#endif
