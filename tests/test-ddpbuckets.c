/* test-ddpbuckets.c - DDP's all-reduces named by bucket (ingest/ddpbuckets.h)
 * on a small database: a process whose main thread runs the forward passes
 * and whose autograd thread runs backward, the reducer's copies into its
 * buckets and its two collectives a pass. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "db/db_schema.h"
#include "ingest/ddpbuckets.h"
#include "export/names/launchsite.h"

static sqlite3 *db;

/* frames, root first in each stack below */
enum { F_START = 1, F_MAIN, F_ENGINE, F_NODE, F_HOOK, F_BUCKET, F_NCCL, F_COPY, F_SYNC,
       F_BCAST, F_LAUNCH };
static const char *const frames[] = { NULL, "start_thread", "main",
	"torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
	"torch::autograd::generated::AddmmBackward0::apply(std::vector<at::Tensor>&&)",
	"c10d::Reducer::autograd_hook(unsigned long)",
	"c10d::Reducer::all_reduce_bucket(c10d::Reducer::Bucket&)", "ncclAllReduce",
	"c10d::Reducer::mark_variable_ready_dense(unsigned long)",
	"c10d::Reducer::sync_bucket_indices(std::vector<unsigned long>&)", "ncclBroadcast",
	"cudaLaunchKernel" };

/* stacks (leaf ids): forward, backward kernel, copy into a bucket, a
 * bucket's all-reduce, the broadcast of rebuilt bucket indices */
enum { S_FWD = 2, S_BWD = 5, S_COPY = 8, S_COLL = 11, S_BCAST = 14 };
static const int chains[][5] = {
	{ F_MAIN, F_LAUNCH },                                   /* nodes 1, 2 */
	{ F_START, F_ENGINE, F_LAUNCH },                        /* 3..5 */
	{ F_START, F_HOOK, F_LAUNCH },                          /* 6..8; F_COPY below */
	{ F_START, F_BUCKET, F_LAUNCH },                        /* 9..11; F_NCCL */
	{ F_MAIN, F_SYNC, F_LAUNCH },                           /* 12..14; F_BCAST */
};

static void exec(const char *sql)
{
	char *err = NULL;

	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql, err);
}

static void build(void)
{
	char sql[256];
	int node = 0;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(xp_db_create_schema(db), SQLITE_OK);
	exec("INSERT INTO StringIds(id, value) VALUES (100, 'libtorch.so')");
	for (int f = 1; f <= F_LAUNCH; f++) {
		snprintf(sql, sizeof(sql), "INSERT INTO StringIds(id, value) VALUES (%d, '%s');"
			 "INSERT INTO xp_frames(id, symbol, module, kind) VALUES (%d, %d, 100, 0)",
			 f, frames[f], f, f);
		exec(sql);
	}
	/* each chain's leaf: the copy, the all-reduce or the broadcast under
	 * the reducer's frames, else the launch */
	for (size_t c = 0; c < sizeof(chains) / sizeof(chains[0]); c++) {
		int parent = 0;

		for (int i = 0; i < 5 && chains[c][i]; i++) {
			int frame = chains[c][i];

			if (frame == F_LAUNCH && chains[c][1] == F_HOOK)
				frame = F_COPY;
			else if (frame == F_LAUNCH && chains[c][1] == F_BUCKET)
				frame = F_NCCL;
			else if (frame == F_LAUNCH && chains[c][1] == F_SYNC)
				frame = F_BCAST;
			snprintf(sql, sizeof(sql), "INSERT INTO xp_stacks(id, parent, frame, depth)"
				 " VALUES (%d, %d, %d, %d)", ++node, parent, frame, i);
			exec(sql);
			parent = node;
		}
	}
}

/* (tid, stack) launches of pid 10 in time order */
static void launches(const int (*l)[2], int n)
{
	char sql[200];

	for (int i = 0; i < n; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO xp_launches(id, ts, pid, tid, cpu, correlation_id,"
			 " cbid, stack_id) VALUES (%d, %d, 10, %d, 0, %d, 13, %d)", i + 1, 1000 * (i + 1),
			 l[i][0], i + 1, l[i][1]);
		exec(sql);
	}
}

static sqlite3_int64 q1(const char *sql)
{
	sqlite3_stmt *st;
	sqlite3_int64 v = -1;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static sqlite3_int64 stack_of(int launch)
{
	char sql[80];

	snprintf(sql, sizeof(sql), "SELECT stack_id FROM xp_launches WHERE id = %d", launch);
	return q1(sql);
}

START_TEST(buckets_in_each_pass)
{
	/* pass 1: backward, a copy, bucket 0, backward, bucket 1; the next
	 * forward (and the rebuilt indices' broadcast) on the main thread;
	 * pass 2: bucket 0, bucket 1 */
	static const int l[][2] = { { 10, S_FWD }, { 11, S_BWD }, { 11, S_COPY }, { 11, S_COLL },
		{ 11, S_BWD }, { 11, S_COLL }, { 10, S_FWD }, { 10, S_BCAST }, { 11, S_COLL },
		{ 11, S_COLL } };
	struct xp_sites *sites;
	char sql[160];

	build();
	launches(l, 10);
	ck_assert_int_eq(xp_ddp_buckets(db), 4);
	/* the same (stack, bucket): one note node under the collective's leaf */
	ck_assert_int_eq(stack_of(4), stack_of(9));
	ck_assert_int_eq(stack_of(6), stack_of(10));
	ck_assert_int_ne(stack_of(4), stack_of(6));
	for (int launch = 1; launch <= 10; launch++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM xp_stacks s JOIN xp_frames f ON"
			 " f.id = s.frame WHERE s.id = %lld AND f.kind = %d", (long long)stack_of(launch),
			 XP_FRAME_NOTE);
		ck_assert_int_eq(q1(sql), launch == 4 || launch == 6 || launch == 9 || launch == 10);
	}
	snprintf(sql, sizeof(sql), "SELECT parent FROM xp_stacks WHERE id = %lld", (long long)stack_of(6));
	ck_assert_int_eq(q1(sql), S_COLL);
	ck_assert_int_eq(xp_sites_new(db, &sites), 0);
	ck_assert_str_eq(xp_sites_get(sites, stack_of(4)), "NCCL: DDP reducer, bucket 0");
	ck_assert_str_eq(xp_sites_get(sites, stack_of(10)), "NCCL: DDP reducer, bucket 1");
	/* the reducer's broadcast in the forward pass: no bucket's */
	ck_assert_str_eq(xp_sites_get(sites, S_BCAST), "NCCL: DDP reducer");
	xp_sites_free(sites);
	sqlite3_close(db);
}
END_TEST

/* a run without DDP: nothing to do, nothing written */
START_TEST(no_reducer_no_notes)
{
	static const int l[][2] = { { 10, S_FWD }, { 11, S_BWD } };

	build();
	exec("DELETE FROM xp_stacks WHERE id >= 9");
	launches(l, 2);
	ck_assert_int_eq(xp_ddp_buckets(db), 0);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_frames WHERE kind = 8"), 0);
	ck_assert_int_eq(stack_of(2), S_BWD);
	sqlite3_close(db);
}
END_TEST

static Suite *ddpbuckets_suite(void)
{
	Suite *s = suite_create("ddpbuckets");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, buckets_in_each_pass);
	tcase_add_test(tc, no_reducer_no_notes);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(ddpbuckets_suite)
