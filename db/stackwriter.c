/* stackwriter.c - names, frames and stack nodes written once; see
 * stackwriter.h. The ids are handed out here, not by SQLite, so that a row
 * is numbered before it is inserted and the memo holds it from then on. */
#include "db/stackwriter.h"
#include "db/db_schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/strtab.h"
#include "src/u64map.h"

enum { INS_STRING, INS_FRAME, INS_NODE, GET_DEPTH, NSTMT };

static const char *const stmt_sql[NSTMT] = {
	[INS_STRING] = "INSERT INTO StringIds(id, value) VALUES (?, ?)",
	[INS_FRAME] = "INSERT INTO xp_frames(id, symbol, module, kind, line) VALUES (?, ?, ?, ?, ?)",
	[INS_NODE] = "INSERT INTO xp_stacks(id, parent, frame, depth) VALUES (?, ?, ?, ?)",
	[GET_DEPTH] = "SELECT depth FROM xp_stacks WHERE id = ?",
};

static const char *const id_tables[] = { "StringIds", "xp_frames", "xp_stacks" };

struct xp_stackwriter {
	sqlite3 *db;
	sqlite3_stmt *st[NSTMT];
	struct xp_strtab *strs;     /* the strings' text -> place (1, 2, ...) */
	int64_t *str_ids;           /* by place: the string's id (ascending) */
	size_t str_cap;
	struct xp_u64map frames;    /* frame key (frame_key) -> id */
	struct xp_u64map nodes;     /* (parent, frame) -> id */
	int64_t next[3];            /* the next id of StringIds, xp_frames, xp_stacks */
	uint64_t made[3];           /* rows inserted, by enum xp_stackwriter_table */
	const char *what;           /* the statement that failed last */
};

/* The next id of each table: after the largest it holds. */
static int next_ids(struct xp_stackwriter *w)
{
	char sql[64];

	for (int i = 0; i < 3; i++) {
		sqlite3_stmt *s;
		int ok;

		snprintf(sql, sizeof(sql), "SELECT coalesce(max(id), 0) FROM %s", id_tables[i]);
		if (sqlite3_prepare_v2(w->db, sql, -1, &s, NULL) != SQLITE_OK)
			return -EIO;
		ok = sqlite3_step(s) == SQLITE_ROW;
		w->next[i] = ok ? sqlite3_column_int64(s, 0) + 1 : 0;
		sqlite3_finalize(s);
		if (!ok)
			return -EIO;
	}
	return 0;
}

int xp_stackwriter_open(sqlite3 *db, struct xp_stackwriter **out)
{
	struct xp_stackwriter *w = calloc(1, sizeof(*w));
	int err = 0;

	*out = NULL;
	if (!w || !(w->strs = xp_strtab_new())) {
		free(w);
		return -ENOMEM;
	}
	w->db = db;
	w->what = "";
	xp_u64map_init(&w->frames);
	xp_u64map_init(&w->nodes);
	for (int i = 0; i < NSTMT && !err; i++)
		if (sqlite3_prepare_v2(db, stmt_sql[i], -1, &w->st[i], NULL) != SQLITE_OK)
			err = -EIO;
	if (!err)
		err = next_ids(w);
	if (err) {
		xp_stackwriter_close(w);
		return err;
	}
	*out = w;
	return 0;
}

void xp_stackwriter_close(struct xp_stackwriter *w)
{
	if (!w)
		return;
	for (int i = 0; i < NSTMT; i++)
		sqlite3_finalize(w->st[i]);
	xp_strtab_free(w->strs);
	free(w->str_ids);
	xp_u64map_free(&w->frames);
	xp_u64map_free(&w->nodes);
	free(w);
}

/* Steps an insert whose values are bound: 0 or -EIO. */
static int step(struct xp_stackwriter *w, int which)
{
	int rc = sqlite3_step(w->st[which]);

	sqlite3_reset(w->st[which]);
	if (rc == SQLITE_DONE)
		return 0;
	w->what = stmt_sql[which];
	return -EIO;
}

static int insert_string(struct xp_stackwriter *w, const char *s, size_t len, int64_t *id)
{
	sqlite3_stmt *ins = w->st[INS_STRING];
	int err;

	*id = w->next[XP_SW_STRINGS]++;
	sqlite3_bind_int64(ins, 1, *id);
	sqlite3_bind_text(ins, 2, s, (int)len, SQLITE_STATIC);
	err = step(w, INS_STRING);
	w->made[XP_SW_STRINGS] += !err;
	return err;
}

int xp_stackwriter_string(struct xp_stackwriter *w, const char *s, size_t len, int64_t *id,
			  int *fresh)
{
	int64_t place;
	int is_new, err = xp_strtab_intern(w->strs, s, len, &place, &is_new);

	if (fresh)
		*fresh = 0;
	if (err)
		return err;
	if (!is_new) {
		*id = w->str_ids[place];
		return 0;
	}
	if (xp_array__reserve((void **)&w->str_ids, &w->str_cap, (size_t)place + 1,
			      sizeof(*w->str_ids), 1024))
		return -ENOMEM;
	w->str_ids[place] = w->next[XP_SW_STRINGS];
	if ((err = insert_string(w, s, len, id)))
		return err;
	if (fresh)
		*fresh = 1;
	return 0;
}

const char *xp_stackwriter_text(const struct xp_stackwriter *w, int64_t id)
{
	size_t lo = 1, hi = xp_strtab_count(w->strs) + 1;

	/* places and ids both ascend; without new_note's strings they are one
	 * offset apart, which the first probe finds */
	if (w->str_ids && id >= w->str_ids[1] && (uint64_t)(id - w->str_ids[1]) + 1 < hi &&
	    w->str_ids[id - w->str_ids[1] + 1] == id)
		return xp_strtab_get(w->strs, id - w->str_ids[1] + 1);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->str_ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > xp_strtab_count(w->strs) || w->str_ids[lo] != id)
		return NULL;
	return xp_strtab_get(w->strs, (int64_t)lo);
}

static int insert_frame(struct xp_stackwriter *w, const struct xp_frame_key *f, int64_t *id)
{
	sqlite3_stmt *ins = w->st[INS_FRAME];
	int err;

	*id = w->next[XP_SW_FRAMES]++;
	sqlite3_bind_int64(ins, 1, *id);
	sqlite3_bind_int64(ins, 2, f->symbol);
	sqlite3_bind_int64(ins, 3, f->module);
	sqlite3_bind_int64(ins, 4, f->kind);
	if (f->has_line)
		sqlite3_bind_int64(ins, 5, f->line);
	else
		sqlite3_bind_null(ins, 5);
	err = step(w, INS_FRAME);
	w->made[XP_SW_FRAMES] += !err;
	return err;
}

int xp_stackwriter_frame(struct xp_stackwriter *w, const struct xp_frame_key *f, int64_t *id,
			 int *fresh)
{
	/* symbol and line in one word (a line's + 2: 0 is "no line"), module
	 * and kind in the other */
	uint64_t k1 = (uint64_t)(uint32_t)f->symbol << 32 |
		      (f->has_line ? (uint64_t)(f->line + 2) : 0);
	uint64_t k2 = (uint64_t)f->module << 8 | (uint64_t)(f->kind & 0xff), *slot;
	int is_new, err = xp_u64map_upsert(&w->frames, k1, k2, &slot, &is_new);

	if (fresh)
		*fresh = 0;
	if (err)
		return err;
	if (!is_new) {
		*id = (int64_t)*slot;
		return 0;
	}
	*slot = (uint64_t)w->next[XP_SW_FRAMES];
	if ((err = insert_frame(w, f, id)))
		return err;
	if (fresh)
		*fresh = 1;
	return 0;
}

int xp_stackwriter_node(struct xp_stackwriter *w, int64_t parent, int64_t frame, int64_t depth,
			int64_t *id, int *fresh)
{
	sqlite3_stmt *ins = w->st[INS_NODE];
	uint64_t *slot;
	int is_new, err = xp_u64map_upsert(&w->nodes, (uint64_t)parent, (uint64_t)frame, &slot,
					   &is_new);

	if (fresh)
		*fresh = 0;
	if (err)
		return err;
	if (!is_new) {
		*id = (int64_t)*slot;
		return 0;
	}
	*id = w->next[XP_SW_NODES]++;
	*slot = (uint64_t)*id;
	sqlite3_bind_int64(ins, 1, *id);
	sqlite3_bind_int64(ins, 2, parent);
	sqlite3_bind_int64(ins, 3, frame);
	sqlite3_bind_int64(ins, 4, depth);
	if ((err = step(w, INS_NODE)))
		return err;
	w->made[XP_SW_NODES]++;
	if (fresh)
		*fresh = 1;
	return 0;
}

/* A node's depth as the database has it: 0, -ENOENT or -EIO. */
static int depth_of(struct xp_stackwriter *w, int64_t node, int64_t *depth)
{
	sqlite3_stmt *get = w->st[GET_DEPTH];
	int rc;

	sqlite3_bind_int64(get, 1, node);
	rc = sqlite3_step(get);
	if (rc == SQLITE_ROW)
		*depth = sqlite3_column_int64(get, 0);
	sqlite3_reset(get);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return -ENOENT;
	w->what = stmt_sql[GET_DEPTH];
	return -EIO;
}

int xp_stackwriter_child(struct xp_stackwriter *w, int64_t parent, int64_t frame, int64_t *id)
{
	const uint64_t *known = xp_u64map_find(&w->nodes, (uint64_t)parent, (uint64_t)frame);
	int64_t depth;
	int err;

	if (known) {
		*id = (int64_t)*known;
		return 0;
	}
	if ((err = depth_of(w, parent, &depth)))
		return err;
	return xp_stackwriter_node(w, parent, frame, depth + 1, id, NULL);
}

int xp_stackwriter_new_note(struct xp_stackwriter *w, const char *text, int64_t module,
			    int64_t *frame)
{
	struct xp_frame_key f = { .module = module, .kind = XP_FRAME_NOTE };
	int err = insert_string(w, text, strlen(text), &f.symbol);

	return err ? err : insert_frame(w, &f, frame);
}

uint64_t xp_stackwriter_made(const struct xp_stackwriter *w, enum xp_stackwriter_table t)
{
	return w->made[t];
}

const char *xp_stackwriter_what(const struct xp_stackwriter *w)
{
	return w->what;
}
