/* runinfo_pysamples.c - `xpcorr info` on the CPU samples of Python threads:
 * a thread whose stacks run the interpreter (_PyEval_EvalFrameDefault) but
 * carry no Python frame was sampled blind (which function, which line is
 * unknown); say how many samples, on which processes, as a warning. */
#include "export/runinfo/runinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/stacktable.h"
#include "src/array.h"

struct eval_frames {
	uint8_t *eval;              /* by frame place (stacktable.h): the interpreter's
				     * frame evaluator */
	size_t n;                   /* entries of eval */
};

/* The table's load gives each frame's place (below its count of frames). */
static int mark_eval(void *ctx, int64_t place, const char *symbol, const char *module,
		     unsigned frame_class)
{
	struct eval_frames *e = ctx;
	size_t cap = e->n;

	(void)module;
	(void)frame_class;
	if (place < 0 || !symbol || strncmp(symbol, "_PyEval_EvalFrameDefault", 24))
		return 0;
	if ((size_t)place >= e->n) {
		if (xp_array__reserve((void **)&e->eval, &cap, (size_t)place + 1, 1, 256))
			return -ENOMEM;
		memset(e->eval + e->n, 0, cap - e->n);
		e->n = cap;
	}
	e->eval[place] = 1;
	return 0;
}

/* 1: the stack runs the interpreter, 2: has a Python frame, 3: both. */
static int stack_kind(const struct xp_stack_table *t, const struct eval_frames *e, int64_t id)
{
	int64_t node = xp_stack_table_node(t, id);
	int kind = 0;

	for (int d = 0; node > 0 && node < t->nnodes && d < 4096; d++) {
		int64_t f = t->frame[node];

		if (f > 0 && f < t->nframes && (t->frame_class[f] & XP_FRAME_IS_PYTHON))
			kind |= 2;
		else if (f > 0 && (size_t)f < e->n && e->eval[f])
			kind |= 1;
		if (t->parent[node] >= node)
			break;
		node = t->parent[node];
	}
	return kind;
}

static int interpreter_ran(sqlite3 *db)
{
	sqlite3_stmt *st;
	int yes = 0;

	if (sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM xp_frames f JOIN StringIds s"
			       " ON s.id = f.symbol WHERE s.value GLOB '_PyEval_EvalFrameDefault*')",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		yes = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return yes;
}

/* Per thread: samples, of which running the interpreter with no Python frame. */
struct blind {
	uint64_t samples, blind, threads, blind_threads, python_samples;
	uint64_t blind_thread_samples, blind_thread_python;    /* of the threads with blind ones */
	int64_t pid[4];             /* the first processes with blind samples */
	int npid;
};

static void add_thread(struct blind *b, int64_t pid, uint64_t all, uint64_t blind, uint64_t py,
		       int python)
{
	if (!python)
		return;
	b->threads++;
	b->samples += all;
	b->blind += blind;
	b->python_samples += py;
	if (!blind)
		return;
	b->blind_threads++;
	b->blind_thread_samples += all;
	b->blind_thread_python += py;
	for (int i = 0; i < b->npid; i++)
		if (b->pid[i] == pid)
			return;
	if (b->npid < 4)
		b->pid[b->npid++] = pid;
}

/* Samples per thread into b: 0, or -EIO (sqlite3_errmsg). */
static int count(sqlite3 *db, const struct xp_stack_table *t, const struct eval_frames *e,
		 struct blind *b)
{
	sqlite3_stmt *st;
	int64_t pid = -1, tid = -1;
	uint64_t all = 0, blind = 0, py = 0;
	int python = 0, rc;

	if (sqlite3_prepare_v2(db, "SELECT pid, tid, stack_id, count(*) FROM xp_samples"
			       " GROUP BY 1, 2, 3", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0), th = sqlite3_column_int64(st, 1);
		uint64_t k = (uint64_t)sqlite3_column_int64(st, 3);
		int kind = stack_kind(t, e, sqlite3_column_int64(st, 2));

		if (p != pid || th != tid) {
			add_thread(b, pid, all, blind, py, python);
			pid = p;
			tid = th;
			all = blind = py = 0;
			python = 0;
		}
		all += k;
		blind += kind == 1 ? k : 0;
		py += kind & 2 ? k : 0;
		python |= kind != 0;
	}
	add_thread(b, pid, all, blind, py, python);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Whether any sampled stack runs the interpreter with no Python frame: one
 * pass over the distinct stacks (an index), where counting per thread
 * sorts every sample (1 s at 1M). */
static int any_blind(sqlite3 *db, const struct xp_stack_table *t, const struct eval_frames *e)
{
	sqlite3_stmt *st;
	int yes = 0;

	if (sqlite3_prepare_v2(db, "SELECT DISTINCT stack_id FROM xp_samples", -1, &st, NULL)
	    != SQLITE_OK)
		return 0;
	while (!yes && sqlite3_step(st) == SQLITE_ROW)
		yes = stack_kind(t, e, sqlite3_column_int64(st, 0)) == 1;
	sqlite3_finalize(st);
	return yes;
}

void xp_info_python_samples(sqlite3 *db, json_t *info)
{
	struct xp_stack_table t;
	struct eval_frames e = { 0 };
	struct blind b = { 0 };
	json_t *w = json_object_get(info, "warnings"), *o, *row;
	char msg[512], pids[64] = "";
	int n = 0;

	/* a run with no interpreter frame has no Python thread to warn of */
	if (!interpreter_ran(db))
		return;
	if (xp_stack_table_load(db, mark_eval, &e, &t) < 0) {
		free(e.eval);
		return;
	}
	if (any_blind(db, &t, &e) && count(db, &t, &e, &b) == 0 && b.blind) {     /* with the warning only */
		o = json_object();
		json_object_set_new(o, "threads", json_integer((json_int_t)b.threads));
		json_object_set_new(o, "samples", json_integer((json_int_t)b.samples));
		json_object_set_new(o, "with_python_frames", json_integer((json_int_t)b.python_samples));
		json_object_set_new(o, "interpreter_without_python_frames",
				    json_integer((json_int_t)b.blind));
		json_object_set_new(o, "threads_without_python_frames",
				    json_integer((json_int_t)b.blind_threads));
		json_object_set_new(info, "python_samples", o);
	}
	if (b.blind && json_is_array(w)) {
		for (int i = 0; i < b.npid; i++)
			n += snprintf(pids + n, sizeof(pids) - (size_t)n, "%s%lld", i ? ", " : "",
				      (long long)b.pid[i]);
		snprintf(msg, sizeof(msg), "Python threads sampled without their Python frames: %llu"
			 " thread%s (process%s %s%s): %llu of %llu samples ran the interpreter"
			 " (_PyEval_EvalFrameDefault) with no Python frame, %llu have one: which"
			 " functions and lines ran is unknown (the \"python in samples\" lines say"
			 " why, per process)", (unsigned long long)b.blind_threads,
			 b.blind_threads == 1 ? "" : "s", b.npid == 1 ? "" : "es", pids,
			 b.npid == 4 ? ", ..." : "", (unsigned long long)b.blind,
			 (unsigned long long)b.blind_thread_samples,
			 (unsigned long long)b.blind_thread_python);
		row = json_object();
		json_object_set_new(row, "message", json_string(msg));
		json_array_append_new(w, row);
	}
	free(e.eval);
	xp_stack_table_free(&t);
}
