/* backward_caller.c - the line that called backward() (or autograd.grad)
 * for a backward launch: the outer frame of its stack (backward.h).
 *
 * backward() starts the pass on the forward thread, and its Python frames
 * (torch/_tensor.py's Tensor.backward, torch/autograd/__init__.py's
 * backward or grad) are on that thread's launches made inside it (the
 * fill of the initial gradient): the Python frame that called them is the
 * program's line. A backward launch takes the latest such call of its
 * process made after its forward launch (a call before the forward op ran
 * belongs to an earlier pass). */
#include "ingest/backward.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "db/stackwalk.h"
#include "db/stackwriter.h"
#include "src/u64map.h"

struct call {
	int64_t pid, ts, frame;     /* frame: the note "[backward() at LINE]" */
};

struct xp_bwcallers {
	struct call *v;
	size_t n, cap;
};

static int ends_with(const char *s, const char *tail)
{
	size_t a = s ? strlen(s) : 0, b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

/* A Python frame of autograd's entry points (or of the module around them). */
static int autograd_entry(const struct xp_frame_row *f)
{
	return f->kind == XP_FRAME_PYTHON && f->module &&
	       (ends_with(f->module, "/torch/_tensor.py") ||
		ends_with(f->module, "/torch/autograd/__init__.py") ||
		ends_with(f->module, "/torch/autograd/graph.py"));
}

/* The caller's line of a stack that runs backward(), into line; 0: none. */
static int caller_line(struct xp_stackwalk *w, int64_t stack, char *line, size_t len)
{
	struct xp_frame_row f;
	int inside = 0, found = 0;

	while (!found && xp_stackwalk_next(w, &stack, &f)) {
		if (f.kind != XP_FRAME_PYTHON)
			continue;
		if (autograd_entry(&f))
			inside = 1;
		else if (inside && f.sym)
			found = snprintf(line, len, "[backward() at %s]", f.sym) > 0;
	}
	xp_stackwalk_done(w);
	return found;
}

/* The note frame of a stack's caller line (made once per stack, not per
 * line: stacks that share a line have a note each, as they always had),
 * 0: none, -ENOMEM or -EIO. */
static int64_t stack_note(struct xp_stackwriter *sw, struct xp_stackwalk *w, struct xp_u64map *seen,
			  int64_t module, int64_t stack)
{
	char line[400];
	uint64_t *slot;
	int64_t f;
	int fresh, err;

	if (xp_u64map_upsert(seen, (uint64_t)stack, 0, &slot, &fresh))
		return -ENOMEM;
	if (!fresh)
		return (int64_t)*slot;
	*slot = 0;
	if (!caller_line(w, stack, line, sizeof(line)))
		return 0;
	if ((err = xp_stackwriter_new_note(sw, line, module, &f)))
		return err;
	*xp_u64map_find(seen, (uint64_t)stack, 0) = (uint64_t)f;
	return f;
}

int xp_bwcallers_load(sqlite3 *db, struct xp_stackwriter *sw, int64_t module,
		      struct xp_bwcallers **out)
{
	struct xp_bwcallers *c = calloc(1, sizeof(*c));
	struct xp_stackwalk *w = NULL;
	struct xp_u64map seen;
	sqlite3_stmt *st = NULL;
	int rc = 0, step;

	xp_u64map_init(&seen);
	if (!c || xp_stackwalk_open(db, &w) ||
	    sqlite3_prepare_v2(db, "SELECT l.pid, l.ts, l.stack_id FROM xp_autograd a JOIN xp_launches l"
			       " ON l.pid = a.pid AND l.correlation_id = a.correlation_id"
			       " WHERE a.node IS NULL AND l.stack_id IS NOT NULL ORDER BY l.pid, l.ts",
			       -1, &st, NULL) != SQLITE_OK)
		rc = c ? -EIO : -ENOMEM;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t f = stack_note(sw, w, &seen, module, sqlite3_column_int64(st, 2));

		if (f < 0)
			rc = (int)f;
		else if (f && !(rc = xp_array__reserve((void **)&c->v, &c->cap, c->n + 1,
						       sizeof(*c->v), 64)))
			c->v[c->n++] = (struct call){ sqlite3_column_int64(st, 0),
						      sqlite3_column_int64(st, 1), f };
	}
	sqlite3_finalize(st);
	xp_stackwalk_close(w);
	xp_u64map_free(&seen);
	if (rc) {
		xp_bwcallers_free(c);
		c = NULL;
	}
	*out = c;
	return rc;
}

int64_t xp_bwcallers_at(const struct xp_bwcallers *c, int64_t pid, int64_t after, int64_t ts)
{
	size_t lo = 0, hi = c ? c->n : 0;

	/* the last call of (pid, <= ts): the calls are in (pid, ts) order */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->v[mid].pid < pid || (c->v[mid].pid == pid && c->v[mid].ts <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || c->v[lo - 1].pid != pid || c->v[lo - 1].ts < after)
		return 0;
	return c->v[lo - 1].frame;
}

void xp_bwcallers_free(struct xp_bwcallers *c)
{
	if (c)
		free(c->v);
	free(c);
}
