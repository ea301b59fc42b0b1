/* merge_job.c - the job directory and its database for `xpcorr merge`:
 * made like ingest makes a run's (a temporary file we create and lock in
 * the directory, renamed at the end), then every run's rows through
 * db/dbmerge.c, the job's correlation, and xp_job_runs. */
#include "merge_job.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "cmd.h"
#include "db_join.h"
#include "db_schema.h"
#include "dbmerge.h"
#include "opendb.h"
#include "rundb.h"
#include "textesc.h"

static int sql(sqlite3 *db, const char *s)
{
	if (sqlite3_exec(db, s, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	fprintf(stderr, "xpcorr merge: database: %s\n", xp_esc(sqlite3_errmsg(db)));
	return XP_EXIT_FAIL;
}

static int holds(const struct xp_rundir *d, const char *name)
{
	struct stat st;

	return fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The job directory, made when missing; never a run's own directory, and
 * never an existing job's database unless --force. */
static int open_job_dir(const struct merge_opts *o, struct xp_rundir *d)
{
	char err[512];

	if (mkdir(o->output, 0777) && errno != EEXIST) {
		fprintf(stderr, "xpcorr merge: cannot make %s: %s\n", o->output, strerror(errno));
		return XP_EXIT_FAIL;
	}
	if (xp_rundir_open(d, o->output, err, sizeof(err)) ||
	    xp_rundir_check_write(d, 0, err, sizeof(err))) {
		fprintf(stderr, "xpcorr merge: %s\n", err);
		return XP_EXIT_FAIL;
	}
	if (holds(d, "meta.json") || holds(d, "cpu.xpr")) {
		fprintf(stderr, "xpcorr merge: %s is a run directory; give -o a directory of its own\n",
			o->output);
		return XP_EXIT_USAGE;
	}
	if (holds(d, XP_DB_NAME) && !o->force) {
		fprintf(stderr, "xpcorr merge: %s already holds %s; --force replaces it\n", o->output,
			XP_DB_NAME);
		return XP_EXIT_USAGE;
	}
	return 0;
}

static int note_run(sqlite3 *db, const struct job_run *r, int index)
{
	const struct xc_clock_shift *s = &r->shift;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "INSERT INTO xp_job_runs(run, path, host, ranks, shift_ns, wall_ns,"
			       " refine_ns, spread_ns, matched, markers, method)"
			       " VALUES(?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		return sql(db, "SELECT raise(ABORT, 'xp_job_runs')");
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
	return rc == SQLITE_DONE ? 0 : sql(db, "SELECT raise(ABORT, 'xp_job_runs')");
}

/* Every run's rows, then the job's own rows and indexes, then the join. */
static int fill(sqlite3 *db, const struct merge_opts *o, const struct job_run *runs, int n,
		uint64_t *rows)
{
	struct xp_dbmerge *m;
	struct xc_summary summary;
	char err[512];
	int rc = 0;

	if (xp_db_create_schema(db) != SQLITE_OK || xp_gpu_schema_create(db) ||
	    sqlite3_exec(db, XP_JOB_RUNS_SQL, NULL, NULL, NULL) != SQLITE_OK)
		return sql(db, "SELECT raise(ABORT, 'schema')");
	if (xp_dbmerge_new(db, &m)) {
		fprintf(stderr, "xpcorr merge: out of memory\n");
		return XP_EXIT_FAIL;
	}
	for (int i = 0; i < n && !rc; i++) {
		struct xp_merge_run mr = { .index = (uint32_t)i, .shift_ns = runs[i].shift.shift_ns,
					   .label = runs[i].host, .host = runs[i].host };

		sqlite3 *run = NULL;

		/* opened before for its clock: one run at a time here */
		if ((rc = xp_cmd_reopen_db("xpcorr merge", runs[i].path, &run)))
			break;
		if (xp_dbmerge_run(m, run, &mr, err, sizeof(err))) {
			fprintf(stderr, "xpcorr merge: %s: %s\n", runs[i].path, xp_esc(err));
			rc = XP_EXIT_FAIL;
		} else if (!(rc = note_run(db, &runs[i], i)) && !o->quiet && isatty(STDERR_FILENO)) {
			fprintf(stderr, "\rxpcorr merge: %d of %d runs, %" PRIu64 " rows", i + 1, n,
				xp_dbmerge_rows(m));
		}
		sqlite3_close(run);
	}
	if (!o->quiet && isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K");
	*rows = xp_dbmerge_rows(m);
	xp_dbmerge_free(m);
	if (!rc && xp_db_create_indexes(db) != SQLITE_OK)
		rc = sql(db, "SELECT raise(ABORT, 'indexes')");
	if (!rc && xc_correlate_db(db, &summary)) {
		fprintf(stderr, "xpcorr merge: correlation: %s\n", sqlite3_errmsg(db));
		rc = XP_EXIT_FAIL;
	}
	if (!rc && xp_archive_record(db))
		rc = sql(db, "SELECT raise(ABORT, 'archive facts')");
	return rc;
}

int xp_merge_job_write(const struct merge_opts *o, const struct job_run *runs, int n,
		       uint64_t *rows)
{
	struct xp_tmpdb t = { .fd = -1 };
	struct xp_rundir d = { .fd = -1 };
	sqlite3 *db = NULL;
	int rc, err = 0;

	if ((rc = open_job_dir(o, &d)))
		goto out;
	if ((err = xp_tmpdb_create(&d, &t)) || xp_tmpdb_open(&d, &t, &db) != SQLITE_OK) {
		fprintf(stderr, "xpcorr merge: cannot create a database in %s: %s\n", o->output,
			err ? strerror(-err) : db ? sqlite3_errmsg(db) : "out of memory");
		rc = XP_EXIT_FAIL;
		goto out;
	}
	rc = sql(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536; BEGIN;");
	if (!rc)
		rc = fill(db, o, runs, n, rows);
	if (!rc)
		rc = sql(db, "COMMIT;");
	if (!rc && sqlite3_close(db) != SQLITE_OK) {
		fprintf(stderr, "xpcorr merge: cannot close the database in %s\n", o->output);
		rc = XP_EXIT_FAIL;
	}
	if (!rc) {
		db = NULL;
		if ((err = xp_tmpdb_commit(&d, &t))) {
			fprintf(stderr, "xpcorr merge: cannot rename %s/%s to %s: %s\n", o->output, t.name,
				XP_DB_NAME, strerror(-err));
			rc = XP_EXIT_FAIL;
		}
	}
out:
	sqlite3_close(db);
	if (rc)
		xp_tmpdb_discard(&d, &t);
	xp_rundir_close(&d);
	return rc;
}
