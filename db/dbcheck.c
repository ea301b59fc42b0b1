/* dbcheck.c - a received database's schema against ours, and the bound on
 * its queries' work; see dbcheck.h. Ours is made afresh in memory by the
 * same statements ingest, the correlation and merge run, so the check can
 * never lag behind the schema. What is compared is what a reader's time
 * depends on (kinds of objects, keys, indexes), not the CREATE text: the
 * databases of older ingests, with fewer columns and tables, stay
 * readable. */
#include "db/dbcheck.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db/db_schema.h"
#include "db/dbmerge.h"

/* Our schema in a memory database: the objects every ingest makes, listed
 * in temp.required, then those only some databases have (a merged job's
 * xp_job_runs, the correlation's index, which an ingest without the
 * correlation lacks, xp_python_sampled of runs with pyframes.xpr). */
static int reference(sqlite3 **ref)
{
	if (sqlite3_open_v2(":memory:", ref, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		return -ENOMEM;
	if (xp_db_create_schema(*ref) != SQLITE_OK || xp_gpu_schema_create(*ref) ||
	    xp_db_create_indexes(*ref) != SQLITE_OK ||
	    sqlite3_exec(*ref, "CREATE TEMP TABLE required AS SELECT name FROM main.sqlite_master;"
			 XP_JOB_RUNS_SQL ";" XP_SQL_ATTRIBUTION_INDEX ";" XP_PYTHON_SAMPLED_SQL ";",
			 NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	return 0;
}

/* A one-column result of sql (with ?1 = a, ?2 = b) as one string,
 * "c1,c2,..." ("" when no row, NULL on error). */
static char *column_list(sqlite3 *db, const char *sql, const char *a, const char *b)
{
	sqlite3_str *out = sqlite3_str_new(db);
	sqlite3_stmt *st;
	int n = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_free(sqlite3_str_finish(out));
		return NULL;
	}
	sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);

		sqlite3_str_appendf(out, "%s%s", n++ ? "," : "", v ? v : "?");
	}
	sqlite3_finalize(st);
	return sqlite3_str_finish(out) ?: sqlite3_mprintf("%s", "");
}

/* Our table's keys are its keys where it has their columns (a table
 * rebuilt without them makes every lookup a scan); columns may be missing
 * (an older ingest; a query on one fails) or added. */
static int check_table(sqlite3 *db, sqlite3 *ref, const char *name, char *err, size_t len)
{
	char *want = column_list(ref, "SELECT lower(name) || ':' || pk FROM pragma_table_info(?1)"
				 " WHERE pk > 0 ORDER BY pk", name, NULL);
	char *have = column_list(db, "SELECT ',' || lower(name) || ':' || pk || ',' FROM"
				 " pragma_table_info(?1)", name, NULL);
	char col[256];
	int e = !want || !have ? -EBADMSG : 0;

	for (char *k = want; !e && k && *k; k += strcspn(k, ","), k += *k == ',') {
		size_t n = strcspn(k, ":");

		/* ",id:" there but not ",id:1,": the column is no key */
		snprintf(col, sizeof(col), ",%.*s:", (int)(n < 200 ? n : 200), k);
		if (strstr(have, col)) {
			snprintf(col, sizeof(col), ",%.*s,", (int)strcspn(k, ",") < 200 ?
				 (int)strcspn(k, ",") : 200, k);
			if (!strstr(have, col))
				e = -EBADMSG;
		}
	}
	if (e)
		snprintf(err, len, "table %s does not have our keys (%s)", name, want ? want : "?");
	sqlite3_free(want);
	sqlite3_free(have);
	return e;
}

/* Our index is on our table, whole (not partial, no expression), its
 * columns ours; an older ingest's may lack the covering column ours ends
 * with. */
static int check_index(sqlite3 *db, sqlite3 *ref, const char *name, const char *table,
		       char *err, size_t len)
{
	static const char cols[] = "SELECT lower(name) FROM pragma_index_info(?1) ORDER BY seqno";
	static const char partial[] = "SELECT partial FROM pragma_index_list(?2) WHERE name = ?1";
	char *want = column_list(ref, cols, name, NULL), *have = column_list(db, cols, name, NULL);
	char *part = column_list(db, partial, name, table);
	size_t n = have ? strlen(have) : 0;
	int e = 0;

	if (!want || !have || !part || strcmp(part, "0") || !n || strncmp(want, have, n) ||
	    (want[n] && (want[n] != ',' || strchr(want + n + 1, ',')))) {
		snprintf(err, len, "index %s is not ours (on %s%s, not on %s)", name,
			 have && *have ? have : "?", part && !strcmp(part, "1") ? ", partial" : "",
			 want ? want : "?");
		e = -EBADMSG;
	}
	sqlite3_free(want);
	sqlite3_free(have);
	sqlite3_free(part);
	return e;
}

/* Our table's columns as ours: none hidden or generated (a generated
 * column's expression runs at every read, one VM step that may build a
 * 100 MB string: the work budget never sees it), and each column we have
 * declared with our type (the type's affinity decides how values compare,
 * and so which index a join can use). Columns we lack may be there. */
static int check_columns(sqlite3 *db, sqlite3 *ref, const char *name, char *err, size_t len)
{
	sqlite3_stmt *theirs = NULL, *ours = NULL;
	int rc, e = 0;

	if (sqlite3_prepare_v2(db, "SELECT name, upper(trim(type)), hidden FROM pragma_table_xinfo(?1)",
			       -1, &theirs, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(ref, "SELECT upper(trim(type)) FROM pragma_table_xinfo(?1)"
			       " WHERE name = ?2 COLLATE NOCASE", -1, &ours, NULL) != SQLITE_OK) {
		snprintf(err, len, "%s", sqlite3_errmsg(theirs ? ref : db));
		sqlite3_finalize(theirs);
		return -EIO;
	}
	sqlite3_bind_text(theirs, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(ours, 1, name, -1, SQLITE_STATIC);
	while (!e && (rc = sqlite3_step(theirs)) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(theirs, 0);
		const char *type = (const char *)sqlite3_column_text(theirs, 1);
		int hidden = sqlite3_column_int(theirs, 2);

		if (hidden) {
			snprintf(err, len, "column %s.%s is %s, which no ingest makes", name, col ? col : "?",
				 hidden == 1 ? "hidden" : "generated");
			e = -EBADMSG;
			break;
		}
		sqlite3_bind_text(ours, 2, col, -1, SQLITE_STATIC);
		if (sqlite3_step(ours) == SQLITE_ROW) {
			const char *want = (const char *)sqlite3_column_text(ours, 0);

			if (!type || !want || strcmp(type, want)) {
				snprintf(err, len, "column %s.%s is declared '%s', not '%s'", name, col,
					 type ? type : "?", want ? want : "?");
				e = -EBADMSG;
			}
		}
		sqlite3_reset(ours);
	}
	if (!e && rc != SQLITE_DONE) {
		snprintf(err, len, "%s", sqlite3_errmsg(db));
		e = -EIO;
	}
	sqlite3_finalize(theirs);
	sqlite3_finalize(ours);
	return e;
}

/* One object of the received database: one of our names is our kind of
 * object (a view in place of a table recurses forever; a virtual table runs
 * a module's code at every read), and a table has our keys and columns.
 * Planner statistics would steer every plan. 0 or -EBADMSG. */
static int check_object(sqlite3 *db, sqlite3 *ref, sqlite3_stmt *ours, sqlite3_stmt *theirs,
			char *err, size_t len)
{
	const char *type = (const char *)sqlite3_column_text(theirs, 0);
	const char *name = (const char *)sqlite3_column_text(theirs, 1);
	int virtual = sqlite3_column_int(theirs, 2), e = 0;

	if (!type || !name)
		return 0;
	if (!strncasecmp(name, "sqlite_stat", 11)) {
		snprintf(err, len, "%s holds planner statistics, which no ingest writes", name);
		return -EBADMSG;
	}
	sqlite3_bind_text(ours, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(ours) == SQLITE_ROW) {
		const char *want = (const char *)sqlite3_column_text(ours, 0);

		if (!want || strcmp(want, type)) {
			snprintf(err, len, "%s is %s %s, not %s %s", name, *type == 'i' ? "an" : "a", type,
				 want && *want == 'i' ? "an" : "a", want ? want : "?");
			e = -EBADMSG;
		} else if (!strcmp(type, "table") && virtual) {
			snprintf(err, len, "%s is a virtual table, not a table", name);
			e = -EBADMSG;
		} else if (!strcmp(type, "table")) {
			e = check_table(db, ref, name, err, len);
			if (!e)
				e = check_columns(db, ref, name, err, len);
		}
	}
	sqlite3_reset(ours);
	return e;
}

/* Every object of the received database. */
static int check_objects(sqlite3 *db, sqlite3 *ref, char *err, size_t len)
{
	sqlite3_stmt *theirs = NULL, *ours = NULL;
	int rc, e = 0;

	if (sqlite3_prepare_v2(db, "SELECT type, name, sql LIKE 'CREATE VIRTUAL %'"
			       " FROM main.sqlite_master", -1, &theirs,
			       NULL) != SQLITE_OK) {
		snprintf(err, len, "%s", sqlite3_errmsg(db));
		return -EIO;
	}
	if (sqlite3_prepare_v2(ref, "SELECT type FROM main.sqlite_master WHERE name = ?1 COLLATE NOCASE",
			       -1, &ours, NULL) != SQLITE_OK)
		e = -ENOMEM;
	while (!e && (rc = sqlite3_step(theirs)) == SQLITE_ROW)
		e = check_object(db, ref, ours, theirs, err, len);
	if (!e && rc != SQLITE_DONE) {
		snprintf(err, len, "%s", sqlite3_errmsg(db));
		e = -EIO;
	}
	sqlite3_finalize(theirs);
	sqlite3_finalize(ours);
	return e;
}

/* Each index every ingest makes is there when its table is (a table
 * without its index makes joins quadratic); the others, when there, are
 * ours. */
static int check_indexes(sqlite3 *db, sqlite3 *ref, char *err, size_t len)
{
	sqlite3_stmt *req = NULL, *has = NULL;
	int e = 0;

	if (sqlite3_prepare_v2(ref, "SELECT m.name, m.tbl_name, r.name IS NOT NULL FROM"
			       " main.sqlite_master m LEFT JOIN temp.required r ON r.name = m.name"
			       " WHERE m.type = 'index' AND m.sql IS NOT NULL", -1, &req, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM main.sqlite_master WHERE type = 'index'"
			       " AND name = ?1 COLLATE NOCASE AND tbl_name = ?2 COLLATE NOCASE),"
			       " (SELECT count(*) FROM main.sqlite_master WHERE type = 'table'"
			       " AND name = ?2 COLLATE NOCASE)", -1, &has, NULL) != SQLITE_OK) {
		snprintf(err, len, "%s", sqlite3_errmsg(req ? db : ref));
		e = -EIO;
	}
	while (!e && sqlite3_step(req) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(req, 0);
		const char *table = (const char *)sqlite3_column_text(req, 1);

		sqlite3_bind_text(has, 1, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(has, 2, table, -1, SQLITE_STATIC);
		if (sqlite3_step(has) == SQLITE_ROW && sqlite3_column_int(has, 1)) {
			if (!sqlite3_column_int(has, 0) && sqlite3_column_int(req, 2)) {
				snprintf(err, len, "no index %s on table %s", name, table);
				e = -EBADMSG;
			} else if (sqlite3_column_int(has, 0)) {
				e = check_index(db, ref, name, table, err, len);
			}
		}
		sqlite3_reset(has);
	}
	sqlite3_finalize(req);
	sqlite3_finalize(has);
	return e;
}

int xp_db_check_schema(sqlite3 *db, char *err, size_t len)
{
	sqlite3 *ref = NULL;
	int v, e;

	if (xp_db_schema_version(db, &v) < 0) {
		/* not a database, or a schema past the limits SQLite reads it under */
		snprintf(err, len, "its schema cannot be read: %s", sqlite3_errmsg(db));
		return -EPROTO;
	}
	if (v != XP_DB_SCHEMA_VERSION) {
		snprintf(err, len, "schema version %d, where this xpcorr reads %d", v,
			 XP_DB_SCHEMA_VERSION);
		return -EPROTO;
	}
	e = reference(&ref);
	if (e)
		snprintf(err, len, "cannot make the reference schema: %s",
			 ref ? sqlite3_errmsg(ref) : "out of memory");
	if (!e)
		e = check_objects(db, ref, err, len);
	if (!e)
		e = check_indexes(db, ref, err, len);
	sqlite3_close(ref);
	return e;
}

/* SQLite's own limits on a received database, far above what ours needs
 * (our widest table has 22 columns, our longest string some kilobytes):
 * an expression or a string the schema makes cannot grow past them. */
static const struct { int what, value; } received_limits[] = {
	{ SQLITE_LIMIT_LENGTH, 16 << 20 },          /* a string or blob, in bytes */
	{ SQLITE_LIMIT_SQL_LENGTH, 1 << 20 },       /* a statement, the schema's included */
	{ SQLITE_LIMIT_COLUMN, 128 },
	{ SQLITE_LIMIT_EXPR_DEPTH, 100 },
	{ SQLITE_LIMIT_COMPOUND_SELECT, 16 },
	{ SQLITE_LIMIT_VDBE_OP, 100000 },
	{ SQLITE_LIMIT_FUNCTION_ARG, 32 },
	{ SQLITE_LIMIT_ATTACHED, 0 },
	{ SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000 },
	{ SQLITE_LIMIT_TRIGGER_DEPTH, 1 },
};

void xp_db_limit_received(sqlite3 *db)
{
	for (size_t i = 0; i < sizeof(received_limits) / sizeof(received_limits[0]); i++)
		sqlite3_limit(db, received_limits[i].what, received_limits[i].value);
	/* the schema's own SQL runs no function that is not innocuous and no
	 * virtual table; xpcorr reads no view and writes nothing, so views and
	 * triggers are off altogether */
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
}

/* The process's budget of VM steps, spent by every bounded connection. */
static _Atomic unsigned long long work_budget, work_used;
static _Atomic int work_fixed;      /* XPCORR_MAX_DB_WORK was given */

#define WORK_TICK 10000             /* VM steps between two calls of the handler */

static int on_progress(void *ctx)
{
	(void)ctx;
	return atomic_fetch_add(&work_used, WORK_TICK) + WORK_TICK > atomic_load(&work_budget);
}

void xp_db_limit_work(sqlite3 *db, uint64_t file_bytes)
{
	const char *env = getenv("XPCORR_MAX_DB_WORK");
	char *end;

	if (env && *env) {
		unsigned long long v = strtoull(env, &end, 10);

		if (!*end && v) {
			atomic_store(&work_budget, v);
			atomic_store(&work_fixed, 1);
		}
	}
	if (!atomic_load(&work_fixed)) {
		/* at least XP_DB_WORK_MIN for the first database */
		atomic_compare_exchange_strong(&work_budget, &(unsigned long long){ 0 }, XP_DB_WORK_MIN);
		atomic_fetch_add(&work_budget, (file_bytes + 4095) / 4096 * XP_DB_WORK_PER_PAGE);
	}
	sqlite3_progress_handler(db, WORK_TICK, on_progress, NULL);
}

int xp_db_work_spend(uint64_t steps)
{
	unsigned long long budget = atomic_load(&work_budget);

	/* no bounded database opened: nothing to spend */
	return budget && atomic_fetch_add(&work_used, steps) + steps > budget;
}

static _Atomic int work_said;

void xp_db_work_said(void)
{
	atomic_store(&work_said, 1);
}

int xp_db_work_was_said(void)
{
	return atomic_load(&work_said);
}

void xp_db_work_reset(void)
{
	atomic_store(&work_budget, 0);
	atomic_store(&work_used, 0);
	atomic_store(&work_said, 0);
}

void xp_db_work_why(char *msg, size_t len)
{
	snprintf(msg, len, "the database queries were stopped after %llu steps, the limit for the"
		 " size of the databases read (a damaged or hostile database?);"
		 " XPCORR_MAX_DB_WORK=STEPS sets another", atomic_load(&work_budget));
}

int xp_db_work_exhausted(char *msg, size_t len)
{
	unsigned long long budget = atomic_load(&work_budget);

	if (!budget || atomic_load(&work_used) <= budget)
		return 0;
	xp_db_work_why(msg, len);
	return 1;
}
