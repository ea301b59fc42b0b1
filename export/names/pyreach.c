/* pyreach.c - whether launch stacks reach a Python frame; see pyreach.h. */
#include "export/names/pyreach.h"
#include "db/stacktable.h"
#include "src/satmath.h"

#include <errno.h>
#include <stdlib.h>

#define PY 1u                   /* a Python frame at or above the node */
#define LINE 2u                 /* a Python line at or above */
#define WAITED 4u               /* a waiting line's note at or above (db/waitnote.h) */
#define KNOWN 0x80u

struct reach_tree {
	struct xp_stack_table s;    /* parent and frame classes by place */
	uint8_t *ans;               /* by node place: KNOWN | bits once computed, else 0 */
	int64_t *path;              /* scratch: a node's unanswered ancestors */
};

/* The cheap first question in SQL: does the run have a Python frame at all
 * (the same rule as xp_frame_class's, on frame f and its symbol s). */
_Static_assert(XP_FRAME_PYTHON == 6 && XP_FRAME_JIT == 2, "frame kinds in the SQL below");
#define IS_LINE "f.kind = 6"
#define IS_PY "(f.kind = 6 OR (f.kind = 2 AND s.value GLOB 'py::*'))"

/* The answer of an EXISTS query into *yes: 0, or -EIO (sqlite3_errmsg). */
static int exists(sqlite3 *db, const char *sql, int *yes)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*yes = sqlite3_column_int64(s, 0) != 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -EIO;
}

static int load_tree(sqlite3 *db, struct reach_tree *t)
{
	int err = xp_stack_table_load(db, NULL, NULL, &t->s);

	if (err)
		return err;
	t->ans = calloc((size_t)t->s.nnodes, 1);
	t->path = calloc((size_t)t->s.nnodes, sizeof(*t->path));
	return t->ans && t->path ? 0 : -ENOMEM;
}

/* PY, LINE and WAITED of node id's own frame. */
static unsigned own_bits(const struct reach_tree *t, int64_t id)
{
	unsigned c = t->s.frame_class[t->s.frame[id]];

	return (c & XP_FRAME_IS_PYTHON ? PY : 0) | (c & XP_FRAME_IS_LINE ? LINE : 0) |
	       (c & XP_FRAME_IS_WAITED ? WAITED : 0);
}

/* Walks up to the first node whose answer is known (or the root), then
 * answers the nodes on the way down: each node is walked once overall (a
 * parent is at a smaller place, so the walk ends: stacktable.h). */
static unsigned reaches(struct reach_tree *t, int64_t id)
{
	int64_t at = xp_stack_table_node(&t->s, id), len = 0;
	unsigned bits = 0;

	while (at > 0 && at < t->s.nnodes && !t->ans[at] && len < t->s.nnodes) {
		t->path[len++] = at;
		at = t->s.parent[at];
	}
	if (at > 0 && at < t->s.nnodes && t->ans[at])
		bits = t->ans[at] & (PY | LINE | WAITED);
	while (len-- > 0) {
		bits |= own_bits(t, t->path[len]);
		t->ans[t->path[len]] = (uint8_t)(KNOWN | bits);
	}
	return bits;
}

int xp_python_reach(sqlite3 *db, sqlite3_stmt *rows, struct xp_python_reach *out)
{
	struct reach_tree t = { 0 };
	int rc = SQLITE_DONE, err, py = 0;

	out->gpu_ns = out->python_ns = out->line_ns = out->waited_ns = 0;
	out->has_lines = 0;
	/* cheap first: most runs are not Python programs */
	if ((err = exists(db, "SELECT EXISTS (SELECT 1 FROM xp_frames f JOIN StringIds s"
			  " ON s.id = f.symbol WHERE " IS_PY ")", &py)) < 0)
		return err;
	if (!py)
		return 1;
	err = exists(db, "SELECT EXISTS (SELECT 1 FROM xp_frames f WHERE " IS_LINE ")",
		     &out->has_lines);
	if (!err)
		err = load_tree(db, &t);
	while (!err && (rc = sqlite3_step(rows)) == SQLITE_ROW) {
		int64_t ns = sqlite3_column_int64(rows, 1);
		unsigned bits;

		out->gpu_ns = xp_sat_add(out->gpu_ns, ns);
		if (sqlite3_column_type(rows, 0) == SQLITE_NULL)
			continue;
		bits = reaches(&t, sqlite3_column_int64(rows, 0));
		if (bits & WAITED) {
			out->waited_ns = xp_sat_add(out->waited_ns, ns);
			continue;
		}
		if (bits & PY)
			out->python_ns = xp_sat_add(out->python_ns, ns);
		if (bits & LINE)
			out->line_ns = xp_sat_add(out->line_ns, ns);
	}
	if (!err && rc != SQLITE_DONE)
		err = -EIO;
	xp_stack_table_free(&t.s);
	free(t.ans);
	free(t.path);
	return err;
}
