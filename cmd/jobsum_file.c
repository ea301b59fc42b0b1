/* jobsum_file.c - a run's job summary file; see jobsum_file.h. */
#include "cmd/jobsum_file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "correlate/clocksum.h"
#include "db/rundb.h"
#include "export/job/jobsum.h"
#include "src/textesc.h"

void xp_cmd_summary_path(const char *run_dir, char *path, size_t len)
{
	size_t n = strlen(run_dir);

	snprintf(path, len, "%s%s%s", run_dir, n && run_dir[n - 1] == '/' ? "" : "/", XP_JOBSUM_NAME);
}

int xp_cmd_has_rank(sqlite3 *db)
{
	sqlite3_stmt *st;
	int yes = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM xp_ranks WHERE rank IS NOT NULL LIMIT 1", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* The summary and its clock evidence into sum: 0, or -errno with the
 * message of db or sum. */
static int fill(sqlite3 *db, sqlite3 *sum)
{
	struct xc_clock_run clock;
	int err = xp_jobsum_write(db, sum);

	if (!err && !(err = xc_clock_run_load(db, &clock))) {
		err = xc_clock_run_save(sum, &clock);
		xc_clock_run_free(&clock);
	}
	return err;
}

int xp_cmd_make_summary(sqlite3 *db, sqlite3 **mem, char *err, size_t len)
{
	int e;

	if (sqlite3_open(":memory:", mem) != SQLITE_OK) {
		snprintf(err, len, "cannot make the job summary: out of memory");
		return -ENOMEM;
	}
	if ((e = fill(db, *mem)))
		snprintf(err, len, "cannot make the job summary: %s", e == -ENOMEM ? "out of memory" :
			 e == -EOVERFLOW ? "its StringIds ids leave no room to number names after them" :
			 sqlite3_errcode(*mem) != SQLITE_OK ? sqlite3_errmsg(*mem) : sqlite3_errmsg(db));
	return e;
}

/* mem into the directory's temporary database, renamed: 0 or -errno with
 * the line in err. */
static int save_in(struct xp_rundir *d, sqlite3 *mem, char *err, size_t len)
{
	struct xp_tmpdb t = { .fd = -1 };
	sqlite3_backup *b;
	sqlite3 *sum = NULL;
	int e;

	if ((e = xp_tmpdb_create(d, &t)) || xp_tmpdb_open(d, &t, &sum) != SQLITE_OK) {
		snprintf(err, len, "cannot create a database in %s: %s", d->name,
			 e ? strerror(-e) : sum ? sqlite3_errmsg(sum) : "out of memory");
		sqlite3_close(sum);
		xp_tmpdb_discard(d, &t);
		return e ? e : -EIO;
	}
	if (!(b = sqlite3_backup_init(sum, "main", mem, "main")) ||
	    sqlite3_backup_step(b, -1) != SQLITE_DONE)
		e = -EIO;
	if (sqlite3_backup_finish(b) != SQLITE_OK)
		e = -EIO;
	if (e)
		snprintf(err, len, "cannot write %s/%s: %s", d->name, XP_JOBSUM_NAME,
			 sqlite3_errmsg(sum));
	if (sqlite3_close(sum) != SQLITE_OK && !e) {
		snprintf(err, len, "cannot close the summary in %s", d->name);
		e = -EIO;
	}
	if (!e && (e = xp_tmpdb_commit(d, &t)))
		snprintf(err, len, "cannot rename %s/%s to %s: %s", d->name, t.name, XP_JOBSUM_NAME,
			 strerror(-e));
	if (e)
		xp_tmpdb_discard(d, &t);
	return e;
}

int xp_cmd_save_summary(const char *who, const char *run_dir, sqlite3 *mem, int trust)
{
	struct xp_rundir d = { .fd = -1 };
	char err[PATH_MAX + 256];
	int e;

	/* made as ingest makes xpcorr.db: as the directory's owner, a file
	 * of our own, locked, renamed */
	if (!(e = xp_rundir_open(&d, run_dir, err, sizeof(err))) &&
	    !(e = xp_rundir_check_write(&d, trust, err, sizeof(err)))) {
		d.db_name = XP_JOBSUM_NAME;
		e = save_in(&d, mem, err, sizeof(err));
	}
	xp_rundir_close(&d);
	if (e)
		fprintf(stderr, "%s: %s\n", who, xp_esc(err));
	return e ? XP_EXIT_FAIL : XP_EXIT_OK;
}

int xp_cmd_write_summary(const char *who, const char *run_dir, sqlite3 *db, int trust)
{
	char err[512];
	sqlite3 *mem = NULL;
	int rc = XP_EXIT_FAIL;

	if (xp_cmd_make_summary(db, &mem, err, sizeof(err)))
		fprintf(stderr, "%s: %s: %s\n", who, xp_esc(run_dir), xp_esc(err));
	else
		rc = xp_cmd_save_summary(who, run_dir, mem, trust);
	sqlite3_close(mem);
	return rc;
}
