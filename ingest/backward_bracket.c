/* backward_bracket.c - the forward line of an autograd node whose forward
 * op launched no GPU work (a view: ViewBackward0, SplitBackward0...), from
 * the launches of its forward thread that bracket its number (backward.h).
 *
 * The thread made the node after its last launch with seq_next <= the
 * node's number (B) and before its first launch with a higher one (A): the
 * op ran between them. Where B's and A's Python stacks are the same frames
 * at the same lines, the op ran at that line (it made no call of its own
 * that launched, and the line did not change in between). Where they share
 * only their outer frames, the op ran under the innermost shared line, in
 * the next frame's function between its two lines when both stacks go on
 * in the same function: an enclosing line, said so in the note, never
 * passed off as the line. Nothing shared: no line. */
#include "ingest/backward.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "db/db_schema.h"

/* the deepest Python stack compared; deeper ones are not used */
#define MAX_PY 256

static const char before_sql[] =
	"SELECT stack_id, ts FROM temp.xp_ag_launch WHERE pid = ?1 AND thread_id = ?2"
	" AND seq_next > 0 AND seq_next <= ?3 AND stack_id IS NOT NULL"
	" ORDER BY seq_next DESC, ts DESC LIMIT 1";
static const char after_sql[] =
	"SELECT stack_id, ts FROM temp.xp_ag_launch WHERE pid = ?1 AND thread_id = ?2"
	" AND seq_next > ?3 AND stack_id IS NOT NULL ORDER BY seq_next, ts LIMIT 1";
static const char walk_sql[] =
	"SELECT s.parent, s.frame, f.kind FROM xp_stacks s JOIN xp_frames f ON f.id = s.frame"
	" WHERE s.id = ?1";
/* a Python line's qualified name, file and line (db/pyframe.h) */
static const char sym_sql[] =
	"SELECT n.value, m.value, f.line FROM xp_frames f JOIN StringIds n ON n.id = f.symbol"
	" JOIN StringIds m ON m.id = f.module WHERE f.id = ?1 AND f.kind = 6 AND f.line >= 0";

int xp_bwbracket_open(sqlite3 *db, struct xp_bwbracket *b)
{
	memset(b, 0, sizeof(*b));
	if (sqlite3_prepare_v2(db, before_sql, -1, &b->before, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, after_sql, -1, &b->after, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, walk_sql, -1, &b->walk, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, sym_sql, -1, &b->sym, NULL) != SQLITE_OK)
		return -EIO;
	return 0;
}

void xp_bwbracket_close(struct xp_bwbracket *b)
{
	sqlite3_finalize(b->before);
	sqlite3_finalize(b->after);
	sqlite3_finalize(b->walk);
	sqlite3_finalize(b->sym);
	memset(b, 0, sizeof(*b));
}

/* The launch around the node (st: before or after): its stack, 0 if none. */
static int64_t around(sqlite3_stmt *st, int64_t pid, int64_t thread, int64_t seq, int64_t *ts)
{
	int64_t stack = 0;

	sqlite3_bind_int64(st, 1, pid);
	sqlite3_bind_int64(st, 2, thread);
	sqlite3_bind_int64(st, 3, seq);
	if (sqlite3_step(st) == SQLITE_ROW) {
		stack = sqlite3_column_int64(st, 0);
		*ts = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	return stack;
}

/* The Python frames of a stack, root first: how many, 0 when deeper than
 * MAX_PY, -EIO. */
static int py_frames(struct xp_bwbracket *b, int64_t stack, int64_t *out)
{
	int64_t leaf_first[MAX_PY];
	int n = 0, depth = 0;

	while (stack > 0 && depth++ < 4096) {
		sqlite3_bind_int64(b->walk, 1, stack);
		if (sqlite3_step(b->walk) != SQLITE_ROW) {
			sqlite3_reset(b->walk);
			return -EIO;
		}
		if (sqlite3_column_int(b->walk, 2) == XP_FRAME_PYTHON) {
			if (n == MAX_PY) {
				sqlite3_reset(b->walk);
				return 0;
			}
			leaf_first[n++] = sqlite3_column_int64(b->walk, 1);
		}
		stack = sqlite3_column_int64(b->walk, 0);
		sqlite3_reset(b->walk);
	}
	for (int i = 0; i < n; i++)
		out[i] = leaf_first[n - 1 - i];
	return n;
}

/* The note of an enclosing line: the function both stacks go on in and
 * its two lines, when they name one (fb, fa: their next frames). */
static void enclosing_note(struct xp_bwbracket *b, const char *node, int64_t fb, int64_t fa,
			   char *note, size_t len)
{
	char qb[512] = "", fileb[1024] = "";
	int lb = 0;

	snprintf(note, len, "%s, made somewhere under this line (no launch of its own)", node);
	if (!fb || !fa)
		return;
	sqlite3_bind_int64(b->sym, 1, fb);
	if (sqlite3_step(b->sym) == SQLITE_ROW) {
		snprintf(qb, sizeof(qb), "%s", (const char *)sqlite3_column_text(b->sym, 0) ?: "");
		snprintf(fileb, sizeof(fileb), "%s", (const char *)sqlite3_column_text(b->sym, 1) ?: "");
		lb = sqlite3_column_int(b->sym, 2);
	}
	sqlite3_reset(b->sym);
	sqlite3_bind_int64(b->sym, 1, fa);
	if (qb[0] && sqlite3_step(b->sym) == SQLITE_ROW &&
	    !strcmp((const char *)sqlite3_column_text(b->sym, 0) ?: "", qb) &&
	    !strcmp((const char *)sqlite3_column_text(b->sym, 1) ?: "", fileb))
		snprintf(note, len, "%s, made in %s between lines %d and %d (no launch of its own)",
			 node, qb, lb, sqlite3_column_int(b->sym, 2));
	sqlite3_reset(b->sym);
}

int xp_bwbracket_find(struct xp_bwbracket *b, int64_t pid, int64_t thread, int64_t seq,
		      const char *node, struct xp_bwbracket_line *out)
{
	int64_t sb, sa, ta = 0, pyb[MAX_PY], pya[MAX_PY];
	int nb, na, k = 0;

	if (!(sb = around(b->before, pid, thread, seq, &out->before_ts)) ||
	    !(sa = around(b->after, pid, thread, seq, &ta)))
		return 0;
	if ((nb = py_frames(b, sb, pyb)) < 0 || (na = py_frames(b, sa, pya)) < 0)
		return -EIO;
	while (k < nb && k < na && pyb[k] == pya[k])
		k++;
	if (!k)
		return 0;
	memcpy(out->frames, pyb, (size_t)k * sizeof(*pyb));
	out->n = k;
	out->exact = k == nb && k == na;
	if (out->exact)
		snprintf(out->note, sizeof(out->note), "%s, between two launches of this line", node);
	else
		enclosing_note(b, node, k < nb ? pyb[k] : 0, k < na ? pya[k] : 0, out->note,
			       sizeof(out->note));
	return 1;
}
