/* backward_join.c - each backward launch re-stacked under the forward
 * launch that made its node (backward.h says why the numbers join). */
#include "ingest/backward.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "db/stackwriter.h"
#include "src/u64map.h"

/* Every autograd record with its launch; per (process, forward thread,
 * node number) the first launch after the node was made. */
static const char prepare_sql[] =
	"CREATE TEMP TABLE xp_ag_launch AS SELECT a.rowid AS ag, l.id AS launch, l.ts AS ts, l.tid AS tid,"
	" l.stack_id AS stack_id, a.pid AS pid, a.thread_id AS thread_id, a.seq_next AS seq_next,"
	" a.node AS node, a.node_seq AS node_seq, a.node_thread AS node_thread"
	" FROM xp_autograd a JOIN xp_launches l ON l.pid = a.pid AND l.correlation_id = a.correlation_id;"
	"CREATE TEMP TABLE xp_ag_fwd AS SELECT pid, thread_id, seq_next - 1 AS seq, launch, stack_id,"
	" min(ts) AS ts FROM temp.xp_ag_launch WHERE thread_id != 0 AND seq_next > 0"
	" AND stack_id IS NOT NULL GROUP BY pid, thread_id, seq_next;"
	"CREATE INDEX temp.xp_ag_fwd_key ON xp_ag_fwd(pid, thread_id, seq);"
	"CREATE INDEX temp.xp_ag_launch_seq ON xp_ag_launch(pid, thread_id, seq_next, ts);";

/* in time order on each thread: an AccumulateGrad runs right after the
 * node that produced its gradient */
static const char backward_sql[] =
	"SELECT x.ag, x.launch, x.node, x.node_seq, x.stack_id, f.launch, f.stack_id,"
	" EXISTS (SELECT 1 FROM temp.xp_ag_fwd t WHERE t.pid = x.pid AND t.thread_id = x.node_thread),"
	" x.pid, x.tid, x.ts, f.ts, x.node_thread FROM temp.xp_ag_launch x LEFT JOIN temp.xp_ag_fwd f ON f.pid = x.pid"
	" AND f.thread_id = x.node_thread AND f.seq = x.node_seq WHERE x.node IS NOT NULL"
	" ORDER BY x.pid, x.tid, x.ts, x.launch";

enum { GET_NODE, GET_SYM, GET_PY, SET_LAUNCH, SET_ROW, NSTMT };

static const char *const stmt_sql[NSTMT] = {
	[GET_NODE] = "SELECT parent, frame FROM xp_stacks WHERE id = ?1",
	[GET_SYM] = "SELECT s.parent, s.frame, n.value FROM xp_stacks s JOIN xp_frames f ON f.id = s.frame"
		    " JOIN StringIds n ON n.id = f.symbol WHERE s.id = ?1",
	[GET_PY] = "SELECT s.parent, f.kind, n.value, m.value FROM xp_stacks s JOIN xp_frames f"
		   " ON f.id = s.frame JOIN StringIds n ON n.id = f.symbol LEFT JOIN StringIds m"
		   " ON m.id = f.module WHERE s.id = ?1",
	[SET_LAUNCH] = "UPDATE xp_launches SET stack_id = ?1 WHERE id = ?2",
	[SET_ROW] = "UPDATE xp_autograd SET forward_launch = ?1, unknown = ?2, how = ?4"
		    " WHERE rowid = ?3",
};

struct joiner {
	sqlite3 *db;
	sqlite3_stmt *st[NSTMT];
	struct xp_stackwriter *w;   /* the note frames and the new nodes, each once */
	int64_t module;             /* "[autograd]" */
	struct xp_u64map own_ops;   /* (launch's own stack, 0) -> its op's frame + 1 (1: none) */
	struct xp_u64map applies;   /* (forward stack, 0) -> its Function.apply's stack node */
	struct xp_u64map inside;    /* (forward stack, 0) -> the Python frame apply called + 1 */
	struct xp_u64map comms;     /* (launch's own stack, 0) -> 2: a DDP bucket's, 1: not */
	struct xp_bwcallers *callers;   /* the lines that called backward() */
	struct xp_bwbracket bracket;    /* views: the launches around their number */
	struct {                    /* the latest node at a forward line, per thread */
		int64_t pid, tid, launch, stack, ts;
		char node[160];
	} prev;
};

/* An UPDATE stepped: 0, or -EIO (sqlite3_errmsg says why). Every function
 * below returns an id, a count or 0, or a negative errno: -EIO from the
 * database, -ENOMEM from a map or an array, -ENOENT for a stack node the
 * database lacks. */
static int update(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The note frame "‹backward: NODE›", made once per node name. */
static int64_t note_frame(struct joiner *J, const char *node)
{
	char text[160];
	int64_t sym, frame;
	int err;

	snprintf(text, sizeof(text), "\u2039backward: %s\u203a", node);
	if ((err = xp_stackwriter_string(J->w, text, strlen(text), &sym, NULL)) ||
	    (err = xp_stackwriter_frame(J->w, &(struct xp_frame_key){ .symbol = sym, .module = J->module,
					.kind = XP_FRAME_NOTE }, &frame, NULL)))
		return err;
	return frame;
}

/* The stack node of frame under stack's leaf (0: a root), made once per
 * pair. A root is at depth 0, as this join has always written it, where
 * xpcorr-db(5) and the loader count from 1; the nodes under it follow. */
static int64_t under_leaf(struct joiner *J, int64_t stack, int64_t frame)
{
	int64_t node;
	int err = stack ? xp_stackwriter_child(J->w, stack, frame, &node)
			: xp_stackwriter_node(J->w, 0, frame, 0, &node, NULL);

	return err ? err : node;
}

/* The forward stack with the note of its backward() call as its root (the
 * stack's frames copied under it; the tree shares the copies). */
static int64_t under_caller(struct joiner *J, int64_t note, int64_t stack)
{
	int64_t *frames = NULL, node = 0;
	size_t n = 0, cap = 0;

	while (stack > 0 && n < 4096) {
		sqlite3_stmt *get = J->st[GET_NODE];

		sqlite3_bind_int64(get, 1, stack);
		if (sqlite3_step(get) != SQLITE_ROW) {
			sqlite3_reset(get);
			free(frames);
			return -EIO;
		}
		if (xp_array__reserve((void **)&frames, &cap, n + 1, sizeof(*frames), 64)) {
			sqlite3_reset(get);
			free(frames);
			return -ENOMEM;
		}
		frames[n++] = sqlite3_column_int64(get, 1);
		stack = sqlite3_column_int64(get, 0);
		sqlite3_reset(get);
	}
	node = under_leaf(J, 0, note);
	while (node > 0 && n)
		node = under_leaf(J, node, frames[--n]);
	free(frames);
	return node;
}

/* A PyTorch dispatcher frame, "at::_ops::mm::call(...)": the op a launch
 * ran in (export's xp_framework_op reads the same frames). */
static int is_op_frame(const char *sym)
{
	const char *end;

	if (!sym || strncmp(sym, "at::_ops::", 10) || !(end = strstr(sym + 10, "::")))
		return 0;
	return !strncmp(end, "::call(", 7) || !strncmp(end, "::redispatch(", 13);
}

/* The innermost op frame of a backward launch's own stack (the engine
 * thread's: aten::mm under AddmmBackward0), 0 if none, or -errno; once
 * per stack. */
static int64_t own_op_frame(struct joiner *J, int64_t stack)
{
	sqlite3_stmt *get = J->st[GET_SYM];
	int64_t frame = 0, id = stack;
	uint64_t *slot;
	int fresh, depth = 0;

	if (xp_u64map_upsert(&J->own_ops, (uint64_t)stack, 0, &slot, &fresh))
		return -ENOMEM;
	if (!fresh)
		return (int64_t)*slot - 1;
	while (id > 0 && !frame && depth++ < 4096) {
		sqlite3_bind_int64(get, 1, id);
		if (sqlite3_step(get) != SQLITE_ROW) {
			sqlite3_reset(get);
			return -EIO;
		}
		if (is_op_frame((const char *)sqlite3_column_text(get, 2)))
			frame = sqlite3_column_int64(get, 1);
		id = sqlite3_column_int64(get, 0);
		sqlite3_reset(get);
	}
	*xp_u64map_find(&J->own_ops, (uint64_t)stack, 0) = (uint64_t)frame + 1;
	return frame;
}

/* DDP's reducer (c10d::Reducer) runs in AccumulateGrad's hook on the engine
 * thread, under that node: it copies the gradient into its bucket (that
 * gradient's work: the node's line, as any AccumulateGrad's) and, once a
 * bucket is full, all-reduces the whole bucket (NCCL, or gloo's copies to
 * the host): work of every parameter in the bucket, made by no forward op,
 * so at no forward line. 1 when the launch's own stack is a bucket's
 * all-reduce, 0 if not, or -errno; once per stack. */
static int bucket_comm(struct joiner *J, int64_t stack)
{
	sqlite3_stmt *get = J->st[GET_SYM];
	int64_t id = stack;
	uint64_t *slot;
	int fresh, depth = 0, found = 0;

	if (xp_u64map_upsert(&J->comms, (uint64_t)stack, 0, &slot, &fresh))
		return -ENOMEM;
	if (!fresh)
		return *slot == 2;
	while (id > 0 && !found && depth++ < 4096) {
		const char *sym;

		sqlite3_bind_int64(get, 1, id);
		if (sqlite3_step(get) != SQLITE_ROW) {
			sqlite3_reset(get);
			return -EIO;
		}
		sym = (const char *)sqlite3_column_text(get, 2);
		found = sym && !strncmp(sym, "c10d::Reducer::all_reduce_bucket(", 33);
		id = sqlite3_column_int64(get, 0);
		sqlite3_reset(get);
	}
	*xp_u64map_find(&J->comms, (uint64_t)stack, 0) = found ? 2 : 1;
	return found;
}

static int ends_with(const char *s, const char *tail)
{
	size_t a = s ? strlen(s) : 0, b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

/* A PyNode (a Python autograd.Function's node: torch.compile's
 * CompiledFunctionBackward, or the program's own) is made by
 * Function.apply, whose forward may launch many kernels: the node belongs
 * to that call, not to its first launch, so its forward stack ends at the
 * innermost Function.apply frame (torch/autograd/function.py). The stack
 * itself when it has none, or -errno; once per stack. *inner: the
 * Python frame apply called (the Function's forward), 0 if none. */
static int64_t at_apply(struct joiner *J, int64_t stack, int64_t *inner)
{
	sqlite3_stmt *get = J->st[GET_PY];
	int64_t id = stack, cut = 0, py = 0;
	uint64_t *slot;
	int fresh, depth = 0;

	if (xp_u64map_upsert(&J->applies, (uint64_t)stack, 0, &slot, &fresh))
		return -ENOMEM;
	if (!fresh) {
		uint64_t *in = xp_u64map_find(&J->inside, (uint64_t)stack, 0);

		*inner = in ? (int64_t)*in - 1 : 0;
		return (int64_t)*slot;
	}
	while (id > 0 && !cut && depth++ < 4096) {
		sqlite3_bind_int64(get, 1, id);
		if (sqlite3_step(get) != SQLITE_ROW) {
			sqlite3_reset(get);
			return -EIO;
		}
		if (sqlite3_column_int(get, 1) == XP_FRAME_PYTHON) {
			if (!strcmp((const char *)sqlite3_column_text(get, 2) ?: "", "Function.apply") &&
			    ends_with((const char *)sqlite3_column_text(get, 3), "/torch/autograd/function.py"))
				cut = id;
			else
				py = id;
		}
		id = sqlite3_column_int64(get, 0);
		sqlite3_reset(get);
	}
	*inner = cut ? py : 0;
	*xp_u64map_find(&J->applies, (uint64_t)stack, 0) = (uint64_t)(cut ? cut : stack);
	if (xp_u64map_upsert(&J->inside, (uint64_t)stack, 0, &slot, &fresh))
		return -ENOMEM;
	*slot = (uint64_t)*inner + 1;
	return cut ? cut : stack;
}

/* PyTorch names a Function's backward node after its class, "XBackward"
 * (torch/autograd/function.py's FunctionMeta): from the qualified name of
 * the forward frame that apply called, "...CompiledFunction.forward"
 * (db/pyframe.h), into name; unchanged when that frame is no X.forward. */
static void function_node_name(struct joiner *J, int64_t inner, char *name, size_t len)
{
	sqlite3_stmt *get = J->st[GET_SYM];
	const char *sym, *end, *cls;

	if (inner <= 0)
		return;
	sqlite3_bind_int64(get, 1, inner);
	if (sqlite3_step(get) == SQLITE_ROW && (sym = (const char *)sqlite3_column_text(get, 2)) &&
	    ends_with(sym, ".forward")) {
		end = sym + strlen(sym) - strlen(".forward");
		for (cls = end; cls > sym && cls[-1] != '.'; cls--)
			;
		if (end > cls)
			snprintf(name, len, "%.*sBackward", (int)(end - cls), cls);
	}
	sqlite3_reset(get);
}

/* Why a backward launch has no forward launch, in the words info shows. */
static const char *unknown_reason(int64_t node_seq, int thread_has_forward)
{
	if (node_seq == -1)
		return "AccumulateGrad (a parameter's gradient, made by no forward op) with no"
		       " node at a forward line before it on its thread";
	if (!thread_has_forward)
		return "the node's forward thread has no launch with a sequence number";
	return "no launch came between the node's making and the next node's"
	       " (its forward op launched no GPU work)";
}

/* An AccumulateGrad (no forward op made it) takes the forward launch of the
 * node before it on its thread, which produced the gradient it adds: the
 * engine runs it first (its number is the highest) as soon as that node's
 * outputs are in. 1 when there is one. */
static int producer(struct joiner *J, sqlite3_stmt *row, const char *node, char *note, size_t len,
		    int64_t *launch, int64_t *stack)
{
	if (sqlite3_column_int64(row, 3) != -1 || !J->prev.stack ||
	    J->prev.pid != sqlite3_column_int64(row, 8) || J->prev.tid != sqlite3_column_int64(row, 9))
		return 0;
	snprintf(note, len, "%s from %s", node, J->prev.node);
	*launch = J->prev.launch;
	*stack = J->prev.stack;
	return 1;
}

/* The row's outcome: its forward launch (if any) and how its line was
 * found, or why there is none (how NULL: why, or the reason of its node). */
static int set_row(struct joiner *J, sqlite3_stmt *row, int64_t forward, const char *how,
		   const char *why)
{
	sqlite3_stmt *set = J->st[SET_ROW];

	if (forward)
		sqlite3_bind_int64(set, 1, forward);
	if (how) {
		sqlite3_bind_text(set, 4, how, -1, SQLITE_STATIC);
	} else {
		sqlite3_bind_text(set, 2, why ? why : unknown_reason(sqlite3_column_int64(row, 3),
								   sqlite3_column_int(row, 7)),
				  -1, SQLITE_STATIC);
	}
	sqlite3_bind_int64(set, 3, sqlite3_column_int64(row, 0));
	if (update(set))
		return -EIO;
	sqlite3_clear_bindings(set);
	return 0;
}

/* A node whose forward op launched nothing: the Python frames the launches
 * around its number share (backward_bracket.c), as a stack; 1 when found,
 * 0 if not, or -errno. */
static int bracketed(struct joiner *J, sqlite3_stmt *row, const char *node, char *note, size_t len,
		     int64_t *stack, int64_t *ts, const char **how)
{
	struct xp_bwbracket_line b;
	int64_t node_stack = 0;
	int r;

	if (sqlite3_column_int64(row, 3) < 0 || !sqlite3_column_int(row, 7))
		return 0;
	r = xp_bwbracket_find(&J->bracket, sqlite3_column_int64(row, 8), sqlite3_column_int64(row, 12),
			      sqlite3_column_int64(row, 3), node, &b);
	if (r <= 0)
		return r;
	for (int i = 0; i < b.n && node_stack >= 0; i++)
		node_stack = under_leaf(J, node_stack, b.frames[i]);
	if (node_stack <= 0)
		return node_stack < 0 ? (int)node_stack : -EIO;
	snprintf(note, len, "%s", b.note);
	*stack = node_stack;
	*ts = b.before_ts;
	*how = b.exact ? "between" : "enclosing";
	return 1;
}

/* The latest node at a forward line of this engine thread, for the
 * AccumulateGrads after it (producer). */
static void remember(struct joiner *J, sqlite3_stmt *row, const char *note, int64_t forward,
		     int64_t stack, int64_t ts)
{
	J->prev.pid = sqlite3_column_int64(row, 8);
	J->prev.tid = sqlite3_column_int64(row, 9);
	J->prev.launch = forward;
	J->prev.stack = stack;
	J->prev.ts = ts;
	snprintf(J->prev.node, sizeof(J->prev.node), "%s", note);
}

/* A step's failure as an errno: its own, or -EIO for a stack node id of 0
 * (no row made). */
static int failed(int64_t r)
{
	return r < 0 ? (int)r : -EIO;
}

/* A DDP bucket's all-reduce (bucket_comm): its own stack (the reducer's
 * frames, its "[DDP bucket K]" note) under the line that called backward()
 * and over the note of the node whose hook ran it; no forward line. */
static int bucket_one(struct joiner *J, sqlite3_stmt *row, const char *node, int64_t own)
{
	int64_t pid = sqlite3_column_int64(row, 8), base = own, caller, frame, stack;
	int same = J->prev.pid == pid && J->prev.tid == sqlite3_column_int64(row, 9);
	char note[200];

	if (set_row(J, row, 0, NULL, "DDP's reducer: a gradient bucket's all-reduce, launched"
		    " from AccumulateGrad's hook; no forward op made it"))
		return -EIO;
	if ((caller = xp_bwcallers_at(J->callers, pid, same ? J->prev.ts : 0,
				      sqlite3_column_int64(row, 10))) &&
	    (base = under_caller(J, caller, own)) <= 0)
		return failed(base);
	snprintf(note, sizeof(note), "%s, DDP reducer hook", node);
	if ((frame = note_frame(J, note)) < 0)
		return failed(frame);
	if ((stack = under_leaf(J, base, frame)) <= 0)
		return failed(stack);
	sqlite3_bind_int64(J->st[SET_LAUNCH], 1, stack);
	sqlite3_bind_int64(J->st[SET_LAUNCH], 2, sqlite3_column_int64(row, 1));
	return update(J->st[SET_LAUNCH]);
}

/* One backward launch: its new stack and its row's outcome. */
static int join_one(struct joiner *J, sqlite3_stmt *row)
{
	int64_t launch = sqlite3_column_int64(row, 1), forward = 0, base = 0, frame, stack, caller;
	int64_t op = 0, own = sqlite3_column_type(row, 4) != SQLITE_NULL ? sqlite3_column_int64(row, 4) : 0;
	int64_t fwd_ts = 0;
	const char *node = (const char *)sqlite3_column_text(row, 2), *how = "node";
	char note[200];
	int joined = sqlite3_column_type(row, 6) != SQLITE_NULL, comm;

	snprintf(note, sizeof(note), "%s", node ? node : "?");
	if (own > 0 && (comm = bucket_comm(J, own)))
		return comm < 0 ? comm : bucket_one(J, row, note, own);
	if (joined) {
		forward = sqlite3_column_int64(row, 5);
		base = sqlite3_column_int64(row, 6);
		fwd_ts = sqlite3_column_int64(row, 11);
		if (node && !strcmp(node, "PyNode")) {
			int64_t inner;

			if ((base = at_apply(J, base, &inner)) < 0)
				return failed(base);
			function_node_name(J, inner, note, sizeof(note));
		}
		remember(J, row, note, forward, base, fwd_ts);
	} else if ((joined = producer(J, row, node ? node : "?", note, sizeof(note), &forward, &base))) {
		how = "producer";
		fwd_ts = J->prev.ts;
	} else if ((joined = bracketed(J, row, node ? node : "?", note, sizeof(note), &base, &fwd_ts,
				       &how))) {
		if (joined < 0)
			return joined;
		remember(J, row, note, 0, base, fwd_ts);
	} else {
		base = own;
		how = NULL;
	}
	if (set_row(J, row, forward, how, NULL))
		return -EIO;
	if (!base)
		return 0;           /* a launch without a stack stays without one */
	if (how && (caller = xp_bwcallers_at(J->callers, sqlite3_column_int64(row, 8), fwd_ts,
					     sqlite3_column_int64(row, 10))) &&
	    (base = under_caller(J, caller, base)) <= 0)
		return failed(base);
	if ((frame = note_frame(J, note)) < 0)
		return failed(frame);
	if ((stack = under_leaf(J, base, frame)) <= 0)
		return failed(stack);
	/* the op it ran in stays its innermost op (--by op): under the note */
	if (base != own && own > 0 && (op = own_op_frame(J, own)) < 0)
		return failed(op);
	if (base != own && own > 0 && op && (stack = under_leaf(J, stack, op)) <= 0)
		return failed(stack);
	sqlite3_bind_int64(J->st[SET_LAUNCH], 1, stack);
	sqlite3_bind_int64(J->st[SET_LAUNCH], 2, launch);
	return update(J->st[SET_LAUNCH]) ? -EIO : joined;
}

static int join_all(struct joiner *J)
{
	sqlite3_stmt *rows;
	int rc, err = 0, joined = 0;

	for (int i = 0; i < NSTMT; i++)
		if (sqlite3_prepare_v2(J->db, stmt_sql[i], -1, &J->st[i], NULL) != SQLITE_OK)
			return -EIO;
	if ((err = xp_stackwriter_open(J->db, &J->w)) ||
	    (err = xp_stackwriter_string(J->w, "[autograd]", 10, &J->module, NULL)))
		return err;
	if ((err = xp_bwcallers_load(J->db, J->w, J->module, &J->callers)))
		return err;
	if (xp_bwbracket_open(J->db, &J->bracket))
		return -EIO;
	if (sqlite3_prepare_v2(J->db, backward_sql, -1, &rows, NULL) != SQLITE_OK)
		return -EIO;
	while (!err && (rc = sqlite3_step(rows)) == SQLITE_ROW) {
		err = join_one(J, rows);
		joined += err > 0;
		err = err > 0 ? 0 : err;
	}
	if (!err && rc != SQLITE_DONE)
		err = -EIO;
	sqlite3_finalize(rows);
	return err ? err : joined;
}

int xp_autograd_join(sqlite3 *db)
{
	struct joiner J = { .db = db };
	sqlite3_stmt *any;
	int has, r;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM xp_autograd WHERE node IS NOT NULL LIMIT 1", -1,
			       &any, NULL) != SQLITE_OK)
		return -EIO;
	has = sqlite3_step(any) == SQLITE_ROW;
	sqlite3_finalize(any);
	if (!has)
		return 0;
	if (sqlite3_exec(db, prepare_sql, NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	xp_u64map_init(&J.own_ops);
	xp_u64map_init(&J.applies);
	xp_u64map_init(&J.inside);
	xp_u64map_init(&J.comms);
	r = join_all(&J);
	for (int i = 0; i < NSTMT; i++)
		sqlite3_finalize(J.st[i]);
	xp_stackwriter_close(J.w);
	xp_u64map_free(&J.own_ops);
	xp_u64map_free(&J.applies);
	xp_u64map_free(&J.inside);
	xp_u64map_free(&J.comms);
	xp_bwcallers_free(J.callers);
	xp_bwbracket_close(&J.bracket);
	sqlite3_exec(db, "DROP TABLE temp.xp_ag_launch; DROP TABLE temp.xp_ag_fwd;", NULL, NULL, NULL);
	return r;
}
