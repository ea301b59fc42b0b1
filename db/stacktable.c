/* stacktable.c - the stack prefix tree loaded once; see stacktable.h. */
#include "db/stacktable.h"
#include "db/db_schema.h"
#include "db/launch.h"
#include "db/ownframes.h"
#include "db/pyframe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	return c;
}

static int64_t max_id(sqlite3 *db, const char *table_sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, table_sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int load_frames(sqlite3 *db, xp_frame_fn each_frame, void *ctx, struct xp_stack_table *t)
{
	char name[XP_PYLINE_NAME_MAX];      /* a Python line's, made from its columns */
	sqlite3_stmt *st;
	char sql[200];
	int rc, err = 0;

	snprintf(sql, sizeof(sql), "SELECT f.id, s.value, f.kind, m.value, %s FROM xp_frames f"
		 " JOIN StringIds s ON s.id = f.symbol LEFT JOIN StringIds m ON m.id = f.module",
		 xp_sql_frame_line(db));
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), line = sqlite3_column_int64(st, 4);
		const char *sym = (const char *)sqlite3_column_text(st, 1);
		const char *mod = (const char *)sqlite3_column_text(st, 3);
		int kind = sqlite3_column_int(st, 2);

		if (id <= 0 || id >= t->nframes || !sym)
			continue;
		t->frame_class[id] = (uint8_t)xp_frame_class(kind, sym, mod);
		t->frame_own[id] = (uint8_t)xp_own_frame(kind, sym, mod);
		if (each_frame)
			err = each_frame(ctx, id, xp_frame_display(kind, sym, mod,
				sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : &line, name, sizeof(name)),
				mod, t->frame_class[id]);
	}
	sqlite3_finalize(st);
	return err ? err : rc == SQLITE_DONE ? 0 : -EIO;
}

static int load_nodes(sqlite3 *db, struct xp_stack_table *t)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT id, parent, frame FROM xp_stacks", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		int64_t frame = sqlite3_column_int64(st, 2);

		if (id <= 0 || id >= t->nnodes)
			continue;
		t->parent[id] = sqlite3_column_int64(st, 1);
		t->frame[id] = frame > 0 && frame < t->nframes ? frame : 0;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int xp_stack_table_load(sqlite3 *db, xp_frame_fn each_frame, void *ctx, struct xp_stack_table *t)
{
	int64_t frames = max_id(db, "SELECT coalesce(max(id), 0) FROM xp_frames");
	int64_t nodes = max_id(db, "SELECT coalesce(max(id), 0) FROM xp_stacks");
	int err;

	memset(t, 0, sizeof(*t));
	if (frames < 0 || nodes < 0)
		return -EIO;
	t->nframes = frames + 1;
	t->nnodes = nodes + 1;
	t->frame_class = calloc((size_t)t->nframes, 1);
	t->frame_own = calloc((size_t)t->nframes, 1);
	t->parent = calloc((size_t)t->nnodes, sizeof(int64_t));
	t->frame = calloc((size_t)t->nnodes, sizeof(int64_t));
	err = !t->frame_class || !t->frame_own || !t->parent || !t->frame ? -ENOMEM : 0;
	if (!err)
		err = load_frames(db, each_frame, ctx, t);
	if (!err)
		err = load_nodes(db, t);
	if (err)
		xp_stack_table_free(t);
	return err;
}

void xp_stack_table_free(struct xp_stack_table *t)
{
	free(t->frame_class);
	free(t->frame_own);
	free(t->parent);
	free(t->frame);
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
