/* pyreach.c - whether launch stacks reach a Python frame; see pyreach.h. */
#include "pyreach.h"

#include <errno.h>
#include <stdlib.h>

enum { UNKNOWN, NO, YES };

struct tree {
	int64_t *parent;        /* by stack node id */
	uint8_t *state;         /* UNKNOWN, NO, YES: a py:: frame at or above */
	int64_t n;              /* ids 0..n-1 */
};

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

/* Nodes whose own frame is a Python one start as YES; the rest UNKNOWN. */
static int load_tree(sqlite3 *db, struct tree *t)
{
	sqlite3_stmt *s;
	int rc;

	t->n = max_of(db, "SELECT max(id) FROM xp_stacks") + 1;
	if (t->n <= 0)
		return -EIO;
	t->parent = calloc((size_t)t->n, sizeof(*t->parent));
	t->state = calloc((size_t)t->n, 1);
	if (!t->parent || !t->state)
		return -ENOMEM;
	if (sqlite3_prepare_v2(db, "SELECT n.id, n.parent, f.kind = ? AND s.value GLOB 'py::*'"
			       " FROM xp_stacks n JOIN xp_frames f ON f.id = n.frame"
			       " JOIN StringIds s ON s.id = f.symbol", -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int(s, 1, XP_FRAME_JIT);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);

		if (id < 0 || id >= t->n)
			continue;
		t->parent[id] = sqlite3_column_int64(s, 1);
		t->state[id] = sqlite3_column_int(s, 2) ? YES : UNKNOWN;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Walks up to the first node whose answer is known (or the root), then
 * writes the answer along the path: each node is walked once overall. */
static int reaches(struct tree *t, int64_t id)
{
	int64_t at = id, steps = 0;
	int answer = NO;

	while (at > 0 && at < t->n && t->state[at] == UNKNOWN && steps++ < t->n)
		at = t->parent[at];
	if (at > 0 && at < t->n && t->state[at] != UNKNOWN)
		answer = t->state[at];
	for (int64_t p = id; p > 0 && p < t->n && t->state[p] == UNKNOWN; p = t->parent[p])
		t->state[p] = (uint8_t)answer;
	return answer == YES;
}

int xp_python_reach(sqlite3 *db, sqlite3_stmt *rows, struct xp_python_reach *out)
{
	struct tree t = { 0 };
	int rc = SQLITE_DONE, err;

	out->gpu_ns = out->python_ns = 0;
	/* cheap first: most runs are not Python programs */
	{
		sqlite3_stmt *s;
		int any = 0;

		if (sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM xp_frames f JOIN StringIds s"
				       " ON s.id = f.symbol WHERE f.kind = ? AND s.value GLOB 'py::*')",
				       -1, &s, NULL) != SQLITE_OK)
			return -EIO;
		sqlite3_bind_int(s, 1, XP_FRAME_JIT);
		if (sqlite3_step(s) == SQLITE_ROW)
			any = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
		if (!any)
			return 1;
	}
	err = load_tree(db, &t);
	while (!err && (rc = sqlite3_step(rows)) == SQLITE_ROW) {
		int64_t ns = sqlite3_column_int64(rows, 1);

		out->gpu_ns += ns;
		if (sqlite3_column_type(rows, 0) != SQLITE_NULL &&
		    reaches(&t, sqlite3_column_int64(rows, 0)))
			out->python_ns += ns;
	}
	if (!err && rc != SQLITE_DONE)
		err = -EIO;
	free(t.parent);
	free(t.state);
	return err;
}
