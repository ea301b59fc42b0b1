/* test-rowbatch.c - multi-row INSERTs (correlate/row_batch.h): every row
 * arrives once, in order, with its types, across full batches and the
 * partial last one; a malformed row is refused. Rows go into the product's
 * NVTX_EVENTS (an integer, a real, a text and a NULL column of its own). */
#include <string.h>

#include "check-main.h"
#include "correlate/row_batch.h"
#include "db/db_schema.h"

/* a, b, c, d: an INTEGER, a REAL, a TEXT and a column left NULL */
#define T "NVTX_EVENTS(start, doubleValue, text, end, eventType)"
#define A "start"
#define B "doubleValue"
#define C "text"
#define D "end"

static sqlite3 *db;

static void setup(void)
{
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(xp_db_create_schema(db), SQLITE_OK);
	ck_assert_int_eq(xp_gpu_schema_create(db), 0);
}

static void teardown(void)
{
	sqlite3_close(db);
}

static int64_t q1(const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = -1;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

START_TEST(rows_across_batches)
{
	/* two full batches and a partial one, or a partial one only */
	const int n = _i ? 2 * XC_BATCH_ROWS + 7 : 3;
	struct xc_batch b;

	ck_assert_int_eq(xc_batch_init(&b, db, T, 5), 0);
	for (int i = 0; i < n; i++) {
		xc_batch_int(&b, i);
		xc_batch_real(&b, i + 0.5);
		xc_batch_text(&b, i % 2 ? "odd" : "even");
		xc_batch_null(&b);
		xc_batch_int(&b, 34);
		ck_assert_int_eq(xc_batch_row(&b), 0);
	}
	ck_assert_int_eq(q1("SELECT count(*) FROM NVTX_EVENTS"), _i ? 2 * XC_BATCH_ROWS : 0);
	ck_assert_int_eq(xc_batch_flush(&b), 0);
	ck_assert_int_eq(xc_batch_flush(&b), 0);       /* nothing left: no duplicates */
	xc_batch_free(&b);
	ck_assert_int_eq(q1("SELECT count(*) FROM NVTX_EVENTS"), n);
	/* rowid order is insertion order, and each cell kept its type */
	ck_assert_int_eq(q1("SELECT count(*) FROM NVTX_EVENTS WHERE " A " = rowid - 1 AND " B " = " A
			    " + 0.5 AND typeof(" B ") = 'real' AND " C " = CASE " A " % 2 WHEN 1 THEN 'odd'"
			    " ELSE 'even' END AND " D " IS NULL"), n);
}
END_TEST

START_TEST(malformed_rows_refused)
{
	struct xc_batch b;

	ck_assert_int_eq(xc_batch_init(&b, db, "NVTX_EVENTS(start, eventType)", 2), 0);
	xc_batch_int(&b, 1);
	ck_assert_int_lt(xc_batch_row(&b), 0);          /* one cell short */
	xc_batch_free(&b);
	ck_assert_int_lt(xc_batch_init(&b, db, "NVTX_EVENTS(start)", XC_BATCH_MAX_COLS + 1), 0);
	xc_batch_int(&b, 1);
	ck_assert_int_lt(xc_batch_row(&b), 0);
	ck_assert_int_eq(xc_batch_flush(&b), 0);
	xc_batch_free(&b);
	/* SQLite's own refusal comes back as -EIO */
	ck_assert_int_eq(xc_batch_init(&b, db, "no_such_table(a)", 1), 0);
	xc_batch_int(&b, 1);
	ck_assert_int_eq(xc_batch_row(&b), 0);
	ck_assert_int_lt(xc_batch_flush(&b), 0);
	xc_batch_free(&b);
	ck_assert_int_eq(q1("SELECT count(*) FROM NVTX_EVENTS"), 0);
}
END_TEST

static Suite *rowbatch_suite(void)
{
	Suite *s = suite_create("rowbatch");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, rows_across_batches, 0, 2);
	tcase_add_test(tc, malformed_rows_refused);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(rowbatch_suite)
