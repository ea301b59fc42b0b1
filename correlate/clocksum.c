/* clocksum.c - clock evidence in a job summary; see clocksum.h. */
#include "correlate/clocksum.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int xc_clock_run_save(sqlite3 *sum, const struct xc_clock_run *r)
{
	sqlite3_stmt *st;
	int rc = SQLITE_DONE;

	if (sqlite3_exec(sum, "CREATE TABLE xs_clock(has_pair INTEGER, mono_ns INTEGER, real_ns INTEGER,"
			 " kind TEXT);"   /* kind: what the markers are, "nccl", "gloo" or NULL */
			 " CREATE TABLE xs_marker(name INTEGER, nth INTEGER, ts INTEGER);",
			 NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_prepare_v2(sum, "INSERT INTO xs_clock VALUES(?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int(st, 1, r->has_pair);
	sqlite3_bind_int64(st, 2, r->mono_ns);
	sqlite3_bind_int64(st, 3, r->real_ns);
	if (r->kind)
		sqlite3_bind_text(st, 4, r->kind, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE ||
	    sqlite3_prepare_v2(sum, "INSERT INTO xs_marker VALUES(?,?,?)", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; rc == SQLITE_DONE && i < r->nmarkers; i++) {
		/* the hash as its bits: SQLite's integers are signed */
		sqlite3_bind_int64(st, 1, (int64_t)r->markers[i].name);
		sqlite3_bind_int64(st, 2, r->markers[i].nth);
		sqlite3_bind_int64(st, 3, r->markers[i].ts);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static int read_clock(sqlite3 *sum, struct xc_clock_run *r)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(sum, "SELECT has_pair, mono_ns, real_ns, kind FROM xs_clock", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(st, 3);

		r->has_pair = sqlite3_column_int(st, 0);
		r->mono_ns = sqlite3_column_int64(st, 1);
		r->real_ns = sqlite3_column_int64(st, 2);
		/* the kinds clockalign.c names, as its own strings */
		r->kind = !kind ? NULL : !strcmp(kind, "nccl") ? "nccl" : !strcmp(kind, "gloo") ? "gloo" : NULL;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -EIO;
}

int xc_clock_run_read(sqlite3 *sum, struct xc_clock_run *r)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, err;

	memset(r, 0, sizeof(*r));
	if ((err = read_clock(sum, r)))
		return err;
	if (sqlite3_prepare_v2(sum, "SELECT name, nth, ts FROM xs_marker ORDER BY rowid", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (r->nmarkers == cap) {
			struct xc_marker *m = realloc(r->markers, (cap = cap ? 2 * cap : 256) * sizeof(*m));

			if (!m) {
				sqlite3_finalize(st);
				xc_clock_run_free(r);
				return -ENOMEM;
			}
			r->markers = m;
		}
		r->markers[r->nmarkers++] = (struct xc_marker){
			(uint64_t)sqlite3_column_int64(st, 0), (uint32_t)sqlite3_column_int64(st, 1),
			sqlite3_column_int64(st, 2) };
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		xc_clock_run_free(r);
		return -EIO;
	}
	return 0;
}
