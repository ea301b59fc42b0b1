/* db_schema.c - CREATE statements of the run database; see db_schema.h.
 * Indexes are built after the bulk load, which is several times faster
 * than maintaining them row by row. */
#include "db/db_schema.h"
#include "src/gtid.h"

#include <errno.h>
#include <stdio.h>

static const char schema_sql[] =
	"PRAGMA user_version = 1;\n"
	"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);\n"
	"CREATE TABLE META_DATA_EXPORT(name TEXT NOT NULL, value TEXT);\n"
	"CREATE TABLE TARGET_INFO_SYSTEM_ENV(name TEXT NOT NULL, value TEXT);\n"
	"CREATE TABLE PROCESSES(globalPid INTEGER NOT NULL, pid INTEGER NOT NULL,"
	" name TEXT);\n"
	"CREATE TABLE ThreadNames(nameId INTEGER NOT NULL, priority INTEGER,"
	" globalTid INTEGER NOT NULL);\n"
	"CREATE TABLE xp_modules(id INTEGER PRIMARY KEY, path INTEGER NOT NULL,"
	" build_id TEXT, status TEXT NOT NULL);\n"
	"CREATE TABLE xp_mappings(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL,"
	" start INTEGER NOT NULL, end INTEGER NOT NULL, pgoff INTEGER NOT NULL,"
	" ts INTEGER NOT NULL, from_proc INTEGER NOT NULL, module INTEGER NOT NULL);\n"
	/* a Python line (pyframe.h): symbol its qualified name, module its file,
	 * line its line (-1: none known); NULL for every other frame */
	"CREATE TABLE xp_frames(id INTEGER PRIMARY KEY, symbol INTEGER NOT NULL,"
	" module INTEGER NOT NULL, kind INTEGER NOT NULL, line INTEGER);\n"
	"CREATE TABLE xp_stacks(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL,"
	" frame INTEGER NOT NULL, depth INTEGER NOT NULL);\n"
	"CREATE TABLE xp_samples(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL,"
	" pid INTEGER NOT NULL, tid INTEGER NOT NULL, cpu INTEGER NOT NULL,"
	" stack_id INTEGER NOT NULL, period INTEGER NOT NULL);\n"
	"CREATE TABLE xp_launches(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL,"
	" pid INTEGER NOT NULL, tid INTEGER NOT NULL, cpu INTEGER NOT NULL,"
	" correlation_id INTEGER NOT NULL, cbid INTEGER NOT NULL,"
	" stack_id INTEGER);\n"          /* NULL: a launch without a frame (db/launch.h) */
	"CREATE TABLE xp_switches(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL,"
	" duration INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER NOT NULL,"
	" cpu INTEGER NOT NULL, prev_state INTEGER NOT NULL, stack_id INTEGER NOT NULL);\n"
	"CREATE TABLE xp_tasks(ts INTEGER NOT NULL, event TEXT NOT NULL,"
	" pid INTEGER NOT NULL, tid INTEGER NOT NULL, ppid INTEGER, ptid INTEGER,"
	" name TEXT);\n"
	"CREATE TABLE xp_record_counts(stream TEXT NOT NULL, kind TEXT NOT NULL,"
	" records INTEGER NOT NULL);\n"
	"CREATE TABLE xp_losses(ts INTEGER, kind TEXT NOT NULL, reason TEXT NOT NULL,"
	" count INTEGER NOT NULL, source TEXT NOT NULL);\n"
	"CREATE TABLE xp_warnings(file TEXT NOT NULL, offset INTEGER, message TEXT NOT NULL);\n"
	"CREATE TABLE xp_python_processes(pid INTEGER NOT NULL, python TEXT, supported INTEGER,"
	" reason TEXT, launches INTEGER NOT NULL, with_python INTEGER NOT NULL,"
	" joined_gap INTEGER NOT NULL, on_python_threads INTEGER NOT NULL,"
	" no_thread INTEGER NOT NULL, unsupported INTEGER NOT NULL, unreadable INTEGER NOT NULL,"
	" lost_other INTEGER NOT NULL, stack_records INTEGER NOT NULL,"
	" code_records INTEGER NOT NULL);\n";

/* The nsys-compatible sample views. SAMPLING_CALLCHAINS walks the prefix
 * tree from each sample's leaf node up to the root: stackDepth 0 is the leaf. */
static const char index_sql[] =
	/* covering for the correlation's per-thread sample sweep */
	"CREATE INDEX xp_samples_pid_tid_ts ON xp_samples(pid, tid, ts, stack_id);\n"
	"CREATE INDEX xp_samples_stack ON xp_samples(stack_id);\n"
	"CREATE INDEX xp_stacks_parent ON xp_stacks(parent);\n"
	"CREATE INDEX xp_launches_corr ON xp_launches(pid, correlation_id);\n"
	"CREATE INDEX xp_launches_pid_tid_ts ON xp_launches(pid, tid, ts);\n"
	"CREATE INDEX xp_switches_pid_tid_ts ON xp_switches(pid, tid, ts);\n"
	"CREATE VIEW COMPOSITE_EVENTS AS SELECT id, ts AS start,"
	" " XP_SQL_GTID("pid", "tid") " AS globalTid, cpu, 1 AS threadState, 0 AS threadTimeNs,"
	" period AS cpuCycles FROM xp_samples;\n"
	"CREATE VIEW SAMPLING_CALLCHAINS AS WITH RECURSIVE walk(id, node, stackDepth) AS"
	" (SELECT id, stack_id, 0 FROM xp_samples"
	"  UNION ALL SELECT walk.id, s.parent, walk.stackDepth + 1 FROM walk"
	"  JOIN xp_stacks s ON s.id = walk.node WHERE s.parent != 0)"
	" SELECT walk.id AS id, f.symbol AS symbol, f.module AS module,"
	" walk.stackDepth AS stackDepth, f.kind IN (1, 4) AS isKernel"
	" FROM walk JOIN xp_stacks s ON s.id = walk.node JOIN xp_frames f ON f.id = s.frame;\n"
	"CREATE VIEW xp_frame_names AS SELECT f.id, sym.value AS symbol, mod.value AS module,"
	" f.kind, f.line FROM xp_frames f JOIN StringIds sym ON sym.id = f.symbol"
	" JOIN StringIds mod ON mod.id = f.module;\n";

int xp_db_create_schema(sqlite3 *db)
{
	return sqlite3_exec(db, schema_sql, NULL, NULL, NULL);
}

int xp_db_create_indexes(sqlite3 *db)
{
	return sqlite3_exec(db, index_sql, NULL, NULL, NULL);
}

int xp_db_schema_version(sqlite3 *db, int *version)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -EIO;
}

int xp_db_has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int yes;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = ?", -1, &st, NULL)
	    != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

int xp_db_has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *st;
	int yes;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

int xp_db_job_runs(sqlite3 *db)
{
	sqlite3_stmt *st;
	int n = 0;

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM xp_job_runs", -1, &st, NULL) != SQLITE_OK)
		return 0;           /* a run's own database: no such table */
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n;
}
