/* wait-lines-db.c - ingest's waiting-line pass (ingest/waitlines.h) on a
 * database ingested without it (an older xpcorr's, or --raw-launch-stacks),
 * then the correlation again, so that reports read the new stacks: for
 * checks on real recordings whose run directory is not at hand.
 *   wait-lines-db COPY.db      # prints "placed N no_waiter N several N"
 */
#include <stdio.h>
#include <sqlite3.h>

#include "correlate/db_join.h"
#include "ingest/waitlines.h"

int main(int argc, char **argv)
{
	struct xp_wait_lines n;
	struct xc_summary sum;
	sqlite3 *db = NULL;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: wait-lines-db FILE.db\n");
		return 2;
	}
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "wait-lines-db: cannot open %s: %s\n", argv[1], sqlite3_errmsg(db));
		sqlite3_close(db);
		return 1;
	}
	err = xp_wait_lines(db, &n);
	if (!err && xc_correlate_db(db, &sum))
		err = -1;
	if (err || sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "wait-lines-db: cannot place the launches of %s (%d): %s\n", argv[1], err,
			sqlite3_errmsg(db));
		sqlite3_close(db);
		return 1;
	}
	printf("placed %lld no_waiter %lld several %lld\n", (long long)n.placed,
	       (long long)n.no_waiter, (long long)n.several);
	sqlite3_close(db);
	return 0;
}
