/* stackwalk.c - a stack read from its leaf (stackwalk.h). */
#include "db/stackwalk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/dbtask.h"
#include "db/ownframes.h"
#include "src/array.h"
#include "src/u64map.h"

/* A frame as read once: its text kept for the walker's life. */
struct frame_text {
	char *sym, *module;         /* NULL where the database has none */
	int kind, host_stub;
	uint8_t own;                /* enum xp_own (ownframes.h) */
	char *name;                 /* a Python line's (pyframe.h), else NULL */
	struct xp_pyline py;        /* with name: its data, pointing into sym and module */
};

/* A stack node as read once: stacks share their outer frames, so a
 * report's thousands of walks read each node and frame from SQLite once
 * (a query each took ~3 us; op and idle walk 65k stacks at 10M samples). */
struct walked_node {
	int64_t parent;
	size_t frame;               /* index into frames */
};

struct xp_stackwalk {
	sqlite3_stmt *node;         /* a node's parent and frame */
	sqlite3_stmt *frame;        /* a frame's texts, read once each */
	unsigned steps;             /* since the walk began: a cycle must end */
	int64_t *kernel_names;      /* sorted StringIds ids of the run's kernel names */
	size_t nkernel_names;
	struct xp_db_task *names;   /* reads them meanwhile (a scan of every kernel); NULL: read */
	struct xp_u64map node_at;   /* node id -> index + 1 into nodes */
	struct xp_u64map frame_at;  /* (frame id, 1: a NULL frame) -> index + 1 into frames */
	struct walked_node *nodes;
	struct frame_text *frames;
	size_t nnodes, node_cap, nframes, frame_cap;
};

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int load_kernel_names(sqlite3 *db, void *arg)
{
	struct xp_stackwalk *w = arg;
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc = 0;

	if (sqlite3_prepare_v2(db, "SELECT DISTINCT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL"
			       " WHERE demangledName IS NOT NULL", -1, &s, NULL) != SQLITE_OK)
		return 0;           /* no GPU tables: no kernels, no stubs */
	while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
		rc = xp_array__reserve((void **)&w->kernel_names, &cap, w->nkernel_names + 1,
				       sizeof(*w->kernel_names), 64);
		if (rc == 0)
			w->kernel_names[w->nkernel_names++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	if (w->nkernel_names)
		qsort(w->kernel_names, w->nkernel_names, sizeof(*w->kernel_names), cmp_id);
	return rc;
}

int xp_stackwalk_open(sqlite3 *db, struct xp_stackwalk **out)
{
	struct xp_stackwalk *w = calloc(1, sizeof(*w));
	char sql[400];
	int rc;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	xp_u64map_init(&w->node_at);
	xp_u64map_init(&w->frame_at);
	/* one row even for a frame id without its row (all NULL then) */
	snprintf(sql, sizeof(sql), "SELECT NULL, s.value, f.kind, m.value, f.symbol, q.id, %s"
		 " FROM (SELECT ?1 AS id) q LEFT JOIN xp_frames f ON f.id = q.id"
		 " LEFT JOIN StringIds s ON s.id = f.symbol"
		 " LEFT JOIN StringIds m ON m.id = f.module", xp_sql_frame_line(db));
	if (sqlite3_prepare_v2(db, "SELECT parent, frame FROM xp_stacks WHERE id = ?", -1, &w->node,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, sql, -1, &w->frame, NULL) != SQLITE_OK) {
		sqlite3_finalize(w->node);
		free(w);
		return -EIO;
	}
	/* the first frame read waits for them */
	if ((rc = xp_db_task_start(db, load_kernel_names, w, &w->names)) < 0) {
		xp_stackwalk_close(w);
		return rc;
	}
	*out = w;
	return 0;
}

static char *dup_text(sqlite3_stmt *s, int col, int *rc)
{
	const char *t = (const char *)sqlite3_column_text(s, col);
	char *d = t ? strdup(t) : NULL;

	if (t && !d)
		*rc = -ENOMEM;
	return d;
}

/* f's name when it is a Python line: made once from its columns (column 6,
 * the line). 0 or -ENOMEM. */
static int python_line(struct frame_text *f, sqlite3_stmt *s)
{
	int64_t line = sqlite3_column_int64(s, 6);
	char buf[XP_PYLINE_NAME_MAX];

	if (!xp_pyline_of(f->kind, f->sym, f->module,
			  sqlite3_column_type(s, 6) == SQLITE_NULL ? NULL : &line, &f->py))
		return 0;
	f->name = strdup(xp_pyline_name(&f->py, buf, sizeof(buf)));
	return f->name ? 0 : -ENOMEM;
}

/* The frame text of the row w->frame stands on, kept. index + 1, or 0
 * when out of memory. */
static size_t keep_frame(struct xp_stackwalk *w, uint64_t *slot)
{
	sqlite3_stmt *s = w->frame;
	struct frame_text *f;
	int64_t sym;
	int rc = 0;

	if (w->names) {
		rc = xp_db_task_join(w->names);
		w->names = NULL;
		if (rc)
			return 0;   /* (out of memory: a host stub would go unnoticed) */
	}
	if (xp_array__reserve((void **)&w->frames, &w->frame_cap, w->nframes + 1, sizeof(*w->frames),
			      64))
		return 0;       /* the slot stays 0: read again next time */
	f = &w->frames[w->nframes];
	sym = sqlite3_column_int64(s, 4);
	*f = (struct frame_text){ .kind = sqlite3_column_int(s, 2),
				  .host_stub = w->nkernel_names && sqlite3_column_type(s, 4) != SQLITE_NULL &&
					       bsearch(&sym, w->kernel_names, w->nkernel_names,
						       sizeof(sym), cmp_id) };
	f->sym = dup_text(s, 1, &rc);
	f->module = dup_text(s, 3, &rc);
	f->own = (uint8_t)xp_own_frame(f->kind, f->sym, f->module);
	if (!rc)
		rc = python_line(f, s);
	if (rc) {
		free(f->sym);
		free(f->module);
		return 0;
	}
	*slot = ++w->nframes;
	return w->nframes;
}

/* The frame the row w->node stands on names (column 1; NULL: none), read
 * once (stacks share few frames). 1 with *index, 0 where it cannot be
 * read, or -ENOMEM. */
static int frame_of(struct xp_stackwalk *w, size_t *index)
{
	int null = sqlite3_column_type(w->node, 1) == SQLITE_NULL, fresh;
	int64_t frame = sqlite3_column_int64(w->node, 1);
	uint64_t *slot;
	size_t kept;

	if (xp_u64map_upsert(&w->frame_at, null ? 0 : (uint64_t)frame, null, &slot, &fresh))
		return -ENOMEM;
	if (*slot) {
		*index = (size_t)*slot - 1;
		return 1;
	}
	sqlite3_reset(w->frame);
	if (null)
		sqlite3_bind_null(w->frame, 1);
	else
		sqlite3_bind_int64(w->frame, 1, frame);
	if (sqlite3_step(w->frame) != SQLITE_ROW) {
		sqlite3_reset(w->frame);
		return 0;
	}
	kept = keep_frame(w, slot);
	sqlite3_reset(w->frame);
	if (!kept)
		return -ENOMEM;
	*index = kept - 1;
	return 1;
}

/* Node id's parent and frame, from the cache or read (then kept). 1, 0
 * where the node is not there, or a negative errno. */
static int node_of(struct xp_stackwalk *w, int64_t id, const struct walked_node **out)
{
	uint64_t *slot;
	size_t frame;
	int fresh, rc;

	if ((slot = xp_u64map_find(&w->node_at, (uint64_t)id, 0)) && *slot) {
		*out = &w->nodes[*slot - 1];
		return 1;
	}
	sqlite3_reset(w->node);
	sqlite3_bind_int64(w->node, 1, id);
	if (sqlite3_step(w->node) != SQLITE_ROW)
		return 0;
	if ((rc = frame_of(w, &frame)) <= 0)
		return rc;
	if (xp_array__reserve((void **)&w->nodes, &w->node_cap, w->nnodes + 1, sizeof(*w->nodes), 256) ||
	    xp_u64map_upsert(&w->node_at, (uint64_t)id, 0, &slot, &fresh))
		return -ENOMEM;
	w->nodes[w->nnodes] = (struct walked_node){ sqlite3_column_int64(w->node, 0), frame };
	*slot = ++w->nnodes;
	*out = &w->nodes[w->nnodes - 1];
	return 1;
}

/* *id moved past the recorder's own frames it stands on, which databases
 * made before ingest cut them hold: at the leaf, or under a backward
 * launch's note where it was re-stacked on its forward launch (ownframes.h). */
static void skip_own(struct xp_stackwalk *w, int64_t *id)
{
	const struct walked_node *n;
	uint8_t own[64];
	size_t k = 0, cut;
	int64_t at = *id;

	while (k < sizeof(own) && at > 0 && node_of(w, at, &n) > 0) {
		own[k] = w->frames[n->frame].own;
		at = n->parent;
		if (own[k++] == XP_OWN_NONE)
			break;
	}
	cut = xp_own_cut(own, k);
	for (size_t i = 0; i < cut && node_of(w, *id, &n) > 0; i++)
		*id = n->parent;
	w->steps += (unsigned)cut;
}

int xp_stackwalk_next(struct xp_stackwalk *w, int64_t *id, struct xp_frame_row *f)
{
	const struct walked_node *n;
	const struct frame_text *t;

	if (*id <= 0 || w->steps >= XP_STACKWALK_MAX_DEPTH || node_of(w, *id, &n) <= 0)
		return 0;
	if (w->frames[n->frame].own != XP_OWN_NONE) {
		skip_own(w, id);
		if (*id <= 0 || w->steps >= XP_STACKWALK_MAX_DEPTH || node_of(w, *id, &n) <= 0)
			return 0;
	}
	w->steps++;
	t = &w->frames[n->frame];
	*id = n->parent;
	*f = (struct xp_frame_row){ t->name ? t->name : t->sym, t->module, t->kind, t->host_stub,
				    t->name ? &t->py : NULL };
	return 1;
}

void xp_stackwalk_done(struct xp_stackwalk *w)
{
	sqlite3_reset(w->node);
	w->steps = 0;
}

void xp_stackwalk_close(struct xp_stackwalk *w)
{
	if (!w)
		return;
	xp_db_task_drop(w->names);
	sqlite3_finalize(w->node);
	sqlite3_finalize(w->frame);
	free(w->kernel_names);
	for (size_t i = 0; i < w->nframes; i++) {
		free(w->frames[i].sym);
		free(w->frames[i].module);
		free(w->frames[i].name);
	}
	free(w->frames);
	free(w->nodes);
	xp_u64map_free(&w->node_at);
	xp_u64map_free(&w->frame_at);
	free(w);
}
