/* fuzz-sql.h - what the targets that mutate a seed database share: its
 * tables, a fresh in-memory copy per input, and a table's columns by
 * number (fuzz-db, fuzz-jobsum). */
#ifndef XP_FUZZ_SQL_H
#define XP_FUZZ_SQL_H

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* The names of db's tables, up to max of them (strdup); how many. */
static int fuzz_sql_tables(sqlite3 *db, char **tables, int max)
{
	sqlite3_stmt *st;
	int n = 0;

	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'"
			       " ORDER BY name", -1, &st, NULL) == SQLITE_OK)
		while (n < max && sqlite3_step(st) == SQLITE_ROW)
			tables[n++] = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return n;
}

/* A database of its own holding the serialized seed; aborts on failure. */
static sqlite3 *fuzz_sql_copy(const unsigned char *seed, sqlite3_int64 len)
{
	unsigned char *copy = sqlite3_malloc64((sqlite3_uint64)len);
	sqlite3 *db;

	if (!copy || sqlite3_open(":memory:", &db) != SQLITE_OK)
		abort();
	memcpy(copy, seed, (size_t)len);
	if (sqlite3_deserialize(db, "main", copy, len, len,
				SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) != SQLITE_OK)
		abort();
	sqlite3_exec(db, "PRAGMA legacy_alter_table = ON", NULL, NULL, NULL);
	return db;
}

/* The first column of the first row of sql (sqlite3_free; NULL: none). */
static char *fuzz_sql_one_name(sqlite3 *db, char *sql)
{
	sqlite3_stmt *st;
	char *name = NULL;

	if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			name = sqlite3_mprintf("%s", sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	sqlite3_free(sql);
	return name;
}

/* The name of column c (modulo their number) of table t (sqlite3_free;
 * NULL: none). */
static char *fuzz_sql_column(sqlite3 *db, const char *t, unsigned c)
{
	return fuzz_sql_one_name(db, sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q) LIMIT 1"
						     " OFFSET %u %% max(1, (SELECT count(*) FROM"
						     " pragma_table_info(%Q)))", t, c, t));
}

#endif
