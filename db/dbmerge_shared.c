/* dbmerge_shared.c - what runs share in a job: names (StringIds), frames
 * and stack nodes, each de-duplicated by its content (db/stackwriter.h) so
 * that the same kernel name, or the same Python line under the same
 * callers, is one id in the job whichever rank it came from. */
#include "db/dbmerge_priv.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "db/pyframe.h"

typedef int (*row_fn)(struct xp_dbmerge *m, sqlite3_stmt *row);

/* The writer's (or the id map's) failure as the merge's message. */
static int failed(struct xp_dbmerge *m, int err, const char *table)
{
	return xp_dbmerge_fail(m, err == -EIO ? m->job : NULL, table);
}

/* For every row of the run's query, each_row; the job's writer is made
 * with the first run. */
static int for_rows(struct xp_dbmerge *m, sqlite3 *run, const char *table, const char *select,
		    row_fn each_row)
{
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_DONE, err = 0;

	if (!m->w && (err = xp_stackwriter_open(m->job, &m->w)))
		return failed(m, err, table);
	if (sqlite3_prepare_v2(run, select, -1, &st, NULL) != SQLITE_OK)
		err = xp_dbmerge_fail(m, run, table);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		err = each_row(m, st);
		m->rows++;
	}
	if (!err && rc != SQLITE_DONE)
		err = xp_dbmerge_fail(m, run, table);
	sqlite3_finalize(st);
	return err;
}

static int one_string(struct xp_dbmerge *m, sqlite3_stmt *row)
{
	const char *s = (const char *)sqlite3_column_text(row, 1);
	int len = sqlite3_column_bytes(row, 1);
	int64_t id;
	int err;

	if (!s)
		return 0;
	err = xp_stackwriter_string(m->w, s, (size_t)len, &id, NULL);
	if (err == -E2BIG)
		return 0;                   /* no reader keeps such a name */
	if (!err)
		err = xp_dbmerge_remember(m, XP_MERGE_KEY_STR, sqlite3_column_int64(row, 0), id);
	return err ? failed(m, err, "StringIds") : 0;
}

int xp_dbmerge_strings(struct xp_dbmerge *m, sqlite3 *run)
{
	return for_rows(m, run, "StringIds", "SELECT id, value FROM StringIds", one_string);
}

/* A frame is its symbol, its module's name, its kind and its line (a
 * Python line's, pyframe.h; NULL for other frames and in a run ingested
 * before the column, whose rows go over as they are). */
static int one_frame(struct xp_dbmerge *m, sqlite3_stmt *row)
{
	struct xp_frame_key f = {
		.symbol = xp_dbmerge_lookup(m, XP_MERGE_KEY_STR, sqlite3_column_int64(row, 1)),
		.module = xp_dbmerge_lookup(m, XP_MERGE_KEY_STR, sqlite3_column_int64(row, 2)),
		.kind = sqlite3_column_int64(row, 3),
		.has_line = sqlite3_column_type(row, 4) != SQLITE_NULL,
		.line = sqlite3_column_int64(row, 4),
	};
	int64_t id;
	int err;

	if (f.symbol < 0 || f.symbol >= UINT32_MAX)
		f.symbol = -1;      /* dangling either way (no job has that many names) */
	if (!f.has_line)
		f.line = 0;
	else if (f.line < -1 || f.line > INT32_MAX - 2)
		f.line = -1;        /* not a line a program has */
	err = xp_stackwriter_frame(m->w, &f, &id, NULL);
	if (!err)
		err = xp_dbmerge_remember(m, XP_MERGE_KEY_FRAME, sqlite3_column_int64(row, 0), id);
	return err ? failed(m, err, "xp_frames") : 0;
}

int xp_dbmerge_frames(struct xp_dbmerge *m, sqlite3 *run)
{
	char sql[100];

	snprintf(sql, sizeof(sql), "SELECT f.id, f.symbol, f.module, f.kind, %s FROM xp_frames f",
		 xp_sql_frame_line(run));
	return for_rows(m, run, "xp_frames", sql, one_frame);
}

/* A node is its frame under its parent node; parents come first (ingest
 * numbers them so), a parent not seen yet makes the node a root. Its
 * depth goes over as the run has it. */
static int one_node(struct xp_dbmerge *m, sqlite3_stmt *row)
{
	int64_t parent = xp_dbmerge_lookup(m, XP_MERGE_KEY_STACK, sqlite3_column_int64(row, 1));
	int64_t frame = xp_dbmerge_lookup(m, XP_MERGE_KEY_FRAME, sqlite3_column_int64(row, 2));
	int64_t id;
	int err;

	if (parent < 0)
		parent = 0;
	err = xp_stackwriter_node(m->w, parent, frame, sqlite3_column_int64(row, 3), &id, NULL);
	if (!err)
		err = xp_dbmerge_remember(m, XP_MERGE_KEY_STACK, sqlite3_column_int64(row, 0), id);
	return err ? failed(m, err, "xp_stacks") : 0;
}

int xp_dbmerge_stacks(struct xp_dbmerge *m, sqlite3 *run)
{
	return for_rows(m, run, "xp_stacks", "SELECT id, parent, frame, depth FROM xp_stacks ORDER BY id",
			one_node);
}
