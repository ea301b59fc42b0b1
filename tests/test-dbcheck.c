/* test-dbcheck.c - the schema check and the limits of a received database
 * (issue 38): a generated or retyped column of ours, or a virtual table in
 * place of ours, is refused (a generated StringIds.value sent report to
 * 3.7 GB and 120 s); SQLite's limits hold on a received connection. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "check-main.h"
#include "db/db_schema.h"
#include "db/dbcheck.h"
#include "gpu-testdb.h"

static sqlite3 *db;

static void exec(const char *sql)
{
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK, "%s: %s", sql,
		      sqlite3_errmsg(db));
}

static void setup(void)
{
	db = testdb_open(":memory:");
	ck_assert_ptr_nonnull(db);
}

static void teardown(void)
{
	sqlite3_close(db);
}

/* The schema check of a database with our schema, as a reader opens it. */
static int check(char *why, size_t len)
{
	exec(XP_SQL_ATTRIBUTION_INDEX);
	ck_assert_int_eq(xp_db_create_indexes(db), SQLITE_OK);
	return xp_db_check_schema(db, why, len);
}

START_TEST(ours_passes)
{
	char why[400] = "";

	ck_assert_msg(check(why, sizeof(why)) == 0, "%s", why);
}
END_TEST

START_TEST(generated_column_refused)
{
	char why[400] = "";

	exec("ALTER TABLE StringIds ADD COLUMN big TEXT GENERATED ALWAYS AS"
	     " (value || printf('%.*c', 100000000, 'x'))");
	ck_assert_int_eq(check(why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "column StringIds.big is generated, which no ingest makes");
}
END_TEST

START_TEST(retyped_column_refused)
{
	char why[400] = "";

	exec("DROP TABLE xp_warnings");
	exec("CREATE TABLE xp_warnings(file TEXT NOT NULL, offset BLOB, message TEXT NOT NULL)");
	ck_assert_int_eq(check(why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "column xp_warnings.offset is declared 'BLOB', not 'INTEGER'");
}
END_TEST

/* A negative user_version is a version, not "cannot be read": the -1 of
 * xp_db_schema_version meant both, and the line said SQLite's "not an error". */
START_TEST(negative_version_named)
{
	char why[400] = "", want[200];

	exec("PRAGMA user_version = -1");
	ck_assert_int_eq(check(why, sizeof(why)), -EPROTO);
	snprintf(want, sizeof(want), "schema version -1, where this xpcorr reads %d",
		 XP_DB_SCHEMA_VERSION);
	ck_assert_str_eq(why, want);
}
END_TEST

START_TEST(virtual_table_refused)
{
	char why[400] = "";

	exec("DROP TABLE xp_losses");
	if (sqlite3_exec(db, "CREATE VIRTUAL TABLE xp_losses USING fts4(ts, kind, reason, count)",
			 NULL, NULL, NULL) != SQLITE_OK) {
		printf("skip virtual_table_refused: this SQLite has no fts4 (%s)\n", sqlite3_errmsg(db));
		return;
	}
	ck_assert_int_eq(check(why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "xp_losses is a virtual table, not a table");
}
END_TEST

/* A string past SQLite's length limit is not made (printf gives NULL,
 * zeroblob fails); views are off. */
START_TEST(limits_hold)
{
	sqlite3_stmt *st;

	exec("CREATE VIEW mine AS SELECT 1");
	xp_db_limit_received(db);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT length(printf('%.*c', 20000000, 'x'))", -1,
					    &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_type(st, 0), SQLITE_NULL);
	sqlite3_finalize(st);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT zeroblob(20000000)", -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_TOOBIG);
	sqlite3_finalize(st);
	ck_assert_int_ne(sqlite3_prepare_v2(db, "SELECT * FROM mine", -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT length(printf('%.*c', 1000000, 'x'))", -1,
					    &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(st, 0), 1000000);
	sqlite3_finalize(st);
}
END_TEST

/* The work limit reaches the caller on the connection: the statement it
 * stopped fails with SQLITE_INTERRUPT, and xp_db_work_why names the limit
 * (no process-wide "exhausted" to ask afterwards). */
START_TEST(work_limit_on_connection)
{
	sqlite3_stmt *st;
	char why[400];

	setenv("XPCORR_MAX_DB_WORK", "1000", 1);
	xp_db_limit_work(db, 4096);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
					    " SELECT i + 1 FROM n LIMIT 10000000) SELECT count(*) FROM n",
					    -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_INTERRUPT);
	ck_assert_int_eq(sqlite3_errcode(db), SQLITE_INTERRUPT);
	sqlite3_finalize(st);
	xp_db_work_why(why, sizeof(why));
	ck_assert_str_eq(why, "the database queries were stopped after 1000 steps, the limit for"
			 " the size of the databases read (a damaged or hostile database?);"
			 " XPCORR_MAX_DB_WORK=STEPS sets another");
	unsetenv("XPCORR_MAX_DB_WORK");
}
END_TEST

static Suite *dbcheck_suite(void)
{
	Suite *s = suite_create("dbcheck");
	TCase *tc = tcase_create("received");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ours_passes);
	tcase_add_test(tc, generated_column_refused);
	tcase_add_test(tc, retyped_column_refused);
	tcase_add_test(tc, virtual_table_refused);
	tcase_add_test(tc, negative_version_named);
	tcase_add_test(tc, limits_hold);
	tcase_add_test(tc, work_limit_on_connection);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(dbcheck_suite)
