/* jobsum.h - a rank's job summary and the job's views read from the
 * summaries alone (`xpcorr job`): a job of thousands of ranks is ingested
 * rank by rank where it was recorded, each run writes its summary (a small
 * SQLite file, RUN/xpsum.db: its ranks' GPU totals, GPU time per launch
 * site and kernel, its devices' idle causes, every collective instance with
 * its launch, start and end, the waits in host-side ones), and the job's
 * views never open a rank's
 * database: memory follows the summaries, not the rows.
 *
 *   xp_jobsum_write(run_db, sum_db);                 // once per run, at ingest
 *   struct xp_jobrun runs[n] = { { "r0/xpsum.db", 0, -1 }, ... };  // shifts: clockalign.h
 *   xp_jobview(runs, n, &opts, stdout, err, sizeof(err));
 */
#ifndef XP_JOBSUM_H
#define XP_JOBSUM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#define XP_JOBSUM_NAME "xpsum.db"
#define XP_JOBSUM_VERSION 3

/* The summary of the run in db into sum (an empty database): tables xs_*.
 * 0, -EIO (the message on db or sum) or -ENOMEM. */
int xp_jobsum_write(sqlite3 *db, sqlite3 *sum);

struct xp_host_colls;

/* Its xs_span rows (jobsum_wait.c): each collective op's stretch before it,
 * by cause, its host-side collectives H's named after base (jobsum_host.h).
 * 0, -EIO or -ENOMEM. */
int xp_jobsum_put_spans(sqlite3 *db, sqlite3 *sum, const struct xp_host_colls *H, int64_t base);

/* A summary opened as received input is: a regular file (no link, FIFO
 * or device; SQLite reads the descriptor checked, fddb.h), SQLite's limits
 * low, views and triggers off, its statements' work bounded by its size
 * (db/dbcheck.h), and its form ours (xp_jobsum_check). 0, or -errno with
 * the line in err ("PATH is a FIFO, not a job summary"): -ENOENT, -ENXIO
 * (not a regular file), -EBADMSG (not a summary), -EPROTO (another
 * version), -EIO. *db closed by the caller either way. */
int xp_jobsum_open(const char *path, sqlite3 **db, char *err, size_t len);
/* 0 when db has the tables and columns a summary is read through (tables,
 * not views; no generated column) and a version this xpcorr reads; else
 * -EBADMSG / -EPROTO with err saying the first difference, -EIO. */
int xp_jobsum_check(sqlite3 *db, char *err, size_t len);

struct xp_jobrun {
	const char *path;           /* its summary database */
	int64_t shift_ns;           /* its clock + shift = the job's clock */
	int64_t spread_ns;          /* what the alignment left, -1 unknown */
	const char *method;         /* how: clockalign.h's xc_clock_shift.method */
	uint32_t matched;           /* collectives matched with the reference */
};

enum xp_jobview_by { XP_JOB_RANK, XP_JOB_IDLE, XP_JOB_KERNEL, XP_JOB_SOURCE, XP_JOB_WAIT };
enum xp_jobview_fmt { XP_JOB_TEXT, XP_JOB_CSV, XP_JOB_JSON };

struct xp_jobview_opts {
	enum xp_jobview_by by;
	int csv;                    /* csv, else text (json: format) */
	enum xp_jobview_fmt format;
	unsigned top;               /* table rows shown (not ranks); 0: all */
};

/* The view of the job made of runs[0..n) (runs[0] the reference) on out.
 * 0, or a negative errno with the line in err. */
int xp_jobview(const struct xp_jobrun *runs, size_t n, const struct xp_jobview_opts *o,
	       FILE *out, char *err, size_t errlen);

#endif
