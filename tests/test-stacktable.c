/* test-stacktable.c - the stack table on what only a crafted database
 * holds (issue 38): memory follows the rows, not the largest id (a stack
 * at id 4e8 took 3.1 GB and 38 s of report), and a cycle ends a walk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "db/db_schema.h"
#include "db/stacktable.h"
#include "export/names/pyreach.h"
#include "gpu-testdb.h"

static sqlite3 *db;

static void exec(const char *sql)
{
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK, "%s: %s", sql,
		      sqlite3_errmsg(db));
}

/* Frames 1 (native) and 300000000 (a Python line); stacks: a chain
 * 1 <- 2 <- 400000000, 3 its own parent, 5 and 6 each other's. */
static void setup(void)
{
	db = testdb_open(":memory:");
	ck_assert_ptr_nonnull(db);
	exec("INSERT INTO StringIds VALUES (1, 'main'), (2, 'train.py'), (3, 'a.out')");
	exec("INSERT INTO xp_frames(id, symbol, module, kind, line) VALUES (1, 1, 3, 0, NULL),"
	     " (300000000, 1, 2, 6, 42)");
	exec("INSERT INTO xp_stacks VALUES (1, 0, 1, 0), (2, 1, 1, 1), (400000000, 2, 300000000, 2),"
	     " (3, 3, 300000000, 0), (5, 6, 1, 0), (6, 5, 1, 0)");
}

static void teardown(void)
{
	sqlite3_close(db);
}

START_TEST(sized_by_rows)
{
	struct xp_stack_table t;
	int64_t far, n, steps = 0;

	ck_assert_int_eq(xp_stack_table_load(db, NULL, NULL, &t), 0);
	/* the places of 6 nodes and 2 frames, not 4e8 and 3e8 of each */
	ck_assert_int_le(t.nnodes, 7);
	ck_assert_int_le(t.nframes, 3);
	far = xp_stack_table_node(&t, 400000000);
	ck_assert_int_gt(far, 0);
	ck_assert(t.frame_class[t.frame[far]] & XP_FRAME_IS_LINE);
	ck_assert_int_eq(t.parent[far], xp_stack_table_node(&t, 2));
	ck_assert_int_eq(t.parent[t.parent[far]], xp_stack_table_node(&t, 1));
	ck_assert_int_eq(t.parent[xp_stack_table_node(&t, 1)], 0);
	ck_assert_int_eq(xp_stack_table_node(&t, 4), 0);        /* no such row */
	ck_assert_int_eq(xp_stack_table_node(&t, 399999999), 0);
	/* a cycle ends at the node whose parent is not older than itself */
	ck_assert_int_eq(t.parent[xp_stack_table_node(&t, 3)], 0);
	for (n = xp_stack_table_node(&t, 6); n > 0; n = t.parent[n])
		steps++;
	ck_assert_int_le(steps, 2);
	xp_stack_table_free(&t);
}
END_TEST

/* Dense ids (every database we write) keep ids as places. */
START_TEST(dense_ids_are_places)
{
	struct xp_stack_table t;

	exec("DELETE FROM xp_stacks WHERE id = 400000000");
	exec("UPDATE xp_frames SET id = 2 WHERE id = 300000000");
	ck_assert_int_eq(xp_stack_table_load(db, NULL, NULL, &t), 0);
	ck_assert_ptr_null(t.nodes_at);
	ck_assert_ptr_null(t.frames_at);
	for (int64_t id = 1; id <= 6; id++)
		ck_assert_int_eq(xp_stack_table_node(&t, id), id);
	ck_assert_int_eq(t.nnodes, 7);
	xp_stack_table_free(&t);
}
END_TEST

/* GPU time under stack 3 (its own parent, a Python line) and the far one. */
START_TEST(python_reach_ends_at_a_cycle)
{
	struct xp_python_reach r;
	sqlite3_stmt *rows;

	ck_assert_int_eq(sqlite3_prepare_v2(db, "VALUES (3, 100), (400000000, 20), (5, 7), (6, 1)",
					    -1, &rows, NULL), SQLITE_OK);
	ck_assert_int_eq(xp_python_reach(db, rows, &r), 0);
	sqlite3_finalize(rows);
	ck_assert_int_eq(r.gpu_ns, 128);
	ck_assert_int_eq(r.python_ns, 120);
	ck_assert_int_eq(r.line_ns, 120);
}
END_TEST

static Suite *stacktable_suite(void)
{
	Suite *s = suite_create("stacktable");
	TCase *tc = tcase_create("crafted");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sized_by_rows);
	tcase_add_test(tc, dense_ids_are_places);
	tcase_add_test(tc, python_reach_ends_at_a_cycle);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(stacktable_suite)
