/* ingest.c - the atomic write of run/xpcorr.db; see ingest.h. Files are
 * made and opened through the run directory's fd (rundb.h).
 * The temporary database needs no journal and no fsync while it is built:
 * if anything fails it is deleted. Durability comes from fsync + rename. */
#include "ingest/ingest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/archive.h"
#include "db/db_schema.h"
#include "ingest/backward.h"
#include "ingest/cupti_rivals.h"
#include "ingest/ddpbuckets.h"
#include "ingest/gpu_ingest.h"
#include "ingest/waitlines.h"
#include "db/rundb.h"
#include "src/safeopen.h"

static int is_input(const char *name)
{
	size_t n = strlen(name);

	return !strcmp(name, "meta.json") || !strcmp(name, "kallsyms") ||
	       (n > 4 && !strcmp(name + n - 4, ".xpr")) ||
	       (n > 4 && !strncmp(name, "perf-", 5) && !strcmp(name + n - 4, ".map"));
}

/* A run to ingest: meta.json or a record stream (a merged job has none). */
static int has_inputs(struct xp_rundir *d)
{
	struct stat st;

	return !fstatat(d->fd, "meta.json", &st, AT_SYMLINK_NOFOLLOW) ||
	       !fstatat(d->fd, "cpu.xpr", &st, AT_SYMLINK_NOFOLLOW);
}

static int newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

enum db_state {
	DB_FRESH,           /* this schema, newer than every input */
	DB_STALE,           /* a database, but older than the run or of another schema */
	DB_OLD_SCHEMA,
	DB_ABSENT,
	DB_ODD,             /* not a regular file: a FIFO, a link, a directory */
	DB_ALIEN,           /* not our schema (dbcheck.h): never read */
};

static enum db_state db_state(struct xp_rundir *d, char *why, size_t len)
{
	struct stat db_st, st;
	enum db_state state = DB_FRESH;
	struct dirent *de;
	sqlite3 *db;
	DIR *dir;
	int err;

	if (xp_rundir_stat_db(d, &db_st))
		return DB_ABSENT;
	err = xp_rundir_open_db(d, &db, why, len);
	if (err == -EPROTO)
		return DB_OLD_SCHEMA;
	if (err)
		return err == -ENXIO ? DB_ODD : err == -EBADMSG ? DB_ALIEN : DB_STALE;
	sqlite3_close(db);
	dir = xp_opendir_at(d->fd, ".");
	if (!dir)
		return DB_STALE;
	while (state == DB_FRESH && (de = readdir(dir)))
		if (is_input(de->d_name) && !fstatat(d->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    newer(&st.st_mtim, &db_st.st_mtim))
			state = DB_STALE;
	closedir(dir);
	return state;
}

int xp_ingest_is_fresh(const char *run_dir)
{
	struct xp_rundir d;
	char why[XP_LOAD_MSG_LEN];
	int fresh;

	if (xp_rundir_open(&d, run_dir, why, sizeof(why)))
		return 0;
	fresh = db_state(&d, why, sizeof(why)) == DB_FRESH;
	xp_rundir_close(&d);
	return fresh;
}

static int exec_sql(sqlite3 *db, const char *sql, struct xp_load_result *res)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	snprintf(res->error, sizeof(res->error), "database: %s", sqlite3_errmsg(db));
	return -EIO;
}

static void add_warning(struct xp_load_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_warning(struct xp_load_result *res, const char *fmt, ...)
{
	va_list ap;

	if (res->nwarnings < XP_LOAD_WARNINGS_KEPT) {
		va_start(ap, fmt);
		vsnprintf(res->warnings[res->nwarnings], XP_LOAD_MSG_LEN, fmt, ap);
		va_end(ap);
	}
	res->nwarnings++;
}

static int ingest_in(struct xp_rundir *d, const struct xp_load_opts *o,
		     struct xp_load_result *res, int *cannot_write);

int xp_ingest_open(const struct xp_load_opts *o, sqlite3 **db, int *ingested,
		   struct xp_load_result *res)
{
	const char *run_dir = o->run_dir;
	char why[XP_LOAD_MSG_LEN] = "";
	struct xp_rundir d;
	enum db_state state;
	int err, cannot_write = 0;

	memset(res, 0, sizeof(*res));
	*db = NULL;
	*ingested = 0;
	err = xp_rundir_open(&d, run_dir, res->error, sizeof(res->error));
	if (err)
		return err;
	/* a killed ingest's temporary file goes with the next reader too */
	xp_rundir_remove_stale(&d);
	state = db_state(&d, why, sizeof(why));
	if (state != DB_FRESH) {
		if ((state == DB_ALIEN || state == DB_ODD) && !has_inputs(&d)) {
			/* a merged job's, or a database alone: nothing to make it from */
			snprintf(res->error, sizeof(res->error), "%s; %s holds no run to ingest again",
				 why, run_dir);
			err = state == DB_ODD ? -ENXIO : -EBADMSG;
			goto out;
		}
		err = xp_rundir_check_write(&d, 0, res->error, sizeof(res->error));
		if (!err)
			err = ingest_in(&d, o, res, &cannot_write);
		if (!err) {
			*ingested = 1;
			if (state == DB_ODD || state == DB_ALIEN)
				add_warning(res, "%s; ingested the run again", why);
		} else if (cannot_write && state == DB_STALE) {
			/* a read-only run, or a full disk: what is there, said once */
			char cause[XP_LOAD_MSG_LEN];

			snprintf(cause, sizeof(cause), "%s", res->error);
			memset(res, 0, sizeof(*res));
			add_warning(res, "%s/%s is older than the run, which cannot be ingested again"
				    " here (%s); reading it as it is", run_dir, XP_DB_NAME, cause);
			err = 0;
		} else {
			if ((state == DB_ODD || state == DB_ALIEN) && cannot_write)
				snprintf(res->error, sizeof(res->error), "%s", why);
			goto out;
		}
	}
	err = xp_rundir_open_db(&d, db, res->error, sizeof(res->error));
out:
	xp_rundir_close(&d);
	return err;
}

/* o->out_db's directory, opened as a run directory is, and its name in it. */
static int open_out_dir(struct xp_rundir *d, const char *out_db, char *dir, size_t len,
			struct xp_load_result *res)
{
	const char *slash = strrchr(out_db, '/'), *base = slash ? slash + 1 : out_db;
	int err;

	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		snprintf(res->error, sizeof(res->error), "cannot write %s: not a file name", out_db);
		return -EINVAL;
	}
	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == out_db)
		snprintf(dir, len, "/");
	else if (snprintf(dir, len, "%.*s", (int)(slash - out_db), out_db) >= (int)len)
		return -ENAMETOOLONG;
	err = xp_rundir_open(d, dir, res->error, sizeof(res->error));
	if (!err)
		d->db_name = base;
	return err;
}

int xp_ingest(const struct xp_load_opts *o, struct xp_load_result *res)
{
	char dir[PATH_MAX];
	struct xp_rundir d;
	int err, cannot_write;

	memset(res, 0, sizeof(*res));
	/* the run is only read: the database goes where asked */
	if (o->out_db)
		err = open_out_dir(&d, o->out_db, dir, sizeof(dir), res);
	else
		err = xp_rundir_open(&d, o->run_dir, res->error, sizeof(res->error));
	if (err)
		return err;
	err = xp_rundir_check_write(&d, o->trust_run_dir, res->error, sizeof(res->error));
	if (!err) {
		xp_rundir_remove_stale(&d);
		err = ingest_in(&d, o, res, &cannot_write);
	}
	xp_rundir_close(&d);
	return err;
}

/* What the frameworks' threads launched, before it is joined to the GPU:
 * DDP's all-reduces named by bucket, backward launches under the forward
 * launch that made their autograd node, runtime threads' launches at the
 * line their Python thread waited in (unless o->raw_launch_stacks). 0 or
 * a negative errno. */
static int name_launches(sqlite3 *db, const struct xp_load_opts *o, struct xp_load_result *res)
{
	const char *what = "DDP buckets";
	struct xp_wait_lines waits;
	int err = xp_ddp_buckets(db);

	if (err >= 0) {
		what = "autograd join";
		err = xp_autograd_join(db);
	}
	if (err >= 0) {
		what = "waiting lines";
		err = o->raw_launch_stacks ? xp_wait_lines_off(db) : xp_wait_lines(db, &waits);
	}
	if (err >= 0) {
		what = "CUPTI clients";
		err = xp_note_cupti_rivals(db);
	}
	if (err >= 0)
		return 0;
	/* -EIO: the database's message; -ENOMEM has none there */
	snprintf(res->error, sizeof(res->error), "%s: %s", what,
		 err == -EIO ? sqlite3_errmsg(db) : strerror(-err));
	return err;
}

/* A signal during the steps after the reading: nothing is kept either. */
static int cancelled(const struct xp_load_opts *o, struct xp_load_result *res)
{
	if (!o->cancel || !*o->cancel)
		return 0;
	snprintf(res->error, sizeof(res->error), "interrupted");
	return -ECANCELED;
}

/* Whether a failed ingest ran out of disk: then the run cannot be ingested
 * here, as in a read-only directory (readers fall back to the database
 * there is). */
static int disk_full(sqlite3 *db, int err)
{
	int sys = db ? sqlite3_system_errno(db) : 0;

	return err == -ENOSPC || err == -EDQUOT || sys == ENOSPC || sys == EDQUOT ||
	       (db && sqlite3_errcode(db) == SQLITE_FULL);
}

/* The temporary database t opened, in a transaction, with the schema.
 * 0 or -errno with res->error. */
static int open_tmpdb(struct xp_rundir *d, struct xp_tmpdb *t, struct xp_load_result *res,
		      sqlite3 **db)
{
	int err;

	if (xp_tmpdb_open(d, t, db) != SQLITE_OK) {
		snprintf(res->error, sizeof(res->error), "cannot open %s/%s: %s", d->name, t->name,
			 *db ? sqlite3_errmsg(*db) : "out of memory");
		return -EIO;
	}
	if ((err = exec_sql(*db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
			    " PRAGMA cache_size=-65536;"
			    " BEGIN;", res)))
		return err;
	if (xp_db_create_schema(*db) != SQLITE_OK || xp_gpu_schema_create(*db) != SQLITE_OK) {
		snprintf(res->error, sizeof(res->error), "database: %s", sqlite3_errmsg(*db));
		return -EIO;
	}
	return 0;
}

/* The run read into db, indexed, its launches named, the caller's step
 * (the correlation) and the archive facts, all in the one transaction.
 * 0 or -errno with res->error. */
static int load_into(sqlite3 *db, const struct xp_load_opts *o, struct xp_load_result *res)
{
	struct xp_load_result keep;
	int err = xp_load_run(db, o, res);

	if (err)
		return err;
	keep = *res;
	if (o->phase)
		o->phase(o->progress_ctx, "indexing");
	if (xp_db_create_indexes(db) != SQLITE_OK) {
		snprintf(res->error, sizeof(res->error), "database: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	*res = keep;
	if ((err = name_launches(db, o, res)) < 0)
		return err;
	if (o->after_load &&
	    (err = o->after_load(o->after_load_ctx, db, res)))
		return err;
	/* what a later diff or ls needs: host, GPU, versions, git describe */
	if (o->phase)
		o->phase(o->progress_ctx, "summing up the run");
	if (xp_archive_record(db)) {
		snprintf(res->error, sizeof(res->error), "archive facts: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

/* The atomic write: a temporary database we create and lock, loaded,
 * then renamed over xpcorr.db. *cannot_write: the directory refused the
 * temporary file (read-only, no permission). */
static int ingest_in(struct xp_rundir *d, const struct xp_load_opts *o,
		     struct xp_load_result *res, int *cannot_write)
{
	struct xp_tmpdb t = { .fd = -1 };
	char final[4096];
	sqlite3 *db = NULL;
	int err;

	*cannot_write = 0;
	snprintf(final, sizeof(final), "%s/%s", d->name, d->db_name ? d->db_name : XP_DB_NAME);
	err = xp_tmpdb_create(d, &t);
	if (err) {
		*cannot_write = err == -EACCES || err == -EROFS || err == -EPERM ||
				err == -ENOSPC || err == -EDQUOT;
		snprintf(res->error, sizeof(res->error), "cannot create %s: %s", final,
			 strerror(-err));
		return err;
	}
	if ((err = open_tmpdb(d, &t, res, &db)) || (err = load_into(db, o, res)))
		goto fail;
	if (o->phase)
		o->phase(o->progress_ctx, "writing the database");
	if ((err = cancelled(o, res)) || (err = exec_sql(db, "COMMIT;", res)))
		goto fail;
	if (sqlite3_close(db) != SQLITE_OK) {
		db = NULL;
		snprintf(res->error, sizeof(res->error), "cannot close %s/%s", d->name, t.name);
		err = -EIO;
		goto fail;
	}
	db = NULL;
	err = xp_tmpdb_commit(d, &t);
	if (err) {
		snprintf(res->error, sizeof(res->error), "cannot rename %s/%s to %s: %s", d->name,
			 t.name, final, err == -ESTALE ? "the temporary file was replaced" :
			 strerror(-err));
		goto fail;
	}
	return 0;
fail:
	*cannot_write = disk_full(db, err);
	/* a database error (a full disk) names the file it could not write */
	if (!strncmp(res->error, "database: ", 10)) {
		char why[sizeof(res->error)];

		snprintf(why, sizeof(why), "%s", res->error + 10);
		snprintf(res->error, sizeof(res->error), "cannot write %s: %s", final, why);
	}
	sqlite3_close(db);
	xp_tmpdb_discard(d, &t);
	return err;
}
