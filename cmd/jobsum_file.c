/* jobsum_file.c - a run's job summary file; see jobsum_file.h. */
#include "cmd/jobsum_file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "correlate/clocksum.h"
#include "export/jobsum.h"
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

int xp_cmd_write_summary(const char *who, const char *run_dir, sqlite3 *db)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	sqlite3 *sum = NULL;
	int err;

	xp_cmd_summary_path(run_dir, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", path, (long)getpid());
	unlink(tmp);
	if (sqlite3_open_v2(tmp, &sum, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		fprintf(stderr, "%s: cannot create %s: %s\n", who, xp_esc(tmp),
			sum ? sqlite3_errmsg(sum) : "out of memory");
		sqlite3_close(sum);
		return XP_EXIT_FAIL;
	}
	err = fill(db, sum);
	if (err)
		fprintf(stderr, "%s: cannot write %s: %s\n", who, xp_esc(path),
			err == -ENOMEM ? "out of memory" :
			sqlite3_errcode(sum) != SQLITE_OK ? sqlite3_errmsg(sum) : sqlite3_errmsg(db));
	if (sqlite3_close(sum) != SQLITE_OK && !err) {
		fprintf(stderr, "%s: cannot close %s\n", who, xp_esc(tmp));
		err = -EIO;
	}
	if (!err && rename(tmp, path)) {
		fprintf(stderr, "%s: cannot rename %s to %s: %s\n", who, xp_esc(tmp), xp_esc(path),
			strerror(errno));
		err = -errno;
	}
	if (err)
		unlink(tmp);
	return err ? XP_EXIT_FAIL : XP_EXIT_OK;
}
