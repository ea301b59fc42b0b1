/* opendb.c - ingest then correlate, and opening a run's database for the
 * commands (opendb.h). */
#include "cmd/opendb.h"
#include "cmd/stopsig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/runcache.h"
#include "correlate/db_join.h"
#include "src/textesc.h"

/* GPU work to the CPU stacks that launched it, in the load's database */
static int correlate(void *ctx, sqlite3 *db, struct xp_load_result *res)
{
	struct xc_summary summary;

	(void)ctx;
	if (xc_correlate_db(db, &summary)) {
		snprintf(res->error, sizeof(res->error), "correlation: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

void xp_cmd_load_opts(struct xp_load_opts *o, const char *run_dir)
{
	memset(o, 0, sizeof(*o));
	o->run_dir = run_dir;
	o->after_load = correlate;
}

void xp_print_load_warnings(const struct xp_load_result *res)
{
	for (unsigned i = 0; i < res->nwarnings && i < XP_LOAD_WARNINGS_KEPT; i++)
		fprintf(stderr, "xpcorr: warning: %s\n", xp_esc(res->warnings[i]));
	if (res->nwarnings > XP_LOAD_WARNINGS_KEPT)
		fprintf(stderr, "xpcorr: warning: %u more warnings in table xp_warnings\n",
			res->nwarnings - XP_LOAD_WARNINGS_KEPT);
}

/* The ingest of o, an ending signal during it handled: 0 or an errno. */
static int ingest_stoppable(struct xp_load_opts *o, sqlite3 **db, struct xp_load_result *res)
{
	struct xp_stopsig stop;
	int ingested, rc;

	/* an ending signal during the ingest removes its temporary database
	 * first, then ends the command as it would have */
	xp_stopsig_catch(&stop);
	o->cancel = xp_stopsig_flag();
	rc = db ? xp_ingest_open(o, db, &ingested, res) : xp_ingest(o, res);
	xp_stopsig_restore(&stop);
	if (xp_stopsig_caught()) {
		if (db) {
			sqlite3_close(*db);
			*db = NULL;
		}
		xp_stopsig_reraise();
	}
	return rc;
}

/* A run this user cannot write and whose own database is missing or stale
 * (one root recorded, a read-only mount): its database in the user's
 * cache, ingested there when not yet, said in one line. */
static int open_cached(const char *target, sqlite3 **db, int warn, char *why, size_t len)
{
	struct xp_load_result res;
	struct xp_load_opts o;
	char path[PATH_MAX], err[XP_LOAD_MSG_LEN];
	int rc;

	/* no cache: the caller reads the run as before, and says why */
	if (xp_run_cache_path(target, path, sizeof(path), why, len))
		return -1;
	if (xp_db_open_file(path, db, err, sizeof(err))) {
		xp_cmd_load_opts(&o, target);
		o.out_db = path;
		rc = ingest_stoppable(&o, NULL, &res);
		if (rc || warn)
			xp_print_load_warnings(&res);
		if (rc) {
			fprintf(stderr, "xpcorr: %s\n", xp_esc(res.error));
			return XP_EXIT_FAIL;
		}
		if (xp_db_open_file(path, db, err, sizeof(err))) {
			fprintf(stderr, "xpcorr: %s\n", xp_esc(err));
			return XP_EXIT_FAIL;
		}
	}
	if (warn)
		fprintf(stderr, "xpcorr: %s cannot be written here: reading its database from %s\n",
			xp_esc(target), xp_esc(path));
	return XP_EXIT_OK;
}

static int open_db(const char *who, const char *target, sqlite3 **db, int warn)
{
	struct xp_load_result res;
	struct xp_load_opts o;
	char real[PATH_MAX], err[XP_LOAD_MSG_LEN], no_cache[XP_LOAD_MSG_LEN] = "";
	struct stat sb;
	size_t n = strlen(target);
	int rc;

	*db = NULL;
	rc = xp_cmd_need_path(who, target, n > 3 && !strcmp(target + n - 3, ".db") ?
			      "database file" : "run directory");
	if (rc)
		return rc;
	if (stat(target, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
		/* a database file named on the command line: the link the user
		 * typed is followed, then regular files only */
		if (!realpath(target, real)) {
			fprintf(stderr, "xpcorr: cannot open %s: %s\n", target, strerror(errno));
			return XP_EXIT_FAIL;
		}
		if (!xp_db_open_given(real, target, db, err, sizeof(err)))
			return XP_EXIT_OK;
		fprintf(stderr, "xpcorr: %s\n", xp_esc(err));
		return XP_EXIT_FAIL;
	}
	if (faccessat(AT_FDCWD, target, W_OK, AT_EACCESS) && !xp_ingest_is_fresh(target) &&
	    (rc = open_cached(target, db, warn, no_cache, sizeof(no_cache))) >= 0)
		return rc;
	xp_cmd_load_opts(&o, target);
	rc = ingest_stoppable(&o, db, &res);
	if (rc) {
		xp_print_load_warnings(&res);
		fprintf(stderr, "xpcorr: %s%s%s%s\n", xp_esc(res.error), no_cache[0] ? " (and " : "",
			xp_esc(no_cache), no_cache[0] ? "; xpcorr ingest -o FILE.db RUN writes the "
			"database elsewhere)" : "");
		return XP_EXIT_FAIL;
	}
	if (warn)
		xp_print_load_warnings(&res);
	return XP_EXIT_OK;
}

int xp_cmd_open_db(const char *who, const char *target, sqlite3 **db)
{
	return open_db(who, target, db, 1);
}

int xp_cmd_reopen_db(const char *who, const char *target, sqlite3 **db)
{
	return open_db(who, target, db, 0);
}
