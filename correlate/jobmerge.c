/* jobmerge.c - the job directory and its database for `xpcorr merge`
 * (jobmerge.h): made like ingest makes a run's (a temporary file we create
 * and lock in the directory, renamed at the end), then every run's rows
 * through db/dbmerge.c, the job's correlation, and xp_job_runs. */
#include "correlate/jobmerge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db/archive.h"
#include "correlate/db_join.h"
#include "db/db_schema.h"
#include "db/dbmerge.h"
#include "db/rundb.h"
#include "src/textesc.h"

static int fail(struct xc_job *job, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct xc_job *job, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(job->err, sizeof(job->err), fmt, ap);
	va_end(ap);
	return err;
}

/* s run on db; -EIO with "database: MESSAGE" when it fails. */
static int sql(struct xc_job *job, sqlite3 *db, const char *s)
{
	if (sqlite3_exec(db, s, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	return fail(job, -EIO, "database: %s", xp_esc(sqlite3_errmsg(db)));
}

static void text_of(sqlite3 *db, const char *sql, char *out, size_t len)
{
	sqlite3_stmt *st;

	out[0] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

void xc_job_describe(sqlite3 *db, struct xc_job_run *r)
{
	char min[32];

	text_of(db, "SELECT value FROM META_DATA_EXPORT WHERE name = 'meta.hostname'",
		r->host, sizeof(r->host));
	text_of(db, "SELECT CASE WHEN count(DISTINCT rank) = 1 THEN min(rank)"
		" WHEN max(rank) - min(rank) + 1 = count(DISTINCT rank) THEN min(rank) || '-' || max(rank)"
		" ELSE group_concat(DISTINCT rank) END FROM xp_ranks WHERE rank IS NOT NULL",
		r->ranks, sizeof(r->ranks));
	text_of(db, "SELECT min(rank) FROM xp_ranks WHERE rank IS NOT NULL", min, sizeof(min));
	r->min_rank = min[0] ? atoi(min) : -1;
	if (!r->host[0])
		snprintf(r->host, sizeof(r->host), "?");
}

static int holds(const struct xp_rundir *d, const char *name)
{
	struct stat st;

	return fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The job directory, made when missing; never a run's own directory, and
 * never an existing job's database unless force. */
static int open_job_dir(struct xc_job *job, struct xp_rundir *d)
{
	int err;

	if (mkdir(job->output, 0777) && errno != EEXIST) {
		err = -errno;
		return fail(job, err, "cannot make %s: %s", job->output, strerror(-err));
	}
	if (xp_rundir_open(d, job->output, job->err, sizeof(job->err)) ||
	    xp_rundir_check_write(d, 0, job->err, sizeof(job->err)))
		return -EACCES;
	job->refused = holds(d, "meta.json") || holds(d, "cpu.xpr") ||
		       (holds(d, XP_DB_NAME) && !job->force);
	if (holds(d, "meta.json") || holds(d, "cpu.xpr"))
		return fail(job, -EEXIST, "%s is a run directory; give -o a directory of its own",
			    job->output);
	if (holds(d, XP_DB_NAME) && !job->force)
		return fail(job, -EEXIST, "%s already holds %s; --force replaces it", job->output,
			    XP_DB_NAME);
	return 0;
}

static int note_run(struct xc_job *job, sqlite3 *db, const struct xc_job_run *r, int index)
{
	const struct xc_clock_shift *s = &r->shift;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "INSERT INTO xp_job_runs(run, path, host, ranks, shift_ns, wall_ns,"
			       " refine_ns, spread_ns, matched, markers, method)"
			       " VALUES(?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		return sql(job, db, "SELECT raise(ABORT, 'xp_job_runs')");
	sqlite3_bind_int(st, 1, index);
	sqlite3_bind_text(st, 2, r->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, r->host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, r->ranks, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, s->shift_ns);
	sqlite3_bind_int64(st, 6, s->wall_ns);
	sqlite3_bind_int64(st, 7, s->refine_ns);
	if (s->spread_ns >= 0)
		sqlite3_bind_int64(st, 8, s->spread_ns);
	sqlite3_bind_int(st, 9, (int)s->matched);
	if (r->clock.kind)
		sqlite3_bind_text(st, 10, r->clock.kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 11, s->method, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql(job, db, "SELECT raise(ABORT, 'xp_job_runs')");
}

/* One run's rows into the job, and its xp_job_runs row. */
static int copy_run(struct xc_job *job, sqlite3 *db, struct xp_dbmerge *m,
		    const struct xc_job_run *r, int i)
{
	struct xp_merge_run mr = { .index = (uint32_t)i, .shift_ns = r->shift.shift_ns,
				   .label = r->host, .host = r->host };
	char err[512];
	sqlite3 *run = NULL;
	int rc;

	/* opened before for its clock: one run at a time here */
	if (job->open_run(job->ctx, r->path, &run))
		return -ECANCELED;
	if (xp_dbmerge_run(m, run, &mr, err, sizeof(err)))
		rc = fail(job, -EIO, "%s: %s", r->path, xp_esc(err));
	else
		rc = note_run(job, db, r, i);
	sqlite3_close(run);
	return rc;
}

/* Every run's rows, then the job's own rows and indexes, then the join. */
static int fill(struct xc_job *job, sqlite3 *db, const struct xc_job_run *runs, int n,
		uint64_t *rows)
{
	struct xp_dbmerge *m;
	struct xc_summary summary;
	int rc = 0;

	if (xp_db_create_schema(db) != SQLITE_OK || xp_gpu_schema_create(db) ||
	    sqlite3_exec(db, XP_JOB_RUNS_SQL, NULL, NULL, NULL) != SQLITE_OK)
		return sql(job, db, "SELECT raise(ABORT, 'schema')");
	if (xp_dbmerge_new(db, &m))
		return fail(job, -ENOMEM, "out of memory");
	for (int i = 0; i < n && !rc; i++)
		if (!(rc = copy_run(job, db, m, &runs[i], i)) && job->progress)
			job->progress(job->ctx, i + 1, n, xp_dbmerge_rows(m));
	if (job->progress)
		job->progress(job->ctx, -1, n, xp_dbmerge_rows(m));
	*rows = xp_dbmerge_rows(m);
	xp_dbmerge_free(m);
	if (!rc && xp_db_create_indexes(db) != SQLITE_OK)
		rc = sql(job, db, "SELECT raise(ABORT, 'indexes')");
	if (!rc && xc_correlate_db(db, &summary))
		rc = fail(job, -EIO, "correlation: %s", sqlite3_errmsg(db));
	if (!rc && xp_archive_record(db))
		rc = sql(job, db, "SELECT raise(ABORT, 'archive facts')");
	return rc;
}

/* The temporary database filled and closed: 0 or a negative errno. */
static int write_tmp(struct xc_job *job, sqlite3 *db, const struct xc_job_run *runs, int n,
		     uint64_t *rows)
{
	int rc = sql(job, db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		     " PRAGMA cache_size=-65536; BEGIN;");

	if (!rc)
		rc = fill(job, db, runs, n, rows);
	if (!rc)
		rc = sql(job, db, "COMMIT;");
	return rc;
}

int xc_job_write(struct xc_job *job, const struct xc_job_run *runs, int n, uint64_t *rows)
{
	struct xp_tmpdb t = { .fd = -1 };
	struct xp_rundir d = { .fd = -1 };
	sqlite3 *db = NULL;
	int rc, err = 0;

	job->err[0] = '\0';
	job->refused = 0;
	if ((rc = open_job_dir(job, &d)))
		goto out;
	if ((err = xp_tmpdb_create(&d, &t)) || xp_tmpdb_open(&d, &t, &db) != SQLITE_OK) {
		rc = fail(job, err ? err : -EIO, "cannot create a database in %s: %s", job->output,
			  err ? strerror(-err) : db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	rc = write_tmp(job, db, runs, n, rows);
	if (!rc && sqlite3_close(db) != SQLITE_OK)
		rc = fail(job, -EIO, "cannot close the database in %s", job->output);
	if (!rc) {
		db = NULL;
		if ((err = xp_tmpdb_commit(&d, &t)))
			rc = fail(job, err, "cannot rename %s/%s to %s: %s", job->output, t.name,
				  XP_DB_NAME, strerror(-err));
	}
out:
	sqlite3_close(db);
	if (rc)
		xp_tmpdb_discard(&d, &t);
	xp_rundir_close(&d);
	return rc;
}
