/* dbmerge_shared.c - what runs share in a job: names (StringIds), frames
 * and stack nodes, each de-duplicated by its content so that the same
 * kernel name, or the same Python line under the same callers, is one id in
 * the job whichever rank it came from. */
#include "db/dbmerge_priv.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "db/pyframe.h"

typedef int (*row_fn)(struct xp_dbmerge *m, sqlite3_stmt *row, sqlite3_stmt *ins);

/* For every row of the run's query, each_row with the job's INSERT. */
static int for_rows(struct xp_dbmerge *m, sqlite3 *run, const char *table, const char *select,
		    const char *insert, row_fn each_row)
{
	sqlite3_stmt *st = NULL, *ins = NULL;
	int rc = SQLITE_DONE, err = 0;

	if (sqlite3_prepare_v2(run, select, -1, &st, NULL) != SQLITE_OK)
		err = xp_dbmerge_fail(m, run, table);
	else if (sqlite3_prepare_v2(m->job, insert, -1, &ins, NULL) != SQLITE_OK)
		err = xp_dbmerge_fail(m, m->job, table);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		err = each_row(m, st, ins);
		m->rows++;
	}
	if (!err && rc != SQLITE_DONE)
		err = xp_dbmerge_fail(m, run, table);
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	return err;
}

static int step(struct xp_dbmerge *m, sqlite3_stmt *ins, const char *table)
{
	int rc = sqlite3_step(ins);

	sqlite3_reset(ins);
	return rc == SQLITE_DONE ? 0 : xp_dbmerge_fail(m, m->job, table);
}

static int one_string(struct xp_dbmerge *m, sqlite3_stmt *row, sqlite3_stmt *ins)
{
	const char *s = (const char *)sqlite3_column_text(row, 1);
	int len = sqlite3_column_bytes(row, 1);
	int64_t id;
	int fresh, err;

	if (!s)
		return 0;
	err = xp_strtab_intern(m->names, s, (size_t)len, &id, &fresh);
	if (err == -E2BIG)
		return 0;                   /* no reader keeps such a name */
	if (err || (err = xp_dbmerge_remember(m, XP_MERGE_KEY_STR, sqlite3_column_int64(row, 0), id)))
		return xp_dbmerge_fail(m, NULL, "StringIds");
	if (!fresh)
		return 0;
	sqlite3_bind_int64(ins, 1, id);
	sqlite3_bind_text(ins, 2, s, len, SQLITE_STATIC);
	return step(m, ins, "StringIds");
}

int xp_dbmerge_strings(struct xp_dbmerge *m, sqlite3 *run)
{
	return for_rows(m, run, "StringIds", "SELECT id, value FROM StringIds",
			"INSERT INTO StringIds(id, value) VALUES(?, ?)", one_string);
}

/* The job's id of content (k1, k2) in a de-duplicating map: the one it
 * has, or the next after *next (*fresh: the caller inserts the row); kept
 * as the job's id of the run's id old. 0 or -ENOMEM. */
static int share(struct xp_dbmerge *m, struct xp_u64map *by_content, uint64_t k1, uint64_t k2,
		 int64_t *next, int kind, int64_t old, int64_t *id, int *fresh)
{
	uint64_t *slot;

	if (xp_u64map_upsert(by_content, k1, k2, &slot, fresh))
		return -ENOMEM;
	if (*fresh)
		*slot = (uint64_t)++*next;
	*id = (int64_t)*slot;
	return xp_dbmerge_remember(m, kind, old, *id);
}

static int insert4(struct xp_dbmerge *m, sqlite3_stmt *ins, const char *table, int64_t a,
		   int64_t b, int64_t c, int64_t d)
{
	sqlite3_bind_int64(ins, 1, a);
	sqlite3_bind_int64(ins, 2, b);
	sqlite3_bind_int64(ins, 3, c);
	sqlite3_bind_int64(ins, 4, d);
	return step(m, ins, table);
}

/* A frame is its symbol, its module's name, its kind and its line (a
 * Python line's, pyframe.h; NULL for other frames and in a run ingested
 * before the column, whose rows go over as they are). */
static int one_frame(struct xp_dbmerge *m, sqlite3_stmt *row, sqlite3_stmt *ins)
{
	int64_t sym = xp_dbmerge_lookup(m, XP_MERGE_KEY_STR, sqlite3_column_int64(row, 1));
	int64_t mod = xp_dbmerge_lookup(m, XP_MERGE_KEY_STR, sqlite3_column_int64(row, 2));
	int64_t kind = sqlite3_column_int64(row, 3), line = sqlite3_column_int64(row, 4), id;
	int has_line = sqlite3_column_type(row, 4) != SQLITE_NULL, fresh;

	if (sym < 0 || sym >= UINT32_MAX)
		sym = -1;           /* dangling either way (no job has that many names) */
	if (has_line && (line < -1 || line > INT32_MAX - 2))
		line = -1;          /* not a line a program has */
	if (share(m, &m->frames, (uint64_t)(uint32_t)sym << 32 | (has_line ? (uint64_t)(line + 2) : 0),
		  (uint64_t)mod << 8 | (uint64_t)(kind & 0xff), &m->next_frame, XP_MERGE_KEY_FRAME,
		  sqlite3_column_int64(row, 0), &id, &fresh))
		return xp_dbmerge_fail(m, NULL, "xp_frames");
	if (!fresh)
		return 0;
	if (has_line)
		sqlite3_bind_int64(ins, 5, line);
	else
		sqlite3_bind_null(ins, 5);
	return insert4(m, ins, "xp_frames", id, sym, mod, kind);
}

int xp_dbmerge_frames(struct xp_dbmerge *m, sqlite3 *run)
{
	char sql[100];

	snprintf(sql, sizeof(sql), "SELECT f.id, f.symbol, f.module, f.kind, %s FROM xp_frames f",
		 xp_sql_frame_line(run));
	return for_rows(m, run, "xp_frames", sql,
			"INSERT INTO xp_frames(id, symbol, module, kind, line) VALUES(?, ?, ?, ?, ?)",
			one_frame);
}

/* A node is its frame under its parent node; parents come first (ingest
 * numbers them so), a parent not seen yet makes the node a root. */
static int one_node(struct xp_dbmerge *m, sqlite3_stmt *row, sqlite3_stmt *ins)
{
	int64_t parent = xp_dbmerge_lookup(m, XP_MERGE_KEY_STACK, sqlite3_column_int64(row, 1));
	int64_t frame = xp_dbmerge_lookup(m, XP_MERGE_KEY_FRAME, sqlite3_column_int64(row, 2));
	int64_t id;
	int fresh;

	if (parent < 0)
		parent = 0;
	if (share(m, &m->nodes, (uint64_t)parent, (uint64_t)frame, &m->next_node, XP_MERGE_KEY_STACK,
		  sqlite3_column_int64(row, 0), &id, &fresh))
		return xp_dbmerge_fail(m, NULL, "xp_stacks");
	return fresh ? insert4(m, ins, "xp_stacks", id, parent, frame, sqlite3_column_int64(row, 3)) : 0;
}

int xp_dbmerge_stacks(struct xp_dbmerge *m, sqlite3 *run)
{
	return for_rows(m, run, "xp_stacks", "SELECT id, parent, frame, depth FROM xp_stacks ORDER BY id",
			"INSERT INTO xp_stacks(id, parent, frame, depth) VALUES(?, ?, ?, ?)", one_node);
}
