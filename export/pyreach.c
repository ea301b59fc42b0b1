/* pyreach.c - whether launch stacks reach a Python frame; see pyreach.h. */
#include "pyreach.h"

#include <errno.h>
#include <stdlib.h>

#define PY 1u                   /* a Python frame at or above the node */
#define LINE 2u                 /* a Python line at or above */
#define KNOWN 0x80u

struct tree {
	int64_t *parent;        /* by stack node id */
	uint8_t *own;           /* PY, LINE: the node's own frame */
	uint8_t *ans;           /* KNOWN | bits once computed, else 0 */
	int64_t n;              /* ids 0..n-1 */
	int64_t *path;          /* scratch: a node's unanswered ancestors */
};

/* The condition on frame f (xp_frames) and its symbol s of each bit. */
_Static_assert(XP_FRAME_PYTHON == 6 && XP_FRAME_JIT == 2, "frame kinds in the SQL below");
#define IS_LINE "f.kind = 6"
#define IS_PY "(f.kind = 6 OR (f.kind = 2 AND s.value GLOB 'py::*'))"

static int64_t max_of(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static int load_tree(sqlite3 *db, struct tree *t)
{
	sqlite3_stmt *s;
	int rc;

	t->n = max_of(db, "SELECT max(id) FROM xp_stacks") + 1;
	if (t->n <= 0)
		return -EIO;
	t->parent = calloc((size_t)t->n, sizeof(*t->parent));
	t->own = calloc((size_t)t->n, 1);
	t->ans = calloc((size_t)t->n, 1);
	t->path = calloc((size_t)t->n, sizeof(*t->path));
	if (!t->parent || !t->own || !t->ans || !t->path)
		return -ENOMEM;
	if (sqlite3_prepare_v2(db, "SELECT n.id, n.parent, " IS_PY ", " IS_LINE
			       " FROM xp_stacks n JOIN xp_frames f ON f.id = n.frame"
			       " JOIN StringIds s ON s.id = f.symbol", -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);

		if (id < 0 || id >= t->n)
			continue;
		t->parent[id] = sqlite3_column_int64(s, 1);
		t->own[id] = (uint8_t)((sqlite3_column_int(s, 2) ? PY : 0) |
				       (sqlite3_column_int(s, 3) ? LINE : 0));
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Walks up to the first node whose answer is known (or the root), then
 * answers the nodes on the way down: each node is walked once overall. */
static unsigned reaches(struct tree *t, int64_t id)
{
	int64_t at = id, len = 0;
	unsigned bits = 0;

	while (at > 0 && at < t->n && !t->ans[at] && len < t->n) {
		t->path[len++] = at;
		at = t->parent[at];
	}
	if (at > 0 && at < t->n && t->ans[at])
		bits = t->ans[at] & (PY | LINE);
	while (len-- > 0) {
		bits |= t->own[t->path[len]];
		t->ans[t->path[len]] = (uint8_t)(KNOWN | bits);
	}
	return bits;
}

int xp_python_reach(sqlite3 *db, sqlite3_stmt *rows, struct xp_python_reach *out)
{
	struct tree t = { 0 };
	int rc = SQLITE_DONE, err;

	out->gpu_ns = out->python_ns = out->line_ns = 0;
	out->has_lines = 0;
	/* cheap first: most runs are not Python programs */
	switch (max_of(db, "SELECT EXISTS (SELECT 1 FROM xp_frames f JOIN StringIds s"
		       " ON s.id = f.symbol WHERE " IS_PY ")")) {
	case 0: return 1;
	case 1: break;
	default: return -EIO;
	}
	out->has_lines = max_of(db, "SELECT EXISTS (SELECT 1 FROM xp_frames f WHERE " IS_LINE ")") == 1;
	err = load_tree(db, &t);
	while (!err && (rc = sqlite3_step(rows)) == SQLITE_ROW) {
		int64_t ns = sqlite3_column_int64(rows, 1);
		unsigned bits;

		out->gpu_ns += ns;
		if (sqlite3_column_type(rows, 0) == SQLITE_NULL)
			continue;
		bits = reaches(&t, sqlite3_column_int64(rows, 0));
		if (bits & PY)
			out->python_ns += ns;
		if (bits & LINE)
			out->line_ns += ns;
	}
	if (!err && rc != SQLITE_DONE)
		err = -EIO;
	free(t.parent);
	free(t.own);
	free(t.ans);
	free(t.path);
	return err;
}
