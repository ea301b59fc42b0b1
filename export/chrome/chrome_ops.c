/* chrome_ops.c - CPU op slices of the Chrome trace, in the manner of
 * Kineto's cpu_op and python_function: on the launching thread, a slice for
 * each framework op (aten::addmm) and each Python function of the launch
 * stacks, built from the launches alone. A slice runs from its first
 * launch's CUDA call start to its last launch's call end: what the function
 * did before its first launch or after its last is not known to us.
 *
 * Consecutive launches of a thread share a level's slice when every level
 * above it is shared and the frame is the same function called from the
 * same place (the caller's frame and line), except:
 * - a Python function whose line goes back (a new call, or a loop in it)
 *   begins a new slice;
 * - an op that launches again from a code path it launched from already
 *   begins a new slice (the same op called again, from a loop).
 * A backward launch's stack holds its forward launch's Python frames above
 * its note (ingest/backward.h): only the ops under the note ran on its
 * thread. Slices are written before the CUDA calls' own slices, a parent
 * before children that start with it, so that viewers nest them alike.
 *
 *   xpcorr export --format chrome run/    (cat "cpu_op", "python_function")
 */
#include "export/chrome/chrome_priv.h"
#include "db/db_schema.h"
#include "db/pypath.h"
#include "src/gtid.h"
#include "export/names/pyreach.h"
#include "src/satmath.h"
#include "db/stackwalk.h"
#include "src/strtab.h"
#include "src/u64map.h"
#include "src/array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One level of a launch's path of ops and Python functions, root first. */
struct level {
	int64_t key;                /* strtab id: the function or op (what must match) */
	int64_t name;               /* strtab id: the slice's name */
	int64_t caller;             /* xp_stacks node of the level above, 0 at the root */
	int line;                   /* a Python function's line; -1 for an op */
};

#define MAX_LEVELS 64              /* deeper paths are cut at the root side */

/* A slice still open on the thread, at the depth of its index. */
struct open_slice {
	struct level lv;
	int64_t start, end;
	int64_t launches;
	int line_min, line_max;
	int64_t *leaves;            /* ops: the launch stacks seen in it */
	size_t nleaves, leaves_cap;
	size_t *pending;            /* closed descendants that start with it: index into done */
	size_t npending, pending_cap;
};

struct done_slice {
	struct level lv;
	int64_t start, end, launches;
	int line_min, line_max;
};

struct ops {
	struct xp_chrome *c;
	struct xp_stackwalk *walk;  /* the sites' own walker */
	struct xp_strtab *names;
	struct xp_u64map path_at;   /* stack id -> index + 1 into paths */
	size_t (*paths)[2];         /* (first level in levels, count) */
	size_t npaths, paths_cap;
	struct level *levels;
	size_t nlevels, levels_cap;
	struct open_slice open[MAX_LEVELS];
	size_t depth;               /* open slices */
	struct done_slice *done;    /* closed slices waiting for an ancestor */
	size_t ndone, done_cap;
	int64_t pid, tid;           /* the thread of the open slices */
};

static int intern(struct ops *O, const char *s, int64_t *id)
{
	int fresh;

	return xp_strtab_intern(O->names, s, strlen(s), id, &fresh);
}

/* The level of one frame, if it is an op or a Python line. 1, 0 or -ENOMEM. */
static int level_of(struct ops *O, const struct xp_frame_row *fr, struct level *lv)
{
	char buf[1200], op[160];
	const char *file;

	if (xp_framework_op(fr->sym, op, sizeof(op))) {
		lv->line = -1;
		snprintf(buf, sizeof(buf), "O\t%s", op);
		return intern(O, buf, &lv->key) || intern(O, op, &lv->name) ? -ENOMEM : 1;
	}
	/* a Python line with its line (db/pyframe.h), the file as its frame names it */
	if (!fr->py || fr->py->line < 0)
		return 0;
	lv->line = fr->py->line;
	file = xp_pypath_base(fr->py->file);
	snprintf(buf, sizeof(buf), "P\t%s\t%s\t%s", fr->py->file, file, fr->py->qualname);
	if (intern(O, buf, &lv->key))
		return -ENOMEM;
	snprintf(buf, sizeof(buf), "%s: %s", file, fr->py->qualname);
	return intern(O, buf, &lv->name) ? -ENOMEM : 1;
}

/* The levels of a stack, leaf to root into tmp: the ops and Python lines
 * up to a backward launch's note; an op repeated by the dispatcher
 * (call, then redispatch) is one level. */
static int walk_levels(struct ops *O, int64_t stack, struct level *tmp, size_t *n, int64_t *node)
{
	struct xp_frame_row fr;
	int64_t id = stack, at;
	int rc = 0;

	*n = 0;
	while (id > 0 && (at = id, xp_stackwalk_next(O->walk, &id, &fr))) {
		struct level lv;

		if (fr.kind == XP_FRAME_NOTE)
			break;
		if ((rc = level_of(O, &fr, &lv)) <= 0) {
			if (rc < 0)
				break;
			continue;
		}
		if (*n && lv.line < 0 && tmp[*n - 1].line < 0 && tmp[*n - 1].key == lv.key) {
			node[*n - 1] = at;      /* the outer frame of the op stands for it */
			continue;
		}
		if (*n == MAX_LEVELS)
			break;
		node[*n] = at;
		tmp[(*n)++] = lv;
	}
	xp_stackwalk_done(O->walk);
	return rc < 0 ? rc : 0;
}

/* The levels of a launch stack, root first, read once per stack. */
static int path_of(struct ops *O, int64_t stack, const struct level **lv, size_t *n)
{
	struct level tmp[MAX_LEVELS];
	int64_t node[MAX_LEVELS];
	uint64_t *slot;
	size_t k;
	int fresh, rc;

	if (xp_u64map_upsert(&O->path_at, (uint64_t)stack, 0, &slot, &fresh))
		return -ENOMEM;
	if (fresh) {
		if ((rc = walk_levels(O, stack, tmp, &k, node)) < 0 ||
		    xp_array__reserve((void **)&O->levels, &O->levels_cap, O->nlevels + k,
				      sizeof(*O->levels), 256) ||
		    xp_array__reserve((void **)&O->paths, &O->paths_cap, O->npaths + 1,
				      sizeof(*O->paths), 64))
			return rc < 0 ? rc : -ENOMEM;
		for (size_t i = 0; i < k; i++) {        /* root first; the caller's node */
			O->levels[O->nlevels + i] = tmp[k - 1 - i];
			O->levels[O->nlevels + i].caller = i ? node[k - i] : 0;
		}
		O->paths[O->npaths][0] = O->nlevels;
		O->paths[O->npaths][1] = k;
		O->nlevels += k;
		slot = xp_u64map_find(&O->path_at, (uint64_t)stack, 0);
		*slot = ++O->npaths;
	}
	*n = O->paths[*slot - 1][1];
	*lv = *n ? &O->levels[O->paths[*slot - 1][0]] : NULL;  /* no levels yet: none kept */
	return 0;
}

static int write_slice(struct ops *O, const struct done_slice *d)
{
	struct xp_chrome *c = O->c;
	struct jsonw *w = &c->w;
	const char *name = xp_strtab_get(O->names, d->lv.name);

	xp_chrome_event_begin(c, "X", d->lv.line < 0 ? "cpu_op" : "python_function", name ? name : "?",
			      O->pid, O->tid, d->start);
	jsonw_key_lit(w, "dur"); jsonw_ns_as_us(w, d->end > d->start ? xp_sat_sub(d->end, d->start) : 0);
	jsonw_key_lit(w, "args");
	jsonw_obj_begin(w);
	jsonw_key_lit(w, "launches"); jsonw_int(w, d->launches);
	if (d->lv.line >= 0) {
		jsonw_key_lit(w, "first_line"); jsonw_int(w, d->line_min);
		jsonw_key_lit(w, "last_line"); jsonw_int(w, d->line_max);
	}
	jsonw_obj_end(w);
	jsonw_obj_end(w);
	return 0;
}

/* Closes the open slices from depth d down: each is written, or, when it
 * starts with its parent, kept until the parent is written (with its own
 * kept ones after it). */
static int close_from(struct ops *O, size_t d)
{
	while (O->depth > d) {
		struct open_slice *s = &O->open[--O->depth];
		struct open_slice *up = O->depth ? &O->open[O->depth - 1] : NULL;
		struct done_slice me = { s->lv, s->start, s->end, s->launches, s->line_min, s->line_max };

		if (up && up->start == s->start) {
			if (xp_array__reserve((void **)&O->done, &O->done_cap, O->ndone + 1, sizeof(*O->done), 16) ||
			    xp_array__reserve((void **)&up->pending, &up->pending_cap,
					      up->npending + s->npending + 1, sizeof(*up->pending), 8))
				return -ENOMEM;
			O->done[O->ndone] = me;
			up->pending[up->npending++] = O->ndone++;
			if (s->npending)        /* NULL until the first: memcpy wants a pointer */
				memcpy(up->pending + up->npending, s->pending,
				       s->npending * sizeof(*s->pending));
			up->npending += s->npending;
		} else {
			write_slice(O, &me);
			for (size_t i = 0; i < s->npending; i++)
				write_slice(O, &O->done[s->pending[i]]);
		}
		s->npending = 0;
		s->nleaves = 0;
	}
	if (!O->depth)
		O->ndone = 0;
	return 0;
}

static int seen_leaf(const struct open_slice *s, int64_t stack)
{
	for (size_t i = 0; i < s->nleaves; i++)
		if (s->leaves[i] == stack)
			return 1;
	return 0;
}

/* Whether the open slice at depth d goes on with level lv of a launch. */
static int goes_on(const struct open_slice *s, const struct level *lv, int64_t stack)
{
	if (s->lv.key != lv->key || s->lv.caller != lv->caller)
		return 0;
	return lv->line < 0 ? !seen_leaf(s, stack) : lv->line >= s->lv.line;
}

/* One launch of the thread: the slices it goes on with, the ones it begins. */
static int launch(struct ops *O, int64_t stack, int64_t start, int64_t end)
{
	const struct level *lv;
	size_t n, d;
	int rc;

	if ((rc = path_of(O, stack, &lv, &n)) < 0)
		return rc;
	for (d = 0; d < n && d < O->depth && goes_on(&O->open[d], &lv[d], stack); d++)
		;
	if ((rc = close_from(O, d)) < 0)
		return rc;
	for (; d < n; d++)
		O->open[O->depth++] = (struct open_slice){ .lv = lv[d], .start = start, .line_min = lv[d].line,
						      .line_max = lv[d].line, .leaves = O->open[d].leaves,
						      .leaves_cap = O->open[d].leaves_cap,
						      .pending = O->open[d].pending,
						      .pending_cap = O->open[d].pending_cap };
	for (d = 0; d < n; d++) {
		struct open_slice *s = &O->open[d];

		s->end = end > s->end ? end : s->end;
		s->launches++;
		s->lv.line = lv[d].line;
		s->line_min = lv[d].line < s->line_min ? lv[d].line : s->line_min;
		s->line_max = lv[d].line > s->line_max ? lv[d].line : s->line_max;
		if (lv[d].line < 0 && !seen_leaf(s, stack)) {
			if (xp_array__reserve((void **)&s->leaves, &s->leaves_cap, s->nleaves + 1,
					      sizeof(*s->leaves), 4))
				return -ENOMEM;
			s->leaves[s->nleaves++] = stack;
		}
	}
	return 0;
}

/* The CUDA calls with a launch stack, thread by thread in time order. */
static int calls(struct ops *O)
{
	sqlite3_stmt *st;
	int rc = 0, step = SQLITE_DONE;

	if (xp_chrome_prepare(O->c, &st, "SELECT " XP_SQL_GTID_PID("r.globalTid") ", "
			      XP_SQL_GTID_TID("r.globalTid") ", r.start, r.end, (SELECT l.stack_id FROM"
			      " xp_launches l WHERE l.pid = " XP_SQL_GTID_PID("r.globalTid")
			      " AND l.correlation_id = r.correlationId AND +l.tid = "
			      XP_SQL_GTID_TID("r.globalTid") " LIMIT 1) AS stack"
			      " FROM CUPTI_ACTIVITY_KIND_RUNTIME r",
			      "r.globalTid IS NOT NULL", "r.start", XP_SQL_GTID_PID("r.globalTid"),
			      "r.globalTid, r.start, r.rowid"))
		return -EIO;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
		int64_t stack = sqlite3_column_int64(st, 4);

		if (stack <= 0)
			continue;
		if ((pid != O->pid || tid != O->tid) && (rc = close_from(O, 0)) < 0)
			break;
		O->pid = pid;
		O->tid = tid;
		rc = launch(O, stack, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
	}
	sqlite3_finalize(st);
	if (!rc)
		rc = close_from(O, 0);
	return rc ? rc : step == SQLITE_DONE ? 0 : -EIO;
}

int xp_chrome_op_slices(struct xp_chrome *c)
{
	struct ops O = { .c = c, .walk = xp_sites_walk(c->sites), .pid = -1, .tid = -1 };
	int rc;

	if (!(O.names = xp_strtab_new()))
		return -ENOMEM;
	xp_u64map_init(&O.path_at);
	rc = calls(&O);
	for (size_t d = 0; d < MAX_LEVELS; d++) {
		free(O.open[d].leaves);
		free(O.open[d].pending);
	}
	free(O.done);
	free(O.paths);
	free(O.levels);
	xp_u64map_free(&O.path_at);
	xp_strtab_free(O.names);
	return rc;
}
