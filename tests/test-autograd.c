/* test-autograd.c - backward launches at the forward line that made their
 * node (ingest/backward.h), from the records the injection library writes
 * to the rows, stacks and site names a report shows: a forward thread
 * that made node 4 and launched twice before making node 5, a backward
 * launch of node 4 (joined to the first of the two), an AccumulateGrad
 * right after it (at the same line, its gradient's producer's), and three
 * that cannot be joined, each for its own reason. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "ingest/backward.h"
#include "check-main.h"
#include "ingest/ddpbuckets.h"
#include "db/db_schema.h"
#include "export/names/launchsite.h"
#include "src/runfile.h"
#include "src/runfmt_py.h"

static sqlite3 *db;

/* frames, root first in each stack below */
enum { F_MAIN = 1, F_PY, F_LINEAR, F_LAUNCH, F_MM, F_ENGINE, F_NODE, F_TRAIN, F_TENSOR,
       F_OUTER, F_L45, F_OTHER, F_APPLY, F_OPS, F_CFWD, F_BUCKET, F_NCCL, F_MARK,
       F_LAST = F_MARK };
/* a Python line as ingest stores it: qualified name, file, line (db/pyframe.h) */
static const struct { const char *sym; int kind, module, line; } frames[] = { { NULL, 0, 0, 0 },
	{ "main", XP_FRAME_USER, 100, 0 }, { "Block.forward", XP_FRAME_PYTHON, 100, 42 },
	{ "at::_ops::linear::call(at::Tensor const&, at::Tensor const&)", XP_FRAME_USER, 100, 0 },
	{ "cudaLaunchKernel", XP_FRAME_USER, 100, 0 },
	{ "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)", XP_FRAME_USER, 100, 0 },
	{ "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
	  XP_FRAME_USER, 100, 0 },
	{ "torch::autograd::generated::AddmmBackward0::apply(std::vector<at::Tensor>&&)",
	  XP_FRAME_USER, 100, 0 },
	{ "train_step", XP_FRAME_PYTHON, 102, 88 },
	{ "Tensor.backward", XP_FRAME_PYTHON, 101, 625 },
	{ "Net.forward", XP_FRAME_PYTHON, 100, 10 },
	{ "Block.forward", XP_FRAME_PYTHON, 100, 45 },
	{ "helper", XP_FRAME_PYTHON, 103, 5 },
	{ "Function.apply", XP_FRAME_PYTHON, 104, 596 },
	{ "OpOverload.__call__", XP_FRAME_PYTHON, 105, 865 },
	{ "A.<locals>.CompiledFunction.forward", XP_FRAME_PYTHON, 105, 2503 },
	{ "c10d::Reducer::all_reduce_bucket(c10d::Bucket&)", XP_FRAME_USER, 100, 0 },
	{ "ncclAllReduce", XP_FRAME_USER, 100, 0 },
	{ "c10d::Reducer::mark_variable_ready(unsigned long)", XP_FRAME_USER, 100, 0 } };

/* the forward stack's leaf is node 4, the backward one's node 8; node 12:
 * the launch inside loss.backward() (the initial gradient's fill); 16, 20
 * and 24: launches at model.py:42 and :45 under Net.forward, and at
 * other.py:5 (views between them: view_between_launches) */
enum { S_FWD = 4, S_BWD = 8, S_CALL = 12, S_L42 = 16, S_L45 = 20, S_OTHER = 24, S_APPLY = 28,
       S_COMPILED = 32, S_BUCKET = 36, S_MARK = 40 };
static const int chains[][4] = { { F_MAIN, F_PY, F_LINEAR, F_LAUNCH },
				 { F_ENGINE, F_NODE, F_MM, F_LAUNCH },
				 { F_MAIN, F_TRAIN, F_TENSOR, F_LAUNCH },
				 { F_MAIN, F_OUTER, F_PY, F_LAUNCH },
				 { F_MAIN, F_OUTER, F_L45, F_LAUNCH },
				 { F_MAIN, F_OTHER, F_LINEAR, F_LAUNCH },
				 { F_MAIN, F_TRAIN, F_APPLY, F_OPS },
				 { F_TRAIN, F_APPLY, F_CFWD, F_OPS },
				 { F_ENGINE, F_BUCKET, F_NCCL, F_LAUNCH },
				 { F_ENGINE, F_MARK, F_MM, F_LAUNCH } };
#define NCHAINS (int)(sizeof(chains) / sizeof(chains[0]))

static void exec(const char *sql)
{
	char *err = NULL;

	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql, err);
}

static long long q1(const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void build(void)
{
	char sql[512], line[16];
	int node = 0;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(xp_db_create_schema(db), SQLITE_OK);
	ck_assert_int_eq(xp_gpu_schema_create(db), 0);
	exec("INSERT INTO StringIds(id, value) VALUES (100, '/home/u/model.py'),"
	     " (101, '/venv/site-packages/torch/_tensor.py'), (102, '/home/u/train.py')");
	exec("INSERT INTO StringIds(id, value) VALUES (103, '/home/u/other.py'),"
	     " (104, '/venv/site-packages/torch/autograd/function.py'),"
	     " (105, '/venv/site-packages/torch/_ops.py')");
	for (int f = 1; f <= F_LAST; f++) {
		snprintf(line, sizeof(line), frames[f].kind == XP_FRAME_PYTHON ? "%d" : "NULL",
			 frames[f].line);
		snprintf(sql, sizeof(sql), "INSERT INTO StringIds(id, value) VALUES (%d, '%s');"
			 "INSERT INTO xp_frames(id, symbol, module, kind, line) VALUES (%d, %d, %d, %d, %s)",
			 f, frames[f].sym, f, f, frames[f].module, frames[f].kind, line);
		exec(sql);
	}
	for (int c = 0; c < NCHAINS; c++)
		for (int i = 0, parent = 0; i < 4; i++, parent = node) {
			snprintf(sql, sizeof(sql), "INSERT INTO xp_stacks(id, parent, frame, depth)"
				 " VALUES (%d, %d, %d, %d)", ++node, parent, chains[c][i], i);
			exec(sql);
		}
}

/* One launch (pid 7) and its autograd record, as the library writes them. */
static void launch(struct xp_agstore *s, uint64_t corr, uint32_t tid, int stack, uint64_t thread,
		   uint64_t seq_next, const char *node, uint64_t node_seq, uint64_t node_thread)
{
	uint64_t buf[32] = { 0 };
	struct xp_record_header *h = (void *)buf;
	struct xp_autograd *a = (void *)(h + 1);
	struct xp_autograd_node *n = (void *)(a + 1);
	char sql[256];

	*a = (struct xp_autograd){ corr, tid, node ? XP_AUTOGRAD_NODE : 0, thread, seq_next };
	h->type = XP_REC_AUTOGRAD;
	h->size = sizeof(*h) + sizeof(*a);
	if (node) {
		n->node_seq = node_seq;
		n->node_thread = node_thread;
		n->name_len = (uint16_t)strlen(node);
		memcpy(n + 1, node, n->name_len);
		h->size += (uint32_t)(sizeof(*n) + ((n->name_len + 7u) & ~7u));
	}
	ck_assert_int_eq(xp_agstore_record(s, 7, h), 1);
	snprintf(sql, sizeof(sql), "INSERT INTO xp_launches(ts, pid, tid, cpu, correlation_id, cbid,"
		 " stack_id) VALUES (%llu, 7, %u, 0, %llu, 211, %d)",
		 corr == 20 ? 103 : 100 + (unsigned long long)corr,
		 tid, (unsigned long long)corr, stack);
	exec(sql);
}

static long long stack_of(int corr)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "SELECT stack_id FROM xp_launches WHERE correlation_id = %d", corr);
	return q1(sql);
}

static const char *unknown_of(int corr, char *buf, size_t len)
{
	char sql[128];
	sqlite3_stmt *st;

	snprintf(sql, sizeof(sql), "SELECT ifnull(unknown, '') FROM xp_autograd WHERE"
		 " correlation_id = %d", corr);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	snprintf(buf, len, "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

START_TEST(backward_at_forward_line)
{
	struct xp_agstore *s = xp_agstore_new();
	struct xp_sites *sites;
	char why[256];

	build();
	/* forward: node 4 made, two launches; node 5 made, one launch */
	launch(s, 1, 7, S_FWD, 1, 5, NULL, 0, 0);
	launch(s, 2, 7, S_FWD, 1, 5, NULL, 0, 0);
	launch(s, 3, 7, S_FWD, 1, 6, NULL, 0, 0);
	launch(s, 20, 7, S_CALL, 1, 6, NULL, 0, 0);    /* loss.backward() */
	/* backward, on the engine thread (which made no node: thread id 0) */
	launch(s, 4, 9, S_BWD, 0, 0, "N5torch8autograd9generated14AddmmBackward0E", 4, 1);
	launch(s, 5, 9, S_BWD, 0, 0, "N5torch8autograd14AccumulateGradE", UINT64_MAX, 1);
	launch(s, 6, 9, S_BWD, 0, 0, "N5torch8autograd9generated14AddmmBackward0E", 9, 1);
	launch(s, 7, 9, S_BWD, 0, 0, "N5torch8autograd9generated14AddmmBackward0E", 2, 3);
	launch(s, 8, 10, S_BWD, 0, 0, "N5torch8autograd14AccumulateGradE", UINT64_MAX, 1);
	ck_assert_int_eq(xp_agstore_save(db, s), 0);
	xp_agstore_free(s);
	ck_assert_int_eq(xp_autograd_join(db), 2);

	/* the backward launch of node 4 sits under the first forward launch,
	 * whose frames sit under the line that called backward(); its own op
	 * (aten::mm on the engine thread) is its leaf, under the note */
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_stacks s JOIN xp_stacks n ON n.id = s.parent"
			    " JOIN xp_stacks p ON p.id = n.parent WHERE s.id = (SELECT stack_id FROM"
			    " xp_launches WHERE correlation_id = 4) AND s.frame = 5 AND p.frame = 4"
			    " AND p.depth = 4"), 1);
	ck_assert_int_eq(q1("WITH RECURSIVE up(id) AS (SELECT stack_id FROM xp_launches WHERE"
			    " correlation_id = 4 UNION ALL SELECT s.parent FROM up JOIN xp_stacks s"
			    " ON s.id = up.id WHERE s.parent != 0) SELECT count(*) FROM up"
			    " JOIN xp_stacks s ON s.id = up.id JOIN xp_frames f ON f.id = s.frame"
			    " JOIN StringIds y ON y.id = f.symbol WHERE s.parent = 0 AND y.value ="
			    " '[backward() at train.py:88 train_step]'"), 1);
	ck_assert_int_eq(q1("SELECT forward_launch FROM xp_autograd WHERE correlation_id = 4"),
			 q1("SELECT id FROM xp_launches WHERE correlation_id = 1"));
	ck_assert_int_eq(stack_of(1), S_FWD);
	ck_assert_int_eq(q1("SELECT n.parent FROM xp_stacks s JOIN xp_stacks n ON n.id = s.parent"
			    " WHERE s.id = (SELECT stack_id FROM xp_launches WHERE correlation_id = 5)"),
			 q1("SELECT n.parent FROM xp_stacks s JOIN xp_stacks n ON n.id = s.parent"
			    " WHERE s.id = (SELECT stack_id FROM xp_launches WHERE correlation_id = 4)"));
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_autograd WHERE correlation_id = 5 AND"
			    " how = 'producer' AND unknown IS NULL"), 1);
	ck_assert_int_eq(q1("SELECT parent FROM xp_stacks WHERE id = (SELECT stack_id FROM"
			    " xp_launches WHERE correlation_id = 8)"), S_BWD);
	ck_assert_int_eq(stack_of(6), stack_of(7));     /* one note node per (stack, name) */
	ck_assert_str_eq(unknown_of(4, why, sizeof(why)), "");
	ck_assert_str_eq(unknown_of(8, why, sizeof(why)), "AccumulateGrad (a parameter's gradient,"
			 " made by no forward op) with no node at a forward line before it on its"
			 " thread");
	ck_assert_str_eq(unknown_of(6, why, sizeof(why)), "no launch came between the node's"
			 " making and the next node's (its forward op launched no GPU work)");
	ck_assert_str_eq(unknown_of(7, why, sizeof(why)),
			 "the node's forward thread has no launch with a sequence number");

	ck_assert_int_eq(xp_sites_new(db, &sites), 0);
	ck_assert_str_eq(xp_sites_get(sites, stack_of(4)),
			 "model.py:42 Block.forward \u203a aten::linear \u2039backward: AddmmBackward0\u203a");
	ck_assert_str_eq(xp_sites_get(sites, stack_of(1)), "model.py:42 Block.forward \u203a aten::linear");
	ck_assert_str_eq(xp_sites_get(sites, stack_of(5)), "model.py:42 Block.forward \u203a"
			 " aten::linear \u2039backward: AccumulateGrad from AddmmBackward0\u203a");
	ck_assert_str_eq(xp_sites_get(sites, stack_of(8)), "autograd backward: AccumulateGrad \u203a aten::mm");
	ck_assert_str_eq(xp_sites_get(sites, stack_of(6)), "autograd backward: AddmmBackward0 \u203a aten::mm");
	xp_sites_free(sites);
	sqlite3_close(db);
}
END_TEST

static const char *how_of(int corr, char *buf, size_t len)
{
	char sql[128];
	sqlite3_stmt *st;

	snprintf(sql, sizeof(sql), "SELECT ifnull(how, '-') || '|' || ifnull(unknown, '-') FROM"
		 " xp_autograd WHERE correlation_id = %d", corr);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	snprintf(buf, len, "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

/* Nodes whose forward op launched nothing (views), by the launches of
 * their forward thread around their number: node 11 between two launches
 * at model.py:42 (that line); node 13 between :42 and :45 of Block.forward
 * (under Net.forward's line, said so); node 15 between :45 and other.py:5,
 * which share no Python frame, and node 17 with no launch after it:
 * unknown, each with the reason. */
START_TEST(view_between_launches)
{
	struct xp_agstore *s = xp_agstore_new();
	struct xp_sites *sites;
	const char *view = "N5torch8autograd9generated13ViewBackward0E";
	char buf[256];

	build();
	launch(s, 31, 11, S_L42, 2, 11, NULL, 0, 0);     /* node 10's op; node 11 made after */
	launch(s, 32, 11, S_L42, 2, 13, NULL, 0, 0);     /* node 12's op; node 13 made after */
	launch(s, 33, 11, S_L45, 2, 15, NULL, 0, 0);     /* node 14's op; node 15 made after */
	launch(s, 34, 11, S_OTHER, 2, 17, NULL, 0, 0);   /* node 16's op; node 17 made after */
	launch(s, 41, 12, S_BWD, 0, 0, view, 11, 2);
	launch(s, 42, 12, S_BWD, 0, 0, "N5torch8autograd14AccumulateGradE", UINT64_MAX, 2);
	launch(s, 43, 12, S_BWD, 0, 0, "N5torch8autograd9generated14SplitBackward0E", 13, 2);
	launch(s, 44, 12, S_BWD, 0, 0, view, 15, 2);
	launch(s, 45, 12, S_BWD, 0, 0, view, 17, 2);
	ck_assert_int_eq(xp_agstore_save(db, s), 0);
	xp_agstore_free(s);
	ck_assert_int_eq(xp_autograd_join(db), 3);

	ck_assert_str_eq(how_of(41, buf, sizeof(buf)), "between|-");
	ck_assert_str_eq(how_of(42, buf, sizeof(buf)), "producer|-");
	ck_assert_str_eq(how_of(43, buf, sizeof(buf)), "enclosing|-");
	ck_assert_str_eq(how_of(44, buf, sizeof(buf)), "-|no launch came between the node's making and"
			 " the next node's (its forward op launched no GPU work)");
	ck_assert_str_eq(how_of(45, buf, sizeof(buf)), how_of(44, buf + 128, 128));
	/* no forward launch made them: no fwdbwd flow */
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_autograd WHERE forward_launch IS NOT NULL"), 0);

	ck_assert_int_eq(xp_sites_new(db, &sites), 0);
	ck_assert_str_eq(xp_sites_get(sites, stack_of(41)), "model.py:42 Block.forward \u203a aten::mm"
			 " \u2039backward: ViewBackward0, between two launches of this line\u203a");
	ck_assert_str_eq(xp_sites_get(sites, stack_of(42)), "model.py:42 Block.forward \u203a aten::mm"
			 " \u2039backward: AccumulateGrad from ViewBackward0, between two launches of"
			 " this line\u203a");
	ck_assert_str_eq(xp_sites_get(sites, stack_of(43)), "model.py:10 Net.forward \u203a aten::mm"
			 " \u2039backward: SplitBackward0, made in Block.forward between lines 42 and 45"
			 " (no launch of its own)\u203a");
	ck_assert_str_eq(xp_sites_get(sites, stack_of(44)), "autograd backward: ViewBackward0 \u203a aten::mm");
	xp_sites_free(sites);
	/* the view's stack holds the Python frames alone, not the launch's native ones */
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_stacks s JOIN xp_stacks n ON n.id = s.parent"
			    " JOIN xp_stacks p ON p.id = n.parent WHERE s.id = (SELECT stack_id FROM"
			    " xp_launches WHERE correlation_id = 41) AND s.frame = 5 AND p.frame = 2"
			    " AND p.parent = (SELECT id FROM xp_stacks WHERE parent = 0 AND frame = 10)"), 1);
	sqlite3_close(db);
}
END_TEST

/* A PyNode (a Python autograd.Function's: torch.compile's compiled
 * backward) belongs to its Function.apply call, not to the first launch
 * inside it: its forward stack ends at that frame; where apply called a
 * Function's forward, the node takes PyTorch's name for it. */
START_TEST(pynode_at_apply)
{
	struct xp_agstore *s = xp_agstore_new();
	struct xp_sites *sites;

	build();
	launch(s, 51, 13, S_APPLY, 3, 21, NULL, 0, 0);   /* the first launch inside apply */
	launch(s, 52, 14, S_BWD, 0, 0, "N5torch8autograd6PyNodeE", 20, 3);
	/* a Function's forward called by apply: its node's name, XBackward */
	launch(s, 53, 15, S_COMPILED, 4, 31, NULL, 0, 0);
	launch(s, 54, 14, S_BWD, 0, 0, "N5torch8autograd6PyNodeE", 30, 4);
	ck_assert_int_eq(xp_agstore_save(db, s), 0);
	xp_agstore_free(s);
	ck_assert_int_eq(xp_autograd_join(db), 2);
	ck_assert_int_eq(q1("SELECT n.parent FROM xp_stacks s JOIN xp_stacks n ON n.id = s.parent"
			    " WHERE s.id = (SELECT stack_id FROM xp_launches WHERE correlation_id = 54)"
			    " AND s.frame = 5"), S_COMPILED - 2);
	/* leaf: its own op, under the note, under Function.apply's node (27) */
	ck_assert_int_eq(q1("SELECT n.parent FROM xp_stacks s JOIN xp_stacks n ON n.id = s.parent"
			    " WHERE s.id = (SELECT stack_id FROM xp_launches WHERE correlation_id = 52)"
			    " AND s.frame = 5"), S_APPLY - 1);
	ck_assert_int_eq(stack_of(51), S_APPLY);
	ck_assert_int_eq(xp_sites_new(db, &sites), 0);
	ck_assert_str_eq(xp_sites_get(sites, stack_of(52)), "function.py:596 Function.apply \u203a"
			 " aten::mm \u2039backward: PyNode\u203a");
	ck_assert_str_eq(xp_sites_get(sites, stack_of(54)), "function.py:596 Function.apply \u203a"
			 " aten::mm \u2039backward: CompiledFunctionBackward\u203a");
	xp_sites_free(sites);
	sqlite3_close(db);
}
END_TEST

/* DDP's reducer in AccumulateGrad's hook (the engine thread, under that
 * node): its copy of the gradient into the bucket sits at the producer's
 * line as the AccumulateGrad does; the bucket's NCCL all-reduce, work of
 * every parameter in the bucket, at no forward line: its own stack (the
 * reducer's, named by its bucket) under the line that called backward(). */
START_TEST(ddp_bucket_at_no_forward_line)
{
	struct xp_agstore *s = xp_agstore_new();
	struct xp_sites *sites;
	const char *acc = "N5torch8autograd14AccumulateGradE";
	char buf[256];

	build();
	launch(s, 1, 7, S_FWD, 1, 5, NULL, 0, 0);        /* node 4's op, at model.py:42 */
	launch(s, 20, 7, S_CALL, 1, 6, NULL, 0, 0);      /* loss.backward() */
	launch(s, 51, 9, S_BWD, 0, 0, "N5torch8autograd9generated14AddmmBackward0E", 4, 1);
	launch(s, 52, 9, S_MARK, 0, 0, acc, UINT64_MAX, 1);    /* into the bucket */
	launch(s, 53, 9, S_BUCKET, 0, 0, acc, UINT64_MAX, 1);  /* the bucket's all-reduce */
	ck_assert_int_eq(xp_agstore_save(db, s), 0);
	xp_agstore_free(s);
	ck_assert_int_eq(xp_ddp_buckets(db), 1);          /* as ingest runs them: buckets first */
	ck_assert_int_eq(xp_autograd_join(db), 2);

	ck_assert_str_eq(how_of(52, buf, sizeof(buf)), "producer|-");
	ck_assert_str_eq(how_of(53, buf, sizeof(buf)), "-|DDP's reducer: a gradient bucket's"
			 " all-reduce, launched from AccumulateGrad's hook; no forward op made it");
	/* no Python frame: the forward line is not its; the backward() line is its root */
	ck_assert_int_eq(q1("WITH RECURSIVE up(id) AS (SELECT stack_id FROM xp_launches WHERE"
			    " correlation_id = 53 UNION ALL SELECT s.parent FROM up JOIN xp_stacks s"
			    " ON s.id = up.id WHERE s.parent != 0) SELECT count(*) FROM up"
			    " JOIN xp_stacks s ON s.id = up.id JOIN xp_frames f ON f.id = s.frame"
			    " WHERE f.kind = 6"), 0);
	ck_assert_int_eq(q1("WITH RECURSIVE up(id) AS (SELECT stack_id FROM xp_launches WHERE"
			    " correlation_id = 53 UNION ALL SELECT s.parent FROM up JOIN xp_stacks s"
			    " ON s.id = up.id WHERE s.parent != 0) SELECT count(*) FROM up"
			    " JOIN xp_stacks s ON s.id = up.id JOIN xp_frames f ON f.id = s.frame"
			    " JOIN StringIds y ON y.id = f.symbol WHERE (s.parent = 0 AND y.value ="
			    " '[backward() at train.py:88 train_step]') OR y.value = '[DDP bucket 0]'"
			    " OR y.value = '‹backward: AccumulateGrad, DDP reducer hook›'"), 3);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_autograd WHERE forward_launch IS NOT NULL"), 2);

	ck_assert_int_eq(xp_sites_new(db, &sites), 0);
	ck_assert_str_eq(xp_sites_get(sites, stack_of(52)), "model.py:42 Block.forward ›"
			 " aten::linear ‹backward: AccumulateGrad from AddmmBackward0›");
	ck_assert_str_eq(xp_sites_get(sites, stack_of(53)), "NCCL: DDP reducer, bucket 0");
	xp_sites_free(sites);
	sqlite3_close(db);
}
END_TEST

/* a run without autograd records: empty tables, nothing re-stacked */
START_TEST(no_records_no_join)
{
	struct xp_agstore *s = xp_agstore_new();

	build();
	exec("INSERT INTO xp_launches(ts, pid, tid, cpu, correlation_id, cbid, stack_id)"
	     " VALUES (1, 7, 7, 0, 1, 211, 4)");
	ck_assert_int_eq(xp_agstore_save(db, s), 0);
	xp_agstore_free(s);
	ck_assert_int_eq(xp_autograd_join(db), 0);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_autograd"), 0);
	ck_assert_int_eq(stack_of(1), S_FWD);
	sqlite3_close(db);
}
END_TEST

/* a node's name longer than its record, an info shorter than its reason */
START_TEST(malformed_records)
{
	struct xp_agstore *s = xp_agstore_new();
	uint64_t buf[16] = { 0 };
	struct xp_record_header *h = (void *)buf;
	struct xp_autograd *a = (void *)(h + 1);
	struct xp_autograd_node *n = (void *)(a + 1);
	struct xp_autograd_info *i = (void *)(h + 1);

	a->flags = XP_AUTOGRAD_NODE;
	n->name_len = 40;
	h->type = XP_REC_AUTOGRAD;
	h->size = (uint32_t)(sizeof(*h) + sizeof(*a) + sizeof(*n) + 8);
	ck_assert_int_eq(xp_agstore_record(s, 7, h), -EBADMSG);
	h->size = (uint32_t)(sizeof(*h) + sizeof(*a) - 8);
	ck_assert_int_eq(xp_agstore_record(s, 7, h), -EBADMSG);
	memset(buf, 0, sizeof(buf));
	h->type = XP_REC_AUTOGRAD_INFO;
	i->reason_len = 64;
	h->size = (uint32_t)(sizeof(*h) + sizeof(*i) + 8);
	ck_assert_int_eq(xp_agstore_record(s, 7, h), -EBADMSG);
	h->type = XP_REC_PYINFO;
	ck_assert_int_eq(xp_agstore_record(s, 7, h), 0);
	xp_agstore_free(s);
}
END_TEST

START_TEST(node_names)
{
	char out[96];

	xp_autograd_node_name("N5torch8autograd9generated14AddmmBackward0E", out, sizeof(out));
	ck_assert_str_eq(out, "AddmmBackward0");
	xp_autograd_node_name("N5torch8autograd14AccumulateGradE", out, sizeof(out));
	ck_assert_str_eq(out, "AccumulateGrad");
	xp_autograd_node_name("N5torch8autograd7CppNodeIN3foo3BarEEE", out, sizeof(out));
	ck_assert_str_eq(out, "CppNode");
	xp_autograd_node_name("4Leaf", out, sizeof(out));
	ck_assert_str_eq(out, "Leaf");
	xp_autograd_node_name("N99shortE", out, sizeof(out));
	ck_assert_str_eq(out, "N99shortE");
	xp_autograd_node_name("", out, sizeof(out));
	ck_assert_str_eq(out, "");
	/* cut at 64 bytes by the recorder, as on the H100 (2026-11-26) */
	xp_autograd_node_name("N5torch8autograd9generated43ScaledDotProductEfficientAttentionBa",
			      out, sizeof(out));
	ck_assert_str_eq(out, "ScaledDotProductEfficientAttentionBa\u2026");
	xp_autograd_node_name("N5torch8autograd9generated34XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX43",
			      out, sizeof(out));
	ck_assert_str_eq(out, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX::\u2026");
}
END_TEST

static Suite *autograd_suite(void)
{
	Suite *s = suite_create("autograd");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, backward_at_forward_line);
	tcase_add_test(tc, view_between_launches);
	tcase_add_test(tc, pynode_at_apply);
	tcase_add_test(tc, ddp_bucket_at_no_forward_line);
	tcase_add_test(tc, no_records_no_join);
	tcase_add_test(tc, malformed_records);
	tcase_add_test(tc, node_names);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(autograd_suite)
