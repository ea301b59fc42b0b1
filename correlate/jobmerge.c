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
#include "src/gtid.h"
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

/* A merged job's runs: r->slots of them numbered 0 to slots - 1, each
 * with its run_id. */
static int identify_job(sqlite3 *db, struct xc_job_run *r, char *err, size_t len)
{
	sqlite3_stmt *st;
	int n = 0, ok = 0, rc = 0;

	if (!xp_db_has_column(db, "xp_job_runs", "run_id")) {
		snprintf(err, len, "a job merged by an older xpcorr: its runs' recordings are not"
			 " known; merge its runs again");
		return -EINVAL;
	}
	if (sqlite3_prepare_v2(db, "SELECT count(*), min(run) = 0 AND max(run) = count(*) - 1 AND"
			       " count(DISTINCT run) = count(*) FROM xp_job_runs", -1, &st,
			       NULL) != SQLITE_OK)
		return snprintf(err, len, "xp_job_runs: %s", sqlite3_errmsg(db)), -EINVAL;
	if (sqlite3_step(st) == SQLITE_ROW) {
		n = sqlite3_column_int(st, 0);
		ok = sqlite3_column_int(st, 1);
	}
	sqlite3_finalize(st);
	if (!ok || n < 1 || n > XP_MERGE_MAX_RUNS) {
		snprintf(err, len, "xp_job_runs: %d runs, not numbered 0 to %d", n, n - 1);
		return -EINVAL;
	}
	if (!(r->ids = calloc((size_t)n, sizeof(*r->ids))))
		return -ENOMEM;
	r->slots = n;
	if (sqlite3_prepare_v2(db, "SELECT run, run_id FROM xp_job_runs", -1, &st, NULL) != SQLITE_OK)
		return snprintf(err, len, "xp_job_runs: %s", sqlite3_errmsg(db)), -EINVAL;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		int i = sqlite3_column_int(st, 0);
		const char *id = (const char *)sqlite3_column_text(st, 1);

		if (i >= 0 && i < n && id && !r->ids[i] && !(r->ids[i] = strdup(id)))
			rc = -ENOMEM;
	}
	sqlite3_finalize(st);
	return rc;
}

int xc_job_identify(sqlite3 *db, struct xc_job_run *r, char *err, size_t len)
{
	char id[512];

	err[0] = '\0';
	r->slots = 1;
	if ((r->is_job = xp_db_job_runs(db) > 0))
		return identify_job(db, r, err, len);
	if (!(r->ids = calloc(1, sizeof(*r->ids))))
		return -ENOMEM;
	text_of(db, XP_RUN_ID_SQL, id, sizeof(id));
	if (id[0] && !(r->ids[0] = strdup(id)))
		return -ENOMEM;
	return 0;
}

int xc_job_same_recording(const struct xc_job_run *r, const struct xc_job_run *q, int *k)
{
	for (int i = 0; r->ids && i < r->slots; i++)
		for (int j = 0; q->ids && j < q->slots; j++)
			if (r->ids[i] && q->ids[j] && !strcmp(r->ids[i], q->ids[j])) {
				*k = j;
				return i;
			}
	return -1;
}

void xc_job_run_free(struct xc_job_run *r)
{
	for (int i = 0; r->ids && i < r->slots; i++)
		free(r->ids[i]);
	free(r->ids);
	r->ids = NULL;
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
			       " refine_ns, spread_ns, matched, markers, method, run_id)"
			       " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
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
	if (r->ids && r->ids[0])
		sqlite3_bind_text(st, 12, r->ids[0], -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql(job, db, "SELECT raise(ABORT, 'xp_job_runs')");
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t v;

	return __builtin_add_overflow(a, b, &v) ? (b < 0 ? INT64_MIN : INT64_MAX) : v;
}

/* A merged job given as a run: its xp_job_runs rows, at base + their run,
 * each run's shift moved by the job's, how each was aligned in that job
 * kept. */
static int note_job_runs(struct xc_job *job, sqlite3 *db, sqlite3 *run,
			 const struct xc_job_run *r)
{
	static const char ins_sql[] = "INSERT INTO xp_job_runs(run, path, host, ranks, shift_ns,"
		" wall_ns, refine_ns, spread_ns, matched, markers, method, run_id)"
		" VALUES(?1, ?2 || ': ' || ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
	const struct xc_clock_shift *s = &r->shift;
	sqlite3_stmt *sel = NULL, *ins = NULL;
	int rc = SQLITE_OK;

	if (sqlite3_prepare_v2(run, "SELECT run, path, host, ranks, shift_ns, wall_ns, refine_ns,"
			       " spread_ns, matched, markers, method, run_id FROM xp_job_runs"
			       " WHERE run >= 0 AND run < ?1 ORDER BY run", -1, &sel, NULL) != SQLITE_OK)
		return fail(job, -EIO, "%s: xp_job_runs: %s", r->path, xp_esc(sqlite3_errmsg(run)));
	sqlite3_bind_int(sel, 1, r->slots);
	if (sqlite3_prepare_v2(db, ins_sql, -1, &ins, NULL) != SQLITE_OK) {
		sqlite3_finalize(sel);
		return sql(job, db, "SELECT raise(ABORT, 'xp_job_runs')");
	}
	while (rc == SQLITE_OK && sqlite3_step(sel) == SQLITE_ROW) {
		sqlite3_bind_int(ins, 1, r->base + sqlite3_column_int(sel, 0));
		sqlite3_bind_text(ins, 2, r->path, -1, SQLITE_STATIC);
		for (int c = 1; c <= 3; c++)    /* path, host, ranks */
			sqlite3_bind_value(ins, c + 2, sqlite3_column_value(sel, c));
		sqlite3_bind_int64(ins, 6, sat_add(sqlite3_column_int64(sel, 4), s->shift_ns));
		sqlite3_bind_int64(ins, 7, sat_add(sqlite3_column_int64(sel, 5), s->wall_ns));
		sqlite3_bind_int64(ins, 8, sat_add(sqlite3_column_int64(sel, 6), s->refine_ns));
		for (int c = 7; c <= 11; c++)   /* spread_ns, matched, markers, method, run_id */
			sqlite3_bind_value(ins, c + 2, sqlite3_column_value(sel, c));
		rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_reset(ins);
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return rc == SQLITE_OK ? 0 : sql(job, db, "SELECT raise(ABORT, 'xp_job_runs')");
}

/* One run's rows into the job, and its xp_job_runs row (a job's: its own). */
static int copy_run(struct xc_job *job, sqlite3 *db, struct xp_dbmerge *m,
		    const struct xc_job_run *r)
{
	struct xp_merge_run mr = { .index = (uint32_t)r->base, .slots = (uint32_t)r->slots,
				   .shift_ns = r->shift.shift_ns, .label = r->host, .host = r->host };
	sqlite3 *run = NULL;
	int rc;

	/* opened before for its clock: one run at a time here */
	if (job->open_run(job->ctx, r->path, &run))
		return -ECANCELED;
	if (xp_dbmerge_run(m, run, &mr))
		rc = fail(job, -EIO, "%s: %s", r->path, xp_esc(xp_dbmerge_error(m)));
	else
		rc = r->is_job ? note_job_runs(job, db, run, r) : note_run(job, db, r, r->base);
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
		if (!(rc = copy_run(job, db, m, &runs[i])) && job->progress)
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
