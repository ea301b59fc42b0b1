/* merge_job.h - what `xpcorr merge` knows of each run, and the writing of
 * the job's database (merge_job.c) from the runs' databases. */
#ifndef XP_MERGE_JOB_H
#define XP_MERGE_JOB_H

#include <stdint.h>
#include <sys/types.h>
#include <sqlite3.h>

#include "clockalign.h"

struct merge_opts {
	const char *output;         /* the job directory */
	const char *reference;      /* NULL: the run of rank 0, else the first */
	int wall_only;              /* --no-refine */
	int force, quiet;
};

struct job_run {
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

/* JOB_DIR/xpcorr.db from the runs (runs[0] the reference), written to a
 * temporary file and renamed; correlated. XP_EXIT_* after printing why. */
int xp_merge_job_write(const struct merge_opts *o, const struct job_run *runs, int n,
		       uint64_t *rows);

#endif
