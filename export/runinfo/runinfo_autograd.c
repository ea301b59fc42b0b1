/* runinfo_autograd.c - backward kernels in `xpcorr info` (runinfo.h): how
 * many reached a forward line, the reasons of the others, per process. */
#include "export/runinfo/runinfo.h"

#include <stdio.h>
#include <string.h>

#include "src/gtid.h"

/* The backward launches and their GPU time by outcome: at a forward line
 * (unknown NULL), or the reason there is none. */
static const char outcomes_sql[] =
	"WITH g(c, gp, ns) AS (SELECT correlationId, globalPid, end - start FROM CUPTI_ACTIVITY_KIND_KERNEL"
	" UNION ALL SELECT correlationId, globalPid, end - start FROM CUPTI_ACTIVITY_KIND_MEMCPY"
	" UNION ALL SELECT correlationId, globalPid, end - start FROM CUPTI_ACTIVITY_KIND_MEMSET),"
	" b AS (SELECT x.unknown AS unknown, x.how AS how, x.pid AS pid, x.correlation_id AS c"
	" FROM xp_autograd x WHERE x.node IS NOT NULL)"
	" SELECT b.unknown, count(DISTINCT b.pid << 32 | b.c), ifnull(sum(g.ns), 0), b.how FROM b"
	" LEFT JOIN g ON g.c = b.c AND " XP_SQL_PID_LOCAL(XP_SQL_GTID_PID("g.gp")) " = b.pid"
	" GROUP BY b.unknown, b.how ORDER BY b.unknown IS NOT NULL, 3 DESC";

static json_t *processes(sqlite3 *db)
{
	json_t *arr = json_array();
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, "SELECT pid, reads, nodes, rejected, reason FROM"
			       " xp_autograd_processes ORDER BY pid", -1, &st, NULL) != SQLITE_OK)
		return arr;
	while (sqlite3_step(st) == SQLITE_ROW) {
		json_t *p = json_object();

		json_object_set_new(p, "pid", json_integer(sqlite3_column_int64(st, 0)));
		json_object_set_new(p, "reads_nodes", json_boolean(sqlite3_column_int(st, 1)));
		json_object_set_new(p, "nodes", json_integer(sqlite3_column_int64(st, 2)));
		json_object_set_new(p, "rejected", json_integer(sqlite3_column_int64(st, 3)));
		json_object_set_new(p, "reason", json_string((const char *)sqlite3_column_text(st, 4) ?: ""));
		json_array_append_new(arr, p);
	}
	sqlite3_finalize(st);
	return arr;
}

json_t *xp_info_autograd(sqlite3 *db)
{
	json_int_t launches = 0, ns = 0, at_line = 0, at_line_ns = 0, prod = 0, prod_ns = 0;
	json_int_t views = 0, views_ns = 0, under = 0, under_ns = 0;
	json_t *ag, *unknown, *procs;
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, outcomes_sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;        /* a database of an older xpcorr, or no GPU tables */
	ag = json_object();
	unknown = json_array();
	while (sqlite3_step(st) == SQLITE_ROW) {
		json_int_t n = sqlite3_column_int64(st, 1), t = sqlite3_column_int64(st, 2);

		launches += n;
		ns += t;
		if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
			const char *how = (const char *)sqlite3_column_text(st, 3);

			if (how && !strcmp(how, "enclosing")) {
				under += n;
				under_ns += t;
				continue;
			}
			at_line += n;
			at_line_ns += t;
			if (how && !strcmp(how, "producer")) {
				prod += n;
				prod_ns += t;
			}
			if (how && !strcmp(how, "between")) {
				views += n;
				views_ns += t;
			}
			continue;
		}
		json_t *u = json_object();

		json_object_set_new(u, "why", json_string((const char *)sqlite3_column_text(st, 0)));
		json_object_set_new(u, "launches", json_integer(n));
		json_object_set_new(u, "gpu_ns", json_integer(t));
		json_array_append_new(unknown, u);
	}
	sqlite3_finalize(st);
	procs = processes(db);
	if (!launches && !json_array_size(procs)) {
		json_decref(procs);
		json_decref(unknown);
		json_decref(ag);
		return NULL;        /* no launch stream said anything */
	}
	json_object_set_new(ag, "backward_launches", json_integer(launches));
	json_object_set_new(ag, "backward_gpu_ns", json_integer(ns));
	json_object_set_new(ag, "at_forward_line_launches", json_integer(at_line));
	json_object_set_new(ag, "at_forward_line_gpu_ns", json_integer(at_line_ns));
	json_object_set_new(ag, "by_producer_launches", json_integer(prod));
	json_object_set_new(ag, "by_producer_gpu_ns", json_integer(prod_ns));
	json_object_set_new(ag, "between_launches_launches", json_integer(views));
	json_object_set_new(ag, "between_launches_gpu_ns", json_integer(views_ns));
	json_object_set_new(ag, "under_enclosing_line_launches", json_integer(under));
	json_object_set_new(ag, "under_enclosing_line_gpu_ns", json_integer(under_ns));
	json_object_set_new(ag, "unknown", unknown);
	json_object_set_new(ag, "processes", procs);
	return ag;
}
