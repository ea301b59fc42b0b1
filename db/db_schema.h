/* db_schema.h - the run database's tables (documented in xpcorr-db(5)).
 * Names follow Nsight Systems' SQLite export where the data is the same
 * (StringIds, COMPOSITE_EVENTS, SAMPLING_CALLCHAINS, ThreadNames, PROCESSES,
 * META_DATA_EXPORT, TARGET_INFO_SYSTEM_ENV) so nsys queries keep working;
 * our own tables start with xp_.
 *
 *   sqlite3 *db; sqlite3_open(tmp_path, &db);
 *   xp_db_create_schema(db);              // tables, before the load
 *   ... inserts ...
 *   xp_db_create_indexes(db);             // indexes and views, after it
 */
#ifndef XP_DB_SCHEMA_H
#define XP_DB_SCHEMA_H

#include <sqlite3.h>

/* Bumped at every incompatible change; also PRAGMA user_version and
 * META_DATA_EXPORT 'xp_schema_version'. */
#define XP_DB_SCHEMA_VERSION 1

/* Frame kinds (xp_frames.kind). */
enum xp_frame_kind {
	XP_FRAME_USER = 0,          /* ELF symbol of a user module */
	XP_FRAME_KERNEL = 1,        /* kallsyms symbol */
	XP_FRAME_JIT = 2,           /* perf-PID.map entry (Python, JIT) */
	XP_FRAME_UNRESOLVED = 3,    /* module+offset or [unknown]+address */
	XP_FRAME_KERNEL_UNRESOLVED = 4, /* kernel address without a kallsyms symbol */
	XP_FRAME_INLINED = 5,       /* a function inlined into its caller (DWARF) */
	XP_FRAME_PYTHON = 6,        /* a Python line at a launch: qualified name,
				     * file and xp_frames.line (pyframe.h) */
	XP_FRAME_GAP = 7,           /* native frames missing between the Python frames
				     * above and the native frames below (pysplice.h) */
	XP_FRAME_NOTE = 8,          /* not a function: a note under a launch's leaf,
				     * "[DDP bucket 2]" (ingest/ddpbuckets.h) */
};

/* Python frames in CPU samples per process (ingest/pystacks_db.c), in the
 * databases of runs with pyframes.xpr only; merge makes it in a job whose
 * runs have it (db/dbmerge.c). */
#define XP_PYTHON_SAMPLED_SQL \
	"CREATE TABLE IF NOT EXISTS xp_python_sampled(pid INTEGER NOT NULL, python TEXT," \
	" supported INTEGER NOT NULL, reason TEXT, samples INTEGER, python_samples INTEGER," \
	" with_frames INTEGER, snapshots INTEGER)"

/* The correlation's index (correlate/db_join.c), made after its rows: the
 * report joins GPU rows to their attribution. */
#define XP_SQL_ATTRIBUTION_INDEX \
	"CREATE INDEX xp_attribution_row ON xp_attribution(gpu_table, gpu_rowid)"

/* Both return an SQLite result code. */
int xp_db_create_schema(sqlite3 *db);
int xp_db_create_indexes(sqlite3 *db);
/* PRAGMA user_version of an open database into *version (any int: a
 * received database may hold a negative one); 0, or -EIO (sqlite3_errmsg). */
int xp_db_schema_version(sqlite3 *db, int *version);
/* Whether the database has a table (or view) of that name: older runs lack
 * the newer ones. */
int xp_db_has_table(sqlite3 *db, const char *name);
/* 1 if table has column: a database ingested before the column existed
 * has not (readers then leave it out). */
int xp_db_has_column(sqlite3 *db, const char *table, const char *column);
/* How many runs a merged job was made of (xp_job_runs, written by xpcorr
 * merge); 0 for a run's own database. */
int xp_db_job_runs(sqlite3 *db);
/* Creates the GPU tables and our own (IF NOT EXISTS), after
 * xp_db_create_schema's base tables (StringIds, xp_stacks, xp_samples,
 * xp_launches, META_DATA_EXPORT, xp_losses), which it does not repeat. */
int xp_gpu_schema_create(sqlite3 *db);

#endif
