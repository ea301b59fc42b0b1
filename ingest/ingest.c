/* ingest.c - the atomic write of run/xpcorr.db; see ingest.h.
 * The temporary database needs no journal and no fsync while it is built:
 * if anything fails it is deleted. Durability comes from fsync + rename. */
#include "ingest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "db_join.h"
#include "db_schema.h"
#include "gpu_ingest.h"

int xp_ingest_db_path(const char *run_dir, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", run_dir, XP_DB_NAME);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int is_input(const char *name)
{
	size_t n = strlen(name);

	return !strcmp(name, "meta.json") || !strcmp(name, "kallsyms") ||
	       (n > 4 && !strcmp(name + n - 4, ".xpr")) ||
	       (n > 4 && !strncmp(name, "perf-", 5) && !strcmp(name + n - 4, ".map"));
}

static int newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

int xp_ingest_is_fresh(const char *run_dir)
{
	char path[4096];
	struct stat db_st, st;
	struct dirent *d;
	sqlite3 *db = NULL;
	DIR *dir;
	int fresh = 1;

	if (xp_ingest_db_path(run_dir, path, sizeof(path)) || stat(path, &db_st))
		return 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    xp_db_schema_version(db) != XP_DB_SCHEMA_VERSION)
		fresh = 0;
	sqlite3_close(db);
	dir = opendir(run_dir);
	if (!dir)
		return 0;
	while (fresh && (d = readdir(dir))) {
		if (!is_input(d->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", run_dir, d->d_name);
		if (!stat(path, &st) && newer(&st.st_mtim, &db_st.st_mtim))
			fresh = 0;
	}
	closedir(dir);
	return fresh;
}

static int exec_sql(sqlite3 *db, const char *sql, struct xp_load_result *res)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	snprintf(res->error, sizeof(res->error), "database: %s", sqlite3_errmsg(db));
	return -EIO;
}

/* Removes run/xpcorr.db.tmp-PID files of ingests that died (killed, power
 * loss): their pid no longer exists. */
static void remove_stale_tmp(const char *run_dir)
{
	char path[4096];
	struct dirent *d;
	DIR *dir = opendir(run_dir);
	static const char prefix[] = XP_DB_NAME ".tmp-";

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		char *end;
		long pid;

		if (strncmp(d->d_name, prefix, sizeof(prefix) - 1))
			continue;
		pid = strtol(d->d_name + sizeof(prefix) - 1, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid() ||
		    (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		snprintf(path, sizeof(path), "%s/%s", run_dir, d->d_name);
		unlink(path);
	}
	closedir(dir);
}

int xp_ingest_open(const char *run_dir, sqlite3 **db, int *ingested,
		   struct xp_load_result *res)
{
	struct xp_load_opts o = { .run_dir = run_dir };
	char path[4096];
	int err;

	memset(res, 0, sizeof(*res));
	*db = NULL;
	*ingested = 0;
	if (!xp_ingest_is_fresh(run_dir)) {
		err = xp_ingest(&o, res);
		if (err)
			return err;
		*ingested = 1;
	}
	xp_ingest_db_path(run_dir, path, sizeof(path));
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(res->error, sizeof(res->error), "cannot open %s: %s", path,
			 *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return -EIO;
	}
	return 0;
}

int xp_ingest(const struct xp_load_opts *o, struct xp_load_result *res)
{
	char final[4096], tmp[4200];
	sqlite3 *db = NULL;
	int err, fd;

	memset(res, 0, sizeof(*res));
	err = xp_ingest_db_path(o->run_dir, final, sizeof(final));
	if (err) {
		snprintf(res->error, sizeof(res->error), "%s: path too long", o->run_dir);
		return err;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", final, (long)getpid());
	unlink(tmp);    /* a leftover of a crashed ingest with our pid */
	remove_stale_tmp(o->run_dir);
	/* one thread: no SQLite mutex around every call (7% of the correlation) */
	if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL)
	    != SQLITE_OK) {
		snprintf(res->error, sizeof(res->error), "cannot create %s: %s", tmp,
			 db ? sqlite3_errmsg(db) : "out of memory");
		err = -EIO;
		goto fail;
	}
	if ((err = exec_sql(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
			    " PRAGMA cache_size=-65536;"
			    " BEGIN;", res)))
		goto fail;
	if (xp_db_create_schema(db) != SQLITE_OK || xp_gpu_schema_create(db) != SQLITE_OK) {
		snprintf(res->error, sizeof(res->error), "database: %s", sqlite3_errmsg(db));
		err = -EIO;
		goto fail;
	}
	{
		struct xp_load_result keep;

		err = xp_load_run(db, o, res);
		if (err)
			goto fail;
		keep = *res;
		if (xp_db_create_indexes(db) != SQLITE_OK) {
			snprintf(res->error, sizeof(res->error), "database: %s", sqlite3_errmsg(db));
			err = -EIO;
			goto fail;
		}
		*res = keep;
		/* GPU work to the CPU stacks that launched it, in the same db */
		if (xc_correlate_db(db, &res->correlation)) {
			snprintf(res->error, sizeof(res->error), "correlation: %s", sqlite3_errmsg(db));
			err = -EIO;
			goto fail;
		}
		/* what a later diff or ls needs: host, GPU, versions, git describe */
		if (xp_archive_record(db)) {
			snprintf(res->error, sizeof(res->error), "archive facts: %s", sqlite3_errmsg(db));
			err = -EIO;
			goto fail;
		}
	}
	if ((err = exec_sql(db, "COMMIT;", res)))
		goto fail;
	if (sqlite3_close(db) != SQLITE_OK) {
		db = NULL;
		snprintf(res->error, sizeof(res->error), "cannot close %s", tmp);
		err = -EIO;
		goto fail;
	}
	db = NULL;
	/* the data on disk before the name: a crash never leaves an empty db */
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	if (rename(tmp, final)) {
		err = -errno;
		snprintf(res->error, sizeof(res->error), "cannot rename %s to %s: %s", tmp,
			 final, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	/* a database error (a full disk) names the file it could not write */
	if (!strncmp(res->error, "database: ", 10)) {
		char why[sizeof(res->error)];

		snprintf(why, sizeof(why), "%s", res->error + 10);
		snprintf(res->error, sizeof(res->error), "cannot write %s: %s", final, why);
	}
	sqlite3_close(db);
	unlink(tmp);
	return err;
}
