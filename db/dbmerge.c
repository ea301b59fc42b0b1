/* dbmerge.c - runs' databases into one job database; see dbmerge.h.
 * One rule per table says what its columns are (a name, a stack node, a
 * pid, a time, ...); every table of the job's schema must have one, so a
 * table added later cannot be silently left out of merged jobs. */
#include "db/dbmerge.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_schema.h"
#include "db/dbmerge_priv.h"
#include "src/gtid.h"

enum col_map {
	MAP_COPY,                   /* as it is (the default for unnamed columns) */
	MAP_DROP,                   /* a row id: the job numbers its own */
	MAP_STR,                    /* a StringIds id */
	MAP_MODULE,                 /* an xp_modules id */
	MAP_STACK,                  /* an xp_stacks node id */
	MAP_PID,                    /* a process id */
	MAP_GPID,                   /* pid << 24 */
	MAP_GTID,                   /* pid << 24 | tid */
	MAP_TS,                     /* a time on the run's clock */
	MAP_LABEL,                  /* a stream's name: "label/name" */
	MAP_HOST,                   /* a host name: the run's when NULL */
};

enum table_policy {
	T_ROWS,                     /* every run's rows, mapped */
	T_FIRST_RUN,                /* the job's metadata: run 0's rows */
	T_REGENERATED,              /* the correlation's: written again for the job */
	T_STATIC,                   /* the same in every database (enums) */
	T_SHARED,                   /* names, frames, stack nodes: de-duplicated */
	T_RUN_ONLY,                 /* a run's own, left out of the job */
};

struct col_rule {
	const char *col;
	enum col_map map;
};

struct table_rule {
	const char *table;
	enum table_policy policy;
	struct col_rule cols[8];
};

/* Tables only some runs have: made in the job (by our statement, never
 * the run's) when a run has one. */
static const struct { const char *table, *sql; } made_when_had[] = {
	{ "xp_python_sampled", XP_PYTHON_SAMPLED_SQL },
};

#define TS2 { "start", MAP_TS }, { "end", MAP_TS }

static const struct table_rule rules[] = {
	{ "StringIds", T_SHARED, { { NULL } } },
	{ "xp_frames", T_SHARED, { { NULL } } },
	{ "xp_stacks", T_SHARED, { { NULL } } },
	{ "META_DATA_EXPORT", T_FIRST_RUN, { { NULL } } },
	{ "TARGET_INFO_SYSTEM_ENV", T_FIRST_RUN, { { NULL } } },
	{ "PROCESSES", T_ROWS, { { "globalPid", MAP_GPID }, { "pid", MAP_PID } } },
	{ "ThreadNames", T_ROWS, { { "nameId", MAP_STR }, { "globalTid", MAP_GTID } } },
	{ "xp_modules", T_ROWS, { { "id", MAP_MODULE }, { "path", MAP_STR } } },
	{ "xp_mappings", T_ROWS, { { "id", MAP_DROP }, { "pid", MAP_PID }, { "ts", MAP_TS },
				   { "module", MAP_MODULE } } },
	{ "xp_samples", T_ROWS, { { "id", MAP_DROP }, { "ts", MAP_TS }, { "pid", MAP_PID },
				  { "stack_id", MAP_STACK } } },
	{ "xp_launches", T_ROWS, { { "id", MAP_DROP }, { "ts", MAP_TS }, { "pid", MAP_PID },
				   { "stack_id", MAP_STACK } } },
	{ "xp_switches", T_ROWS, { { "id", MAP_DROP }, { "ts", MAP_TS }, { "pid", MAP_PID },
				   { "stack_id", MAP_STACK } } },
	{ "xp_tasks", T_ROWS, { { "ts", MAP_TS }, { "pid", MAP_PID }, { "ppid", MAP_PID } } },
	{ "xp_record_counts", T_ROWS, { { "stream", MAP_LABEL } } },
	{ "xp_losses", T_ROWS, { { "ts", MAP_TS }, { "source", MAP_LABEL } } },
	{ "xp_warnings", T_ROWS, { { "file", MAP_LABEL } } },
	{ "xp_python_processes", T_ROWS, { { "pid", MAP_PID } } },
	{ "xp_python_sampled", T_ROWS, { { "pid", MAP_PID } } },
	{ "CUPTI_ACTIVITY_KIND_KERNEL", T_ROWS, { TS2, { "globalPid", MAP_GPID },
		{ "demangledName", MAP_STR }, { "shortName", MAP_STR }, { "mangledName", MAP_STR } } },
	{ "CUPTI_ACTIVITY_KIND_MEMCPY", T_ROWS, { TS2, { "globalPid", MAP_GPID } } },
	{ "CUPTI_ACTIVITY_KIND_MEMSET", T_ROWS, { TS2, { "globalPid", MAP_GPID } } },
	{ "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", T_ROWS, { TS2, { "globalPid", MAP_GPID } } },
	{ "CUPTI_ACTIVITY_KIND_RUNTIME", T_ROWS, { TS2, { "globalTid", MAP_GTID },
		{ "nameId", MAP_STR } } },
	{ "NVTX_EVENTS", T_ROWS, { TS2, { "globalTid", MAP_GTID }, { "endGlobalTid", MAP_GTID },
		{ "textId", MAP_STR }, { "domainId", MAP_STR }, { "jsonTextId", MAP_STR } } },
	{ "TARGET_INFO_GPU", T_ROWS, { { "globalPid", MAP_GPID } } },
	{ "ENUM_CUDA_MEMCPY_OPER", T_STATIC, { { NULL } } },
	{ "ENUM_CUDA_MEM_KIND", T_STATIC, { { NULL } } },
	{ "xp_gpu_processes", T_ROWS, { { "pid", MAP_PID }, { "ppid", MAP_PID },
		{ "exe_name", MAP_STR }, { "source", MAP_LABEL } } },
	{ "xp_gpu_status", T_ROWS, { { "ts", MAP_TS }, { "pid", MAP_PID }, { "source", MAP_LABEL } } },
	{ "xp_graph_events", T_ROWS, { { "ts", MAP_TS }, { "globalTid", MAP_GTID } } },
	{ "xp_ranks", T_ROWS, { { "pid", MAP_PID }, { "host", MAP_HOST } } },
	{ "xp_gpu_clock", T_ROWS, { { "pid", MAP_PID }, { "mono_before", MAP_TS },
		{ "mono_after", MAP_TS } } },
	{ "xp_job_runs", T_STATIC, { { NULL } } },      /* the merge's own, written by the caller */
	{ "xp_attribution", T_REGENERATED, { { NULL } } },
	{ "xp_sample_api", T_REGENERATED, { { NULL } } },
	{ "xp_correlation_counts", T_REGENERATED, { { NULL } } },
	{ "xp_launch_rejects", T_REGENERATED, { { NULL } } },
	{ "xp_report_groups", T_REGENERATED, { { NULL } } },
	{ "xp_report_kernel_stacks", T_REGENERATED, { { NULL } } },
	{ "xp_report_coverage", T_REGENERATED, { { NULL } } },
	/* forward_launch numbers the run's own launches, and the job's launches
	 * come already re-stacked at their forward lines */
	{ "xp_autograd", T_RUN_ONLY, { { NULL } } },
	{ "xp_autograd_processes", T_RUN_ONLY, { { NULL } } },
};

int xp_dbmerge_fail(struct xp_dbmerge *m, sqlite3 *db, const char *table)
{
	snprintf(m->err, sizeof(m->err), "table %s: %s", table, db ? sqlite3_errmsg(db) : "out of memory");
	return db ? -EIO : -ENOMEM;
}

int xp_dbmerge_new(sqlite3 *job, struct xp_dbmerge **out)
{
	struct xp_dbmerge *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->job = job;
	xp_u64map_init(&m->map);
	*out = m;
	return 0;
}

void xp_dbmerge_free(struct xp_dbmerge *m)
{
	if (!m)
		return;
	xp_stackwriter_close(m->w);
	xp_u64map_free(&m->map);
	free(m);
}

uint64_t xp_dbmerge_rows(const struct xp_dbmerge *m)
{
	return m->rows;
}

const char *xp_dbmerge_error(const struct xp_dbmerge *m)
{
	return m->err;
}

static enum col_map map_of(const struct table_rule *t, const char *col)
{
	for (int i = 0; i < 8 && t->cols[i].col; i++)
		if (!strcmp(t->cols[i].col, col))
			return t->cols[i].map;
	return MAP_COPY;
}

static int64_t add_ns(int64_t ts, int64_t shift)
{
	int64_t v;

	return __builtin_add_overflow(ts, shift, &v) ? (shift < 0 ? INT64_MIN : INT64_MAX) : v;
}

/* A run's pid into its own space; a merged job's pids keep their run
 * (above bit 22), moved up by index; a run number it does not hold is its
 * first run's. */
static int64_t map_pid(const struct xp_dbmerge *m, int64_t pid)
{
	uint32_t run = 0;

	if (m->run->slots > 1) {
		run = xp_pid_run((uint64_t)pid);
		run = run < m->run->slots ? run : 0;
	} else if (!m->run->index) {
		return pid;
	}
	return (int64_t)(m->run->index + run) << XP_PID_LOCAL_BITS | xp_pid_local((uint64_t)pid);
}

static int64_t map_int(const struct xp_dbmerge *m, enum col_map map, int64_t v)
{
	switch (map) {
	case MAP_STR: return xp_dbmerge_lookup(m, XP_MERGE_KEY_STR, v);
	case MAP_STACK: return xp_dbmerge_lookup(m, XP_MERGE_KEY_STACK, v);
	case MAP_MODULE: return v > 0 ? v + m->module_base : v;
	case MAP_PID: return map_pid(m, v);
	case MAP_GPID: return xp_gpid((uint64_t)map_pid(m, v >> XP_GTID_SHIFT));
	case MAP_GTID: return xp_gtid((uint64_t)map_pid(m, v >> XP_GTID_SHIFT), (uint64_t)v);
	case MAP_TS: return add_ns(v, m->run->shift_ns);
	default: return v;
	}
}

/* One value into the job's statement, mapped as its column says. */
static int bind_mapped(const struct xp_dbmerge *m, sqlite3_stmt *ins, int at, enum col_map map,
		       sqlite3_value *v)
{
	const char *text = (const char *)sqlite3_value_text(v);

	if (map == MAP_LABEL && text && m->run->label && *m->run->label) {
		char *s = sqlite3_mprintf("%s/%s", m->run->label, text);
		int rc = s ? sqlite3_bind_text(ins, at, s, -1, sqlite3_free) : SQLITE_NOMEM;

		return rc;
	}
	if (map == MAP_HOST && sqlite3_value_type(v) == SQLITE_NULL && m->run->host)
		return sqlite3_bind_text(ins, at, m->run->host, -1, SQLITE_STATIC);
	if (map != MAP_COPY && map != MAP_LABEL && map != MAP_HOST &&
	    sqlite3_value_type(v) == SQLITE_INTEGER)
		return sqlite3_bind_int64(ins, at, map_int(m, map, sqlite3_value_int64(v)));
	return sqlite3_bind_value(ins, at, v);
}

/* "SELECT c1, ... FROM t" for the run and "INSERT INTO t(c1, ...)" for the
 * job, over the job's columns of t (a run missing one fails the merge). */
static int prepare_copy(struct xp_dbmerge *m, sqlite3 *run, const struct table_rule *t,
			sqlite3_stmt **sel, sqlite3_stmt **ins, enum col_map *maps, int *ncols)
{
	sqlite3_str *s = sqlite3_str_new(NULL), *i = sqlite3_str_new(NULL);
	sqlite3_stmt *info = NULL;
	char *ssql, *isql;
	int n = 0, rc;

	sqlite3_str_appendf(s, "SELECT ");
	sqlite3_str_appendf(i, "INSERT INTO main.\"%w\"(", t->table);
	rc = sqlite3_prepare_v2(m->job, "SELECT name FROM pragma_table_info(?) ORDER BY cid", -1, &info, NULL);
	if (rc == SQLITE_OK)
		sqlite3_bind_text(info, 1, t->table, -1, SQLITE_STATIC);
	while (rc == SQLITE_OK && sqlite3_step(info) == SQLITE_ROW && n < 64) {
		const char *col = (const char *)sqlite3_column_text(info, 0);

		if (!col || map_of(t, col) == MAP_DROP)
			continue;
		maps[n] = map_of(t, col);
		sqlite3_str_appendf(s, "%s\"%w\"", n ? ", " : "", col);
		sqlite3_str_appendf(i, "%s\"%w\"", n ? ", " : "", col);
		n++;
	}
	sqlite3_finalize(info);
	sqlite3_str_appendf(s, " FROM \"%w\"", t->table);
	sqlite3_str_appendf(i, ") VALUES(");
	for (int k = 0; k < n; k++)
		sqlite3_str_appendf(i, "%s?", k ? ", " : "");
	sqlite3_str_appendf(i, ")");
	ssql = sqlite3_str_finish(s);
	isql = sqlite3_str_finish(i);
	*ncols = n;
	*sel = *ins = NULL;
	if (!ssql || !isql)
		rc = SQLITE_NOMEM;
	else if (sqlite3_prepare_v2(run, ssql, -1, sel, NULL) != SQLITE_OK)
		rc = xp_dbmerge_fail(m, run, t->table);
	else if (sqlite3_prepare_v2(m->job, isql, -1, ins, NULL) != SQLITE_OK)
		rc = xp_dbmerge_fail(m, m->job, t->table);
	else
		rc = n ? 0 : xp_dbmerge_fail(m, m->job, t->table);
	sqlite3_free(ssql);
	sqlite3_free(isql);
	return rc == SQLITE_NOMEM ? -ENOMEM : rc;
}

/* A table the run does not have (an older run) has nothing to copy. */
static int copy_table(struct xp_dbmerge *m, sqlite3 *run, const struct table_rule *t)
{
	sqlite3_stmt *sel = NULL, *ins = NULL;
	enum col_map maps[64];
	int n, rc = SQLITE_DONE, err;

	if (!xp_db_has_table(run, t->table))
		return 0;
	for (size_t i = 0; i < sizeof(made_when_had) / sizeof(made_when_had[0]); i++)
		if (!strcmp(made_when_had[i].table, t->table) &&
		    sqlite3_exec(m->job, made_when_had[i].sql, NULL, NULL, NULL) != SQLITE_OK)
			return xp_dbmerge_fail(m, m->job, t->table);
	err = prepare_copy(m, run, t, &sel, &ins, maps, &n);
	while (!err && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
		for (int c = 0; c < n && !err; c++)
			if (bind_mapped(m, ins, c + 1, maps[c], sqlite3_column_value(sel, c)) != SQLITE_OK)
				err = xp_dbmerge_fail(m, m->job, t->table);
		if (!err && sqlite3_step(ins) != SQLITE_DONE)
			err = xp_dbmerge_fail(m, m->job, t->table);
		sqlite3_reset(ins);
		m->rows++;
	}
	if (!err && rc != SQLITE_DONE)
		err = xp_dbmerge_fail(m, run, t->table);
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return err;
}

/* The run's module ids move above the job's (mappings are per process:
 * nothing to share). */
static int module_base(struct xp_dbmerge *m)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(m->job, "SELECT coalesce(max(id), 0) FROM xp_modules", -1, &st, NULL))
		return xp_dbmerge_fail(m, m->job, "xp_modules");
	m->module_base = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return 0;
}

static const struct table_rule *rule_of(const char *table)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (!strcmp(rules[i].table, table))
			return &rules[i];
	return NULL;
}

/* Every table of the job's schema has a rule (checked before any copy). */
static int check_rules(struct xp_dbmerge *m)
{
	sqlite3_stmt *st;
	int rc, err = 0;

	if (sqlite3_prepare_v2(m->job, "SELECT name FROM sqlite_master WHERE type = 'table'"
			       " AND name NOT LIKE 'sqlite_%'", -1, &st, NULL) != SQLITE_OK)
		return xp_dbmerge_fail(m, m->job, "sqlite_master");
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		if (t && !rule_of(t)) {
			snprintf(m->err, sizeof(m->err), "table %s: no merge rule (db/dbmerge.c)", t);
			err = -EINVAL;
		}
	}
	sqlite3_finalize(st);
	m->rules_checked = !err;
	return err;
}

int xp_dbmerge_run(struct xp_dbmerge *m, sqlite3 *run, const struct xp_merge_run *r)
{
	int e;

	m->err[0] = '\0';
	if (r->index >= XP_MERGE_MAX_RUNS || r->slots > XP_MERGE_MAX_RUNS - r->index) {
		snprintf(m->err, sizeof(m->err), "more than %d runs: their pids would not stay apart",
			 XP_MERGE_MAX_RUNS);
		return -E2BIG;
	}
	m->run = r;
	xp_u64map_free(&m->map);
	xp_u64map_init(&m->map);
	if ((!m->rules_checked && (e = check_rules(m))) || (e = xp_dbmerge_strings(m, run)) ||
	    (e = xp_dbmerge_frames(m, run)) || (e = xp_dbmerge_stacks(m, run)) || (e = module_base(m)))
		return e;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct table_rule *t = &rules[i];

		if (t->policy == T_ROWS || (t->policy == T_FIRST_RUN && r->index == 0))
			if ((e = copy_table(m, run, t)))
				return e;
	}
	return 0;
}
