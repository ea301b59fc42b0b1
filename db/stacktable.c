/* stacktable.c - the stack prefix tree loaded once; see stacktable.h. */
#include "db/stacktable.h"
#include "db/db_schema.h"
#include "db/launch.h"
#include "db/ownframes.h"
#include "db/pyframe.h"
#include "db/waitnote.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/u64map.h"

static int interpreter_module(const char *module)
{
	const char *base = module ? strrchr(module, '/') : NULL;

	base = base ? base + 1 : module;
	return base && (!strncmp(base, "python3", 7) || !strncmp(base, "libpython", 9));
}

unsigned xp_frame_class(int kind, const char *symbol, const char *module)
{
	unsigned c = 0;

	if (kind == XP_FRAME_KERNEL || kind == XP_FRAME_KERNEL_UNRESOLVED)
		c |= XP_FRAME_IS_KERNEL;
	if (symbol && xp_is_cuda_layer(symbol, module))
		c |= XP_FRAME_IS_CUDA;
	if (kind == XP_FRAME_PYTHON)
		c |= XP_FRAME_IS_PYTHON | XP_FRAME_IS_LINE;
	else if (kind == XP_FRAME_JIT && symbol && !strncmp(symbol, "py::", 4))
		c |= XP_FRAME_IS_PYTHON;
	else if (interpreter_module(module))
		c |= XP_FRAME_IS_INTERP;
	if (xp_wait_note(kind, symbol))
		c |= XP_FRAME_IS_WAITED;
	return c;
}

/* The count and the largest id of a table's rows. */
static int id_span(sqlite3 *db, const char *table, int64_t *count, int64_t *max)
{
	sqlite3_stmt *st;
	char sql[96];
	int ok = 1;

	for (int i = 0; i < 2 && ok; i++) {
		snprintf(sql, sizeof(sql), i ? "SELECT coalesce(max(id), 0) FROM %s" :
			 "SELECT count(*) FROM %s", table);
		ok = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
		     sqlite3_step(st) == SQLITE_ROW;
		if (ok)
			*(i ? max : count) = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	return ok && *count >= 0 ? 0 : -EIO;
}

/* Ids are row ids, 1..N in a database we wrote: arrays are indexed by id
 * where the largest is within twice the rows (and a little), else by a
 * place given in the rows' order through a map, so that memory follows the
 * rows, never the largest id. *n is the entries then (0 reserved); *map is
 * NULL for ids as places. */
static int places(sqlite3 *db, const char *table, int64_t *n, struct xp_u64map **map)
{
	int64_t count = 0, max = 0;
	int err = id_span(db, table, &count, &max);

	*map = NULL;
	if (err)
		return err;
	if (max < 0 || max <= 2 * count + 1024) {
		*n = (max > 0 ? max : 0) + 1;
		return 0;
	}
	*n = count + 1;
	if (!(*map = malloc(sizeof(**map))))
		return -ENOMEM;
	xp_u64map_init(*map);
	return 0;
}

/* The place of id, given the next free one where the id is new (load);
 * 0 where it has none. */
static int64_t place_of(struct xp_u64map *map, int64_t n, int64_t id, int64_t *next)
{
	uint64_t *slot;
	int fresh;

	if (id <= 0)
		return 0;
	if (!map)
		return id < n ? id : 0;
	if (!next) {
		slot = xp_u64map_find(map, (uint64_t)id, 0);
		return slot ? (int64_t)*slot : 0;
	}
	if (*next >= n || xp_u64map_upsert(map, (uint64_t)id, 0, &slot, &fresh))
		return 0;
	if (fresh)
		*slot = (uint64_t)(*next)++;
	return (int64_t)*slot;
}

static int load_frames(sqlite3 *db, xp_frame_fn each_frame, void *ctx, struct xp_stack_table *t)
{
	char name[XP_PYLINE_NAME_MAX];      /* a Python line's, made from its columns */
	sqlite3_stmt *st;
	int64_t next = 1;
	char sql[220];
	int rc, err = 0;

	snprintf(sql, sizeof(sql), "SELECT f.id, s.value, f.kind, m.value, %s FROM xp_frames f"
		 " JOIN StringIds s ON s.id = f.symbol LEFT JOIN StringIds m ON m.id = f.module"
		 " ORDER BY f.id", xp_sql_frame_line(db));
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t at = place_of(t->frames_at, t->nframes, sqlite3_column_int64(st, 0), &next);
		int64_t line = sqlite3_column_int64(st, 4);
		const char *sym = (const char *)sqlite3_column_text(st, 1);
		const char *mod = (const char *)sqlite3_column_text(st, 3);
		int kind = sqlite3_column_int(st, 2);

		if (at <= 0 || !sym)
			continue;
		t->frame_class[at] = (uint8_t)xp_frame_class(kind, sym, mod);
		t->frame_own[at] = (uint8_t)xp_own_frame(kind, sym, mod);
		if (each_frame)
			err = each_frame(ctx, at, xp_frame_display(kind, sym, mod,
				sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : &line, name, sizeof(name)),
				mod, t->frame_class[at]);
	}
	sqlite3_finalize(st);
	return err ? err : rc == SQLITE_DONE ? 0 : -EIO;
}

/* The nodes in id order, then their parents as places: a parent is an
 * older node (ingest makes a node after its caller), and one that is not
 * (a cycle in a crafted database) ends the stack there, so that every
 * walk up ends. */
static int load_nodes(sqlite3 *db, struct xp_stack_table *t)
{
	sqlite3_stmt *st;
	int64_t next = 1;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT id, parent, frame FROM xp_stacks ORDER BY id", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t at = place_of(t->nodes_at, t->nnodes, sqlite3_column_int64(st, 0), &next);

		if (at <= 0)
			continue;
		t->parent[at] = sqlite3_column_int64(st, 1);    /* an id until the pass below */
		t->frame[at] = place_of(t->frames_at, t->nframes, sqlite3_column_int64(st, 2), NULL);
	}
	sqlite3_finalize(st);
	for (int64_t at = 1; at < t->nnodes; at++) {
		int64_t p = place_of(t->nodes_at, t->nnodes, t->parent[at], NULL);

		t->parent[at] = p < at ? p : 0;
	}
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int xp_stack_table_load(sqlite3 *db, xp_frame_fn each_frame, void *ctx, struct xp_stack_table *t)
{
	int err;

	memset(t, 0, sizeof(*t));
	err = places(db, "xp_frames", &t->nframes, &t->frames_at);
	if (!err)
		err = places(db, "xp_stacks", &t->nnodes, &t->nodes_at);
	if (!err) {
		t->frame_class = calloc((size_t)t->nframes, 1);
		t->frame_own = calloc((size_t)t->nframes, 1);
		t->parent = calloc((size_t)t->nnodes, sizeof(int64_t));
		t->frame = calloc((size_t)t->nnodes, sizeof(int64_t));
		err = !t->frame_class || !t->frame_own || !t->parent || !t->frame ? -ENOMEM : 0;
	}
	if (!err)
		err = load_frames(db, each_frame, ctx, t);
	if (!err)
		err = load_nodes(db, t);
	if (err)
		xp_stack_table_free(t);
	return err;
}

int64_t xp_stack_table_node(const struct xp_stack_table *t, int64_t id)
{
	return place_of(t->nodes_at, t->nnodes, id, NULL);
}

static void map_free(struct xp_u64map *m)
{
	if (m)
		xp_u64map_free(m);
	free(m);
}

void xp_stack_table_free(struct xp_stack_table *t)
{
	free(t->frame_class);
	free(t->frame_own);
	free(t->parent);
	free(t->frame);
	map_free(t->nodes_at);
	map_free(t->frames_at);
	memset(t, 0, sizeof(*t));
}

int xp_stack_table_drop_own(const struct xp_stack_table *t, int64_t *path, int depth)
{
	int out = 0;

	for (int i = 0; i < depth;) {
		uint8_t own[64];
		int n = 0;

		while (i + n < depth && n < (int)sizeof(own)) {
			int64_t f = path[i + n] > 0 && path[i + n] < t->nnodes ? t->frame[path[i + n]] : 0;

			own[n] = f > 0 && f < t->nframes ? t->frame_own[f] : XP_OWN_NONE;
			if (own[n++] == XP_OWN_NONE)
				break;
		}
		size_t cut = xp_own_cut(own, (size_t)n);

		if (cut) {
			i += (int)cut;
			continue;
		}
		/* no run of ours here: keep the frames read, up to the one outside */
		for (int k = 0; k < n; k++)
			path[out++] = path[i++];
	}
	return out;
}
