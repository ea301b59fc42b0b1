/* test-stackwriter.c - names, frames and stack nodes written once each
 * (db/stackwriter.h), on a real database: stacks sharing callers share
 * nodes, ids follow the rows already there, and the unshared notes of the
 * passes after the load get rows of their own. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "db/db_schema.h"
#include "db/stackwriter.h"

static sqlite3 *db;

static void open_db(void)
{
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(xp_db_create_schema(db), SQLITE_OK);
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

static int64_t add_path(struct xp_stackwriter *w, const int64_t *frames, int n, int *created)
{
	int64_t node = 0;
	int fresh;

	*created = 0;
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(xp_stackwriter_node(w, node, frames[i], i + 1, &node, &fresh), 0);
		*created += fresh;
	}
	return node;
}

START_TEST(shared_prefixes_are_shared)
{
	const int64_t a[] = { 1, 2, 3 }, b[] = { 1, 2, 4 }, c[] = { 2, 3 };
	struct xp_stackwriter *w;
	int64_t la, lb, lc, la2;
	int created;

	open_db();
	ck_assert_int_eq(xp_stackwriter_open(db, &w), 0);
	la = add_path(w, a, 3, &created);
	ck_assert_int_eq(created, 3);
	lb = add_path(w, b, 3, &created);
	ck_assert_int_eq(created, 1);       /* only the new leaf */
	ck_assert_int_ne(la, lb);
	/* same frames under another parent are other nodes */
	lc = add_path(w, c, 2, &created);
	ck_assert_int_eq(created, 2);
	ck_assert_int_ne(lc, la);
	la2 = add_path(w, a, 3, &created);
	ck_assert_int_eq(created, 0);
	ck_assert_int_eq(la2, la);
	ck_assert_uint_eq(xp_stackwriter_made(w, XP_SW_NODES), 6);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_stacks"), 6);
	ck_assert_int_eq(q1("SELECT depth FROM xp_stacks WHERE id = (SELECT max(id) FROM xp_stacks)"), 2);
	xp_stackwriter_close(w);
	sqlite3_close(db);
}
END_TEST

START_TEST(ids_dense_and_parents_first)
{
	struct xp_stackwriter *w;
	int64_t node = 0, prev = 0;
	int fresh;

	open_db();
	ck_assert_int_eq(xp_stackwriter_open(db, &w), 0);
	for (int64_t f = 1; f <= 50000; f++) {
		ck_assert_int_eq(xp_stackwriter_node(w, node, f % 7, f, &node, &fresh), 0);
		ck_assert_int_eq(fresh, 1);
		ck_assert_int_eq(node, prev + 1);   /* a parent's id is below its child's */
		prev = node;
	}
	xp_stackwriter_close(w);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_stacks WHERE parent >= id"), 0);
	sqlite3_close(db);
}
END_TEST

/* A string and a frame are one row for their content; a Python line's
 * frame differs from the same name without a line, and by its line. */
START_TEST(strings_and_frames_once)
{
	struct xp_stackwriter *w;
	int64_t mod, sym, again, f1, f2, f3, f4, f5;
	int fresh;

	open_db();
	ck_assert_int_eq(xp_stackwriter_open(db, &w), 0);
	ck_assert_int_eq(xp_stackwriter_string(w, "train.py", 8, &mod, &fresh), 0);
	ck_assert_int_eq(fresh, 1);
	ck_assert_int_eq(mod, 1);
	ck_assert_int_eq(xp_stackwriter_string(w, "step", 4, &sym, &fresh), 0);
	ck_assert_int_eq(xp_stackwriter_string(w, "train.py", 8, &again, &fresh), 0);
	ck_assert_int_eq(fresh, 0);
	ck_assert_int_eq(again, mod);
	ck_assert_str_eq(xp_stackwriter_text(w, sym), "step");
	ck_assert_ptr_null(xp_stackwriter_text(w, 99));
	ck_assert_int_eq(xp_stackwriter_frame(w, &(struct xp_frame_key){ sym, mod, XP_FRAME_PYTHON,
							  1, 42 }, &f1, &fresh), 0);
	ck_assert_int_eq(fresh, 1);
	ck_assert_int_eq(xp_stackwriter_frame(w, &(struct xp_frame_key){ sym, mod, XP_FRAME_PYTHON,
							  1, 42 }, &f2, &fresh), 0);
	ck_assert_int_eq(fresh, 0);
	ck_assert_int_eq(f2, f1);
	ck_assert_int_eq(xp_stackwriter_frame(w, &(struct xp_frame_key){ sym, mod, XP_FRAME_PYTHON,
							  1, -1 }, &f3, NULL), 0);
	ck_assert_int_eq(xp_stackwriter_frame(w, &(struct xp_frame_key){ sym, mod, XP_FRAME_PYTHON, 0, 0 },
					      &f4, NULL), 0);
	ck_assert_int_eq(xp_stackwriter_frame(w, &(struct xp_frame_key){ sym, mod, XP_FRAME_USER, 0, 0 },
					      &f5, NULL), 0);
	ck_assert_int_eq(f3, f1 + 1);
	ck_assert_int_eq(f4, f1 + 2);
	ck_assert_int_eq(f5, f1 + 3);
	xp_stackwriter_close(w);
	ck_assert_int_eq(q1("SELECT count(*) FROM StringIds"), 2);
	ck_assert_int_eq(q1("SELECT line FROM xp_frames WHERE id = 1"), 42);
	ck_assert_int_eq(q1("SELECT line FROM xp_frames WHERE id = 2"), -1);
	ck_assert_int_eq(q1("SELECT line IS NULL FROM xp_frames WHERE id = 3"), 1);
	sqlite3_close(db);
}
END_TEST

/* A writer on a database that has rows (the passes after the load) numbers
 * after them, reads a node's depth from it, and makes its unshared notes
 * twice when asked twice. */
START_TEST(after_the_rows_there)
{
	struct xp_stackwriter *w;
	int64_t mod, n1, n2, child, again;

	open_db();
	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO StringIds VALUES (7, 'libc.so.6'), (9, 'main');"
				      "INSERT INTO xp_frames(id, symbol, module, kind) VALUES (5, 9, 7, 0);"
				      "INSERT INTO xp_stacks VALUES (1, 0, 5, 1), (2, 1, 5, 2)",
				      NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(xp_stackwriter_open(db, &w), 0);
	ck_assert_int_eq(xp_stackwriter_string(w, "[ddp]", 5, &mod, NULL), 0);
	ck_assert_int_eq(mod, 10);
	ck_assert_int_eq(xp_stackwriter_new_note(w, "[DDP bucket 0]", mod, &n1), 0);
	ck_assert_int_eq(xp_stackwriter_new_note(w, "[DDP bucket 0]", mod, &n2), 0);
	ck_assert_int_eq(n1, 6);
	ck_assert_int_eq(n2, 7);
	ck_assert_int_eq(xp_stackwriter_child(w, 2, n1, &child), 0);
	ck_assert_int_eq(child, 3);
	ck_assert_int_eq(xp_stackwriter_child(w, 2, n1, &again), 0);
	ck_assert_int_eq(again, child);
	ck_assert_int_eq(xp_stackwriter_child(w, 40, n1, &again), -ENOENT);
	/* a string after the notes: its text is still found by its id */
	ck_assert_int_eq(xp_stackwriter_string(w, "[autograd]", 10, &mod, NULL), 0);
	ck_assert_int_eq(mod, 13);
	ck_assert_str_eq(xp_stackwriter_text(w, 13), "[autograd]");
	ck_assert_ptr_null(xp_stackwriter_text(w, 11));
	ck_assert_str_eq(xp_stackwriter_what(w), "");
	xp_stackwriter_close(w);
	ck_assert_int_eq(q1("SELECT depth FROM xp_stacks WHERE id = 3"), 3);
	ck_assert_int_eq(q1("SELECT count(*) FROM StringIds WHERE value = '[DDP bucket 0]'"), 2);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_frames WHERE kind = 8 AND module = 10"), 2);
	sqlite3_close(db);
}
END_TEST

/* A failed insert says which statement; the caller reads sqlite3_errmsg. */
START_TEST(failure_names_the_statement)
{
	struct xp_stackwriter *w;
	int64_t id;

	open_db();
	ck_assert_int_eq(xp_stackwriter_open(db, &w), 0);
	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO StringIds VALUES (1, 'taken')", NULL, NULL, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(xp_stackwriter_string(w, "new", 3, &id, NULL), -EIO);
	ck_assert_ptr_nonnull(strstr(xp_stackwriter_what(w), "StringIds"));
	ck_assert_ptr_nonnull(strstr(sqlite3_errmsg(db), "UNIQUE"));
	xp_stackwriter_close(w);
	sqlite3_close(db);
}
END_TEST

static Suite *stackwriter_suite(void)
{
	Suite *s = suite_create("stackwriter");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, shared_prefixes_are_shared);
	tcase_add_test(tc, ids_dense_and_parents_first);
	tcase_add_test(tc, strings_and_frames_once);
	tcase_add_test(tc, after_the_rows_there);
	tcase_add_test(tc, failure_names_the_statement);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(stackwriter_suite)
