/* test-callstacks.c - export/analysis/callstacks.c against SQLite's own LEFT JOIN of
 * the calls to xp_launches (the query it replaces), on launches a real run
 * has (a process's dense correlation ids) and ones only a hostile database
 * has: ids far apart (the map), a key recorded twice, a tid shared by two
 * threads' ids, NULL stacks, pids and tids out of globalTid's range. */
#include <stdio.h>
#include <stdlib.h>

#include "export/analysis/callstacks.h"
#include "check-main.h"
#include "gpu-testdb.h"

static sqlite3 *db;

static void exec(const char *sql)
{
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK, "%s: %s", sql,
		      sqlite3_errmsg(db));
}

static void call(int64_t pid, int64_t tid, int64_t corr)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(start, end, eventClass,"
		 " globalTid, correlationId, nameId, returnValue) VALUES (1, 2, 0, (%lld << 24) | %lld,"
		 " %lld, 1, 0)", (long long)pid, (long long)tid, (long long)corr);
	exec(sql);
}

static void launch(int64_t pid, int64_t tid, int64_t corr, const char *stack)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "INSERT INTO xp_launches(ts, pid, tid, cpu, correlation_id, cbid,"
		 " stack_id) VALUES (1, %lld, %lld, 0, %lld, 211, %s)", (long long)pid, (long long)tid,
		 (long long)corr, stack);
	exec(sql);
}

static void setup(void)
{
	char stack[32];

	db = testdb_open(":memory:");
	ck_assert_ptr_nonnull(db);
	exec("BEGIN");
	for (int c = 1; c <= 2000; c++) {       /* pid 100: dense ids, every other call launched */
		call(100, 101, c);
		snprintf(stack, sizeof(stack), "%d", 10 * c);
		if (c % 2)
			launch(100, 101, c, stack);
	}
	launch(100, 101, 5, "77");               /* a key recorded twice */
	launch(100, 102, 7, "88");               /* another thread's record of the same id */
	call(100, 102, 7);
	launch(100, 101, 9, "NULL");             /* no stack */
	call(200, 201, 1);                       /* pid 200: ids far apart */
	call(200, 201, 1000000000);
	call(200, 201, INT64_C(5000000000000));
	launch(200, 201, 1, "5");
	launch(200, 201, 1000000000, "6");
	launch(200, 201, INT64_C(5000000000000), "7");
	launch(200, 201, INT64_C(5000000000000), "8");
	launch(INT64_C(1) << 40, 1, 1, "9");     /* out of globalTid's range: never joined */
	launch(300, INT64_C(1) << 25, 1, "9");
	call(300, 1, 1);
	call(-5, 3, 4);                          /* a negative pid in globalTid */
	launch(-5, 3, 4, "11");
	exec("COMMIT");
}

static void teardown(void)
{
	sqlite3_close(db);
}

START_TEST(same_as_the_join)
{
	sqlite3_stmt *s;
	struct xp_callstacks *c;
	int64_t rows = 0, found = 0, sum_sql = 0, sum_c = 0;
	int64_t last_rowid = -1, n_sql = 0, n_c = 0;

	ck_assert_int_eq(xp_callstacks_load(db, &c), 0);
	/* one row per match, as the view's old query read them */
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT r.rowid, r.globalTid, r.correlationId,"
					    " ifnull(l.stack_id, -1) FROM CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN"
					    " xp_launches l ON l.pid = (r.globalTid >> 24) AND l.correlation_id ="
					    " r.correlationId AND +l.tid = (r.globalTid & 16777215) ORDER BY"
					    " r.rowid", -1, &s, NULL), SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t rowid = sqlite3_column_int64(s, 0), gtid = sqlite3_column_int64(s, 1);
		int64_t corr = sqlite3_column_int64(s, 2);

		sum_sql += sqlite3_column_int64(s, 3);
		n_sql++;
		if (rowid == last_rowid)
			continue;
		last_rowid = rowid;
		rows++;
		size_t k = xp_callstacks_find(c, gtid, corr, 0);

		if (!k) {
			sum_c += -1;
			n_c++;
		}
		for (; k; k = xp_callstacks_find(c, gtid, corr, k)) {
			sum_c += xp_callstacks_stack(c, k);
			n_c++;
			found++;
		}
	}
	sqlite3_finalize(s);
	ck_assert_int_eq(rows, 2000 + 1 + 3 + 1 + 1);
	ck_assert_int_eq(n_c, n_sql);                   /* a key twice: two rows */
	ck_assert_int_eq(sum_c, sum_sql);
	ck_assert_int_eq(found, 1000 + 2 + 1 + 4 + 1);  /* odd ids, 5 and 9 twice, tid 102, pid 200, -5 */
	xp_callstacks_free(c);
}
END_TEST

static Suite *callstacks_suite(void)
{
	Suite *s = suite_create("callstacks");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, same_as_the_join);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(callstacks_suite)
